// Vectorisable math with a fixed evaluation order for stage 2 of the kernels: an exp()
// written as plain arithmetic (so the compiler vectorises it and every call site gets the
// same bits), and reductions of a buffer — sum, dot, max — in a fixed lane order: lane l
// (of kLanes) takes elements l, l + kLanes, ... in turn and the lanes meet in a fixed tree.
// The order depends on the length only, so a kernel's result depends on its shape and
// data, never on where the data came from. Multiply-adds are written as std::fma so that
// -ffp-contract cannot change them.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "convert.h"
#include "simd.h"

namespace vtc::kernels {

inline constexpr int kLanes = 16;

// The range reduction of e^x: x = n ln 2 + r with |r| <= ln 2 / 2 (ln 2 in two parts, so r
// is exact enough); returns n as a float (an integer) and sets r.
[[gnu::always_inline]] inline float exp_reduce(float x, float& r) {
  const float magic = 12582912.0f; // 1.5 * 2^23: adding it rounds to an integer
  const float nf = std::fma(x, 1.44269504088896341f, magic) - magic;
  r = std::fma(nf, -0.693359375f, x);
  r = std::fma(nf, 2.12194440e-4f, r);
  return nf;
}

// e^x for float, within 2 ulp; underflows gradually to 0 and overflows to inf; NaN stays NaN.
[[gnu::always_inline]] inline float exp_fast(float x) {
  const float xc = x < -110.0f ? -110.0f : (x > 89.0f ? 89.0f : x);
  float r;
  const float nf = exp_reduce(xc, r);
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  float y = std::fma(p, r * r, r) + 1.0f;
  const int32_t n = int32_t(nf), n1 = n >> 1, n2 = n - n1;
  const int32_t b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &b1, 4);
  std::memcpy(&s2, &b2, 4);
  y = y * s1 * s2;
  return x != x ? x : y;
}
inline double exp_fast(double x) {
  return std::exp(x);
}

// c0 + u (c1 + u (c2 + ...)) by Horner's rule in fused multiply-adds, the highest term first.
template <typename... C> [[gnu::always_inline]] inline float horner(float u, float c0, C... cs) {
  if constexpr (sizeof...(cs) == 0)
    return c0;
  else
    return std::fma(horner(u, cs...), u, c0);
}

// tanh, erf and log for float as plain arithmetic and selects (no library calls, no branches),
// so elementwise kernels vectorise them; coefficients fitted in double precision to the
// functions (least squares on a dense grid). NaN stays NaN; the sign of zero is kept.

// tanh: x P(x^2) for |x| < 0.625, sign(x) (1 - 2 / (e^{2|x|} + 1)) above, |x| taken at most 10
// (tanh(10) rounds to 1). Within 2 ulp.
[[gnu::always_inline]] inline float tanh_fast(float x) {
  const float a = std::fabs(x), u = x * x;
  const float p = horner(u, 9.999999973e-01f, -3.333327796e-01f, 1.333152833e-01f,
                         -5.375280784e-02f, 2.069233329e-02f, -5.772157598e-03f);
  const float e = exp_fast(2.0f * (a < 10.0f ? a : 10.0f));
  const float big = std::copysign(1.0f - 2.0f / (e + 1.0f), x);
  const float r = a < 0.625f ? x * p : big;
  return x != x ? x : r;
}
inline double tanh_fast(double x) {
  return std::tanh(x);
}

// erf: x P(x^2) for |x| < 0.75; above, 1 - e^{-x^2} Q(t) with t = 1 / (1 + |x| / 2) and Q
// fitted to erfc(x) e^{x^2} on [0.75, 4] (from 3.92 on, erf rounds to 1). Within 4 ulp.
[[gnu::always_inline]] inline float erf_fast(float x) {
  const float a = std::fabs(x), u = x * x;
  const float p = horner(u, 1.128379167e+00f, -3.761263856e-01f, 1.128378128e-01f,
                         -2.686499051e-02f, 5.217601589e-03f, -8.370714407e-04f, 9.557648142e-05f);
  const float ac = a < 4.0f ? a : 4.0f;
  const float t = 1.0f / std::fma(0.5f, ac, 1.0f);
  const float q = horner(t, -7.105996963e-06f, 2.821607314e-01f, 2.823563063e-01f, 2.399000357e-01f,
                         2.234394509e-01f, -9.132762361e-02f, 3.940365715e-01f, -6.090277501e-01f,
                         3.544124768e-01f, -7.595916113e-02f);
  const float big = std::copysign(1.0f - exp_fast(-ac * ac) * q, x);
  const float r = a < 0.75f ? x * p : big;
  return x != x ? x : r;
}
inline double erf_fast(double x) {
  return std::erf(x);
}

