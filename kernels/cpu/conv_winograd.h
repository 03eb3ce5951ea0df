// The Winograd convolution F(2x2, 3x3) of small planes (Lavin and Gray's minimal filtering):
// a 3x3 filter at stride 1 gives each 2 x 2 block of outputs from a 4 x 4 tile of its padded
// input as Y = A^T [sum over ci of (G g G^T) .* (B^T d B)] A, 16 products a channel pair where
// the direct kernels take 36. The sums over input channels are 16 matrix products, one per
// transformed position xi: M[xi][co][t] = sum over ci of U[xi][co][ci] * V[xi][ci][t].
//
// Three stages:
//  1. The filters transformed, U = G g G^T, once per program when constant (ConstantPacks),
//     laid out for the products: blocks of `Panels` vectors of W output channels, then xi,
//     then ci.
//  2. A task takes a band of `Rows` tile rows (X tiles) of one image: every input channel's
//     padded rows of the band transformed, V = B^T d B, a vector of tiles of a tile row at a
//     time (tile tx's columns 2tx .. 2tx + 3 are the even and odd columns at tx and tx + 1:
//     two permutes of a padded row, no per-tile work), into the thread's own scratch.
//  3. Over those values, for each block of output channels of the task's range: the 16
//     products of the X tiles in registers (each V value broadcast, each U vector loaded once
//     for X tiles), the output transform, and the band's output rows stored through the
//     epilogue, one run of w_out positions a channel and row (transposed from vectors of
//     channels in registers).
//
// Not the chain of the other kernels of conv.h (its sums are over transformed values), so its
// bits differ from theirs: the shape rule (conv_shape.h's winograd_conv_fits) alone picks it,
// under every strategy and layout alike, and the layout rule holds none of its tensors
// channels-last. Its error is that of the transforms (their factors are 1 and 1/2): in f32
// about the direct kernels' own.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "constant_packs.h"
#include "conv_direct.h"
#include "conv_shape.h"
#include "parallel.h"
#include "simd.h"
#include "stage.h"
#include "window_phases.h"

