// Convolutions over tensors that lie channels-last ([n, h, w, c] in memory: the cpu target's
// StorageMap::channels_last, chosen for the tensors between convolutions). Their accessors are
// indexed in that order too — out[n, y, x, co], in[n, y, x, ci] — so a position's channels are
// one run along the last dimension: a register of 16 output channels is one vector through the
// epilogue (store_run_vectors), and an input position's channels are one contiguous copy.
//
// conv2d_nhwc is the direct kernel's channel-vector form (conv_direct.h) over such tensors: a
// vector of 16 output channels (the weights packed 16 channels a k, as there) by X positions
// of each of Y output rows, each input value broadcast from the image staged channels-last
// with its padding. The staged geometry (channels, row pitch, strides) is known at compile
// time, so every position of a tile is a constant offset from one pointer: a multiply-add with
// its broadcast operand in memory, no address arithmetic.
//
// depthwise_nhwc is the depthwise kernel of depthwise_channels.h over such tensors: a task
// stages a band of input rows of 16 channels (a position's channels one vector copy) and
// stores each output position's 16 channels as one run.
//
// Each output is acc = 0; acc = fma(W, In, acc) over k = (ci, r, q) in order (depthwise: the
// taps (r, q) in order), padding positions included as zeros: the chain of every kernel of
// conv.h, the same bits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "conv.h"
#include "conv_direct.h"
#include "conv_shape.h"
#include "parallel.h"
#include "simd.h"
#include "stage.h"