// Forms for results rounded to f16 or bf16 next (code generation picks them from the node's
// output dtype): within 4e-6 relative, against the 2^-11 (f16) or 2^-8 (bf16) of that rounding,
// at about half the arithmetic of the float forms.

// e^x for x in [-87, 88] (the callers bound it): exp_reduce, a degree-5 Taylor
// polynomial on [-ln 2 / 2, ln 2 / 2] (within 2.4e-6) and one scale.
[[gnu::always_inline]] inline float exp16_fast(float x) {
  float r;
  const float nf = exp_reduce(x, r);
  const float p = horner(r, 1.0f, 1.0f, 0.5f, 1.0f / 6.0f, 1.0f / 24.0f, 1.0f / 120.0f);
  const int32_t b = (int32_t(nf) + 127) << 23;
  float scale;
  std::memcpy(&scale, &b, 4);
  return p * scale;
}

// tanh: x (1 - x^2/3 + 2x^4/15 - 17x^6/315) for |x| < 1/4, sign(x) (1 - 2 / (e^{2|x|} + 1))
// above, |x| taken at most 10 (tanh(10) rounds to 1). Within 3e-6 relative.
[[gnu::always_inline]] inline float tanh16_fast(float x) {
  const float a = std::fabs(x), u = x * x;
  const float p = horner(u, 1.0f, -1.0f / 3.0f, 2.0f / 15.0f, -17.0f / 315.0f);
  const float e = exp16_fast(2.0f * (a < 10.0f ? a : 10.0f));
  const float big = std::copysign(1.0f - 2.0f / (e + 1.0f), x);
  const float r = a < 0.25f ? x * p : big;
  return x != x ? x : r;
}

// erf: 2/sqrt(pi) x (1 - x^2/3 + x^4/10 - x^6/42) for |x| < 1/4; above, 1 - t Q(t) e^{-x^2}
// with t = 1 / (1 + 0.3275911 |x|) (Abramowitz and Stegun 7.1.26, within 1.5e-7 absolute),
// |x| taken at most 4. Within 3e-6 relative.
[[gnu::always_inline]] inline float erf16_fast(float x) {
  const float a = std::fabs(x), u = x * x;
  const float p =
      horner(u, 1.128379167e+00f, -3.761263890e-01f, 1.128379167e-01f, -2.686617065e-02f);
  const float ac = a < 4.0f ? a : 4.0f;
  const float t = 1.0f / std::fma(0.3275911f, ac, 1.0f);
  const float q = horner(t, 0.254829592f, -0.284496736f, 1.421413741f, -1.453152027f, 1.061405429f);
  const float big = std::copysign(1.0f - t * q * exp16_fast(-ac * ac), x);
  const float r = a < 0.25f ? x * p : big;
  return x != x ? x : r;
}

// log: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log x = e log 2 + 2 atanh(s), s = (m - 1) /
// (m + 1), |s| <= 0.172, atanh(s) = s (1 + s^2/3 + ... + s^8/9); subnormals scaled by 2^23
// first. log 0 = -inf, log of a negative number NaN, log inf = inf. Within 2 ulp. The tests
// on the way are integer comparisons of the bits: a float comparison may trap, and the
// compiler would then keep the branches and not vectorise the loop.
[[gnu::always_inline]] inline float log_fast(float x) {
  int32_t xb;
  std::memcpy(&xb, &x, 4);
  const bool tiny = xb < 0x00800000; // below the normal range (zeros and negatives too)
  const float xs = x * (tiny ? 8388608.0f : 1.0f);
  int32_t bits;
  std::memcpy(&bits, &xs, 4);
  int32_t mbits = (bits & 0x7fffff) | 0x3f800000;
  const bool high = mbits > 0x3fb504f3; // m > sqrt(2)
  mbits -= high ? 0x00800000 : 0;       // m / 2
  const int32_t e = ((bits >> 23) & 0xff) - 127 - (tiny ? 23 : 0) + (high ? 1 : 0);
  float m;
  std::memcpy(&m, &mbits, 4);
  const float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
  const float p = horner(s2, 1.0f / 3.0f, 1.0f / 5.0f, 1.0f / 7.0f, 1.0f / 9.0f);
  const float lm = std::fma(2.0f * s * s2, p, 2.0f * s);
  // float(e) by its bits (1.5 * 2^23 + e, less 1.5 * 2^23): exact for |e| < 2^22.
  const int32_t eb = 0x4b400000 + e;
  float ef;
  std::memcpy(&ef, &eb, 4);
  ef -= 12582912.0f;
  const float r = std::fma(ef, 6.93147182e-01f, std::fma(ef, -1.90465430e-09f, lm));
  const float inf = std::numeric_limits<float>::infinity();
  float y = (xb > 0) & (xb < 0x7f800000) ? r : x; // +inf and NaN as they are
  y = xb < 0 ? std::numeric_limits<float>::quiet_NaN() : y;
  return (xb & 0x7fffffff) == 0 ? -inf : y; // +-0
}
inline double log_fast(double x) {
  return std::log(x);
}

