// 2-D pooling, NCHW, over accessors: max and average pooling with kernel, strides,
// dilations and padding, and global average / max pooling. The caller gives the output size
// (so ceil_mode is its business: windows may then run past the bottom/right padding, and
// those positions count nowhere). Each (n, c) plane is staged in a local buffer padded with
// the pooling's neutral value (-inf for max, 0 for average), reduced in a fixed window order
// (r, s), and stored through the output accessor.
//
// Average divisor: with count_include_pad, the window positions inside the padded input
// [-pad_top, h + pad_bottom) x [-pad_left, w + pad_right) (ONNX / PyTorch); without, the
// positions inside the input. Max pooling propagates NaN.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "../common/window_shapes.h"
#include "parallel.h"
#include "reduce.h"
#include "simd.h"
#include "stage.h"
#include "vmath.h"
#include "window_phases.h"

namespace vtc::kernels {

enum class PoolKind { Max, Average };

namespace detail {

// Number of j in [0, k) with lo <= start + j*d < hi.
inline int64_t window_count(int64_t start, int64_t k, int64_t d, int64_t lo, int64_t hi) {
  int64_t n = 0;
  for (int64_t j = 0; j < k; ++j)
    n += (start + j * d >= lo && start + j * d < hi);
  return n;
}

// Whether p[0 .. n) holds a NaN: the largest magnitude bit pattern (a loop that vectorises)
// above that of infinity.
template <typename C> bool any_nan(const C* p, int64_t n) {
  using Bits = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
  constexpr Bits kMagnitude = ~Bits(0) >> 1;
  const Bits inf = std::bit_cast<Bits>(std::numeric_limits<C>::infinity());
  Bits most = 0;
  for (int64_t j = 0; j < n; ++j)
    most = std::max(most, Bits(std::bit_cast<Bits>(p[j]) & kMagnitude));
  return most > inf;
}

// The padded plane is split into its stride phases (window_phases.h): the whole output plane
// is one flat run per window tap, reduced 16 values at a time held across the taps. Taps are
// reduced in the order (r, q). Planes go to the threads in chunks (small planes are many).
template <PoolKind Kind, typename OutA, typename InA>
void pool2d(const OutA& out, const InA& in, const Pool2dShape& s, bool count_include_pad) {
  using C = compute_t<InA>;
  using V = Vec<C>;
  constexpr int64_t kBlock = 16;
  constexpr int kVecs = int(kBlock) / V::width;
  if (s.n <= 0 || s.c <= 0 || s.h_out <= 0 || s.w_out <= 0) return;
  const C pad_value = Kind == PoolKind::Max ? -std::numeric_limits<C>::infinity() : C(0);
  const WindowPhases ph =
      window_phases(s.h_out, s.w_out, s.kh, s.kw, s.stride_h, s.stride_w, s.dil_h, s.dil_w, kBlock);
  const int64_t flat = ph.flat, taps = s.kh * s.kw;
  // About 16k tap values per chunk, a plane counted 64 more for its staging.
  const int64_t grain = std::max<int64_t>(1, 16384 / (flat * taps + 64));
  parallel_chunks(s.n * s.c, grain, [&](int64_t t0, int64_t t1) {
    C* phases = scratch<C, 2>(ph.size);
    C* acc = scratch<C, 1>(flat);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t nb = t / s.c, ch = t % s.c;
      stage_window_phases(in, PlaneAt{nb, ch, s.h, s.w, s.pad_top, s.pad_left}, ph, pad_value,
                          phases);
      // Without a NaN among the phases, max_nan is the one-instruction max_ordered.
      const bool nan = Kind == PoolKind::Max && any_nan(phases, ph.size);
      for (int64_t j0 = 0; j0 < flat; j0 += kBlock) {
        V a[kVecs];
        for (int v = 0; v < kVecs; ++v)
          a[v] = V::set1(pad_value);
        for (int64_t k = 0; k < taps; ++k) {
          const C* src = phases + ph.taps[size_t(k)] + j0;
          for (int v = 0; v < kVecs; ++v) {
            if constexpr (Kind == PoolKind::Max)
              a[v] = nan ? max_nan(a[v], V::load(src + v * V::width))
                         : max_ordered(a[v], V::load(src + v * V::width));
            else
              a[v] = a[v] + V::load(src + v * V::width);
          }
        }
        for (int v = 0; v < kVecs; ++v)
          a[v].store(acc + j0 + v * V::width);
      }
      for (int64_t y = 0; y < s.h_out; ++y) {
        C* res = acc + y * ph.wq;
        if constexpr (Kind == PoolKind::Average) {
          const int64_t y0 = y * s.stride_h - s.pad_top;
          const int64_t rows = count_include_pad
                                   ? window_count(y0, s.kh, s.dil_h, -s.pad_top, s.h + s.pad_bottom)
                                   : window_count(y0, s.kh, s.dil_h, 0, s.h);
          for (int64_t x = 0; x < s.w_out; ++x) {
            const int64_t x0 = x * s.stride_w - s.pad_left;
            const int64_t cols =
                count_include_pad ? window_count(x0, s.kw, s.dil_w, -s.pad_left, s.w + s.pad_right)
                                  : window_count(x0, s.kw, s.dil_w, 0, s.w);
            res[x] = res[x] / C(rows * cols);
          }
        }
        store_run(out, Index<4>{nb, ch, y, 0}, s.w_out, res);
      }
    }
  });
}

#if defined(__AVX512F__) // the permutes of two-vector rows
// Narrow f32 planes (w <= 32 values, w_out <= 16, rows in memory) are max-pooled from the input
// rows in registers, without staging phases: per window row, one masked load pair, then per
// tap one permute picking its column of every output (padding and lanes past w_out set to
// -inf) and one max. Padding rows are skipped (a max with -inf keeps the accumulator). Taps
// are reduced in the order (r, q) by max_nan, which equals max_ordered where no NaN is read:
// the bits of pool2d's staged path, whichever it would have taken. (Staging each small plane
// cost more than the pooling: store-to-load forwarding fails on its masked stores.)
inline constexpr int64_t kRowsPoolMaxWidth = 32, kRowsPoolMaxTaps = 16;
// Planes of at most this many rows take each row's maxima once where windows overlap in rows.
inline constexpr int64_t kRowsPoolSharedRows = 64;

inline bool max_pool_rows_fit(const Pool2dShape& s) {
  return s.w <= kRowsPoolMaxWidth && s.w_out <= 16 && s.kw <= kRowsPoolMaxTaps;
}

template <typename OutA, typename InA>
void max_pool2d_rows(const OutA& out, const InA& in, const Pool2dShape& s) {
  using V = Vec<float>;
  if (s.n <= 0 || s.c <= 0 || s.h_out <= 0 || s.w_out <= 0) return;
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i pick[kRowsPoolMaxTaps];
  __mmask16 inside[kRowsPoolMaxTaps];
  bool whole[kRowsPoolMaxTaps];
  for (int64_t q = 0; q < s.kw; ++q) {
    // Lane x reads input column x * stride_w - pad_left + q * dil_w.
    pick[q] = _mm512_add_epi32(_mm512_mullo_epi32(lane, _mm512_set1_epi32(int(s.stride_w))),
                               _mm512_set1_epi32(int(q * s.dil_w - s.pad_left)));
    inside[q] = _mm512_cmpge_epi32_mask(pick[q], _mm512_setzero_si512()) &
                _mm512_cmplt_epi32_mask(pick[q], _mm512_set1_epi32(int(s.w))) &
                lane_range(0, s.w_out);
    whole[q] = inside[q] == lane_range(0, s.w_out); // lanes past w_out are never stored
  }
  const __mmask16 lo = lane_range(0, s.w), hi = lane_range(0, s.w - 16);
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const int64_t grain = std::max<int64_t>(1, 4096 / (s.h_out * s.kh * s.kw + 16));
  // Planes t .. t + P - 1 at once: each output row's maxima in the order (r, q), the P chains
  // of dependent maxima interleaved (one plane alone waited on the max's latency at every tap).
  // KW, where not 0, is s.kw known at compile time: the taps unrolled, their permutes and
  // masks held in registers (the loop over a run-time kw reloaded them at every tap).
  auto planes = [&]<int KW, int P>(int64_t t, std::integral_constant<int, KW>,
                                   std::integral_constant<int, P>) {
    const int64_t kw = KW > 0 ? KW : s.kw;
    alignas(64) float res[16];
    int64_t nb[P], ch[P];
    for (int i = 0; i < P; ++i)
      nb[i] = (t + i) / s.c, ch[i] = (t + i) % s.c;
    // The maxima of input row iy over its taps (q), a vector of output columns, plane i.
    auto row_maxima = [&](int64_t iy, V * m) __attribute__((always_inline)) {
      __m512 a[P], b[P];
      for (int i = 0; i < P; ++i) {
        const float* row = in.ptr(Index<4>{nb[i], ch[i], iy, 0});
        a[i] = _mm512_maskz_loadu_ps(lo, row);
        b[i] = _mm512_maskz_loadu_ps(hi, row + 16);
      }
#pragma GCC unroll 16
      for (int64_t q = 0; q < kw; ++q) {
        if (whole[q]) { // every output column reads this tap inside the row: no -inf lanes
#pragma GCC unroll 4
          for (int i = 0; i < P; ++i)
            m[i] = max_nan(m[i], V{_mm512_permutex2var_ps(a[i], pick[q], b[i])});
        } else {
#pragma GCC unroll 4
          for (int i = 0; i < P; ++i)
            m[i] =
                max_nan(m[i], V{_mm512_mask_blend_ps(inside[q], neg_inf,
                                                     _mm512_permutex2var_ps(a[i], pick[q], b[i]))});
        }
      }
    };
    auto store = [&](int64_t y, const V* acc) {
      for (int i = 0; i < P; ++i) {
        const Index<4> at{nb[i], ch[i], y, 0};
        if (float* p = run_target<float>(out, at, s.w_out)) {
          _mm512_mask_storeu_ps(p, lane_range(0, s.w_out), acc[i].v);
        } else {
          acc[i].store(res);
          store_run(out, at, s.w_out, res);
        }
      }
    };
    // Each output row from fold(iy, acc), which takes window row iy into the row's maxima.
    auto output_rows = [&](auto&& fold) __attribute__((always_inline)) {
      for (int64_t y = 0; y < s.h_out; ++y) {
        V acc[P];
        for (int i = 0; i < P; ++i)
          acc[i] = V{neg_inf};
        for (int64_t r = 0; r < s.kh; ++r) {
          const int64_t iy = y * s.stride_h - s.pad_top + r * s.dil_h;
          if (iy < 0 || iy >= s.h) continue;
          fold(iy, acc);
        }
        store(y, acc);
      }
    };
    // Where windows overlap in rows: each input row's maxima over its taps taken once,
    // each output row then the maximum over its window's rows in order (r). Folding a window's taps
    // row by row keeps what the order (r, q) gives: the first of equal values (+0 before -0) and
    // the last NaN.
    if (s.h <= kRowsPoolSharedRows && s.stride_h < (s.kh - 1) * s.dil_h + 1) {
      V rows[P][kRowsPoolSharedRows];
      for (int64_t iy = 0; iy < s.h; ++iy) {
        V m[P];
        for (int i = 0; i < P; ++i)
          m[i] = V{neg_inf};
        row_maxima(iy, m);
        for (int i = 0; i < P; ++i)
          rows[i][iy] = m[i];
      }
      output_rows([&](int64_t iy, V* acc) {
        for (int i = 0; i < P; ++i)
          acc[i] = max_nan(acc[i], rows[i][iy]);
      });
    } else {
      output_rows(row_maxima);
    }
  };
  auto run = [&]<int KW>(std::integral_constant<int, KW> kw) {
    parallel_chunks(s.n * s.c, grain, [&](int64_t t0, int64_t t1) {
      int64_t t = t0;
      for (; t + 3 < t1; t += 4)
        planes(t, kw, std::integral_constant<int, 4>{});
      for (; t < t1; ++t)
        planes(t, kw, std::integral_constant<int, 1>{});
    });
  };
  switch (s.kw) {
  case 2:
    return run(std::integral_constant<int, 2>{});
  case 3:
    return run(std::integral_constant<int, 3>{});
  case 5:
    return run(std::integral_constant<int, 5>{});
  default:
    return run(std::integral_constant<int, 0>{});
  }
}
#endif

} // namespace detail

