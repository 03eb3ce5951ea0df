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
