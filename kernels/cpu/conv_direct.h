// The direct convolution of small planes: the implicit GEMM of conv.h with B read straight
// from the staged input planes, no B panels packed and no C block buffered between the
// multiply-adds and the stores.
//
// The input planes are staged once per call with their padding and split into stride phases
// (window_phases.h), as for the padded-plane kernel: output column n = y * wq + x (x < wq)
// reads tap (r, q) of channel ci at a fixed offset, so B row k = (ci, r, q) is one contiguous
// run of the staged values. A register tile of MR output channels (the weights packed in
// panels of MR, once per program when constant) by up to NV vectors of columns loads its B
// vectors from those runs as they lie and is stored, through the epilogue, from a tile on the
// stack. On small planes the engine's B panels and C blocks cost as much as the multiply-adds
// (a 16 -> 16 3x3 convolution on 16 x 16 packs 41 K values for 0.6 M multiply-adds), and its
// blocks are too few to keep two threads busy; here every task is one tile, independent of
// the others, so any number of them splits evenly over the threads.
//
// Its channel-vector form (conv2d_direct_channels) turns the tile around: a vector of 16 output
// channels (the weights packed 16 channels a k) by up to 16 positions of whole output rows
// (14 of one row, 8 of two, 3 of three), each input value broadcast; it computes no column past
// a row, for the planes whose rows are far from whole vectors (14 x 14, 8 x 8, 7 x 7, 3 x 3).
//
// Each output is acc = 0; acc = fma(W, In, acc) over k = (ci, r, q) in order, padding
// positions included as zeros: the chain of every other kernel of conv.h, the same bits.
// Columns x >= w_out, and past the last output, are computed from whatever the buffer holds
// there (zeros, or staged values of the next row or plane) and never stored: no stored output
// depends on them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "conv_shape.h"
#include "gemm_core.h"
#include "parallel.h"
#include "simd.h"
#include "stage.h"
#include "window_phases.h"

