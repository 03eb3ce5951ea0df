// The convolution of few input values per output (a network's stem: 3 channels by 3 x 3, K =
// cin_g * kh * kw <= kConvRowsMaxK) one output row at a time. The K tap rows of output row y
// (input row y * sh + r * dh - pad_top of channel ci, columns x * sw + q * dw - pad_left) are
// copied into B panels from each input row split once into its stride phases (row_phases.h,
// zeros for padding), and the row's GEMM runs on them with gemm_core.h's micro-kernel: 8
// output channels by up to 3 vectors, A packed whole. Nothing is staged but those panels and
// one row's phases, which stay in L1, where the padded-plane kernel writes every input plane
// split into stride phases and packs B again from them. Each output is the micro-kernel's
// chain over k = (ci, r, q) in order from zero, padding included as zeros: the implicit
// GEMM's bits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "conv_shape.h"
#include "gemm_core.h"
#include "parallel.h"
#include "row_phases.h"
#include "simd.h"
#include "stage.h"

#if defined(__AVX512F__) // the tile (8 x 3 vectors) wants AVX-512's 32 registers

namespace vtc::kernels::detail {

// The register tile: 8 output channels by 3 vectors, as the padded-plane kernel's.
inline constexpr int kConvRowsMR = 8, kConvRowsNV = 3;

// What the row kernel of one problem works out once: how an input row splits into the
// phases its filter columns read, and the sizes of the panels.
struct ConvRowsPlan {
  RowPhases phases;
  int64_t M = 0, K = 0, m_panels = 0, vectors = 0, ldc = 0;
};

template <typename P> ConvRowsPlan conv_rows_plan(const P& p) {
  constexpr int MR = kConvRowsMR, W = Vec<float>::width;
  const Conv2dShape& s = p.s;
  const int64_t vectors = (s.w_out + W - 1) / W;
  return {RowPhases(s.w, s.w_out, s.kw, s.stride_w, s.dil_w, s.pad_left, W),
          p.cout_g,
          p.cin_g * p.khw,
          (p.cout_g + MR - 1) / MR,
          vectors,
          vectors * W};
}

// Output row y of image nb, group g of problem p (conv.h's ConvProblem; its input f32 rows in
// memory, rows_in_memory), stored through p.out with p.epi, with A packed whole per group in
// panels of kConvRowsMR output channels (pack_a_whole's layout) at `a`. B's column vectors v0
// .. v0 + NV - 1 are one panel (the last may be narrower), k-major, at bp + v0 * 16 * K; each
// input row (ci, r) is split into its phases once, and its filter columns' rows copied out.
template <typename P>
void conv_row(const P& p, const float* a, const ConvRowsPlan& plan, int64_t nb, int64_t g,
              int64_t y) {
  constexpr int MR = kConvRowsMR, NV = kConvRowsNV, W = Vec<float>::width;
  const Conv2dShape& s = p.s;
  const int64_t M = plan.M, K = plan.K, vectors = plan.vectors, ldc = plan.ldc;
  float* bp = scratch<float, 4>(K * ldc);
  float* cb = scratch<float, 5>(plan.m_panels * MR * ldc);
  float* phases = scratch<float, 18>(plan.phases.buffer_size());
  for (int64_t ci = 0; ci < p.cin_g; ++ci)
    for (int64_t r = 0; r < s.kh; ++r) {
      const int64_t hy = y * s.stride_h + r * s.dil_h - s.pad_top;
      const bool inside = hy >= 0 && hy < s.h;
      if (inside) plan.phases.split(p.in.ptr(Index<4>{nb, g * p.cin_g + ci, hy, 0}), 0.0f, phases);
      for (int64_t q = 0; q < s.kw; ++q) {
        const int64_t k = (ci * s.kh + r) * s.kw + q;
        const float* src = phases + plan.phases.tap(q);
        for (int64_t v0 = 0; v0 < vectors; v0 += NV) {
          const int64_t panel_vectors = std::min<int64_t>(NV, vectors - v0);
          float* dst = bp + v0 * W * K + k * panel_vectors * W;
          for (int64_t v = 0; v < panel_vectors; ++v)
            (inside ? Vec<float>::load(src + (v0 + v) * W) : Vec<float>::zero()).store(dst + v * W);
        }
      }
    }
  for (int64_t v0 = 0; v0 < vectors; v0 += NV) {
    const int64_t width = std::min<int64_t>(NV, vectors - v0) * W;
    const float* panel = bp + v0 * W * K;
    for (int64_t i = 0; i < plan.m_panels; ++i) {
      const float* ap = a + (g * plan.m_panels + i) * K * MR;
      float* c = cb + i * MR * ldc + v0 * W;
      if (width == NV * W)
        micro_kernel<float, MR, NV>(K, ap, panel, c, ldc, false);
      else if (width == 2 * W)
        micro_kernel<float, MR, 2>(K, ap, panel, c, ldc, false);
      else
        micro_kernel<float, MR, 1>(K, ap, panel, c, ldc, false);
    }
  }
  for (int64_t m = 0; m < M; ++m)
    store_run(p.out, Index<4>{nb, g * M + m, y, 0}, s.w_out, cb + m * ldc, p.epi);
}

// The row kernel over every output row of problem p (see conv_row). Rows go to the threads
// one at a time as they come free (a stem is a program's first step, often started before
// every thread is awake).
template <typename P> void conv2d_rows(const P& p, const float* a) {
  const Conv2dShape& s = p.s;
  const ConvRowsPlan plan = conv_rows_plan(p);
  parallel_for(
      s.n * s.groups * s.h_out,
      [&](int64_t t) {
        const int64_t y = t % s.h_out, b = t / s.h_out;
        conv_row(p, a, plan, b / s.groups, b % s.groups, y);
      },
      true);
}

} // namespace vtc::kernels::detail

#endif