namespace vtc::kernels {

// Winograd convolutions of fewer multiply-adds (the products') run on the calling thread.
inline constexpr double kWinogradParallelMinFlops = 1e5;

namespace detail {

// The packs of transformed filters are told from the other packs of a weight by tags from here.
inline constexpr int64_t kWinogradPackTag = int64_t(1) << 60;

// The Winograd geometry of a shape: tiles per row and column, tiles a plane, and the values a
// transformed row of a band's tiles holds (X tiles, a vector of slack for the last vector's
// spill).
struct WinogradPlan {
  int64_t tw, th, tiles, row;
  WinogradPlan(const Conv2dShape& s, int x, int width)
      : tw((s.w_out + 1) / 2), th((s.h_out + 1) / 2), tiles(tw * th), row(x + width) {}
};

// U = G g G^T of one 3x3 filter g (row-major), G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
template <typename C> inline void winograd_filter(const C* g, C* u) {
  C t[4][3];
  for (int q = 0; q < 3; ++q) {
    t[0][q] = g[q];
    t[1][q] = (g[q] + g[3 + q] + g[6 + q]) * C(0.5);
    t[2][q] = (g[q] - g[3 + q] + g[6 + q]) * C(0.5);
    t[3][q] = g[6 + q];
  }
  for (int a = 0; a < 4; ++a) {
    u[a * 4 + 0] = t[a][0];
    u[a * 4 + 1] = (t[a][0] + t[a][1] + t[a][2]) * C(0.5);
    u[a * 4 + 2] = (t[a][0] - t[a][1] + t[a][2]) * C(0.5);
    u[a * 4 + 3] = t[a][2];
  }
}

// The transformed filters of a problem `p` (conv.h's ConvProblem): value (co, ci, xi) at
// ((co / (Panels * W) * 16 + xi) * cin + ci) * Panels * W + co % (Panels * W); output channels
// past c_out (a last block's) are zeros.
template <typename C, int Panels, typename P>
void winograd_pack_filters(const P& p, const Conv2dShape& s, C* dst) {
  constexpr int W = Vec<C>::width, B = Panels * W;
  const int64_t cin = s.c_in, blocks = (s.c_out + B - 1) / B;
  parallel_for(blocks, [&](int64_t blk) {
    C* g = scratch<C, 3>(cin * 9);
    C* base = dst + blk * 16 * cin * B;
    for (int64_t lane = 0; lane < B; ++lane) {
      const int64_t co = blk * B + lane;
      if (co < s.c_out) p.load_a_row(0, co, 0, cin * 9, g);
      for (int64_t ci = 0; ci < cin; ++ci) {
        C u[16];
        if (co < s.c_out)
          winograd_filter(g + ci * 9, u);
        else
          std::fill(u, u + 16, C(0));
        for (int xi = 0; xi < 16; ++xi)
          base[(xi * cin + ci) * B + lane] = u[xi];
      }
    }
  });
}

// Rows: B^T of the column-transformed rows (cols: padded row y's transform b at cols + (y * 4
// + b) * ep) of each tile row, into v (value (xi, t) at v + xi * xi_stride + t). The tiles of
// a row are vectors over tx; the last vector of a row spills past it into the next row's
// tiles, which are written after it (and past the last row into the row's slack).
template <typename C>
inline void winograd_input_rows(const C* cols, int64_t ep, int64_t chunks, int64_t th, int64_t tw,
                                C* v, int64_t xi_stride) {
  using V = Vec<C>;
  constexpr int W = V::width;
  for (int64_t ty = 0; ty < th; ++ty)
    for (int b = 0; b < 4; ++b)
      for (int64_t c = 0; c < chunks; ++c) {
        const C* r = cols + 2 * ty * 4 * ep + b * ep + c * W;
        const V d0 = V::load(r), d1 = V::load(r + 4 * ep);
        const V d2 = V::load(r + 8 * ep), d3 = V::load(r + 12 * ep);
        C* out = v + b * xi_stride + ty * tw + c * W;
        (d0 - d2).store(out);
        (d1 + d2).store(out + 4 * xi_stride);
        (d2 - d1).store(out + 8 * xi_stride);
        (d1 - d3).store(out + 12 * xi_stride);
      }
}

// V = B^T d B of the 4 x 4 input tiles of tile rows ty0 .. ty0 + rows - 1 of channel (nb, ci),
// B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]: value (xi, t) at v + xi * xi_stride + t, t
// counted from the first tile of row ty0. Tile tx's columns 2tx .. 2tx +
// 3 of a padded row are its even and odd columns at tx and tx + 1, so d B is four vector
// operations a row over every tile of it.
template <typename C, typename P>
void winograd_input_tiles(const P& p, const Conv2dShape& s, const WinogradPlan& plan, int64_t nb,
                          int64_t ci, int64_t ty0, int64_t rows, C* v, int64_t xi_stride) {
  using V = Vec<C>;
  constexpr int W = V::width;
  const int64_t tw = plan.tw, hp = 2 * rows + 2, wp = 2 * tw + 2, y0 = 2 * ty0 - s.pad_top;
  const PlaneAt at{nb, ci, s.h, s.w, s.pad_top, s.pad_left};
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<C, float>) {
    if (wp <= 32) { // a padded row is two vectors; its even and odd columns four permutes
      float* cols = scratch<float, 9>(hp * 4 * W);
      alignas(64) float row[32];
      const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
      const __m512i even0 = _mm512_add_epi32(lanes, lanes);
      const __m512i odd0 = _mm512_add_epi32(even0, _mm512_set1_epi32(1));
      const __m512i even1 = _mm512_add_epi32(even0, _mm512_set1_epi32(2));
      const __m512i odd1 = _mm512_add_epi32(even0, _mm512_set1_epi32(3));
      // Rows of f32 in memory are read in place: padded column j is input column j - pad_left.
      using InA = std::decay_t<decltype(p.in)>;
      bool direct = false;
      if constexpr (rows_in_memory<float, InA>) direct = run_contiguous<InA>(0, s.w);
      const __mmask16 inside_lo = lane_range(s.pad_left, s.pad_left + s.w);
      const __mmask16 inside_hi = lane_range(s.pad_left - 16, s.pad_left + s.w - 16);
      for (int64_t y = 0; y < hp; ++y) {
        float* out = cols + y * 4 * W;
        const int64_t hy = y0 + y;
        if (hy < 0 || hy >= s.h) {
          for (int b = 0; b < 4; ++b)
            V::zero().store(out + b * W);
          continue;
        }
        __m512 lo, hi;
        bool loaded = false;
        if constexpr (rows_in_memory<float, InA>) {
          if (direct) { // masked loads from the row in memory: padding lanes zero
            const float* src = p.in.ptr(Index<4>{nb, ci, hy, 0}) - s.pad_left;
            lo = _mm512_maskz_loadu_ps(inside_lo, src);
            hi = _mm512_maskz_loadu_ps(inside_hi, src + 16);
            loaded = true;
          }
        }
        if (!loaded) {
          stage_padded_rows(p.in, at, hy, 1, 32, 0.0f, row);
          lo = _mm512_load_ps(row);
          hi = _mm512_load_ps(row + 16);
        }
        const V e0{_mm512_permutex2var_ps(lo, even0, hi)};
        const V o0{_mm512_permutex2var_ps(lo, odd0, hi)};
        const V e1{_mm512_permutex2var_ps(lo, even1, hi)};
        const V o1{_mm512_permutex2var_ps(lo, odd1, hi)};
        (e0 - e1).store(out);
        (o0 + e1).store(out + W);
        (e1 - o0).store(out + 2 * W);
        (o0 - o1).store(out + 3 * W);
      }
      winograd_input_rows(cols, W, 1, rows, tw, v, xi_stride);
      return;
    }
  }
#endif
  // Even and odd columns of the padded plane, at pitch ep (a vector past tx = tw for the
  // loads at tx + 1); column-transformed rows the same.
  const int64_t chunks = (tw + W - 1) / W, ep = (chunks + 1) * W;
  C* plane = scratch<C, 9>(hp * wp + 6 * hp * ep);
  C* even = plane + hp * wp;
  C* odd = even + hp * ep;
  C* cols = odd + hp * ep; // [row][b][ep]
  stage_padded_rows(p.in, at, y0, hp, wp, C(0), plane);
  for (int64_t y = 0; y < hp; ++y) {
    const C* row = plane + y * wp;
    C* e = even + y * ep;
    C* o = odd + y * ep;
    for (int64_t tx = 0; tx <= tw; ++tx) {
      e[tx] = row[2 * tx];
      o[tx] = row[2 * tx + 1];
    }
    std::fill(e + tw + 1, e + ep, C(0));
    std::fill(o + tw + 1, o + ep, C(0));
  }
  // Columns: d B for every padded row.
  for (int64_t y = 0; y < hp; ++y)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t x = c * W;
      const V e0 = V::load(even + y * ep + x), e1 = V::load(even + y * ep + x + 1);
      const V o0 = V::load(odd + y * ep + x), o1 = V::load(odd + y * ep + x + 1);
      C* out = cols + y * 4 * ep + x;
      (e0 - e1).store(out);
      (o0 + e1).store(out + ep);
      (e1 - o0).store(out + 2 * ep);
      (o0 - o1).store(out + 3 * ep);
    }
  winograd_input_rows(cols, ep, chunks, rows, tw, v, xi_stride);
}

