// Resize in every mode and coordinate transformation ONNX defines, over tap tables: the code
// generator computes, for each dimension and output coordinate, the input indices read and their
// weights (ops/resize_taps.h, the reference interpreter's own rules) and passes them here as
// constant arrays. An output element is the sum, in double, over every combination of one tap
// per dimension (the last dimension's taps fastest) of the product of their weights (in
// dimension order) times the input element, skipping combinations of weight 0: the reference's
// arithmetic in its order, then rounded to the compute type (float for f16 and bf16) and stored. A
// coordinate marked outside (tf_crop_and_resize beyond the roi) gives `extrapolation`.
//
// Every dimension but the last is the same along a row of the output, so a row first lists the
// combinations of their taps (in order) with the running product of their weights and their
// input indices; each output of the row then walks that list and its own last-dimension taps
// (reading through the input row's pointer where the rows lie in memory).
// The products are the same left-to-right products (((1 * w0) * w1) ... * w_last), so the bits
// are those of the per-element walk, at a fraction of its index arithmetic. A row with more
// outer combinations than kResampleOuterCombos takes the per-element walk.
//
// With AVX-512, where the input's rows lie in memory and no last coordinate is outside, a row's
// outputs are computed eight at a time in double lanes: each outer combination's input row
// widened to double once, each last-dimension tap's values gathered from it, the same products
// and sums in the same order per output (a masked add where the weight is 0), so the same bits.
// Rows of up to 16 values from up to four outer combinations are all held in registers, and four
// vectors of outputs summed at once over them (DeepLabV3's last Resize, 10 x 2 x 2 to 64 x 64:
// 86 -> 71 us on one thread, 50 -> 34 us on two).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "elementwise.h"
#include "parallel.h"