namespace vtc::kernels {

// The staged geometry: conv_shape.h (nhwc_staging).

namespace detail {

// out[i + j along the last dim] = epi(index, src[j]) for j < channels: store_run_vectors, with
// a whole vector of channels (the common case) of a compile-time count.
template <typename A, typename Epi>
inline void store_channels(const A& out, const Index<4>& i, int64_t channels, const float* src,
                           const Epi& epi) {
  constexpr int kW = Vec<float>::width;
  if (channels == kW)
    store_run_vectors<kW>(out, i, kW, src, epi);
  else
    store_run_vectors(out, i, channels, src, epi);
}

// Where input row y of image nb lies in memory as f32 channels-last, `width` positions of
// `channels` values one after another from its first: that pointer; else null.
template <typename InA>
const float* nhwc_row_in_memory(const InA& in, int64_t nb, int64_t y, int64_t width,
                                int64_t channels) {
  if constexpr (InA::has_ptr && std::is_same_v<typename InA::value_type, float>) {
    if (!run_contiguous<InA>(0, channels)) return nullptr;
    const float* p = in.ptr(Index<4>{nb, y, 0, 0});
    for (int64_t x = 1; x < width; ++x)
      if (in.ptr(Index<4>{nb, y, x, 0}) != p + x * channels) return nullptr;
    return p;
  }
  return nullptr;
}

// Image nb of the channels-last input `in` ([n, h, w, c]) staged with its padding: staged
// row j is input row j - pad_top, staged column i input column i - pad_left, c_in values a
// position; zeros where no input lies, and `slack` zeros past the last row.
template <typename C, typename InA>
void stage_nhwc_image(const InA& in, const Conv2dShape& s, const NhwcStaging& g, int64_t nb,
                      C* staged) {
  parallel_for(g.rows, [&](int64_t j) {
    C* row = staged + j * g.pitch;
    const int64_t y = j - s.pad_top;
    if (y < 0 || y >= s.h) {
      std::fill(row, row + g.pitch, C(0));
      return;
    }
    const int64_t x_lo = std::max<int64_t>(0, -s.pad_left);
    const int64_t x_hi = std::min<int64_t>(s.w, g.cols - s.pad_left);
    std::fill(row, row + std::max<int64_t>(0, x_lo + s.pad_left) * s.c_in, C(0));
    if (const float* src = nhwc_row_in_memory(in, nb, y, s.w, s.c_in))
      std::copy(src + x_lo * s.c_in, src + x_hi * s.c_in, row + (x_lo + s.pad_left) * s.c_in);
    else
      for (int64_t x = x_lo; x < x_hi; ++x)
        load_run(in, Index<4>{nb, y, x, 0}, s.c_in, row + (x + s.pad_left) * s.c_in);
    std::fill(row + std::max<int64_t>(x_hi + s.pad_left, 0) * s.c_in, row + g.pitch, C(0));
  });
  std::fill(staged + g.rows * g.pitch, staged + g.rows * g.pitch + g.slack, C(0));
}

// Where input row y of image nb (indexed [n, c, h, w]) lies in memory as f32 with its
// channels a constant stride apart, each channel's row contiguous: channel 0's row, and the
// stride in `channel_stride`; else null.
template <typename InA>
const float* nchw_rows_in_memory(const InA& in, const Conv2dShape& s, int64_t nb, int64_t y,
                                 int64_t& channel_stride) {
  if constexpr (InA::has_ptr && std::is_same_v<typename InA::value_type, float>) {
    if (!run_contiguous<InA>(0, s.w)) return nullptr;
    const float* p = in.ptr(Index<4>{nb, 0, y, 0});
    channel_stride = s.c_in > 1 ? in.ptr(Index<4>{nb, 1, y, 0}) - p : 0;
    for (int64_t c = 2; c < s.c_in; ++c)
      if (in.ptr(Index<4>{nb, c, y, 0}) != p + c * channel_stride) return nullptr;
    return p;
  }
  return nullptr;
}

// The same staging from an input indexed [n, c, h, w] (a tensor not held channels-last): a
// position's channels gathered a plane apart where the rows lie in memory so, else each
// channel's row read as a run and scattered.
template <typename C, typename InA>
void stage_nchw_image(const InA& in, const Conv2dShape& s, const NhwcStaging& g, int64_t nb,
                      C* staged) {
  std::fill(staged, staged + g.rows * g.pitch + g.slack, C(0));
  const int64_t x_lo = std::max<int64_t>(0, -s.pad_left);
  const int64_t x_hi = std::min<int64_t>(s.w, g.cols - s.pad_left);
  if (x_hi <= x_lo) return;
  parallel_for(g.rows, [&](int64_t j) {
    const int64_t y = j - s.pad_top;
    if (y < 0 || y >= s.h) return;
    C* row = staged + j * g.pitch + (x_lo + s.pad_left) * s.c_in;
    int64_t stride = 0;
    if (const float* src = nchw_rows_in_memory(in, s, nb, y, stride)) {
      for (int64_t x = x_lo; x < x_hi; ++x) {
        C* dst = row + (x - x_lo) * s.c_in;
        for (int64_t c = 0; c < s.c_in; ++c)
          dst[c] = src[c * stride + x];
      }
      return;
    }
    C* run = scratch<C, 24>(x_hi - x_lo);
    for (int64_t c = 0; c < s.c_in; ++c) {
      load_run(in, Index<4>{nb, c, y, x_lo}, x_hi - x_lo, run);
      for (int64_t x = 0; x < x_hi - x_lo; ++x)
        row[x * s.c_in + c] = run[x];
    }
  });
}

// Tile of the channels-last form: acc[v][r][j] (vector v of W output channels, panel v of
// `a`, `panel` values apart) = sum over k = (ci, t) of a[v * panel + k * W ..] * in[r * Sh *
// Pitch + j * Sw * Cin + taps[t] + ci], into tile[((v * Y + r) * X + j) * W]. Each broadcast
// input value feeds NV vectors of channels.
template <typename C, int X, int Y, int NV, int64_t Cin, int64_t Pitch, int64_t Sh, int64_t Sw>
inline void nhwc_channel_tile(const C* __restrict a, int64_t panel, const C* in,
                              const int64_t* taps, int64_t khw, C* __restrict tile) {
  using V = Vec<C>;
  constexpr int W = V::width;
  V acc[NV][Y][X];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v)
#pragma GCC unroll 16
    for (int r = 0; r < Y; ++r)
#pragma GCC unroll 16
      for (int j = 0; j < X; ++j)
        acc[v][r][j] = V::zero();
  auto step = [&](const C* at, const C* k_weights) __attribute__((always_inline)) {
    V w[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      w[v] = V::load(k_weights + v * panel);
#pragma GCC unroll 16
    for (int r = 0; r < Y; ++r)
#pragma GCC unroll 16
      for (int j = 0; j < X; ++j) {
        const V x = V::set1(at[r * Sh * Pitch + j * Sw * Cin]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
          acc[v][r][j] = fma(w[v], x, acc[v][r][j]);
      }
  };
  if (khw == 1) { // a 1x1 filter: one tap a channel, no tap loop
    for (int64_t ci = 0; ci < Cin; ++ci, a += W)
      step(in + taps[0] + ci, a);
  } else {
    for (int64_t ci = 0; ci < Cin; ++ci, ++in)
      for (int64_t t = 0; t < khw; ++t, a += W)
        step(in + taps[t], a);
  }
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v)
#pragma GCC unroll 16
    for (int r = 0; r < Y; ++r)
#pragma GCC unroll 16
      for (int j = 0; j < X; ++j)
        acc[v][r][j].store(tile + ((v * Y + r) * X + j) * W);
}

// The weights of a convolution in panels of W output channels, k-major (conv.h's
// packed_weights over ConvWeights).
template <typename C, typename WA> struct NhwcWeights : ConvWeights<C, WA> { int64_t cin_g, khw; };

} // namespace detail

// The convolution of a channels-last input into a channels-last output (groups == 1), on
// tiles of X positions of Y output rows (conv_shape.h's channel_form_tile of the output
// plane) by NV vectors of output channels (nhwc_channel_vectors) and the staged geometry `Cin`,
// `Pitch` (nhwc_staging), strides `Sh`, `Sw`, all from the generated code. `out` is indexed [n, y,
// x, c] where `OutChannelsLast`, else [n, c, y, x] (a tensor not held channels-last: each tile row
// stored a channel at a time); `in` likewise by `InChannelsLast`; `w` [c_out, c_in, kh, kw].
template <int X, int Y, int NV, int64_t Cin, int64_t Pitch, int64_t Sh, int64_t Sw,
          bool InChannelsLast, bool OutChannelsLast, Accessor OutA, Accessor InA, Accessor WA,
          typename Epi = NoEpilogue>
void conv2d_nhwc(const OutA& out, const InA& in, const WA& w, const Conv2dShape& s,
                 const Epi& epi = {}, ConstantRef wref = {}) {
  using C = float;
  using V = Vec<C>;
  constexpr int W = V::width;
  static_assert(X * Y * NV <= kNhwcAccumulators, "conv2d_nhwc: too many accumulators");
  if (s.n <= 0 || s.c_out <= 0 || s.h_out <= 0 || s.w_out <= 0) return;
  // The generated code gives the geometry of this shape (nhwc_staging): Cin == s.c_in,
  // Pitch == g.pitch, Sh, Sw its strides.
  const NhwcStaging g = nhwc_staging(s, ChannelTile{X, Y});
  const int64_t khw = s.kh * s.kw, K = s.c_in * khw, M = s.c_out;
  const detail::NhwcWeights<C, WA> weights{{w, 1, M, s.kh, s.kw}, s.c_in, khw};
  std::shared_ptr<const C> packed = detail::packed_weights<C, W>(weights, s, wref);
  const C* a = packed.get();
  if (!a) {
    C* buf = scratch<C, 20>(packed_a_size<W>(1, M, K));
    pack_a_whole<C, W>(weights, 1, M, K, buf);
    a = buf;
  }
  // Tap (r, q) of staged position (y, x) at (y + r * dh) * Pitch + (x + q * dw) * Cin.
  int64_t* taps = scratch<int64_t, 23>(khw);
  for (int64_t t = 0; t < khw; ++t)
    taps[t] = t / s.kw * s.dil_h * Pitch + t % s.kw * s.dil_w * Cin;
  const double flops = 2.0 * double(s.c_out) * double(s.h_out * s.w_out) * double(K);
  const SerialScope serial(flops < kDirectConvParallelMinFlops);
  C* staged = scratch<C, 21>(g.rows * g.pitch + g.slack);
  const int64_t m_panels = (M + W - 1) / W, segments = (s.w_out + X - 1) / X;
  const int64_t groups = (m_panels + NV - 1) / NV, per_group = (s.h_out + Y - 1) / Y * segments;
  for (int64_t nb = 0; nb < s.n; ++nb) {
    {
      const SerialScope staging(g.rows * g.pitch < kDirectConvParallelStage);
      if constexpr (InChannelsLast)
        detail::stage_nhwc_image(in, s, g, nb, staged);
      else
        detail::stage_nchw_image(in, s, g, nb, staged);
    }
    parallel_for(groups * per_group, [&](int64_t t) {
      const int64_t i0 = t / per_group * NV, y0 = t % per_group / segments * Y,
                    x0 = t % segments * X;
      const int nv = int(std::min<int64_t>(NV, m_panels - i0));
      alignas(64) C tile[NV * Y * X * W];
      const C* at = staged + y0 * Sh * Pitch + x0 * Sw * Cin;
      auto tile_of = [&]<int N>() {
        detail::nhwc_channel_tile<C, X, Y, N, Cin, Pitch, Sh, Sw>(a + i0 * K * W, K * W, at, taps,
                                                                  khw, tile);
      };
      // The last group of panels may hold fewer than NV.
      if (nv == NV)
        tile_of.template operator()<NV>();
      else if (NV > 2 && nv == 2)
        tile_of.template operator()<std::min(NV, 2)>();
      else if (NV > 3 && nv == 3)
        tile_of.template operator()<std::min(NV, 3)>();
      else
        tile_of.template operator()<1>();
      const int64_t rows = std::min<int64_t>(Y, s.h_out - y0);
      const int64_t count = std::min<int64_t>(X, s.w_out - x0);
      for (int v = 0; v < nv; ++v) {
        const int64_t co0 = (i0 + v) * W, channels = std::min<int64_t>(W, M - co0);
        const C* part = tile + v * Y * X * W;
        if constexpr (OutChannelsLast) {
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < count; ++j)
              detail::store_channels(out, Index<4>{nb, y0 + r, x0 + j, co0}, channels,
                                     part + (r * X + j) * W, epi);
        } else {
          C run[X];
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < channels; ++c) {
              for (int64_t j = 0; j < count; ++j)
                run[j] = part[(r * X + j) * W + c];
              store_run_vectors(out, Index<4>{nb, co0 + c, y0 + r, x0}, count, run, epi);
            }
        }
      }
    });
  }
}