namespace vtc::kernels {

// Direct convolutions of fewer flops run on the calling thread: every task is one tile read
// from L1 or L2, so the split pays off earlier than the engine's (kParallelMinFlops).
inline constexpr double kDirectConvParallelMinFlops = 1e5;
// Input planes of fewer staged values are staged on the calling thread.
inline constexpr int64_t kDirectConvParallelStage = 32 * 1024;

namespace detail {

// Tile (MR x NV' vectors, NV' <= NV) of the direct kernel: acc[r][v] = sum over channels ci
// and taps t of a[k * MR + r] * (planes + ci * plane_stride + taps[t])[v * W], k = ci * khw +
// t, into tile (row stride NV * W).
template <typename C, int MR, int NV, int NVMax>
inline void direct_conv_tile(const C* __restrict a, const C* planes, int64_t plane_stride,
                             const int64_t* taps, int64_t khw, int64_t cin, C* __restrict tile) {
  using V = Vec<C>;
  constexpr int W = V::width, LD = NVMax * W;
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[r][v] = V::zero();
  for (int64_t ci = 0; ci < cin; ++ci) {
    const C* plane = planes + ci * plane_stride;
    for (int64_t t = 0; t < khw; ++t, a += MR) {
      const C* row = plane + taps[t];
      V bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        bv[v] = V::load(row + v * W);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const V av = V::set1(a[r]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
          acc[r][v] = fma(av, bv[v], acc[r][v]);
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[r][v].store(tile + r * LD + v * W);
}

// Every input plane staged with its padding and split into its stride phases, at
// plane_stride values a plane (conv.h's ConvInput::stage_all_phases), with `slack` zeros past
// the last one for the tiles that read beyond it.
template <typename C, typename P>
const C* stage_direct_planes(const P& p, const Conv2dShape& s, int64_t plane_stride,
                             int64_t slack) {
  const int64_t staged_values = s.n * s.c_in * plane_stride;
  C* staged = scratch<C, 12>(staged_values + slack);
  {
    const SerialScope staging(staged_values < kDirectConvParallelStage);
    p.stage_all_phases(staged, plane_stride);
  }
  std::fill(staged + staged_values, staged + staged_values + slack, C(0));
  return staged;
}

// The weights in panels of MR output channels (gemm_core.h's pack_a_whole): the program's
// packs of constant weights (`constant_a`), others packed now into this thread's scratch.
template <typename C, int MR, typename P>
const C* direct_weights(const P& p, const Conv2dShape& s,
                        const std::shared_ptr<const C>& constant_a) {
  if (constant_a) return constant_a.get();
  const int64_t M = p.cout_g, K = p.cin_g * p.khw;
  C* buf = scratch<C, 6>(packed_a_size<MR>(s.groups, M, K));
  pack_a_whole<C, MR>(p, s.groups, M, K, buf);
  return buf;
}

// The direct kernel over a convolution problem `p` (conv.h's ConvProblem) and its
// padded-plane form `Planes` (PaddedPlaneConvProblem, for the stores): MR x NV tiles.
template <typename C, int MR, int NV, template <typename, typename> class Planes, typename P>
void conv2d_direct(const P& p, const Conv2dShape& s, const std::shared_ptr<const C>& constant_a) {
  using V = Vec<C>;
  constexpr int W = V::width, NR = NV * W;
  if (s.n <= 0 || p.cout_g <= 0 || s.h_out <= 0 || s.w_out <= 0) return;
  const WindowPhases& ph = p.ph;
  const int64_t M = p.cout_g, K = p.cin_g * p.khw, khw = p.khw;
  const int64_t N = Planes<C, P>::columns(s, ph);
  const double flops = 2.0 * double(s.n * s.c_out) * double(N) * double(K);
  const SerialScope serial(flops < kDirectConvParallelMinFlops);
  const int64_t plane_stride = (ph.size + W - 1) / W * W;
  const C* staged = stage_direct_planes<C>(p, s, plane_stride, NR);
  const int64_t m_panels = (M + MR - 1) / MR;
  const C* a = direct_weights<C, MR>(p, s, constant_a);
  const Planes<C, P> stores{p, staged, ph, plane_stride};
  const int64_t blocks = (N + NR - 1) / NR, batch = s.n * s.groups;
  parallel_for(batch * m_panels * blocks, [&](int64_t t) {
    const int64_t b = t / (m_panels * blocks), i = t / blocks % m_panels, j = t % blocks;
    const int64_t n0 = j * NR, nc = std::min<int64_t>(NR, N - n0);
    const C* panel = a + (b % s.groups * m_panels + i) * K * MR;
    const C* planes = staged + (b / s.groups * s.c_in + b % s.groups * p.cin_g) * plane_stride + n0;
    alignas(64) C tile[MR * NR];
    const int64_t* taps = ph.taps.data();
    const int64_t vectors = (nc + W - 1) / W; // the last block's: fewer, if it is narrower
    auto tile_of = [&]<int Vectors>() {
      direct_conv_tile<C, MR, Vectors, NV>(panel, planes, plane_stride, taps, khw, p.cin_g, tile);
    };
    if (vectors >= NV)
      tile_of.template operator()<NV>();
    else if (NV > 3 && vectors == 3)
      tile_of.template operator()<std::min(NV, 3)>();
    else if (vectors == 2)
      tile_of.template operator()<std::min(NV, 2)>();
    else
      tile_of.template operator()<1>();
    const int64_t rows = std::min<int64_t>(MR, M - i * MR);
    for (int64_t r = 0; r < rows; ++r)
      stores.store_c_row(b, i * MR + r, n0, nc, tile + r * NR);
  });
}

// Tile of the channel-vector form: acc[r][j] (a vector of W output channels) = sum over k of
// a[k * W ..] (the channels' weights of k, one vector) * row_k[r * wq + j] for X consecutive
// output positions j of Y consecutive output rows r, row_k = planes + ci * plane_stride +
// taps[t]; into tile[(r * X + j) * W].
template <typename C, int X, int Y>
inline void direct_channel_tile(const C* __restrict a, const C* planes, int64_t plane_stride,
                                int64_t wq, const int64_t* taps, int64_t khw, int64_t cin,
                                C* __restrict tile) {
  using V = Vec<C>;
  constexpr int W = V::width;
  V acc[Y][X];
#pragma GCC unroll 16
  for (int r = 0; r < Y; ++r)
#pragma GCC unroll 16
    for (int j = 0; j < X; ++j)
      acc[r][j] = V::zero();
  for (int64_t ci = 0; ci < cin; ++ci) {
    const C* plane = planes + ci * plane_stride;
    for (int64_t t = 0; t < khw; ++t, a += W) {
      const C* row = plane + taps[t];
      const V w = V::load(a);
      // One row pointer stepped by wq: the rows' offsets held apart would take Y registers.
#pragma GCC unroll 16
      for (int r = 0; r < Y; ++r, row += wq)
#pragma GCC unroll 16
        for (int j = 0; j < X; ++j)
          acc[r][j] = fma(w, V::set1(row[j]), acc[r][j]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < Y; ++r)
#pragma GCC unroll 16
    for (int j = 0; j < X; ++j)
      acc[r][j].store(tile + (r * X + j) * W);
}

// The direct kernel in its channel-vector form: a vector of W output channels (the weights
// packed in panels of W, k-major: one vector a k) by X positions of each of Y output rows
// (conv_shape.h's channel_form_tile), the input value of each broadcast. Only a wide row's
// last segment computes positions past the row (the positions form, above, computes the padded
// plane's row pitch); each output is still acc = fma(W, In, acc) over k in order. Where Y does
// not divide h_out (a tile fixed at compile time for another plane), the last tile of a column
// computes rows past the plane from the staged slack and stores only those inside.
template <typename C, int X, int Y, typename P_>
void conv2d_direct_channels(const P_& p, const Conv2dShape& s,
                            const std::shared_ptr<const C>& constant_a) {
  using V = Vec<C>;
  constexpr int W = V::width;
  if (s.n <= 0 || p.cout_g <= 0 || s.h_out <= 0 || s.w_out <= 0) return;
  const WindowPhases& ph = p.ph;
  const int64_t M = p.cout_g, K = p.cin_g * p.khw, khw = p.khw;
  const double flops = 2.0 * double(s.n * s.c_out) * double(s.h_out * s.w_out) * double(K);
  const SerialScope serial(flops < kDirectConvParallelMinFlops);
  const int64_t plane_stride = (ph.size + W - 1) / W * W;
  const C* staged = stage_direct_planes<C>(p, s, plane_stride, (Y - 1) * ph.wq + X);
  const int64_t m_panels = (M + W - 1) / W;
  const C* a = direct_weights<C, W>(p, s, constant_a);
  const int64_t segments = (s.w_out + X - 1) / X, batch = s.n * s.groups;
  const int64_t per_panel = (s.h_out + Y - 1) / Y * segments;
  parallel_for(batch * m_panels * per_panel, [&](int64_t t) {
    const int64_t b = t / (m_panels * per_panel), i = t / per_panel % m_panels;
    const int64_t y0 = t % per_panel / segments * Y, x0 = t % segments * X;
    const int64_t count = std::min<int64_t>(X, s.w_out - x0);
    const C* panel = a + (b % s.groups * m_panels + i) * K * W;
    const C* planes =
        staged + (b / s.groups * s.c_in + b % s.groups * p.cin_g) * plane_stride + y0 * ph.wq + x0;
    alignas(64) C tile[Y * X * W];
    direct_channel_tile<C, X, Y>(panel, planes, plane_stride, ph.wq, ph.taps.data(), khw, p.cin_g,
                                 tile);
    const int64_t channels = std::min<int64_t>(W, M - i * W);
    const int64_t nb = b / s.groups, co0 = b % s.groups * M + i * W;
    alignas(64) C run[X];
    const int64_t rows = std::min<int64_t>(Y, s.h_out - y0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < channels; ++c) {
        if (count == X) { // a whole segment: its length known at compile time
#pragma GCC unroll 16
          for (int j = 0; j < X; ++j)
            run[j] = tile[(r * X + j) * W + c];
        } else {
          for (int64_t j = 0; j < count; ++j)
            run[j] = tile[(r * X + j) * W + c];
        }
        if constexpr (std::is_same_v<C, float>) {
          if (count == X)
            store_run_vectors<X>(p.out, Index<4>{nb, co0 + c, y0 + r, x0}, X, run, p.epi);
          else
            store_run_vectors(p.out, Index<4>{nb, co0 + c, y0 + r, x0}, count, run, p.epi);
        } else {
          store_run(p.out, Index<4>{nb, co0 + c, y0 + r, x0}, count, run, p.epi);
        }
      }
  });
}

} // namespace detail
} // namespace vtc::kernels