namespace vtc::kernels {

// One dimension's taps: output coordinate o reads index[o * taps + j] with weight
// weight[o * taps + j], j < taps (weight 0 where o has fewer taps); outside, when not null,
// marks the coordinates whose outputs are the extrapolation value.
struct ResampleAxis {
  int64_t taps = 1;
  const int64_t* index = nullptr;
  const double* weight = nullptr;
  const bool* outside = nullptr;
};

inline constexpr int64_t kResampleOuterCombos = 64;

namespace detail {

// Output element o (all its coordinates set) by walking every combination of taps.
template <Accessor In, int R>
double resample_element(const In& in, const Index<R>& o, const ResampleAxis (&axes)[R]) {
  double acc = 0;
  int64_t pick[R] = {};
  for (bool more = true; more;) {
    double weight = 1;
    Index<R> i{};
    for (int d = 0; d < R; ++d) {
      const int64_t k = o[d] * axes[d].taps + pick[d];
      weight *= axes[d].weight[k];
      i[d] = axes[d].index[k];
    }
    if (weight != 0) acc += weight * double(in.load(i));
    more = false;
    for (int d = R - 1; d >= 0; --d) {
      if (++pick[d] < axes[d].taps) {
        more = true;
        break;
      }
      pick[d] = 0;
    }
  }
  return acc;
}

// The combinations of the outer dimensions' taps for output rows (coordinates 0 .. R-2): each
// one's product of weights (dimension order, starting from 1) and input index, the last outer
// dimension's taps fastest. The combinations of dimensions 0 .. R-3 (the row's plane) are kept
// from one row to the next while its plane stays the same: a row then combines them with its
// own dimension R-2 taps, the same products in the same order.
template <int R> struct ResampleOuterCombos {
  const ResampleAxis (&axes)[R];
  int64_t plane_count = -1; // combinations of dimensions 0 .. R-3, -1: none kept
  Index<R> plane{};         // the coordinates they were made for
  double plane_weight[kResampleOuterCombos];
  Index<R> plane_index[kResampleOuterCombos];

  // Row o's combinations into weight and index; their count, or -1 when there are more than
  // kResampleOuterCombos.
  int64_t of(const Index<R>& o, double* weight, Index<R>* index) {
    if constexpr (R == 1) {
      weight[0] = 1;
      index[0] = Index<R>{};
      return 1;
    } else {
      const int64_t taps = axes[R - 2].taps;
      bool same = plane_count >= 0;
      for (int d = 0; same && d + 2 < R; ++d)
        same = plane[d] == o[d];
      if (!same) make_plane(o);
      if (plane_count < 0 || plane_count * taps > kResampleOuterCombos) return -1;
      const int64_t* li = axes[R - 2].index + o[R - 2] * taps;
      const double* lw = axes[R - 2].weight + o[R - 2] * taps;
      int64_t c = 0;
      for (int64_t p = 0; p < plane_count; ++p)
        for (int64_t j = 0; j < taps; ++j, ++c) {
          weight[c] = plane_weight[p] * lw[j];
          index[c] = plane_index[p];
          index[c][R - 2] = li[j];
        }
      return c;
    }
  }

private:
  void make_plane(const Index<R>& o) {
    plane = o;
    int64_t count = 1;
    for (int d = 0; d + 2 < R; ++d)
      count *= axes[d].taps;
    plane_count = count > kResampleOuterCombos ? -2 : count;
    if (plane_count < 0) return;
    int64_t pick[R] = {};
    for (int64_t c = 0; c < count; ++c) {
      double w = 1;
      Index<R> i{};
      for (int d = 0; d + 2 < R; ++d) {
        const int64_t k = o[d] * axes[d].taps + pick[d];
        w *= axes[d].weight[k];
        i[d] = axes[d].index[k];
      }
      plane_weight[c] = w;
      plane_index[c] = i;
      for (int d = R - 3; d >= 0; --d) {
        if (++pick[d] < axes[d].taps) break;
        pick[d] = 0;
      }
    }
  }
};

#if defined(__AVX512F__)
// The last dimension's taps for vectors of eight outputs: tap j of output x at [j * w8 + x],
// for the w8 outputs of whole vectors.
struct ResampleLanes {
  std::vector<int64_t> index;
  std::vector<double> weight;
  int64_t w8 = 0;
};

inline ResampleLanes resample_lanes(const ResampleAxis& last, int64_t w) {
  ResampleLanes l;
  l.w8 = w / 8 * 8;
  l.index.resize(size_t(last.taps * l.w8));
  l.weight.resize(size_t(last.taps * l.w8));
  for (int64_t j = 0; j < last.taps; ++j)
    for (int64_t x = 0; x < l.w8; ++x) {
      l.index[size_t(j * l.w8 + x)] = last.index[x * last.taps + j];
      l.weight[size_t(j * l.w8 + x)] = last.weight[x * last.taps + j];
    }
  return l;
}

// acc[x] for x < lanes.w8 of one output row: for each outer combination c in order, its input
// row (rows in memory, in_w values) widened to double into row_values (at least 16 long), then
// for each tap j in order acc += (outer_weight[c] * weight) * value where that weight is not 0.
// The input row of outer combination c widened to double, as two vectors of eight (rows of up
// to 16 values; zeros past in_w).
template <typename In, int R>
void resample_row_registers(const In& in, const Index<R>& at, int64_t in_w, double* row_values,
                            __m512d& lo, __m512d& hi) {
  Index<R> i = at;
  i[R - 1] = 0;
  const auto* row = in.ptr(i);
  // A float row goes straight into the registers (widened by instruction, exactly): scalar
  // stores read back as vectors stall the load on every row.
  if constexpr (std::is_same_v<std::remove_cv_t<std::remove_pointer_t<decltype(row)>>, float>) {
    const __mmask16 live = __mmask16((uint32_t(1) << in_w) - 1);
    const __m512 values = _mm512_maskz_loadu_ps(live, row);
    lo = _mm512_cvtps_pd(_mm512_castps512_ps256(values));
    hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(values), 1)));
  } else {
    for (int64_t k = 0; k < in_w; ++k)
      row_values[k] = double(to_compute(row[k]));
    for (int64_t k = in_w; k < 16; ++k)
      row_values[k] = 0;
    lo = _mm512_loadu_pd(row_values);
    hi = _mm512_loadu_pd(row_values + 8);
  }
}

// a + (ow * weight) * value for the eight outputs of lanes' entry t, where that weight is not 0
// (not (weight == 0), as the scalar walk skips); pick(at, live) gives the eight input values at
// the entry's indices.
template <typename Pick>
inline __m512d add_tap(__m512d a, __m512d ow, const ResampleLanes& lanes, size_t t, Pick pick) {
  const __m512d weight = _mm512_mul_pd(ow, _mm512_loadu_pd(&lanes.weight[t]));
  const __mmask8 live = _mm512_cmp_pd_mask(weight, _mm512_setzero_pd(), _CMP_NEQ_UQ);
  const __m512d value = pick(_mm512_loadu_si512(&lanes.index[t]), live);
  return _mm512_mask_add_pd(a, live, a, _mm512_mul_pd(weight, value));
}

