// 2-D pooling and depthwise convolution, NCHW, over accessors. Pooling: one thread per output
// element (grid-stride over the flat output index; neighbouring threads take neighbouring
// columns, so stores coalesce and the window reads share cache lines). Depthwise convolution:
// a block per band of output rows of one plane, its input staged in shared memory once by
// 16-byte loads, its outputs stored as 16-byte vectors. The caller
// gives the output size (ceil_mode is its business: windows may run past the bottom / right
// padding; those taps count nowhere).
//
// Max pooling: the window's taps inside the input in the order (r, s), NaN propagated.
// Average pooling: their sum from 0 in that order over the divisor (count_include_pad: the
// taps inside the padded input; else the taps inside the input). Depthwise convolution
// (c_in / groups == 1, c_out = groups * multiplier): acc = 0, acc = fma(W[co, 0, r, s], x,
// acc) over every tap (r, s) in order, taps in the padding as x = 0 — the cpu target's chain.
// Global pooling is reduce.h over a [n*c, h*w] view.
#pragma once

#include "../common/window_shapes.h"
#include "common.h"

namespace vtc::kernels {

VTC_HD constexpr Launch per_output_launch(int64_t outputs) {
  return Launch{
      {unsigned(clamp64(cdiv(outputs, 256), 1, kMaxGridStrideBlocks)), 1, 1}, {256, 1, 1}, 0};
}
VTC_HD constexpr Launch pool2d_launch(const Pool2dShape& s) {
  return per_output_launch(s.n * s.c * s.h_out * s.w_out);
}
// Depthwise convolution: a block of 128 threads takes a band of output rows of one output plane,
// staged with the input rows and columns the band reads (zeros in the padding) in at most
// kTileBytes of shared memory (one row at least), the filter beside them, and a park of
// kThreads * 8 sums before them (outputs stored as vectors of depthwise_vector elements).
namespace depthwise_config {
inline constexpr int kThreads = 128;
inline constexpr int64_t kTileBytes = 24 * 1024;
inline constexpr int64_t kParkBytes = kThreads * 8 * 4;
// Output rows a thread computes together (a strip of one column), and the filter taps it keeps
// in registers (5 x 5; larger filters are read from shared memory).
inline constexpr int kStripRows = 4, kRegisterTaps = 25;
} // namespace depthwise_config
// Elements a thread moves as one 16-byte vector (8 of 16 bits, 4 of 32).
template <class T> inline constexpr int depthwise_vector = sizeof(T) == 2 ? 8 : 4;
VTC_HD constexpr int64_t depthwise_tile_w(const Conv2dShape& s) {
  return (s.w_out - 1) * s.stride_w + (s.kw - 1) * s.dil_w + 1;
}
// The staged tile's layout: tile column c (input column c - pad_left) sits at
// (c' % stride_w) * depthwise_phase_w + c' / stride_w of its row, c' = c + depthwise_shift: the
// columns of one phase of the stride side by side, so that neighbouring outputs (threads) read
// neighbouring words for every tap (stride 2 read every other word: two wavefronts a read), and
// the shift puts the first column of every staged vector at a multiple of 8, so that a thread
// stores its 8 (or 4) staged values as whole 16-byte words (one word a stored float had put 8
// lanes of a warp on one bank).
VTC_HD constexpr int64_t depthwise_shift(const Conv2dShape& s) {
  return (8 - s.pad_left % 8) % 8;
}
VTC_HD constexpr int64_t depthwise_phase_w(const Conv2dShape& s) {
  const int64_t phase = cdiv(depthwise_tile_w(s) + depthwise_shift(s), s.stride_w);
  return cdiv(phase, 4) * 4;
}
VTC_HD constexpr int64_t depthwise_pitch(const Conv2dShape& s) {
  return s.stride_w * depthwise_phase_w(s);
}
VTC_HD constexpr int64_t depthwise_rows_in(const Conv2dShape& s, int64_t band) {
  return (band - 1) * s.stride_h + (s.kh - 1) * s.dil_h + 1;
}
// Output rows a block takes: as many as fit the tile (at least one).
VTC_HD constexpr int64_t depthwise_band(const Conv2dShape& s) {
  const int64_t row_bytes = depthwise_pitch(s) * 4;
  int64_t band = s.h_out;
  while (band > 1 && depthwise_rows_in(s, band) * row_bytes > depthwise_config::kTileBytes)
    band = cdiv(band, 2);
  return band;
}
VTC_HD constexpr Launch depthwise_conv2d_launch(const Conv2dShape& s) {
  const int64_t band = depthwise_band(s);
  const int64_t smem = depthwise_config::kParkBytes +
                       (depthwise_rows_in(s, band) * depthwise_pitch(s) + s.kh * s.kw) * 4;
  return Launch{{unsigned(s.n * s.c_out * cdiv(s.h_out, band)), 1, 1},
                {unsigned(depthwise_config::kThreads), 1, 1},
                unsigned(smem),
                4};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

namespace cuda {

// Calls fn(index) for every index [n, c, y, x] of an output of `count` elements, grid-stride.
template <class F>
__device__ VTC_INLINE void for_each_output(int64_t c, int64_t h, int64_t w, int64_t count, F&& fn) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < count; t += stride)
    fn(Index<4>{t / (c * h * w), t / (h * w) % c, t / w % h, t % w});
}

__device__ VTC_INLINE int64_t window_taps(int64_t start, int64_t k, int64_t d, int64_t lo,
                                          int64_t hi) {
  int64_t n = 0;
  for (int64_t j = 0; j < k; ++j)
    n += (start + j * d >= lo && start + j * d < hi);
  return n;
}

template <bool Max, class Out, class In>
__device__ VTC_INLINE void pool2d(const Out& out, const In& in, const Pool2dShape& s,
                                  bool count_include_pad) {
  for_each_output(s.c, s.h_out, s.w_out, s.n * s.c * s.h_out * s.w_out, [&](const Index<4>& o) {
    const int64_t y0 = o[2] * s.stride_h - s.pad_top, x0 = o[3] * s.stride_w - s.pad_left;
    float acc = Max ? neg_inf() : 0.0f;
    for (int64_t r = 0; r < s.kh; ++r) {
      const int64_t y = y0 + r * s.dil_h;
      if (y < 0 || y >= s.h) continue;
      for (int64_t q = 0; q < s.kw; ++q) {
        const int64_t x = x0 + q * s.dil_w;
        if (x < 0 || x >= s.w) continue;
        const float v = float(in.load(Index<4>{o[0], o[1], y, x}));
        acc = Max ? max_nan(acc, v) : acc + v;
      }
    }
    if constexpr (!Max) {
      const int64_t rows = count_include_pad
                               ? window_taps(y0, s.kh, s.dil_h, -s.pad_top, s.h + s.pad_bottom)
                               : window_taps(y0, s.kh, s.dil_h, 0, s.h);
      const int64_t cols = count_include_pad
                               ? window_taps(x0, s.kw, s.dil_w, -s.pad_left, s.w + s.pad_right)
                               : window_taps(x0, s.kw, s.dil_w, 0, s.w);
      acc = acc / float(rows * cols);
    }
    out.store(o, acc);
  });
}

} // namespace cuda

