// The pointwise (1x1, stride 1, no padding) convolution of an input whose channel rows lie in
// memory, read in place: a register tile of 8 output channels by up to 3 vectors of 16
// positions loads its input vectors straight from the channel rows and broadcasts the weights
// (packed in panels of 8 channels, k-major, once per program when constant). No B panels are
// packed and no C block is buffered, as in the direct kernel of conv_direct.h: on small planes
// those cost as much as the multiply-adds (96 -> 16 channels on 14 x 14: the engine's 12-row
// tile computes 24 rows for 16 and packs the 96 x 196 input first).
//
// Each output is acc = 0; acc = fma(W, In, acc) over the input channels in order: the chain of
// every kernel of conv.h, the same bits. Positions past the plane are loaded as zeros (masked)
// and never stored.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "conv_direct.h"
#include "conv_shape.h"
#include "gemm_core.h"
#include "parallel.h"
#include "simd.h"
#include "stage.h"

namespace vtc::kernels {

#if defined(__AVX512F__)
// The tile: kPointwiseMR output channels by up to kPointwiseNV vectors of positions.
inline constexpr int kPointwiseMR = 8, kPointwiseNV = 3;

// Output planes of at most this many positions take the direct pointwise kernel; larger ones
// the engine, whose B panels stay in L1 across its row tiles (here a tile's input columns are
// re-read from L2 by every group of 8 channels).
inline constexpr int64_t kPointwiseDirectMaxPositions = 4096;
// Planes smaller than a vector take it for at most this many output channels (more go to the
// transposed GEMM, vectors over channels).
inline constexpr int64_t kPointwiseDirectMaxChannels = 32;

namespace detail {

// acc[r][v] = sum over k of a[k * MR + r] * rows[k][v * 16 ..], NV vectors, the last one's
// lanes `last` only; stored to tile[r * NV * 16 + v * 16].
template <int NV>
inline void pointwise_tile(const float* __restrict a, const float* const* rows, int64_t n0,
                           int64_t K, __mmask16 last, float* __restrict tile) {
  using V = Vec<float>;
  constexpr int MR = kPointwiseMR, W = V::width;
  V acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v)
      acc[r][v] = V::zero();
  for (int64_t k = 0; k < K; ++k, a += MR) {
    const float* row = rows[k] + n0;
    V b[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v)
      b[v] = v + 1 < NV ? V::load(row + v * W) : V{_mm512_maskz_loadu_ps(last, row + v * W)};
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const V w = V::set1(a[r]);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v)
        acc[r][v] = fma(w, b[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v)
      acc[r][v].store(tile + (r * NV + v) * W);
}

// The last few positions of a plane (Len of them, after the whole tiles): acc[q] (a vector of
// the panel's kPointwiseMR channels, half a register) = sum over k of a[k * MR ..] * rows[k][n0
// + q], each input value broadcast; stored to tile[r * 16 + q]. A masked tile of one vector
// would compute 16 lanes for Len (a 7 x 7 plane's last position: a quarter of its products).
template <int Len>
inline void pointwise_tail(const float* __restrict a, const float* const* rows, int64_t n0,
                           int64_t K, float* __restrict tile) {
  static_assert(kPointwiseMR == 8);
  __m256 acc[Len];
#pragma GCC unroll 4
  for (int q = 0; q < Len; ++q)
    acc[q] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; ++k, a += kPointwiseMR) {
    const __m256 w = _mm256_loadu_ps(a);
    const float* row = rows[k] + n0;
#pragma GCC unroll 4
    for (int q = 0; q < Len; ++q)
      acc[q] = _mm256_fmadd_ps(w, _mm256_broadcast_ss(row + q), acc[q]);
  }
  alignas(32) float lanes[kPointwiseMR];
#pragma GCC unroll 4
  for (int q = 0; q < Len; ++q) {
    _mm256_store_ps(lanes, acc[q]);
    for (int r = 0; r < kPointwiseMR; ++r)
      tile[r * 16 + q] = lanes[r];
  }
}

// Positions a plane's last tile may have for pointwise_tail.
inline constexpr int64_t kPointwiseTailMax = 4;

} // namespace detail

// Can conv2d_pointwise_direct run this shape? A product per image (window_shapes.h's
// pointwise_conv2d) over a plane flattened to one row (as generated code runs pointwise
// convolutions) of at most kPointwiseDirectMaxPositions positions.
inline bool pointwise_direct_fits(const Conv2dShape& s) {
  return pointwise_conv2d(s) && s.h == 1 && s.h_out == 1 && s.w == s.w_out &&
         s.w_out <= kPointwiseDirectMaxPositions;
}

// The pointwise convolution of problem `p` (conv.h's ConvProblem: `p.in` indexed [n, c, 1, w]
// with each channel's row in memory, `p.out` [n, c, 1, w]) on the register tile above; the
// weights in panels of kPointwiseMR channels: the program's packs of constant weights
// (`constant_a`), others packed on the call (conv_direct.h's direct_weights).
template <typename P>
void conv2d_pointwise_direct(const P& p, const Conv2dShape& s,
                             const std::shared_ptr<const float>& constant_a) {
  using V = Vec<float>;
  constexpr int MR = kPointwiseMR, NV = kPointwiseNV, W = V::width, NR = NV * W;
  const int64_t M = s.c_out, K = s.c_in, N = s.w_out;
  if (s.n <= 0 || M <= 0 || N <= 0) return;
  const double flops = 2.0 * double(s.n * M) * double(N) * double(K);
  const SerialScope serial(flops < kDirectConvParallelMinFlops);
  const float* a = detail::direct_weights<float, MR>(p, s, constant_a);
  const int64_t m_panels = (M + MR - 1) / MR, n_tiles = (N + NR - 1) / NR;
  const float** rows = scratch<const float*, 26>(K);
  for (int64_t nb = 0; nb < s.n; ++nb) {
    for (int64_t k = 0; k < K; ++k)
      rows[k] = p.in.ptr(Index<4>{nb, k, 0, 0});
    // Consecutive tasks share a column tile (its input rows stay in L1 across the panels).
    parallel_for(n_tiles * m_panels, [&](int64_t t) {
      const int64_t j = t / m_panels, i = t % m_panels;
      const int64_t n0 = j * NR, len = std::min<int64_t>(NR, N - n0);
      const int vectors = int((len + W - 1) / W);
      const __mmask16 last = lane_range(0, len - (vectors - 1) * W);
      alignas(64) float tile[MR * NR];
      const float* panel = a + i * K * MR;
      if (len <= detail::kPointwiseTailMax && n0 > 0) { // a whole tile's remainder
        if (len == 1)
          detail::pointwise_tail<1>(panel, rows, n0, K, tile);
        else if (len == 2)
          detail::pointwise_tail<2>(panel, rows, n0, K, tile);
        else if (len == 3)
          detail::pointwise_tail<3>(panel, rows, n0, K, tile);
        else
          detail::pointwise_tail<4>(panel, rows, n0, K, tile);
      } else if (vectors == 3)
        detail::pointwise_tile<3>(panel, rows, n0, K, last, tile);
      else if (vectors == 2)
        detail::pointwise_tile<2>(panel, rows, n0, K, last, tile);
      else
        detail::pointwise_tile<1>(panel, rows, n0, K, last, tile);
      const int64_t channels = std::min<int64_t>(MR, M - i * MR);
      for (int64_t r = 0; r < channels; ++r)
        store_run_vectors(p.out, Index<4>{nb, i * MR + r, 0, n0}, len, tile + r * vectors * W,
                          p.epi);
    });
  }
}
#endif

} // namespace vtc::kernels
