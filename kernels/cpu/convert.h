// Storage <-> compute conversions for the pointer fast paths of stage 1 and stage 3, written
// without branches so that loops over them vectorise. widen(x) is bit for bit to_compute(x)
// and narrow<T>(v) is bit for bit from_compute<T>(v) (scalar_types.h) for every input —
// NaN payloads, subnormals, ties and overflow included — so a kernel reading through ptr()
// stages exactly the values it would read through load(). Types other than half go straight
// to to_compute / from_compute, whose loops the compiler vectorises already.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../common/scalar_types.h"

namespace vtc::kernels {

inline float half_to_float_branchless(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16, em = h & 0x7fffu;
  const uint32_t normal = (em << 13) + ((127u - 15u) << 23);
  const uint32_t inf_nan = (em << 13) | 0x7f800000u;
  const float sub = float(int32_t(em)) * 0x1p-24f; // exact: em < 2^10 when subnormal
  uint32_t sub_bits;
  std::memcpy(&sub_bits, &sub, 4);
  // Selections by mask: GCC keeps a ?: chain here as branches, which do not vectorise.
  const uint32_t m_inf = 0u - uint32_t(em >= 0x7c00u), m_norm = 0u - uint32_t(em >= 0x400u);
  const uint32_t r = sign | (inf_nan & m_inf) | (normal & m_norm & ~m_inf) | (sub_bits & ~m_norm);
  float f;
  std::memcpy(&f, &r, 4);
  return f;
}

inline uint16_t float_to_half_branchless(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u, absx = x & 0x7fffffffu;
  // NaN: quiet, top 10 payload bits.
  const uint32_t nan = 0x7e00u | ((absx >> 13) & 0x3ffu);
  // Normal range: rebias, round to nearest even at bit 13, saturate to inf.
  const uint32_t q = absx - 0x38000000u;
  uint32_t normal = (q + 0xfffu + ((q >> 13) & 1u)) >> 13;
  normal = normal > 0x7c00u ? 0x7c00u : normal;
  // Subnormal range: adding 0.5 puts |f| where the float ulp is the half subnormal ulp, so
  // the hardware rounds to nearest even exactly there.
  float af;
  std::memcpy(&af, &absx, 4);
  const float biased = af + 0.5f;
  uint32_t sub;
  std::memcpy(&sub, &biased, 4);
  sub -= 0x3f000000u;
  const uint32_t m_nan = 0u - uint32_t(absx > 0x7f800000u);
  const uint32_t m_sub = 0u - uint32_t(absx < 0x38800000u);
  const uint32_t r = (nan & m_nan) | (sub & m_sub & ~m_nan) | (normal & ~m_sub & ~m_nan);
  return uint16_t(sign | r);
}

template <typename T> inline auto widen(T v) {
  if constexpr (std::is_same_v<T, half>)
    return half_to_float_branchless(v.bits);
  else
    return to_compute(v);
}

template <typename T, typename V> inline T narrow(V v) {
  if constexpr (std::is_same_v<T, half>)
    return half{float_to_half_branchless(float(v))};
  else
    return from_compute<T>(v);
}

} // namespace vtc::kernels
