// 2-D convolutions whose window holds few inputs, NCHW: one group, c_in * kh * kw taps up to
// kDirectConvMaxTaps and up to kDirectConvMaxChannels output channels — a network's stem over a
// 3-channel image (3 x 3 x 3 = 27 taps). As an implicit GEMM such a convolution has K = 27, less
// than one 32-wide tensor-core k tile, and its columns are gathered element by element; cuDNN's
// NCHW kernels for 3 input channels ran at about 250 GB/s on the H200. Here each thread takes
// kDirectConvPixels output pixels (n, y, x), a block's width apart: the windows' taps in
// registers (zeros in the padding), the filter [c_out, K] in shared memory as floats, rows
// padded to whole float4s, and for every output channel in turn acc = 0, acc = fma(W[co, k],
// x_k, acc) for k = (ci, r, s) in order — the cpu target's chain — stored through the output
// accessor (bias, activation), 8 channels a pass: where the output lies channels-last (held NHWC
// for a cuDNN reader, StorageMap::channels_last) the 8 go out as one 16-byte vector, else one
// store each. Each filter value is read once (four at a time) for all the thread's pixels.
// Neighbouring threads take neighbouring columns, so each channel's stores coalesce and the
// windows' reads share cache lines. The channel count and window are template
// arguments: the taps' index arithmetic is constant. Measured on the H200 (YOLO11n's stem at
// batch 16, 91 MB): 64 us at one, two or four pixels a thread alone (1.43 TB/s; four take 167
// registers, a block a multiprocessor), but in the whole model two pixels a thread ran it 1 %
// faster than one without float4 reads and four 3 % slower (kernels/cuda/NOTES.md).
#pragma once

#include "../common/window_shapes.h"
#include "common.h"

namespace vtc::kernels {

inline constexpr int64_t kDirectConvMaxTaps = 32, kDirectConvMaxChannels = 64;
inline constexpr int64_t kDirectConvPixels = 2; // output pixels a thread (80 registers)

// A filter row in shared memory: K floats padded to whole float4s.
VTC_HD constexpr int64_t conv2d_direct_row(int64_t taps) {
  return (taps + 3) / 4 * 4;
}

// Whether conv2d_direct takes this convolution (windows larger than 1 x 1: a pointwise
// convolution is a GEMM over rows).
VTC_HD constexpr bool conv2d_direct_fits(const Conv2dShape& s) {
  return s.groups == 1 && s.kh * s.kw > 1 && s.c_in * s.kh * s.kw <= kDirectConvMaxTaps &&
         s.c_out <= kDirectConvMaxChannels;
}

// 256 threads, kDirectConvPixels pixels each (grid-stride past the cap), the filter as floats
// in shared memory.
VTC_HD constexpr Launch conv2d_direct_launch(const Conv2dShape& s) {
  const int64_t pixels = s.n * s.h_out * s.w_out;
  return Launch{
      {unsigned(clamp64(cdiv(pixels, 256 * kDirectConvPixels), 1, kMaxGridStrideBlocks)), 1, 1},
      {256, 1, 1},
      unsigned(s.c_out * conv2d_direct_row(s.c_in * s.kh * s.kw) * 4)};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

// Weights W[c_out, K] (K = CI * KH * KW, flattened as (ci, r, s)); bias and activation are the
// output accessor's epilogue. Launch: conv2d_direct_launch.
template <int CI, int KH, int KW, class Out, class In, class W>
__device__ void conv2d_direct(Out out, In in, W w, Conv2dShape s) {
  static_assert(Out::rank == 4 && In::rank == 4 && W::rank == 2, "conv2d_direct: NCHW");
  constexpr int K = CI * KH * KW, KP = int(conv2d_direct_row(K)), PX = int(kDirectConvPixels);
  constexpr int V = 8; // output channels a pass, stored together where they lie side by side
  static_assert(K <= kDirectConvMaxTaps, "conv2d_direct: a window of few taps");
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  float* filter = reinterpret_cast<float*>(vtc_smem);
  const int c_out = int(s.c_out);
  for (int e = int(threadIdx.x); e < c_out * KP; e += int(blockDim.x))
    filter[e] = e % KP < K ? float(w.load(Index<2>{e / KP, e % KP})) : 0.0f;
  __syncthreads();
  const int h = int(s.h), wd = int(s.w), wo = int(s.w_out);
  const int64_t plane = s.h_out * s.w_out, pixels = s.n * plane;
  const int64_t span = int64_t(blockDim.x) * PX; // pixels a block takes a round
  for (int64_t first = int64_t(blockIdx.x) * span + threadIdx.x; first < pixels;
       first += int64_t(gridDim.x) * span) {
    int64_t nb[PX];
    int oy[PX], ox[PX];
    bool live[PX];
    float x[PX][K];
#pragma unroll
    for (int i = 0; i < PX; ++i) {
      const int64_t p = first + int64_t(i) * blockDim.x;
      live[i] = p < pixels;
      nb[i] = live[i] ? p / plane : 0;
      const int rest = live[i] ? int(p % plane) : 0;
      oy[i] = rest / wo;
      ox[i] = rest % wo;
      const int y0 = oy[i] * int(s.stride_h) - int(s.pad_top);
      const int x0 = ox[i] * int(s.stride_w) - int(s.pad_left);
#pragma unroll
      for (int ci = 0; ci < CI; ++ci)
#pragma unroll
        for (int r = 0; r < KH; ++r)
#pragma unroll
          for (int q = 0; q < KW; ++q) {
            const int y = y0 + r * int(s.dil_h), xx = x0 + q * int(s.dil_w);
            x[i][(ci * KH + r) * KW + q] = live[i] && y >= 0 && y < h && xx >= 0 && xx < wd
                                               ? float(in.load(Index<4>{nb[i], ci, y, xx}))
                                               : 0.0f;
          }
    }
#pragma unroll 1
    for (int co0 = 0; co0 < c_out; co0 += V) {
      float acc[PX][V];
#pragma unroll
      for (int u = 0; u < V; ++u) {
        // Past the last channel (c_out not a multiple of V) the last one again, not stored.
        const float4* f = reinterpret_cast<const float4*>(filter + min(co0 + u, c_out - 1) * KP);
#pragma unroll
        for (int i = 0; i < PX; ++i)
          acc[i][u] = 0.0f;
#pragma unroll
        for (int k4 = 0; k4 < KP / 4; ++k4) {
          const float4 v = f[k4];
          const float taps[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (4 * k4 + j < K)
#pragma unroll
              for (int i = 0; i < PX; ++i)
                acc[i][u] = fmaf(taps[j], x[i][4 * k4 + j], acc[i][u]);
        }
      }
#pragma unroll
      for (int i = 0; i < PX; ++i) {
        if (!live[i]) continue;
        const Index<4> at{nb[i], co0, oy[i], ox[i]};
        if (co0 + V <= c_out && store_channels<V>(out, at, acc[i])) continue;
#pragma unroll
        for (int u = 0; u < V; ++u)
          if (co0 + u < c_out) out.store(Index<4>{nb[i], co0 + u, oy[i], ox[i]}, acc[i][u]);
      }
    }
  }
}

} // namespace vtc::kernels

#endif
