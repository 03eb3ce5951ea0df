// Stand-in 16-bit storage types and their conversions for the cuda kernels, until
// kernels/common provides them: half and bfloat16 as bit patterns (the cpu target's layout,
// kernels/cpu/scalar_types.h), to_compute (storage -> float) and from_compute<T> (float ->
// storage, round to nearest even) with the cpu target's bits for every input, NaN payloads
// included (f16/bf16 -> f32 keeps the payload; f32 -> f16/bf16 quiets it). A header that
// defines VTC_KERNELS_HAVE_SCALAR_TYPES before this one replaces all of it.
//
// Also: which 16-bit float a storage type is (float16_kind), for the tensor-core paths that
// move raw 16-bit operands.
#pragma once

#include "../common/accessor.h"

namespace vtc::kernels {

template <class A, class B> inline constexpr bool same_v = false;
template <class A> inline constexpr bool same_v<A, A> = true;

#if !defined(VTC_KERNELS_HAVE_SCALAR_TYPES)
struct half {
  uint16_t bits;
};
struct bfloat16 {
  uint16_t bits;
};

VTC_HD VTC_INLINE float bits_to_float(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(x);
#else
  return __builtin_bit_cast(float, x);
#endif
}
VTC_HD VTC_INLINE uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  return __builtin_bit_cast(uint32_t, f);
#endif
}

VTC_HD VTC_INLINE float half_bits_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, em = h & 0x7fffu;
  if (em > 0x7c00u) return bits_to_float(sign | 0x7f800000u | (em & 0x3ffu) << 13); // NaN
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  if (em >= 0x7c00u) return bits_to_float(sign | 0x7f800000u);
  if (em >= 0x400u) return bits_to_float(sign | ((em << 13) + ((127u - 15u) << 23)));
  const float sub = float(int32_t(em)) * 0x1p-24f;
  return bits_to_float(sign | float_to_bits(sub));
#endif
}

VTC_HD VTC_INLINE uint16_t float_to_half_bits(float f) {
  const uint32_t x = float_to_bits(f), absx = x & 0x7fffffffu;
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  if (absx > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((absx >> 13) & 0x3ffu)); // NaN
#if defined(__CUDA_ARCH__)
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);
  if (absx < 0x38800000u) { // subnormal: the float ulp at |f| + 0.5 is the half subnormal ulp
    const float biased = bits_to_float(absx) + 0.5f;
    return uint16_t(sign | (float_to_bits(biased) - 0x3f000000u));
  }
  uint32_t q = absx - 0x38000000u;
  const uint32_t rem = q & 0x1fffu;
  q >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) ++q;
  return uint16_t(sign | q);
#endif
}

VTC_HD VTC_INLINE float bf16_bits_to_float(uint16_t b) {
  return bits_to_float(uint32_t(b) << 16);
}

VTC_HD VTC_INLINE uint16_t float_to_bf16_bits(float f) {
  const uint32_t x = float_to_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u); // NaN
#if defined(__CUDA_ARCH__)
  uint16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
#endif
}

VTC_HD VTC_INLINE float to_compute(float v) {
  return v;
}
VTC_HD VTC_INLINE double to_compute(double v) {
  return v;
}
VTC_HD VTC_INLINE float to_compute(half v) {
  return half_bits_to_float(v.bits);
}
VTC_HD VTC_INLINE float to_compute(bfloat16 v) {
  return bf16_bits_to_float(v.bits);
}
VTC_HD VTC_INLINE int64_t to_compute(int64_t v) {
  return v;
}
VTC_HD VTC_INLINE int64_t to_compute(int32_t v) {
  return v;
}
VTC_HD VTC_INLINE int64_t to_compute(int8_t v) {
  return v;
}
VTC_HD VTC_INLINE int64_t to_compute(uint8_t v) {
  return v;
}
VTC_HD VTC_INLINE int64_t to_compute(bool v) {
  return v;
}

template <class T, class V> VTC_HD VTC_INLINE T from_compute(V v) {
  if constexpr (same_v<T, half>)
    return half{float_to_half_bits(float(v))};
  else if constexpr (same_v<T, bfloat16>)
    return bfloat16{float_to_bf16_bits(float(v))};
  else
    return T(v);
}
#endif // VTC_KERNELS_HAVE_SCALAR_TYPES

// 0: not a 16-bit float; 1: IEEE half; 2: bfloat16.
template <class T> inline constexpr int float16_kind = 0;
template <> inline constexpr int float16_kind<half> = 1;
template <> inline constexpr int float16_kind<bfloat16> = 2;

// The raw bits of a 16-bit float and back.
template <class T> VTC_HD VTC_INLINE uint16_t raw_bits(T v) {
  return v.bits;
}
template <class T> VTC_HD VTC_INLINE T from_raw_bits(uint16_t b) {
  return T{b};
}

// from_compute(to_compute(x)) for a 16-bit float's bits: the value itself, except that a
// signalling NaN becomes quiet; two values at once in a 32-bit word.
template <class T> VTC_HD VTC_INLINE uint32_t requiet2(uint32_t w) {
  if constexpr (float16_kind<T> == 1) {
    // Per half: NaN when (bits & 0x7fff) > 0x7c00; then set 0x0200.
    const uint32_t mag = w & 0x7fff7fffu;
    const uint32_t lo = (mag & 0xffffu) > 0x7c00u ? 0x0200u : 0u;
    const uint32_t hi = (mag >> 16) > 0x7c00u ? 0x02000000u : 0u;
    return w | lo | hi;
  } else if constexpr (float16_kind<T> == 2) {
    const uint32_t mag = w & 0x7fff7fffu;
    const uint32_t lo = (mag & 0xffffu) > 0x7f80u ? 0x0040u : 0u;
    const uint32_t hi = (mag >> 16) > 0x7f80u ? 0x00400000u : 0u;
    return w | lo | hi;
  } else {
    return w;
  }
}

} // namespace vtc::kernels
