// A minimal SIMD vector for the kernels' inner loops: float and double lanes with load,
// store, broadcast and fused multiply-add, on AVX-512, on AVX2+FMA, or as one scalar lane.
// Every operation is exactly rounded (fma is one rounding), so a loop written with Vec
// gives the same bits on every instruction set: the width changes speed, never results.
// Also strided lanes of a row with fill outside it (what window kernels stage their stride
// phases with), a row's window taps as vectors (the depthwise row kernel's), and vector
// loads that widen 16-bit storage (half, bfloat16) to float: the values of to_compute() in
// scalar_types.h (the hardware half conversion quiets a signalling NaN, which the first
// arithmetic on it would do anyway).
#pragma once

#include <cmath>
#include <cstdint>

#include "../common/scalar_types.h"

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
  friend Vec operator+(Vec a, Vec b) { return {_mm512_add_ps(a.v, b.v)}; }
  friend Vec operator-(Vec a, Vec b) { return {_mm512_sub_ps(a.v, b.v)}; }
  // vmath.h's max_nan: x where x > m or x is NaN. Where x is a number, max(x, m) is x > m ? x :
  // m (m too where m is NaN); where x is NaN the lane keeps x. One instruction on the chain
  // through m (a compare and a blend before: a max pool's taps waited on their latency).
  friend Vec max_nan(Vec m, Vec x) {
    return {_mm512_mask_max_ps(x.v, _mm512_cmp_ps_mask(x.v, x.v, _CMP_ORD_Q), x.v, m.v)};
  }
  // x where x > m, else m: max_nan when x is not NaN, in one instruction.
  friend Vec max_ordered(Vec m, Vec x) { return {_mm512_max_ps(x.v, m.v)}; }
};
template <> struct Vec<double> {
  static constexpr int width = 8;
  __m512d v;
  static Vec zero() { return {_mm512_setzero_pd()}; }
  static Vec set1(double x) { return {_mm512_set1_pd(x)}; }
  static Vec load(const double* p) { return {_mm512_loadu_pd(p)}; }
  void store(double* p) const { _mm512_storeu_pd(p, v); }
  friend Vec fma(Vec a, Vec b, Vec c) { return {_mm512_fmadd_pd(a.v, b.v, c.v)}; }
  friend Vec operator+(Vec a, Vec b) { return {_mm512_add_pd(a.v, b.v)}; }
  friend Vec operator-(Vec a, Vec b) { return {_mm512_sub_pd(a.v, b.v)}; }
  friend Vec max_nan(Vec m, Vec x) { // as Vec<float>'s
    return {_mm512_mask_max_pd(x.v, _mm512_cmp_pd_mask(x.v, x.v, _CMP_ORD_Q), x.v, m.v)};
  }
  friend Vec max_ordered(Vec m, Vec x) { return {_mm512_max_pd(x.v, m.v)}; }
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

// Whether StridedLanes gathers with vector permutes (else it is a scalar loop, slower than
// staging a row and copying it strided).
inline constexpr bool kVectorStridedLanes = true;

// Lanes [lo, hi) of a 16-lane mask, the bounds clamped to [0, 16].
inline __mmask16 lane_range(int64_t lo, int64_t hi) {
  lo = lo < 0 ? 0 : lo > 16 ? 16 : lo;
  hi = hi < 0 ? 0 : hi > 16 ? 16 : hi;
  return lo >= hi ? __mmask16(0) : __mmask16(((1u << hi) - 1) & ~((1u << lo) - 1));
}

// dst[l] = row[base + step * l] where 0 <= base + step * l < w and l < valid, `fill`
// elsewhere, for l < n (n <= 16, step 1 or 2), from any row of w values: two masked loads that
// touch row[0 .. w) only, and one permute. The masks are worked out once, for many rows.
// Values move unchanged.
class StridedLanes {
public:
  StridedLanes(int64_t w, int64_t base, int step, int n, int valid, float fill)
      : base_(base), lo_(lane_range(-base, w - base)), hi_(lane_range(-base - 16, w - base - 16)),
        store_(lane_range(0, n)), fill_(_mm512_set1_ps(fill)) {
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    pick_ = step == 2 ? _mm512_slli_epi32(lane, 1) : lane;
    const __m512i src = _mm512_add_epi32(_mm512_set1_epi32(int(base)), pick_);
    inside_ = _mm512_cmpge_epi32_mask(src, _mm512_setzero_si512()) &
              _mm512_cmplt_epi32_mask(src, _mm512_set1_epi32(int(w))) & lane_range(0, valid);
  }
  void gather(const float* row, float* dst) const {
    // row + base may lie before the row; the masks keep every load inside it.
    const float* at = reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(row) +
                                                     uintptr_t(base_ * int64_t(sizeof(float))));
    const __m512 a = _mm512_maskz_loadu_ps(lo_, at), b = _mm512_maskz_loadu_ps(hi_, at + 16);
    _mm512_mask_storeu_ps(
        dst, store_, _mm512_mask_blend_ps(inside_, fill_, _mm512_permutex2var_ps(a, pick_, b)));
  }

private:
  int64_t base_;
  __mmask16 lo_, hi_, store_, inside_ = 0;
  __m512 fill_;
  __m512i pick_;
};