// The identity of max and min: -inf / +inf, or the extreme values of an integer type.
template <typename C> constexpr C lowest_value() {
  if constexpr (std::numeric_limits<C>::has_infinity)
    return -std::numeric_limits<C>::infinity();
  else
    return std::numeric_limits<C>::lowest();
}
template <typename C> constexpr C highest_value() {
  if constexpr (std::numeric_limits<C>::has_infinity)
    return std::numeric_limits<C>::infinity();
  else
    return std::numeric_limits<C>::max();
}

// a * b + c, one rounding for floating-point types (std::fma), exact for integers.
template <typename C> inline C mul_add(C a, C b, C c) {
  if constexpr (std::is_floating_point_v<C>)
    return std::fma(a, b, c);
  else
    return a * b + c;
}

// NaN-propagating maximum and minimum (a NaN operand wins).
template <typename C> inline C max_nan(C m, C v) {
  return (v > m || v != v) ? v : m;
}
template <typename C> inline C min_nan(C m, C v) {
  return (v < m || v != v) ? v : m;
}

// Combines kLanes partial results in a fixed tree: lanes l and l + w for w = 8, 4, 2, 1.
template <typename C, typename Op> inline C combine_lanes(C* acc, Op op) {
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l)
      acc[l] = op(acc[l], acc[l + w]);
  return acc[0];
}

// combine_lanes with +, for sums: the same tree (lanes l and l + w for w = 8, 4, 2, 1, lower
// lane first), as vector halvings for float.
#if defined(__AVX2__)
// The tree of sum_lanes over 16 float lanes held as two vectors (lanes 0-7 and 8-15).
inline float sum_lanes(__m256 lo, __m256 hi) {
  const __m256 t8 = _mm256_add_ps(lo, hi);
  const __m128 t4 = _mm_add_ps(_mm256_castps256_ps128(t8), _mm256_extractf128_ps(t8, 1));
  const __m128 t2 = _mm_add_ps(t4, _mm_movehl_ps(t4, t4));
  return _mm_cvtss_f32(_mm_add_ss(t2, _mm_shuffle_ps(t2, t2, 1)));
}
#endif

template <typename C> inline C sum_lanes(const C* acc) {
  static_assert(kLanes == 16, "sum_lanes: the halving tree is written for 16 lanes");
  if constexpr (std::is_same_v<C, float>) {
#if defined(__AVX2__)
    return sum_lanes(_mm256_loadu_ps(acc), _mm256_loadu_ps(acc + 8));
#endif
  }
  C tmp[kLanes];
  for (int l = 0; l < kLanes; ++l)
    tmp[l] = acc[l];
  return combine_lanes(tmp, [](C a, C b) { return a + b; });
}

// The lane order: acc[l] = step(acc[l], j) for j = l, l + kLanes, l + 2*kLanes, ... < n.
// Lanes are independent, so the loop over them vectorises (`omp simd` lets GCC if-convert
// the NaN-aware max / min, which it does not do for an unrolled lane loop on its own).
template <typename C, typename Step> inline void fold_lanes(C* acc, int64_t n, Step step) {
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
#pragma omp simd
    for (int l = 0; l < kLanes; ++l)
      acc[l] = step(acc[l], j + l);
  }
  for (int l = 0; j + l < n; ++l)
    acc[l] = step(acc[l], j + l);
}