// The most outer combinations whose rows resample_row_lanes holds in registers at once.
inline constexpr int64_t kResampleRegisterCombos = 4;

// acc[x] for x < lanes.w8 of one output row: for each outer combination c in order, its input
// row (rows in memory, in_w values) widened to double into row_values (at least 16 long), then
// for each tap j in order acc += (outer_weight[c] * weight) * value where that weight is not 0.
// Rows of up to 16 values are picked from two registers by a permute, longer ones gathered
// from row_values. With up to kResampleRegisterCombos such rows, every combination's rows are
// held at once and a vector of outputs stays in a register over all of them (the same sums in
// the same order).
template <typename In, int R>
void resample_row_lanes(const In& in, int64_t outer, const double* outer_weight,
                        const Index<R>* outer_index, const ResampleLanes& lanes, int64_t taps,
                        int64_t in_w, double* row_values, double* acc) {
  const int64_t w8 = lanes.w8;
  if (in_w <= 16 && outer <= kResampleRegisterCombos) {
    __m512d lo[kResampleRegisterCombos], hi[kResampleRegisterCombos], ow[kResampleRegisterCombos];
    for (int64_t c = 0; c < outer; ++c) {
      resample_row_registers(in, outer_index[c], in_w, row_values, lo[c], hi[c]);
      ow[c] = _mm512_set1_pd(outer_weight[c]);
    }
    // Output vector x's sum over (c, j) in order; V vectors at a time, their chains of adds
    // independent.
    auto vectors = [&]<int V>(int64_t x) {
      __m512d a[V];
      for (int v = 0; v < V; ++v)
        a[v] = _mm512_setzero_pd();
      for (int64_t c = 0; c < outer; ++c)
        for (int64_t j = 0; j < taps; ++j)
          for (int v = 0; v < V; ++v)
            a[v] =
                add_tap(a[v], ow[c], lanes, size_t(j * w8 + x + 8 * v), [&](__m512i at, __mmask8) {
                  return _mm512_permutex2var_pd(lo[c], at, hi[c]);
                });
      for (int v = 0; v < V; ++v)
        _mm512_storeu_pd(acc + x + 8 * v, a[v]);
    };
    int64_t x = 0;
    for (; x + 32 <= w8; x += 32)
      vectors.template operator()<4>(x);
    for (; x < w8; x += 8)
      vectors.template operator()<1>(x);
    return;
  }
  for (int64_t x = 0; x < w8; x += 8)
    _mm512_storeu_pd(acc + x, _mm512_setzero_pd());
  for (int64_t c = 0; c < outer; ++c) {
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    if (in_w <= 16) {
      resample_row_registers(in, outer_index[c], in_w, row_values, lo, hi);
    } else {
      Index<R> i = outer_index[c];
      i[R - 1] = 0;
      const auto* row = in.ptr(i);
      for (int64_t k = 0; k < in_w; ++k)
        row_values[k] = double(to_compute(row[k]));
    }
    const __m512d ow = _mm512_set1_pd(outer_weight[c]);
    for (int64_t x = 0; x < w8; x += 8) {
      __m512d a = _mm512_loadu_pd(acc + x);
      for (int64_t j = 0; j < taps; ++j)
        a = add_tap(a, ow, lanes, size_t(j * w8 + x), [&](__m512i at, __mmask8 live) {
          return in_w <= 16
                     ? _mm512_permutex2var_pd(lo, at, hi)
                     : _mm512_mask_i64gather_pd(_mm512_setzero_pd(), live, at, row_values, 8);
        });
      _mm512_storeu_pd(acc + x, a);
    }
  }
}
#endif

} // namespace detail