// The 16 products of a task: m[(xi * Panels + q) * X + j] (a vector of W output channels of
// panel q, tile j) = sum over ci of u[(xi * cin + ci) * Panels * W + q * W ..] * v[xi *
// xi_stride + ci * row + j].
template <typename C, int X, int Panels>
inline void winograd_products(const C* __restrict u, const C* __restrict v, int64_t cin,
                              int64_t row, int64_t xi_stride, C* __restrict m) {
  using V = Vec<C>;
  constexpr int W = V::width;
  for (int xi = 0; xi < 16; ++xi) {
    const C* ux = u + xi * cin * Panels * W;
    const C* vx = v + xi * xi_stride;
    V acc[Panels][X];
#pragma GCC unroll 4
    for (int q = 0; q < Panels; ++q)
#pragma GCC unroll 24
      for (int j = 0; j < X; ++j)
        acc[q][j] = V::zero();
    for (int64_t ci = 0; ci < cin; ++ci) {
      V w[Panels];
#pragma GCC unroll 4
      for (int q = 0; q < Panels; ++q)
        w[q] = V::load(ux + (ci * Panels + q) * W);
      const C* t = vx + ci * row;
#pragma GCC unroll 24
      for (int j = 0; j < X; ++j) {
        const V b = V::set1(t[j]);
#pragma GCC unroll 4
        for (int q = 0; q < Panels; ++q)
          acc[q][j] = fma(w[q], b, acc[q][j]);
      }
    }
#pragma GCC unroll 4
    for (int q = 0; q < Panels; ++q)
#pragma GCC unroll 24
      for (int j = 0; j < X; ++j)
        acc[q][j].store(m + ((xi * Panels + q) * X + j) * W);
  }
}