template <class Out, class In> __device__ void max_pool2d(Out out, In in, Pool2dShape s) {
  static_assert(Out::rank == 4 && In::rank == 4, "max_pool2d: NCHW");
  cuda::pool2d<true>(out, in, s, false);
}

template <class Out, class In>
__device__ void avg_pool2d(Out out, In in, Pool2dShape s, bool count_include_pad = false) {
  static_assert(Out::rank == 4 && In::rank == 4, "avg_pool2d: NCHW");
  cuda::pool2d<false>(out, in, s, count_include_pad);
}

// Weights W[c_out, 1, kh, kw]; bias and activation are the output accessor's epilogue. Launch:
// depthwise_conv2d_launch. Block b: plane b / bands (image n, output channel co), band
// b % bands. The input rows are staged 16 bytes at a time where the input allows (zeros in the
// padding). Each thread computes a strip of kStripRows outputs of one column (neighbouring
// threads, neighbouring columns: the staged tile read without bank conflicts), reading each
// input value of the strip's window once from shared memory (an output a thread read every tap
// from it: the shared-memory pipe was the limit, 97 % busy against 16 % of DRAM's rate).
// Rows of whole vectors of VO outputs park a chunk of strips, then each thread stores VO
// adjacent outputs of the park as one vector; other rows (small planes: 7, 14 or 28 wide) store
// each output alone. Every output's chain takes the taps in order, as the cpu target's.
template <class Out, class In, class W>
__device__ void depthwise_conv2d(Out out, In in, W w, Conv2dShape s) {
  static_assert(Out::rank == 4 && In::rank == 4 && W::rank == 4, "depthwise_conv2d: NCHW");
  using namespace depthwise_config;
  constexpr int VI = depthwise_vector<typename In::value_type>;
  constexpr int VO = depthwise_vector<typename Out::value_type>;
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  const int64_t band = depthwise_band(s), bands = cdiv(s.h_out, band);
  const int tw = int(depthwise_tile_w(s)), kh = int(s.kh), kw = int(s.kw);
  const int rows_in = int(depthwise_rows_in(s, band));
  const int pitch = int(depthwise_pitch(s)), cw = int(depthwise_phase_w(s));
  const int shift = int(depthwise_shift(s)), sw = int(s.stride_w);
  // Where tile column c sits in its row (see depthwise_shift).
  auto col = [&](int c) { return (c + shift) % sw * cw + (c + shift) / sw; };
  float* park = reinterpret_cast<float*>(vtc_smem);
  float* tile = park + kThreads * VO;
  float* taps = tile + rows_in * pitch;
  const int64_t mult = s.c_out / s.groups;
  const int tid = int(threadIdx.x);
  const int64_t plane = int64_t(blockIdx.x) / bands;
  const int64_t nb = plane / s.c_out, co = plane % s.c_out, ci = co / mult;
  const int oy0 = int(int64_t(blockIdx.x) % bands * band);
  const int oys = int(min64(band, s.h_out - oy0));
  const int h = int(s.h), wi = int(s.w), pl = int(s.pad_left);
  const int y_start = oy0 * int(s.stride_h) - int(s.pad_top);
  for (int e = tid; e < kh * kw; e += kThreads)
    taps[e] = float(w.load(Index<4>{co, 0, e / kw, e % kw}));
  const int rows = (oys - 1) * int(s.stride_h) + (kh - 1) * int(s.dil_h) + 1;
  // Zeros: the padding columns of every row, then the rows above and below the input.
  const int pr = max(0, tw - pl - wi), side = min(pl, tw) + pr;
  for (int e = tid; e < rows * side; e += kThreads) {
    const int c = e % side;
    tile[e / side * pitch + col(c < pl ? c : pl + wi + (c - pl))] = 0.0f;
  }
  const int top = min(rows, max(0, -y_start)), bottom = min(rows, max(0, y_start + rows - h));
  for (int e = tid; e < (top + bottom) * tw; e += kThreads) {
    const int r = e / tw;
    tile[(r < top ? r : rows - bottom + (r - top)) * pitch + col(e % tw)] = 0.0f;
  }
  // The input: VI columns a thread, one vector where aligned; stored as 16-byte words where
  // all VI are inside the tile and the stride is 1 or 2 (the phases' halves are then whole
  // words: the shifted first column is a multiple of VI), else one float at a time.
  const int chunks = (wi + VI - 1) / VI;
  for (int e = tid; e < (rows - top - bottom) * chunks; e += kThreads) {
    const int r = top + e / chunks, x = e % chunks * VI;
    if (x + pl >= tw) continue;
    const Index<4> i{nb, ci, y_start + r, x};
    float v[VI];
    cuda::load_floats<VI>(in, i, x + VI <= wi && cuda::vector_at<VI>(in, i), wi, v);
    float* row = tile + r * pitch;
    const int c0 = x + pl + shift; // the shifted column of v[0]: a multiple of VI
    if (x + VI <= wi && x + VI + pl <= tw && (sw == 1 || sw == 2)) {
      if (sw == 1) {
#pragma unroll
        for (int u = 0; u < VI; u += 4)
          *reinterpret_cast<float4*>(row + c0 + u) =
              make_float4(v[u], v[u + 1], v[u + 2], v[u + 3]);
      } else if constexpr (VI == 8) {
        *reinterpret_cast<float4*>(row + c0 / 2) = make_float4(v[0], v[2], v[4], v[6]);
        *reinterpret_cast<float4*>(row + cw + c0 / 2) = make_float4(v[1], v[3], v[5], v[7]);
      } else {
        *reinterpret_cast<float2*>(row + c0 / 2) = make_float2(v[0], v[2]);
        *reinterpret_cast<float2*>(row + cw + c0 / 2) = make_float2(v[1], v[3]);
      }
      continue;
    }
#pragma unroll
    for (int u = 0; u < VI; ++u)
      if (x + u < wi && x + u + pl < tw) row[col(x + pl + u)] = v[u];
  }
  __syncthreads();
  const int wo = int(s.w_out);
  const int sh = int(s.stride_h), dh = int(s.dil_h), dw = int(s.dil_w);
  // The filter in registers where it fits (the shape is a literal of the generated call, so
  // the loops below unroll and the tests on r fold away).
  float tr[kRegisterTaps];
#pragma unroll
  for (int e = 0; e < kRegisterTaps; ++e)
    tr[e] = e < kh * kw ? taps[e] : 0.0f;
  // Outputs (g * R + j, ox), j < R, of a strip: the strip's input rows read once each, every
  // value they hold fed to each output whose window covers it. Output j's chain still takes its
  // taps in the order (r, q), the cpu target's.
  constexpr int R = kStripRows;
  static_assert(R * kThreads <= kThreads * VO, "depthwise_conv2d: the park holds a chunk");
  auto strip = [&](int g, int ox, float(&acc)[R]) {
#pragma unroll
    for (int j = 0; j < R; ++j)
      acc[j] = 0.0f;
    const int y0 = g * R * sh, window = (R - 1) * sh + (kh - 1) * dh + 1;
    for (int y = 0; y < window; ++y) {
      if (y0 + y >= rows) break;
      const float* src = tile + (y0 + y) * pitch;
      for (int q = 0; q < kw; ++q) {
        const float x = src[col(ox * sw + q * dw)];
#pragma unroll
        for (int j = 0; j < R; ++j) {
          const int dy = y - j * sh;
          if (dy < 0 || dy % dh != 0 || dy / dh >= kh) continue;
          const int e = dy / dh * kw + q;
          acc[j] = fmaf(kh * kw <= kRegisterTaps ? tr[e] : taps[e], x, acc[j]);
        }
      }
    }
  };
  const int groups = (oys + R - 1) / R, items = groups * wo;
  if (wo % VO != 0) { // rows of partial vectors (small planes): each output stored alone
    for (int i = tid; i < items; i += kThreads) {
      float acc[R];
      strip(i / wo, i % wo, acc);
#pragma unroll
      for (int j = 0; j < R; ++j) {
        const int oy = i / wo * R + j;
        if (oy < oys) out.store(Index<4>{nb, co, oy0 + oy, i % wo}, acc[j]);
      }
    }
    return;
  }
  // Whole vectors: a chunk of kThreads strips parked by row, then VO adjacent outputs of a row
  // (neighbouring strips: wo and the chunk are multiples of VO) stored as one vector.
  for (int c0 = 0; c0 < items; c0 += kThreads) {
    const int i = c0 + tid;
    float acc[R] = {};
    if (i < items) strip(i / wo, i % wo, acc);
#pragma unroll
    for (int j = 0; j < R; ++j)
      park[j * kThreads + tid] = acc[j];
    __syncthreads();
    for (int v = tid; v < R * kThreads / VO; v += kThreads) {
      const int j = v / (kThreads / VO), q0 = v % (kThreads / VO) * VO, i0 = c0 + q0;
      const int oy = i0 / wo * R + j, ox = i0 % wo;
      if (i0 >= items || oy >= oys) continue;
      float vals[VO];
#pragma unroll
      for (int u = 0; u < VO; u += 4) {
        const float4 q = *reinterpret_cast<const float4*>(park + j * kThreads + q0 + u);
        vals[u] = q.x, vals[u + 1] = q.y, vals[u + 2] = q.z, vals[u + 3] = q.w;
      }
      const Index<4> o{nb, co, oy0 + oy, ox};
      cuda::store_floats<VO>(out, o, cuda::vector_at<VO>(out, o), wo, vals);
    }
    __syncthreads();
  }
}

} // namespace vtc::kernels

#endif