template <Accessor Out, Accessor In, int R>
void resample(const Out& out, const In& in, const Index<R>& out_shape,
              const ResampleAxis (&axes)[R], double extrapolation) {
  static_assert(R >= 1 && Out::rank == R && In::rank == R);
  using C = compute_t<In>;
  const int64_t w = out_shape[R - 1], rows = detail::outer_count(out_shape);
  if (w <= 0 || rows <= 0) return;
  int64_t combos = 1;
  for (int d = 0; d < R; ++d)
    combos *= axes[d].taps;
  const ResampleAxis& last = axes[R - 1];
  // Whether the input's rows lie in memory as one run each (then read through row pointers).
  bool row_pointers = false;
  int64_t in_w = 1;
  if constexpr (In::has_ptr) {
    for (int64_t k = 0; k < w * last.taps; ++k)
      in_w = std::max(in_w, last.index[k] + 1);
    row_pointers = run_contiguous<In>(0, in_w);
  }
#if defined(__AVX512F__)
  const bool lanes_fit = row_pointers && !last.outside && w >= 8;
  const detail::ResampleLanes lanes =
      lanes_fit ? detail::resample_lanes(last, w) : detail::ResampleLanes{};
#endif
  // About 4k taps a chunk.
  parallel_chunks(rows, std::max<int64_t>(1, 4096 / (w * combos + 1)), [&](int64_t r0, int64_t r1) {
    double outer_weight[kResampleOuterCombos];
    Index<R> outer_index[kResampleOuterCombos];
    detail::ResampleOuterCombos<R> combos_of{axes};
    for (int64_t r = r0; r < r1; ++r) {
      Index<R> o = detail::row_index(out_shape, r);
      bool row_outside = false;
      for (int d = 0; d + 1 < R; ++d)
        row_outside = row_outside || (axes[d].outside && axes[d].outside[o[d]]);
      const int64_t outer = row_outside ? 0 : combos_of.of(o, outer_weight, outer_index);
      int64_t x = 0;
#if defined(__AVX512F__)
      if constexpr (In::has_ptr) {
        if (lanes_fit && !row_outside && outer >= 0) {
          double* acc = scratch<double, 2>(lanes.w8);
          C* values = scratch<C, 3>(lanes.w8);
          detail::resample_row_lanes(in, outer, outer_weight, outer_index, lanes, last.taps, in_w,
                                     scratch<double, 1>(std::max<int64_t>(in_w, 16)), acc);
          if constexpr (std::is_same_v<C, float>) { // the same rounding, eight at a time
            for (int64_t k = 0; k < lanes.w8; k += 8)
              _mm256_storeu_ps(values + k, _mm512_cvtpd_ps(_mm512_loadu_pd(acc + k)));
          } else {
            for (int64_t k = 0; k < lanes.w8; ++k)
              values[k] = C(acc[k]);
          }
          o[R - 1] = 0;
          store_run(out, o, lanes.w8, values);
          x = lanes.w8;
        }
      }
#endif
      // Four outputs at a time where no last coordinate is outside: their sums are
      // independent chains, each in its own order.
      if (!row_outside && outer >= 0 && !last.outside)
        for (; x + 4 <= w; x += 4) {
          double acc[4] = {0, 0, 0, 0};
          const int64_t* li = last.index + x * last.taps;
          const double* lw = last.weight + x * last.taps;
          for (int64_t c = 0; c < outer; ++c) {
            Index<R> i = outer_index[c];
            const double ow = outer_weight[c];
            // The four chains over this combination's last-dimension taps; `value(k)` reads
            // the input at last coordinate k.
            auto add_taps = [&](auto value) {
              for (int64_t j = 0; j < last.taps; ++j)
                for (int u = 0; u < 4; ++u) {
                  const double weight = ow * lw[u * last.taps + j];
                  if (weight == 0) continue;
                  acc[u] += weight * double(value(li[u * last.taps + j]));
                }
            };
            if constexpr (In::has_ptr) {
              if (row_pointers) { // the same loads, through the row's pointer
                i[R - 1] = 0;
                const auto* row = in.ptr(i);
                add_taps([&](int64_t k) { return to_compute(row[k]); });
                continue;
              }
            }
            add_taps([&](int64_t k) {
              i[R - 1] = k;
              return in.load(i);
            });
          }
          for (int u = 0; u < 4; ++u) {
            o[R - 1] = x + u;
            out.store(o, C(acc[u]));
          }
        }
      for (; x < w; ++x) {
        o[R - 1] = x;
        double acc = extrapolation;
        if (!row_outside && !(last.outside && last.outside[x])) {
          if (outer < 0) {
            acc = detail::resample_element(in, o, axes);
          } else {
            acc = 0;
            const int64_t* li = last.index + x * last.taps;
            const double* lw = last.weight + x * last.taps;
            for (int64_t c = 0; c < outer; ++c) {
              Index<R> i = outer_index[c];
              for (int64_t j = 0; j < last.taps; ++j) {
                const double weight = outer_weight[c] * lw[j];
                if (weight == 0) continue;
                i[R - 1] = li[j];
                acc += weight * double(in.load(i));
              }
            }
          }
        }
        out.store(o, C(acc));
      }
    }
  });
}

} // namespace vtc::kernels
