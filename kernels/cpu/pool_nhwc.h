// Max pooling where the input or the output lies channels-last (the cpu target's
// StorageMap::channels_last, cpu_layouts.h). Over a channels-last input a vector holds 16
// channels of one position, so a window tap is one vector load and one max for 16 outputs,
// whatever the plane's width (the NCHW kernels of pool.h vectorise along the output rows: 14
// of 16 lanes on a 14-wide row, 3 on a 3-wide one, and permute each tap's columns out of the
// rows). An input in NCHW is pooled by pool.h into a buffer and stored channels-last from it.
//
// Each output is the max over its window's taps in the order (r, q), taps past the input
// skipped, folded by max_nan from -inf: the chain of pool.h's kernels (padding there is -inf,
// which max_nan leaves unchanged), so the same bits, NaNs and signed zeros included.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "../common/window_shapes.h"
#include "accessor.h"
#include "parallel.h"
#include "pool.h"
#include "simd.h"
#include "stage.h"
#include "window_phases.h"

namespace vtc::kernels {

namespace detail {

// Output row y of image nb, all channels, of a max pooling over a channels-last input
// (indexed [n, y, x, c]), into row[x * c + ch]. `column(iy, ix)` points at the channels of
// input position (iy, ix) where they lie in memory one after another, else is null (each
// value then loaded through the accessor). Up to kPoolNhwcBlocks vectors of channels are
// pooled at once: their chains of dependent maxima interleave (one alone waited on the
// max's latency at every tap).
inline constexpr int kPoolNhwcBlocks = 8;

template <int P, typename InA, typename Column>
void max_pool_blocks_nhwc(const InA& in, const Pool2dShape& s, int64_t nb, int64_t y, int64_t c0,
                          const Column& column, float* row) {
  using V = Vec<float>;
  constexpr int W = V::width;
  const int64_t lanes_last = std::min<int64_t>(W, s.c - (c0 + (P - 1) * W));
  alignas(64) float buf[W];
  auto load = [&](const float* p, int64_t iy, int64_t ix, int b) -> V {
    const int64_t c = c0 + b * W, lanes = b + 1 < P ? W : lanes_last;
    if (p) {
#if defined(__AVX512F__)
      return b + 1 < P ? V::load(p + c) : V{_mm512_maskz_loadu_ps(lane_range(0, lanes), p + c)};
#else
      if (b + 1 < P) return V::load(p + c);
      for (int64_t l = 0; l < W; ++l)
        buf[l] = l < lanes ? p[c + l] : 0.0f;
      return V::load(buf);
#endif
    }
    for (int64_t l = 0; l < W; ++l)
      buf[l] = l < lanes ? float(in.load(Index<4>{nb, iy, ix, c + l})) : 0.0f;
    return V::load(buf);
  };
  for (int64_t x = 0; x < s.w_out; ++x) {
    V acc[P];
#pragma GCC unroll 8
    for (int b = 0; b < P; ++b)
      acc[b] = V::set1(-std::numeric_limits<float>::infinity());
    for (int64_t r = 0; r < s.kh; ++r) {
      const int64_t iy = y * s.stride_h - s.pad_top + r * s.dil_h;
      if (iy < 0 || iy >= s.h) continue;
      for (int64_t q = 0; q < s.kw; ++q) {
        const int64_t ix = x * s.stride_w - s.pad_left + q * s.dil_w;
        if (ix < 0 || ix >= s.w) continue;
        const float* p = column(iy, ix);
#pragma GCC unroll 8
        for (int b = 0; b < P; ++b)
          acc[b] = max_nan(acc[b], load(p, iy, ix, b));
      }
    }
#pragma GCC unroll 8
    for (int b = 0; b < P; ++b) {
      const int64_t lanes = b + 1 < P ? W : lanes_last;
      acc[b].store(buf);
      std::copy(buf, buf + lanes, row + x * s.c + c0 + b * W);
    }
  }
}

template <typename InA, typename Column>
void max_pool_row_nhwc(const InA& in, const Pool2dShape& s, int64_t nb, int64_t y,
                       const Column& column, float* row) {
  constexpr int W = Vec<float>::width, B = kPoolNhwcBlocks;
  const int64_t blocks = (s.c + W - 1) / W;
  for (int64_t b0 = 0; b0 < blocks; b0 += B) {
    const int64_t c0 = b0 * W;
    switch (std::min<int64_t>(B, blocks - b0)) {
    case 8:
      max_pool_blocks_nhwc<8>(in, s, nb, y, c0, column, row);
      break;
    case 7:
      max_pool_blocks_nhwc<7>(in, s, nb, y, c0, column, row);
      break;
    case 6:
      max_pool_blocks_nhwc<6>(in, s, nb, y, c0, column, row);
      break;
    case 5:
      max_pool_blocks_nhwc<5>(in, s, nb, y, c0, column, row);
      break;
    case 4:
      max_pool_blocks_nhwc<4>(in, s, nb, y, c0, column, row);
      break;
    case 3:
      max_pool_blocks_nhwc<3>(in, s, nb, y, c0, column, row);
      break;
    case 2:
      max_pool_blocks_nhwc<2>(in, s, nb, y, c0, column, row);
      break;
    default:
      max_pool_blocks_nhwc<1>(in, s, nb, y, c0, column, row);
      break;
    }
  }
}

// Output row y of image nb, row[x * c + ch] (a vector's slack past its end), stored into an
// output indexed [n, c, y, x]: blocks of 16 positions by 16 channels turned around in
// registers, each channel's run of positions then one store.
template <typename OutA>
void store_rows_by_channel(const OutA& out, const Pool2dShape& s, int64_t nb, int64_t y,
                           const float* row) {
  using V = Vec<float>;
  constexpr int W = V::width;
#if defined(__AVX512F__)
  alignas(64) float buf[W];
  for (int64_t x0 = 0; x0 < s.w_out; x0 += W) {
    const int64_t len = std::min<int64_t>(W, s.w_out - x0);
    for (int64_t c0 = 0; c0 < s.c; c0 += W) {
      V v[W];
      for (int i = 0; i < W; ++i)
        v[i] = i < len ? V::load(row + (x0 + i) * s.c + c0) : V::zero();
      transpose_16x16(v); // v[l]: channel c0 + l at positions x0 ..
      const int64_t lanes = std::min<int64_t>(W, s.c - c0);
      for (int64_t l = 0; l < lanes; ++l) {
        const Index<4> at{nb, c0 + l, y, x0};
        if (float* p = run_target<float>(out, at, len)) {
          _mm512_mask_storeu_ps(p, lane_range(0, len), v[l].v);
        } else {
          v[l].store(buf);
          store_run(out, at, len, buf);
        }
      }
    }
  }
#else
  float* run = scratch<float, 28>(s.w_out);
  for (int64_t c = 0; c < s.c; ++c) {
    for (int64_t x = 0; x < s.w_out; ++x)
      run[x] = row[x * s.c + c];
    store_run(out, Index<4>{nb, c, y, 0}, s.w_out, run);
  }
  (void)W;
#endif
}

// Output row y of image nb from `nchw` (the pooled values [n, c, h_out, w_out]) stored into an
// output indexed [n, y, x, c]: blocks of 16 channels by 16 positions turned around in
// registers, each position's channels then one store.
template <typename OutA>
void store_rows_by_position(const OutA& out, const Pool2dShape& s, int64_t nb, int64_t y,
                            const float* nchw) {
  using V = Vec<float>;
  constexpr int W = V::width;
  alignas(64) float buf[W];
#if defined(__AVX512F__)
  for (int64_t x0 = 0; x0 < s.w_out; x0 += W) {
    const int64_t len = std::min<int64_t>(W, s.w_out - x0);
    for (int64_t c0 = 0; c0 < s.c; c0 += W) {
      const int64_t lanes = std::min<int64_t>(W, s.c - c0);
      V v[W];
      for (int l = 0; l < W; ++l)
        v[l] = l < lanes ? V{_mm512_maskz_loadu_ps(
                               lane_range(0, len),
                               nchw + ((nb * s.c + c0 + l) * s.h_out + y) * s.w_out + x0)}
                         : V::zero();
      transpose_16x16(v); // v[i]: position x0 + i, channels c0 ..
      for (int64_t i = 0; i < len; ++i) {
        const Index<4> at{nb, y, x0 + i, c0};
        if (float* p = run_target<float>(out, at, lanes)) {
          _mm512_mask_storeu_ps(p, lane_range(0, lanes), v[i].v);
        } else {
          v[i].store(buf);
          store_run(out, at, lanes, buf);
        }
      }
    }
  }
#else
  for (int64_t x = 0; x < s.w_out; ++x)
    for (int64_t c0 = 0; c0 < s.c; c0 += W) {
      const int64_t lanes = std::min<int64_t>(W, s.c - c0);
      for (int64_t l = 0; l < lanes; ++l)
        buf[l] = nchw[((nb * s.c + c0 + l) * s.h_out + y) * s.w_out + x];
      store_run(out, Index<4>{nb, y, x, c0}, lanes, buf);
    }
#endif
}

} // namespace detail

// out = max_pool2d(in) (pool.h) with `in` indexed [n, y, x, c] where `InChannelsLast`, else
// [n, c, y, x], and `out` likewise by `OutChannelsLast`. A task is one output row of every
// channel.
template <bool InChannelsLast, bool OutChannelsLast, Accessor OutA, Accessor InA>
void max_pool2d_nhwc(const OutA& out, const InA& in, const Pool2dShape& s) {
  if (s.n <= 0 || s.c <= 0 || s.h_out <= 0 || s.w_out <= 0) return;
  if constexpr (!InChannelsLast) {
    // pool.h's kernel into an NCHW buffer, then each position's channels stored as one run.
    float* nchw = scratch<float, 27>(s.n * s.c * s.h_out * s.w_out);
    max_pool2d(DenseAccessor<float, 4>(nchw, {s.n, s.c, s.h_out, s.w_out}), in, s);
    parallel_for(s.n * s.h_out, [&](int64_t t) {
      const int64_t nb = t / s.h_out, y = t % s.h_out;
      if constexpr (OutChannelsLast) {
        detail::store_rows_by_position(out, s, nb, y, nchw);
      } else {
        for (int64_t c = 0; c < s.c; ++c)
          store_run(out, Index<4>{nb, c, y, 0}, s.w_out,
                    nchw + ((nb * s.c + c) * s.h_out + y) * s.w_out);
      }
    });
  } else {
    parallel_for(s.n * s.h_out, [&](int64_t t) {
      const int64_t nb = t / s.h_out, y = t % s.h_out;
      // The row's positions, every channel; a vector's slack past the end for the transposes.
      float* row = scratch<float, 27>(s.w_out * s.c + Vec<float>::width);
      auto column = [&](int64_t iy, int64_t ix) -> const float* {
        if constexpr (rows_in_memory<float, InA>) {
          if (run_contiguous<InA>(0, s.c)) return in.ptr(Index<4>{nb, iy, ix, 0});
        }
        return nullptr;
      };
      detail::max_pool_row_nhwc(in, s, nb, y, column, row);
      if constexpr (OutChannelsLast) {
        for (int64_t x = 0; x < s.w_out; ++x)
          store_run(out, Index<4>{nb, y, x, 0}, s.c, row + x * s.c);
      } else {
        detail::store_rows_by_channel(out, s, nb, y, row);
      }
    });
  }
}

} // namespace vtc::kernels