// dst[l] = src[offset[l]] for lanes l < count (count <= 16, offsets increasing and below 32),
// zero in the lanes after: two loads and one permute, for values spread over a short span
// (the output rows of a small plane at a wider pitch). src[0 .. 32) must be readable.
class LaneGather {
public:
  LaneGather(const int32_t* offset, int count) : keep_(lane_range(0, count)) {
    alignas(64) int32_t idx[16] = {};
    for (int l = 0; l < count; ++l)
      idx[l] = offset[l];
    pick_ = _mm512_load_si512(idx);
  }
  void gather(const float* src, float* dst) const {
    _mm512_storeu_ps(dst, _mm512_maskz_permutex2var_ps(keep_, _mm512_loadu_ps(src), pick_,
                                                       _mm512_loadu_ps(src + 16)));
  }

private:
  __mmask16 keep_;
  __m512i pick_;
};

// The taps of a window sliding along a row of w <= 32 values: for tap q, lane l < n of its
// vector holds row[l * step + offset[q]] where that lies in [0, w), zero elsewhere (padding
// and lanes from n on). load() reads the row once, with two masked loads inside [0, w), and
// makes each tap's vector with one permute of the two. Values move unchanged.
class RowWindows {
public:
  static constexpr int kMaxTaps = 8;

  RowWindows(int64_t w, int64_t step, int n, const int64_t* offset, int taps)
      : taps_(taps), lo_(lane_range(0, w)), hi_(lane_range(0, w - 16)) {
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i first = _mm512_mullo_epi32(lane, _mm512_set1_epi32(int(step)));
    for (int q = 0; q < taps; ++q) {
      // Lanes reading outside the row are zeroed: their index bits past the low five (which
      // permutex2var ignores) do not matter.
      pick_[q] = _mm512_add_epi32(first, _mm512_set1_epi32(int(offset[q])));
      inside_[q] = _mm512_cmpge_epi32_mask(pick_[q], _mm512_setzero_si512()) &
                   _mm512_cmplt_epi32_mask(pick_[q], _mm512_set1_epi32(int(w))) & lane_range(0, n);
    }
  }
  // dst[q * 16 ..] = tap q's vector, for every tap (Taps of them when given, else taps).
  template <int Taps = 0> void load(const float* row, float* dst) const {
    const __m512 a = _mm512_maskz_loadu_ps(lo_, row), b = _mm512_maskz_loadu_ps(hi_, row + 16);
    const int taps = Taps > 0 ? Taps : taps_;
#pragma GCC unroll 8
    for (int q = 0; q < taps; ++q)
      _mm512_storeu_ps(dst + q * 16, _mm512_maskz_permutex2var_ps(inside_[q], a, pick_[q], b));
  }

private:
  int taps_;
  __mmask16 lo_, hi_, inside_[kMaxTaps] = {};
  __m512i pick_[kMaxTaps];
};

// The first n < 16 values of src into the 16 of dst (64-byte aligned), zeros after: one
// masked load and one whole store, which the whole loads of dst that follow can take
// straight from the store buffer. store_few() is the other way.
inline void load_few(const float* src, int64_t n, float* dst) {
  _mm512_store_ps(dst, _mm512_maskz_loadu_ps(lane_range(0, n), src));
}
inline void store_few(const float* src, int64_t n, float* dst) {
  _mm512_mask_storeu_ps(dst, lane_range(0, n), _mm512_load_ps(src));
}

