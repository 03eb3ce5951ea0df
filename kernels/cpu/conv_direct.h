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
// Each output is acc = 0; acc = fma(W, In, acc) over k = (ci, r, q) in order, padding
// positions included as zeros: the chain of every other kernel of conv.h, the same bits.
// Columns x >= w_out, and past the last output, are computed from whatever the buffer holds
// there (finite: zeros or other staged values) and never stored.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "conv_shape.h"
#include "gemm_core.h"
#include "parallel.h"
#include "simd.h"
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
  const int64_t plane_stride = (ph.size + W - 1) / W * W;
  const int64_t staged_values = s.n * s.c_in * plane_stride;
  // The last column block reads up to NR values past the last plane's end: zeros there.
  C* staged = scratch<C, 12>(staged_values + NR);
  const double flops = 2.0 * double(s.n * s.c_out) * double(N) * double(K);
  const SerialScope serial(flops < kDirectConvParallelMinFlops);
  {
    const SerialScope staging(staged_values < kDirectConvParallelStage);
    p.stage_all_phases(staged, plane_stride);
  }
  std::fill(staged + staged_values, staged + staged_values + NR, C(0));
  const int64_t m_panels = (M + MR - 1) / MR;
  const C* a = constant_a.get();
  if (!a) {
    C* buf = scratch<C, 6>(packed_a_size<MR>(s.groups, M, K));
    pack_a_whole<C, MR>(p, s.groups, M, K, buf);
    a = buf;
  }
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

} // namespace detail
} // namespace vtc::kernels