// sum_j f(x[j]) in the fixed lane order.
template <typename C, typename F> inline C sum_fixed(const C* x, int64_t n, F f) {
  C acc[kLanes] = {};
  fold_lanes(acc, n, [&](C a, int64_t j) { return a + f(x[j]); });
  return sum_lanes(acc);
}
template <typename C> inline C sum_fixed(const C* x, int64_t n) {
#if defined(__AVX2__)
  if constexpr (std::is_same_v<C, float>) {
    // The 16 lanes as two vectors; a row's tail added under a mask (+0 in the lanes past it,
    // which leaves a lane as it is: a lane that starts at +0 never holds -0), then the tree of
    // sum_lanes.
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes) {
      lo = _mm256_add_ps(lo, _mm256_loadu_ps(x + j));
      hi = _mm256_add_ps(hi, _mm256_loadu_ps(x + j + 8));
    }
    if (j < n) {
      const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
      const __m256i rest = _mm256_set1_epi32(int(n - j));
      lo = _mm256_add_ps(lo, _mm256_maskload_ps(x + j, _mm256_cmpgt_epi32(rest, lane)));
      hi = _mm256_add_ps(
          hi,
          _mm256_maskload_ps(
              x + j + 8, _mm256_cmpgt_epi32(rest, _mm256_add_epi32(lane, _mm256_set1_epi32(8)))));
    }
    return sum_lanes(lo, hi);
  }
#endif
  return sum_fixed(x, n, [](C v) { return v; });
}

// sum_j x[j] * y[j] in the fixed lane order, one fma per element.
// y may be stored in another type (half, bfloat16): its elements are widened exactly.
template <typename C, typename Y> inline C dot_fixed(const C* x, const Y* y, int64_t n) {
  C acc[kLanes] = {};
  fold_lanes(acc, n, [&](C a, int64_t j) { return mul_add(x[j], C(widen(y[j])), a); });
  return sum_lanes(acc);
}

// out[p] = dot_fixed(x, ys[p], n) for p < np, four dot products interleaved (independent
// chains keep the fma units busy); the same bits as np calls of dot_fixed.
template <typename C, typename Y>
inline void dots_fixed(const C* x, const Y* const* ys, int64_t np, int64_t n, C* out) {
  int64_t p = 0;
  for (; p + 4 <= np; p += 4) {
    const Y *y0 = ys[p], *y1 = ys[p + 1], *y2 = ys[p + 2], *y3 = ys[p + 3];
    C a0[kLanes] = {}, a1[kLanes] = {}, a2[kLanes] = {}, a3[kLanes] = {};
    auto step = [&](int64_t l, int64_t j) {
      a0[l] = mul_add(x[j], C(widen(y0[j])), a0[l]);
      a1[l] = mul_add(x[j], C(widen(y1[j])), a1[l]);
      a2[l] = mul_add(x[j], C(widen(y2[j])), a2[l]);
      a3[l] = mul_add(x[j], C(widen(y3[j])), a3[l]);
    };
    int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes) {
#pragma omp simd
      for (int l = 0; l < kLanes; ++l)
        step(l, j + l);
    }
    for (int l = 0; j + l < n; ++l)
      step(l, j + l);
    out[p] = sum_lanes(a0);
    out[p + 1] = sum_lanes(a1);
    out[p + 2] = sum_lanes(a2);
    out[p + 3] = sum_lanes(a3);
  }
  for (; p < np; ++p)
    out[p] = dot_fixed(x, ys[p], n);
}

// sum_j (x[j] - c)^2 in the fixed lane order.
template <typename C> inline C sum_sq_dev_fixed(const C* x, int64_t n, C c) {
  C acc[kLanes] = {};
  fold_lanes(acc, n, [&](C a, int64_t j) {
    const C d = x[j] - c;
    return mul_add(d, d, a);
  });
  return sum_lanes(acc);
}

// max_j x[j] (NaN-propagating); lowest_value() for n == 0.
template <typename C> inline C max_fixed(const C* x, int64_t n) {
  C acc[kLanes];
  for (int l = 0; l < kLanes; ++l)
    acc[l] = lowest_value<C>();
  fold_lanes(acc, n, [&](C a, int64_t j) { return max_nan(a, x[j]); });
  return combine_lanes(acc, [](C a, C b) { return max_nan(a, b); });
}

// min_j x[j] (NaN-propagating); highest_value() for n == 0.
template <typename C> inline C min_fixed(const C* x, int64_t n) {
  C acc[kLanes];
  for (int l = 0; l < kLanes; ++l)
    acc[l] = highest_value<C>();
  fold_lanes(acc, n, [&](C a, int64_t j) { return min_nan(a, x[j]); });
  return combine_lanes(acc, [](C a, C b) { return min_nan(a, b); });
}

} // namespace vtc::kernels