namespace detail {

// Output rows [y0, y1) of channels [co0, co0 + lanes) of image nb of a depthwise convolution
// (one output channel an input channel) over channels-last tensors; taps_t the block's
// filters as transpose_depthwise_taps lays them out.
template <typename OutA, typename InA, typename Epi>
void depthwise_nhwc_band(const OutA& out, const InA& in, const Conv2dShape& s, const Epi& epi,
                         const float* taps_t, int64_t nb, int64_t co0, int lanes, int64_t y0,
                         int64_t y1) {
  using V = Vec<float>;
  constexpr int kW = V::width;
  const int64_t wp = depthwise_padded_cols(s);
  const int64_t rows = (y1 - y0 - 1) * s.stride_h + (s.kh - 1) * s.dil_h + 1;
  float* band = scratch<float, 22>(rows * wp * kW);
  // Band row j is input row y0 * sh - pad_top + j; column i input column i - pad_left.
  std::fill(band, band + rows * wp * kW, 0.0f);
  const int64_t x_lo = std::max<int64_t>(0, -s.pad_left);
  const int64_t x_hi = std::min<int64_t>(s.w, wp - s.pad_left);
  for (int64_t j = 0; j < rows; ++j) {
    const int64_t y = y0 * s.stride_h - s.pad_top + j;
    if (y < 0 || y >= s.h) continue;
    float* dst = band + (j * wp + s.pad_left) * kW;
#if defined(__AVX512F__)
    if (const float* src = nhwc_row_in_memory(in, nb, y, s.w, s.c_in)) {
      const __mmask16 mask = lane_range(0, lanes);
      for (int64_t x = x_lo; x < x_hi; ++x)
        _mm512_store_ps(dst + x * kW, _mm512_maskz_loadu_ps(mask, src + x * s.c_in + co0));
      continue;
    }
#endif
    for (int64_t x = x_lo; x < x_hi; ++x)
      load_run(in, Index<4>{nb, y, x, co0}, lanes, dst + x * kW);
  }
  alignas(64) float result[kW];
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t x = 0; x < s.w_out; ++x) {
      V acc = V::zero();
      for (int64_t r = 0; r < s.kh; ++r) {
        const float* src =
            band + (((y - y0) * s.stride_h + r * s.dil_h) * wp + x * s.stride_w) * kW;
        for (int64_t q = 0; q < s.kw; ++q)
          acc = fma(V::load(taps_t + (r * s.kw + q) * kW), V::load(src + q * s.dil_w * kW), acc);
      }
      acc.store(result);
      store_channels(out, Index<4>{nb, y, x, co0}, lanes, result, epi);
    }
}

} // namespace detail

