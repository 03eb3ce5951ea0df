// The convolution of few input values per output (a network's stem: 3 channels by 3 x 3, K =
// cin_g * kh * kw <= kConvRowsMaxK) one output row at a time. The K tap rows of output row y
// (input row y * sh + r * dh - pad_top of channel ci, columns x * sw + q * dw - pad_left) are
// gathered straight from the input rows into B panels, 16 columns per permute (simd.h's
// StridedLanes, zeros for padding), and the row's GEMM runs on them with gemm_core.h's
// micro-kernel: 8 output channels by up to 3 vectors, A packed whole. Nothing is staged but
// those panels, which stay in L1, where the padded-plane kernel writes every input plane
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
#include "simd.h"
#include "stage.h"

#if defined(__AVX512F__) // StridedLanes' permutes

namespace vtc::kernels::detail {

// The register tile: 8 output channels by 3 vectors, as the padded-plane kernel's.
inline constexpr int kConvRowsMR = 8, kConvRowsNV = 3;

// The row kernel for problem p (conv.h's ConvProblem; its input f32 rows in memory,
// rows_in_memory) with A packed whole per group in panels of kConvRowsMR output channels
// (pack_a_whole's layout) at `a`.
template <typename P> void conv2d_rows(const P& p, const float* a) {
  constexpr int MR = kConvRowsMR, NV = kConvRowsNV, W = Vec<float>::width;
  const Conv2dShape& s = p.s;
  const int64_t M = p.cout_g, K = p.cin_g * p.khw, m_panels = (M + MR - 1) / MR;
  const int64_t vectors = (s.w_out + W - 1) / W, ldc = vectors * W;
  // The gathers of every (filter column q, 16-column block), worked out once.
  std::vector<StridedLanes> lanes;
  lanes.reserve(size_t(s.kw * vectors));
  for (int64_t q = 0; q < s.kw; ++q)
    for (int64_t v = 0; v < vectors; ++v)
      lanes.emplace_back(s.w, v * W * s.stride_w + q * s.dil_w - s.pad_left, int(s.stride_w), W,
                         int(std::min<int64_t>(W, s.w_out - v * W)), 0.0f);
  // Output rows go to the threads one at a time as they come free (a stem is a program's
  // first step, often started before every thread is awake). B's column vectors v0 .. v0 +
  // NV - 1 are one panel (the last may be narrower), k-major, at bp + v0 * 16 * K.
  parallel_for(
      s.n * s.groups * s.h_out,
      [&](int64_t t) {
        const int64_t y = t % s.h_out, b = t / s.h_out, nb = b / s.groups, g = b % s.groups;
        float* bp = scratch<float, 4>(K * ldc);
        float* cb = scratch<float, 5>(m_panels * MR * ldc);
        for (int64_t v0 = 0; v0 < vectors; v0 += NV) {
          const int64_t width = std::min<int64_t>(NV, vectors - v0) * W;
          float* panel = bp + v0 * W * K;
          for (int64_t k = 0; k < K; ++k) {
            const int64_t ci = k / p.khw, r = k % p.khw / s.kw, q = k % s.kw;
            const int64_t hy = y * s.stride_h + r * s.dil_h - s.pad_top;
            float* dst = panel + k * width;
            if (hy < 0 || hy >= s.h) {
              std::fill(dst, dst + width, 0.0f);
              continue;
            }
            const float* row = p.in.ptr(Index<4>{nb, g * p.cin_g + ci, hy, 0});
            for (int64_t v = v0; v < v0 + width / W; ++v)
              lanes[size_t(q * vectors + v)].gather(row, dst + (v - v0) * W);
          }
          for (int64_t i = 0; i < m_panels; ++i) {
            const float* ap = a + (g * m_panels + i) * K * MR;
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
      },
      true);
}

} // namespace vtc::kernels::detail

#endif
