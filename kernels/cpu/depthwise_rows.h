// The depthwise convolution of narrow planes (an output row fits one f32 vector, an input row
// two), one output row per vector: each input row is read once from memory and turned into
// one vector per filter column by a permute (simd.h's RowWindows: the column stride, the
// left padding and the zeros past the row in the permute's indices and mask); rows above and
// below the input are zero vectors. An output row is then acc = 0; acc = fma(w[r][q],
// row_q(y * sh + r * dh), acc) over the taps (r, q) in order: the chain of the staged-phase
// kernel in conv.h, zeros at the same padding positions, so the same bits. Nothing is staged
// but those vectors, which are written once and read as whole aligned vectors (the small
// planes of ShuffleNet's and MobileNet's later stages spent most of their time staging).
#pragma once

#include <algorithm>
#include <cstdint>

#include "conv_shape.h"
#include "parallel.h"
#include "simd.h"
#include "stage.h"

#if defined(__AVX512F__) // RowWindows' permutes

namespace vtc::kernels::detail {

static_assert(RowWindows::kMaxTaps == kDepthwiseRowsMaxTaps);

// Whether shape s fits the row kernel (conv_shape.h's depthwise_rows_shape_fits) with its input
// rows contiguous.
template <typename A> bool depthwise_rows_fit(const Conv2dShape& s) {
  return depthwise_rows_shape_fits(s) && run_contiguous<A>(0, s.w);
}

// Output rows computed at once: 8 independent fma chains cover the fma latency.
inline constexpr int kDepthwiseRowBlock = 8;

// Output rows y0 .. y0 + N - 1 of one channel (N = kDepthwiseRowBlock), in registers, from
// the tap vectors `rows` (padded row p's column q at rows + (p * kw + q) * 16); the first
// `stored` of them are stored. KW is the filter width when known at compile time.
template <int KW, typename OutA, typename Epi>
inline void depthwise_row_block(const OutA& out, const Conv2dShape& s, const Epi& epi,
                                const float* rows, const float* wv, int64_t nb, int64_t co,
                                int64_t y0, int64_t stored) {
  using V = Vec<float>;
  constexpr int kW = V::width, N = kDepthwiseRowBlock;
  const int64_t kw = KW > 0 ? KW : s.kw, pitch = s.stride_h * kw * kW;
  V acc[N];
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i)
    acc[i] = V::zero();
  for (int64_t r = 0; r < s.kh; ++r) {
    const float* src = rows + (y0 * s.stride_h + r * s.dil_h) * kw * kW;
#pragma GCC unroll 8
    for (int64_t q = 0; q < kw; ++q) {
      const V f = V::set1(wv[r * kw + q]);
#pragma GCC unroll 8
      for (int i = 0; i < N; ++i)
        acc[i] = fma(f, V::load(src + q * kW + i * pitch), acc[i]);
    }
  }
  alignas(64) float row_out[kW];
#pragma GCC unroll 8
  for (int i = 0; i < N && i < stored; ++i) {
    acc[i].store(row_out);
    store_run_vectors(out, Index<4>{nb, co, y0 + i, 0}, s.w_out, row_out, epi);
  }
}

// The row kernel over every (image, output channel), for inputs of f32 rows in memory
// (rows_in_memory); filter(co) gives output channel co's taps in order. KW is the filter width when
// known at compile time.
template <int KW, typename OutA, typename InA, typename Epi, typename Filter>
void depthwise_rows(const OutA& out, const InA& in, const Conv2dShape& s, const Epi& epi,
                    const Filter& filter) {
  constexpr int kW = Vec<float>::width, kRows = kDepthwiseRowBlock;
  const int64_t cout_g = s.c_out / s.groups, kw = KW > 0 ? KW : s.kw;
  // Row p of the padded plane is input row p - pad_top; the last block's rows past h_out are
  // computed (from the rows below, zeros where they pass the input) and not stored.
  const int64_t h_blocks = (s.h_out + kRows - 1) / kRows * kRows;
  const int64_t hp = (h_blocks - 1) * s.stride_h + (s.kh - 1) * s.dil_h + 1;
  int64_t offset[RowWindows::kMaxTaps];
  for (int64_t q = 0; q < kw; ++q)
    offset[q] = q * s.dil_w - s.pad_left;
  const RowWindows windows(s.w, s.stride_w, int(s.w_out), offset, int(kw));
  parallel_for(s.n * s.c_out, [&](int64_t t) {
    const int64_t nb = t / s.c_out, co = t % s.c_out, ci = co / cout_g;
    float* rows = scratch<float, 3>(hp * kw * kW);
    for (int64_t p = 0; p < hp; ++p) {
      const int64_t hy = p - s.pad_top;
      if (hy >= 0 && hy < s.h)
        windows.load<KW>(in.ptr(Index<4>{nb, ci, hy, 0}), rows + p * kw * kW);
      else
        std::fill(rows + p * kw * kW, rows + (p + 1) * kw * kW, 0.0f);
    }
    const float* wv = filter(co);
    for (int64_t y0 = 0; y0 < s.h_out; y0 += kRows)
      depthwise_row_block<KW>(out, s, epi, rows, wv, nb, co, y0,
                              std::min<int64_t>(kRows, s.h_out - y0));
  });
}

} // namespace vtc::kernels::detail

#endif