// Input values a depthwise band stages per lane, at most (a band of output rows whose input
// rows fit L1 with the rest of the task).
inline constexpr int64_t kDepthwiseNhwcBandValues = 1024;

// The depthwise convolution (c_in == c_out == groups) of a channels-last input into a
// channels-last output, both indexed [n, y, x, c]; `w` [c_out, 1, kh, kw]. Constant filters
// (`wref` given) are transposed once per program.
template <Accessor OutA, Accessor InA, Accessor WA, typename Epi = NoEpilogue>
void depthwise_nhwc(const OutA& out, const InA& in, const WA& w, const Conv2dShape& s,
                    const Epi& epi = {}, ConstantRef wref = {}) {
  constexpr int64_t kW = Vec<float>::width;
  if (s.n <= 0 || s.c_out <= 0 || s.h_out <= 0 || s.w_out <= 0) return;
  const int64_t taps = s.kh * s.kw;
  auto filter = [&](int64_t co) -> const float* {
    float* row = scratch<float, 1>(taps);
    for (int64_t r = 0; r < s.kh; ++r)
      load_run(w, Index<4>{co, 0, r, 0}, s.kw, row + r * s.kw);
    return row;
  };
  std::shared_ptr<const float> keep;
  const float* taps_t = detail::depthwise_block_taps(s, filter, wref, keep);
  const int64_t per_row = depthwise_padded_cols(s) * s.stride_h;
  const int64_t band = std::clamp<int64_t>(kDepthwiseNhwcBandValues / per_row, 1, s.h_out);
  const int64_t blocks = (s.c_out + kW - 1) / kW, bands = (s.h_out + band - 1) / band;
  parallel_for(s.n * blocks * bands, [&](int64_t t) {
    const int64_t nb = t / (blocks * bands), block = t / bands % blocks, y0 = t % bands * band;
    const int64_t co0 = block * kW;
    detail::depthwise_nhwc_band(out, in, s, epi, taps_t + block * taps * kW, nb, co0,
                                int(std::min<int64_t>(kW, s.c_out - co0)), y0,
                                std::min(s.h_out, y0 + band));
  });
}

} // namespace vtc::kernels