template <Accessor OutA, Accessor InA>
void max_pool2d(const OutA& out, const InA& in, const Pool2dShape& s) {
#if defined(__AVX512F__)
  if constexpr (rows_in_memory<float, InA>) {
    if (run_contiguous<InA>(0, s.w) && detail::max_pool_rows_fit(s))
      return detail::max_pool2d_rows(out, in, s);
  }
#endif
  detail::pool2d<PoolKind::Max>(out, in, s, false);
}

template <Accessor OutA, Accessor InA>
void avg_pool2d(const OutA& out, const InA& in, const Pool2dShape& s,
                bool count_include_pad = false) {
  detail::pool2d<PoolKind::Average>(out, in, s, count_include_pad);
}

// out[n, c, 0, 0] = mean (or max) of in[n, c, :, :]: the reductions of reduce.h over the
// plane, presented as rows of h*w values.
template <Accessor OutA, Accessor InA>
void global_avg_pool2d(const OutA& out, const InA& in, int64_t n, int64_t c, int64_t h, int64_t w) {
  detail::reduce_planes<ReduceKind::Mean>(out, in, n, c, h, w);
}
template <Accessor OutA, Accessor InA>
void global_max_pool2d(const OutA& out, const InA& in, int64_t n, int64_t c, int64_t h, int64_t w) {
  detail::reduce_planes<ReduceKind::Max>(out, in, n, c, h, w);
}

} // namespace vtc::kernels
