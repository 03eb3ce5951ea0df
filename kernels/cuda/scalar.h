// What the cuda kernels add to the shared scalar types (kernels/common/scalar_types.h: half
// and bfloat16 as bit patterns, to_compute / from_compute with the cpu target's bits): which
// 16-bit float a storage type is (float16_kind), and raw bits for the tensor-core paths that
// move 16-bit operands without converting them.
#pragma once

#include "../common/accessor.h"
#include "../common/scalar_types.h"

namespace vtc::kernels {

template <class A, class B> inline constexpr bool same_v = false;
template <class A> inline constexpr bool same_v<A, A> = true;

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

// from_compute(to_compute(x)) for a 16-bit float's bits, two values at once in a 32-bit word:
// the value itself, except a NaN, which becomes what the conversions make of it (copies move
// the bits a conversion round trip would give).
template <class T> VTC_HD VTC_INLINE uint32_t round_trip2(uint32_t w) {
  if constexpr (float16_kind<T> != 0) {
    const uint32_t lo = raw_bits(from_compute<T>(to_compute(from_raw_bits<T>(uint16_t(w)))));
    const uint32_t hi = raw_bits(from_compute<T>(to_compute(from_raw_bits<T>(uint16_t(w >> 16)))));
    return lo | hi << 16;
  } else {
    return w;
  }
}

} // namespace vtc::kernels