// dst[0 .. n) = src[0 .. n) for runs of a few vectors, with a masked tail: a call of memcpy,
// which the compiler makes of a plain loop, costs more than the copy for the short rows of
// small planes.
inline void copy_short_run(const float* src, int64_t n, float* dst) {
  int64_t x = 0;
  for (; x + 16 <= n; x += 16)
    _mm512_storeu_ps(dst + x, _mm512_loadu_ps(src + x));
  if (x < n) {
    const __mmask16 m = lane_range(0, n - x);
    _mm512_mask_storeu_ps(dst + x, m, _mm512_maskz_loadu_ps(m, src + x));
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
  friend Vec operator+(Vec a, Vec b) { return {_mm256_add_ps(a.v, b.v)}; }
  friend Vec operator-(Vec a, Vec b) { return {_mm256_sub_ps(a.v, b.v)}; }
  friend Vec max_nan(Vec m, Vec x) {
    const __m256 take =
        _mm256_or_ps(_mm256_cmp_ps(x.v, m.v, _CMP_GT_OQ), _mm256_cmp_ps(x.v, x.v, _CMP_UNORD_Q));
    return {_mm256_blendv_ps(m.v, x.v, take)};
  }
  friend Vec max_ordered(Vec m, Vec x) { return {_mm256_max_ps(x.v, m.v)}; }
};
template <> struct Vec<double> {
  static constexpr int width = 4;
  __m256d v;
  static Vec zero() { return {_mm256_setzero_pd()}; }
  static Vec set1(double x) { return {_mm256_set1_pd(x)}; }
  static Vec load(const double* p) { return {_mm256_loadu_pd(p)}; }
  void store(double* p) const { _mm256_storeu_pd(p, v); }
  friend Vec fma(Vec a, Vec b, Vec c) { return {_mm256_fmadd_pd(a.v, b.v, c.v)}; }
  friend Vec operator+(Vec a, Vec b) { return {_mm256_add_pd(a.v, b.v)}; }
  friend Vec operator-(Vec a, Vec b) { return {_mm256_sub_pd(a.v, b.v)}; }
  friend Vec max_nan(Vec m, Vec x) {
    const __m256d take =
        _mm256_or_pd(_mm256_cmp_pd(x.v, m.v, _CMP_GT_OQ), _mm256_cmp_pd(x.v, x.v, _CMP_UNORD_Q));
    return {_mm256_blendv_pd(m.v, x.v, take)};
  }
  friend Vec max_ordered(Vec m, Vec x) { return {_mm256_max_pd(x.v, m.v)}; }
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
  friend Vec operator+(Vec a, Vec b) { return {a.v + b.v}; }
  friend Vec operator-(Vec a, Vec b) { return {a.v - b.v}; }
  friend Vec max_nan(Vec m, Vec x) { return (x.v > m.v || x.v != x.v) ? x : m; }
  friend Vec max_ordered(Vec m, Vec x) { return x.v > m.v ? x : m; }
};
template <> struct Vec<double> {
  static constexpr int width = 1;
  double v;
  static Vec zero() { return {0.0}; }
  static Vec set1(double x) { return {x}; }
  static Vec load(const double* p) { return {*p}; }
  void store(double* p) const { *p = v; }
  friend Vec fma(Vec a, Vec b, Vec c) { return {std::fma(a.v, b.v, c.v)}; }
  friend Vec operator+(Vec a, Vec b) { return {a.v + b.v}; }
  friend Vec operator-(Vec a, Vec b) { return {a.v - b.v}; }
  friend Vec max_nan(Vec m, Vec x) { return (x.v > m.v || x.v != x.v) ? x : m; }
  friend Vec max_ordered(Vec m, Vec x) { return x.v > m.v ? x : m; }
};
inline Vec<float> load_widen(const bfloat16* p) {
  return Vec<float>::set1(to_compute(*p));
}
inline Vec<float> load_widen(const half* p) {
  return Vec<float>::set1(to_compute(*p));
}

#endif

#if !defined(__AVX512F__)
inline constexpr bool kVectorStridedLanes = false;

class StridedLanes {
public:
  StridedLanes(int64_t w, int64_t base, int step, int n, int valid, float fill)
      : w_(w), base_(base), step_(step), n_(n), valid_(valid), fill_(fill) {}
  void gather(const float* row, float* dst) const {
    for (int l = 0; l < n_; ++l) {
      const int64_t x = base_ + int64_t(step_) * l;
      dst[l] = x >= 0 && x < w_ && l < valid_ ? row[x] : fill_;
    }
  }

private:
  int64_t w_, base_;
  int step_, n_, valid_;
  float fill_;
};
class LaneGather {
public:
  LaneGather(const int32_t* offset, int count) : count_(count) {
    for (int l = 0; l < 16; ++l)
      offset_[l] = l < count ? offset[l] : 0;
  }
  void gather(const float* src, float* dst) const {
    for (int l = 0; l < 16; ++l)
      dst[l] = l < count_ ? src[offset_[l]] : 0.0f;
  }

private:
  int32_t offset_[16];
  int count_;
};
inline void copy_short_run(const float* src, int64_t n, float* dst) {
  for (int64_t x = 0; x < n; ++x)
    dst[x] = src[x];
}
inline void load_few(const float* src, int64_t n, float* dst) {
  for (int64_t x = 0; x < 16; ++x)
    dst[x] = x < n ? src[x] : 0.0f;
}
inline void store_few(const float* src, int64_t n, float* dst) {
  for (int64_t x = 0; x < n; ++x)
    dst[x] = src[x];
}
#endif

inline Vec<float> load_widen(const float* p) {
  return Vec<float>::load(p);
}
inline Vec<double> load_widen(const double* p) {
  return Vec<double>::load(p);
}

} // namespace vtc::kernels
