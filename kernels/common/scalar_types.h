// Scalar storage types of every target's kernels and generated code: IEEE half and bfloat16
// as bit patterns with round-to-nearest-even conversions, and the compute type of each storage
// type (float for f32/f16/bf16, double for f64, int64_t for the integers, bool kept as its
// integer value). to_compute(x) widens a stored element, from_compute<T>(v) rounds a compute
// value to storage type T; vtc's reference interpreter (src/ir/dtype.cpp) uses the same
// functions, so every target rounds exactly as the oracle does. The one exception is a NaN on
// the device: the conversion instructions give the canonical NaN, not the host code's
// quieted payload, and CUDA code takes them as they are (checking every conversion for NaN
// cost a third of the instructions of a 16-bit epilogue); a NaN stays a NaN.
//
// Compiles as host C++20 and under NVRTC (portable.h): no standard-library headers, bit
// reinterpretation by __builtin_bit_cast instead of memcpy, VTC_HD on every function.
#pragma once

#include "portable.h"

namespace vtc::kernels {

struct half {
  uint16_t bits;
};
struct bfloat16 {
  uint16_t bits;
};

VTC_HD constexpr float half_to_float(uint16_t h) {
#if defined(__CUDA_ARCH__)
  // On the device the conversion instruction alone (exact, as this code is; a NaN comes out as
  // the instruction gives it: see the top of the file).
  if (!__builtin_is_constant_evaluated()) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
  }
#endif
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | uint32_t(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  return __builtin_bit_cast(float, bits);
}

VTC_HD constexpr uint16_t float_to_half(float f) {
#if defined(__CUDA_ARCH__)
  // On the device the rounding instruction alone (round to nearest even, subnormals and
  // overflow as this code rounds them; a NaN as the instruction gives it). The integer code
  // made a 16-bit epilogue cost hundreds of instructions an element.
  if (!__builtin_is_constant_evaluated()) {
    uint16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
  }
#endif
  const uint32_t x = __builtin_bit_cast(uint32_t, f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)
    return sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 | ((absx >> 13) & 0x3ff) : 0);
  if (absx >= 0x477ff000u) return sign | 0x7c00;
  if (absx < 0x38800000u) {
    if (absx < 0x33000000u) return sign;
    uint32_t mant = (absx & 0x7fffff) | 0x800000;
    int shift = 126 - int(absx >> 23);
    uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1))) ++q;
    return sign | uint16_t(q);
  }
  uint32_t q = absx - 0x38000000u, rem = q & 0x1fff;
  q >>= 13;
  if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) ++q;
  return sign | uint16_t(q);
}

// f rounded to half and widened back: half_to_float(float_to_half(f)); on the device two
// conversion instructions.
VTC_HD constexpr float half_round(float f) {
  return half_to_float(float_to_half(f));
}

VTC_HD constexpr float bf16_to_float(uint16_t b) {
  return __builtin_bit_cast(float, uint32_t(b) << 16);
}

VTC_HD constexpr uint16_t float_to_bf16(float f) {
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) { // the rounding instruction (a NaN as it gives it)
    uint16_t b;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
    return b;
  }
#endif
  uint32_t x = __builtin_bit_cast(uint32_t, f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

// Storage -> compute type.
VTC_HD constexpr float to_compute(float v) {
  return v;
}
VTC_HD constexpr double to_compute(double v) {
  return v;
}
VTC_HD constexpr float to_compute(half v) {
  return half_to_float(v.bits);
}
VTC_HD constexpr float to_compute(bfloat16 v) {
  return bf16_to_float(v.bits);
}
VTC_HD constexpr int64_t to_compute(int64_t v) {
  return v;
}
VTC_HD constexpr int64_t to_compute(int32_t v) {
  return v;
}
VTC_HD constexpr int64_t to_compute(int8_t v) {
  return v;
}
VTC_HD constexpr int64_t to_compute(uint8_t v) {
  return v;
}
VTC_HD constexpr int64_t to_compute(bool v) {
  return v;
}

// Compute -> storage type, rounding to nearest even.
template <typename T, typename V> VTC_HD constexpr T from_compute(V v) {
  if constexpr (portable::is_same_v<T, half>)
    return half{float_to_half(float(v))};
  else if constexpr (portable::is_same_v<T, bfloat16>)
    return bfloat16{float_to_bf16(float(v))};
  else
    return T(v);
}

} // namespace vtc::kernels
