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

} // namespace detail

template <Accessor OutA, Accessor InA>
void max_pool2d(const OutA& out, const InA& in, const Pool2dShape& s) {
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
