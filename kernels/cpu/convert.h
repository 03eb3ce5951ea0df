// Storage <-> compute conversions for the pointer fast paths of stage 1 and stage 3, written
// without branches so that loops over them vectorise. widen(x) is bit for bit to_compute(x)
// and narrow<T>(v) is bit for bit from_compute<T>(v) (scalar_types.h) for every input —
// NaN payloads, subnormals, ties and overflow included — so a kernel reading through ptr()
// stages exactly the values it would read through load(). Types other than half go straight
// to to_compute / from_compute, whose loops the compiler vectorises already. widen_run and
// narrow_run convert whole runs of halves: sixteen at a time by the hardware conversions where
// the code is built for AVX-512 (the same bits: the widening quiets a signalling NaN, which is
// undone), else element by element; so do the bfloat16 overloads (integer arithmetic).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../common/scalar_types.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include <immintrin.h>
#define VTC_HALF_RUNS_AVX512 1
#endif

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

#if VTC_HALF_RUNS_AVX512
// Sixteen halves widened, bit for bit half_to_float_branchless.
inline __m512 widen16(__m256i h) {
  const __m512 f = _mm512_cvtph_ps(h);
  const __m256i exponent = _mm256_and_si256(h, _mm256_set1_epi16(0x7c00));
  const __mmask16 inf_nan = _mm256_cmpeq_epi16_mask(exponent, _mm256_set1_epi16(0x7c00));
  const __mmask16 payload = _mm256_test_epi16_mask(h, _mm256_set1_epi16(0x3ff));
  const __mmask16 quiet = _mm256_test_epi16_mask(h, _mm256_set1_epi16(0x200));
  const __mmask16 signalling = inf_nan & payload & __mmask16(~quiet);
  const __m512i b = _mm512_castps_si512(f);
  return _mm512_castsi512_ps(
      _mm512_mask_andnot_epi32(b, signalling, _mm512_set1_epi32(0x00400000), b));
}
// Sixteen floats narrowed, bit for bit float_to_half_branchless (round to nearest even).
inline __m256i narrow16(__m512 v) {
  return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
// The same for bfloat16, bit for bit bf16_to_float and float_to_bf16 (a NaN made quiet, the
// rest rounded to nearest even), in integer arithmetic.
inline __m512 widen16_bf16(__m256i b) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(b), 16));
}
inline __m256i narrow16_bf16(__m512 v) {
  const __m512i x = _mm512_castps_si512(v);
  const __m512i abs = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(abs, _mm512_set1_epi32(0x7f800000));
  const __m512i high = _mm512_srli_epi32(x, 16);
  const __m512i lsb = _mm512_and_si512(high, _mm512_set1_epi32(1));
  const __m512i rounded =
      _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb), 16);
  const __m512i quiet = _mm512_or_si512(high, _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet));
}
#endif

template <typename T>
inline constexpr bool sixteen_bit_float = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

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

#if VTC_HALF_RUNS_AVX512
template <typename T> inline __m512 widen16_of(__m256i b) {
  if constexpr (std::is_same_v<T, half>)
    return widen16(b);
  else
    return widen16_bf16(b);
}
template <typename T> inline __m256i narrow16_of(__m512 v) {
  if constexpr (std::is_same_v<T, half>)
    return narrow16(v);
  else
    return narrow16_bf16(v);
}
#endif

// d[j] = widen(p[j]) for j in [0, n), T half or bfloat16.
template <typename T> inline void widen_run(const T* p, int64_t n, float* d) {
  static_assert(sixteen_bit_float<T>, "widen_run: runs of half or bfloat16");
  int64_t j = 0;
#if VTC_HALF_RUNS_AVX512
  for (; j + 16 <= n; j += 16)
    _mm512_storeu_ps(d + j,
                     widen16_of<T>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + j))));
  if (j < n) {
    const __mmask16 m = __mmask16((1u << (n - j)) - 1);
    _mm512_mask_storeu_ps(d + j, m, widen16_of<T>(_mm256_maskz_loadu_epi16(m, p + j)));
  }
#else
  for (; j < n; ++j)
    d[j] = widen(p[j]);
#endif
}

// p[j] = narrow<T>(q[j]) for j in [0, n), T half or bfloat16.
template <typename T> inline void narrow_run(const float* q, int64_t n, T* p) {
  static_assert(sixteen_bit_float<T>, "narrow_run: runs of half or bfloat16");
  int64_t j = 0;
#if VTC_HALF_RUNS_AVX512
  for (; j + 16 <= n; j += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + j), narrow16_of<T>(_mm512_loadu_ps(q + j)));
  if (j < n) {
    const __mmask16 m = __mmask16((1u << (n - j)) - 1);
    _mm256_mask_storeu_epi16(p + j, m, narrow16_of<T>(_mm512_maskz_loadu_ps(m, q + j)));
  }
#else
  for (; j < n; ++j)
    p[j] = narrow<T>(q[j]);
#endif
}

} // namespace vtc::kernels
