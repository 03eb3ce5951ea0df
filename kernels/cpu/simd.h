// A minimal SIMD vector for the kernels' inner loops: float and double lanes with load,
// store, broadcast and fused multiply-add, on AVX-512, on AVX2+FMA, or as one scalar lane.
// Every operation is exactly rounded (fma is one rounding), so a loop written with Vec
// gives the same bits on every instruction set: the width changes speed, never results.
// Also vector loads that widen 16-bit storage (half, bfloat16) to float: the values of
// to_compute() in scalar_types.h (the hardware half conversion quiets a signalling NaN,
// which the first arithmetic on it would do anyway).
#pragma once

#include <cmath>
#include <cstdint>

#include "scalar_types.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace vtc::kernels {

template <typename T> struct Vec;

#if defined(__AVX512F__)

template <> struct Vec<float> {
  static constexpr int width = 16;
  __m512 v;
  static Vec zero() { return {_mm512_setzero_ps()}; }
  static Vec set1(float x) { return {_mm512_set1_ps(x)}; }
  static Vec load(const float* p) { return {_mm512_loadu_ps(p)}; }
  void store(float* p) const { _mm512_storeu_ps(p, v); }
  friend Vec fma(Vec a, Vec b, Vec c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
};
template <> struct Vec<double> {
  static constexpr int width = 8;
  __m512d v;
  static Vec zero() { return {_mm512_setzero_pd()}; }
  static Vec set1(double x) { return {_mm512_set1_pd(x)}; }
  static Vec load(const double* p) { return {_mm512_loadu_pd(p)}; }
  void store(double* p) const { _mm512_storeu_pd(p, v); }
  friend Vec fma(Vec a, Vec b, Vec c) { return {_mm512_fmadd_pd(a.v, b.v, c.v)}; }
};

// r[i] lane j <- r[j] lane i: a 16 x 16 block of floats transposed in registers (pairs
// unpacked, then shuffled within 128-bit lanes, then the lanes shuffled twice). Values move
// unchanged.
inline void transpose_16x16(Vec<float>* r) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i].v, r[2 * i + 1].v);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i].v, r[2 * i + 1].v);
  }
  __m512 u[16];
  for (int g = 0; g < 4; ++g) {
    const __m512* q = t + 4 * g;
    u[4 * g + 0] = _mm512_shuffle_ps(q[0], q[2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * g + 1] = _mm512_shuffle_ps(q[0], q[2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * g + 2] = _mm512_shuffle_ps(q[1], q[3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * g + 3] = _mm512_shuffle_ps(q[1], q[3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 4; ++i) {
      t[8 * h + i] = _mm512_shuffle_f32x4(u[8 * h + i], u[8 * h + 4 + i], 0x88);
      t[8 * h + 4 + i] = _mm512_shuffle_f32x4(u[8 * h + i], u[8 * h + 4 + i], 0xdd);
    }
  for (int i = 0; i < 8; ++i) {
    r[i].v = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
    r[8 + i].v = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xdd);
  }
}

// (The maskz forms: GCC 12 warns about the undefined source of the unmasked ones.)
inline Vec<float> load_widen(const bfloat16* p) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m512i w = _mm512_maskz_cvtepu16_epi32(0xffff, raw);
  return {_mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, w, 16))};
}
inline Vec<float> load_widen(const half* p) {
  return {_mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
}

#elif defined(__AVX2__) && defined(__FMA__)

template <> struct Vec<float> {
  static constexpr int width = 8;
  __m256 v;
  static Vec zero() { return {_mm256_setzero_ps()}; }
  static Vec set1(float x) { return {_mm256_set1_ps(x)}; }
  static Vec load(const float* p) { return {_mm256_loadu_ps(p)}; }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
  friend Vec fma(Vec a, Vec b, Vec c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
};
template <> struct Vec<double> {
  static constexpr int width = 4;
  __m256d v;
  static Vec zero() { return {_mm256_setzero_pd()}; }
  static Vec set1(double x) { return {_mm256_set1_pd(x)}; }
  static Vec load(const double* p) { return {_mm256_loadu_pd(p)}; }
  void store(double* p) const { _mm256_storeu_pd(p, v); }
  friend Vec fma(Vec a, Vec b, Vec c) { return {_mm256_fmadd_pd(a.v, b.v, c.v)}; }
};

inline Vec<float> load_widen(const bfloat16* p) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return {_mm256_castsi256_ps(_mm256_slli_epi32(w, 16))};
}
#if defined(__F16C__)
inline Vec<float> load_widen(const half* p) {
  return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
}
#else
inline Vec<float> load_widen(const half* p) {
  alignas(32) float f[8];
  for (int j = 0; j < 8; ++j)
    f[j] = to_compute(p[j]);
  return Vec<float>::load(f);
}
#endif

#else

template <> struct Vec<float> {
  static constexpr int width = 1;
  float v;
  static Vec zero() { return {0.0f}; }
  static Vec set1(float x) { return {x}; }
  static Vec load(const float* p) { return {*p}; }
  void store(float* p) const { *p = v; }
  friend Vec fma(Vec a, Vec b, Vec c) { return {std::fma(a.v, b.v, c.v)}; }
};
template <> struct Vec<double> {
  static constexpr int width = 1;
  double v;
  static Vec zero() { return {0.0}; }
  static Vec set1(double x) { return {x}; }
  static Vec load(const double* p) { return {*p}; }
  void store(double* p) const { *p = v; }
  friend Vec fma(Vec a, Vec b, Vec c) { return {std::fma(a.v, b.v, c.v)}; }
};
inline Vec<float> load_widen(const bfloat16* p) {
  return Vec<float>::set1(to_compute(*p));
}
inline Vec<float> load_widen(const half* p) {
  return Vec<float>::set1(to_compute(*p));
}

#endif

inline Vec<float> load_widen(const float* p) {
  return Vec<float>::load(p);
}
inline Vec<double> load_widen(const double* p) {
  return Vec<double>::load(p);
}

} // namespace vtc::kernels