// The output transform of 2 x 2 block j of panel q, Y = A^T M A with A^T = [1 1 1 0;
// 0 1 -1 -1] (m as winograd_products leaves it): y[dy * 2 + dx], a vector of W channels.
template <typename C, int X, int Panels>
inline void winograd_output_block(const C* m, int q, int64_t j, Vec<C>* y) {
  using V = Vec<C>;
  constexpr int W = V::width;
  V r[4][4];
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      r[a][b] = V::load(m + (((a * 4 + b) * Panels + q) * X + j) * W);
  V s0[4], s1[4];
  for (int b = 0; b < 4; ++b) {
    s0[b] = r[0][b] + r[1][b] + r[2][b];
    s1[b] = r[1][b] - r[2][b] - r[3][b];
  }
  y[0] = s0[0] + s0[1] + s0[2];
  y[1] = s0[1] - s0[2] - s0[3];
  y[2] = s1[0] + s1[1] + s1[2];
  y[3] = s1[1] - s1[2] - s1[3];
}

// A task's outputs: the blocks of its band (`tiles` of them, whole tile rows from output row
// first_row on) for output channels co0 .. co0 + Panels * W - 1, stored through the epilogue a
// channel's row at a time. Where an output row is at most a vector (f32), the row's positions,
// vectors of channels, are transposed into channels' rows in registers; otherwise gathered.
template <typename C, int X, int Rows, int Panels, typename P>
void winograd_output_band(const P& p, const Conv2dShape& s, const WinogradPlan& plan, const C* m,
                          int64_t tiles, int64_t nb, int64_t co0, int64_t first_row) {
  using V = Vec<C>;
  constexpr int W = V::width, TW = X / Rows;
  const int64_t rows_end = std::min(s.h_out, first_row + Rows * 2);
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<C, float> && 2 * TW <= W) {
    for (int q = 0; q < Panels; ++q) {
      const int64_t c0 = co0 + q * W, channels = std::min<int64_t>(W, s.c_out - c0);
      for (int64_t ty = 0; ty * TW < tiles; ++ty) {
        V row[2][W]; // row[dy][x]: output row first_row + 2 ty + dy, position x, W channels
        for (int dy = 0; dy < 2; ++dy)
          for (int x = 2 * TW; x < W; ++x)
            row[dy][x] = V::zero();
        for (int tx = 0; tx < TW; ++tx) {
          V y[4];
          winograd_output_block<C, X, Panels>(m, q, ty * TW + tx, y);
          row[0][2 * tx] = y[0], row[0][2 * tx + 1] = y[1];
          row[1][2 * tx] = y[2], row[1][2 * tx + 1] = y[3];
        }
        for (int dy = 0; dy < 2; ++dy) {
          const int64_t yy = first_row + 2 * ty + dy;
          if (yy >= rows_end) break;
          transpose_16x16(row[dy]); // row[dy][c]: channel c0 + c's output row
          alignas(64) float run[W];
          // Rows of 2 TW or 2 TW - 1 positions: their length known at compile time (the
          // run-time loop takes rows of 7 element by element).
          for (int64_t c = 0; c < channels; ++c) {
            row[dy][c].store(run);
            const Index<4> at{nb, c0 + c, yy, 0};
            if (s.w_out == 2 * TW)
              store_run_vectors<2 * TW>(p.out, at, 2 * TW, run, p.epi);
            else
              store_run_vectors<2 * TW - 1>(p.out, at, 2 * TW - 1, run, p.epi);
          }
        }
      }
    }
    return;
  }
#endif
  // Block j's output (dy, dx) of panel q at y[((q * X + j) * 4 + dy * 2 + dx) * W].
  alignas(64) C y[Panels * X * 4 * W];
  for (int q = 0; q < Panels; ++q)
    for (int64_t j = 0; j < tiles; ++j) {
      V block[4];
      winograd_output_block<C, X, Panels>(m, q, j, block);
      for (int k = 0; k < 4; ++k)
        block[k].store(y + ((q * X + j) * 4 + k) * W);
    }
  alignas(64) C run[2 * kWinogradAccumulators + 16];
  for (int q = 0; q < Panels; ++q) {
    const int64_t c0 = co0 + q * W, channels = std::min<int64_t>(W, s.c_out - c0);
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t yy = first_row; yy < rows_end; ++yy) {
        const C* src = y + ((q * X + (yy - first_row) / 2 * plan.tw) * 4 + yy % 2 * 2) * W + c;
        for (int64_t x = 0; x < s.w_out; ++x)
          run[x] = src[(x / 2 * 4 + x % 2) * W];
        const Index<4> at{nb, c0 + c, yy, 0};
        if constexpr (std::is_same_v<C, float>)
          store_run_vectors(p.out, at, s.w_out, run, p.epi);
        else
          store_run(p.out, at, s.w_out, run, p.epi);
      }
  }
}

// The Winograd kernel over a convolution problem `p` (conv.h's ConvProblem) with the tile
// winograd_tile() gives (X tiles, Rows tile rows, Panels vectors of output channels); the
// transformed filters `constant_u` when constant, else transformed now.
template <typename C, int X, int Rows, int Panels, typename P>
void conv2d_winograd(const P& p, const Conv2dShape& s, const std::shared_ptr<const C>& constant_u) {
  using V = Vec<C>;
  constexpr int W = V::width, B = Panels * W;
  static_assert(X % Rows == 0);
  if (s.n <= 0 || s.c_out <= 0 || s.h_out <= 0 || s.w_out <= 0) return;
  const WinogradPlan plan(s, X, W);
  const int64_t cin = s.c_in, blocks = (s.c_out + B - 1) / B, bands = plan.th / Rows;
  const double flops = 32.0 * double(s.n * s.c_out) * double(plan.tiles) * double(cin);
  const SerialScope serial(flops < kWinogradParallelMinFlops);
  const C* u = constant_u.get();
  if (!u) {
    C* buf = scratch<C, 6>(blocks * 16 * cin * B);
    winograd_pack_filters<C, Panels>(p, s, buf);
    u = buf;
  }
  // A task transforms one band of one image, every input channel, into its thread's scratch
  // and runs a range of channel blocks over it: the transformed values are written and read
  // by one core (written by one and read by the other, they cost more in coherence traffic
  // than their arithmetic at two threads). The blocks are split into as many ranges as give
  // the threads the least work each, a band's transform weighed against a block's products
  // by their instructions: per input channel about 14 a padded row (2 Rows + 2 of them) and
  // 48 a tile row, against 16 X Panels multiply-adds (7 bands of 4 blocks of 7 x 2 on two
  // threads: 2 ranges, 7 tasks of 2.46 each, where whole bands gave one thread 4 of 4.46).
  const int64_t units = s.n * bands, threads = max_threads();
  const double transform = double((2 * Rows + 2) * 14 + Rows * 48) * double((plan.tw + W - 1) / W) /
                           double(16 * X * Panels);
  int64_t ranges = 1;
  double least = 0;
  for (int64_t r = 1; r <= blocks; ++r) {
    const int64_t rounds = (units * r + threads - 1) / threads;
    const double span = double(rounds) * (transform + double(blocks) / double(r));
    if (r == 1 || span < least) ranges = r, least = span;
  }
  const int64_t xi_stride = cin * plan.row;
  constexpr int kProducts = 16 * Panels * X * W; // a block's, in values
  parallel_for(units * ranges, [&](int64_t task) {
    const int64_t nb = task / (bands * ranges), band = task / ranges % bands;
    const int64_t range = task % ranges;
    const int64_t blk0 = range * blocks / ranges, blk1 = (range + 1) * blocks / ranges;
    C* v = scratch<C, 12>(16 * xi_stride); // value (xi, ci, j) at v + xi * xi_stride + ci * row + j
    for (int64_t ci = 0; ci < cin; ++ci)
      winograd_input_tiles<C>(p, s, plan, nb, ci, band * Rows, Rows, v + ci * plan.row, xi_stride);
    for (int64_t blk = blk0; blk < blk1; ++blk) {
      alignas(64) C m[kProducts];
      winograd_products<C, X, Panels>(u + blk * 16 * cin * B, v, cin, plan.row, xi_stride, m);
      winograd_output_band<C, X, Rows, Panels>(p, s, plan, m, X, nb, blk * B, band * Rows * 2);
    }
  });
}

// The transformed filters of a convolution with constant weights (`wref` given), once per
// program; null otherwise.
template <typename C, int Panels, typename P>
std::shared_ptr<const C> winograd_filters(const P& p, const Conv2dShape& s, ConstantRef wref) {
  if (!wref.packs) return nullptr;
  constexpr int B = Panels * Vec<C>::width;
  const int64_t blocks = (s.c_out + B - 1) / B;
  const int64_t tag = kWinogradPackTag + (s.c_out * 4099 + s.c_in) * 8 + Panels;
  return wref.packs->get<C>(wref.key, tag, blocks * 16 * s.c_in * B,
                            [&](C* dst) { winograd_pack_filters<C, Panels>(p, s, dst); });
}

} // namespace detail
} // namespace vtc::kernels
