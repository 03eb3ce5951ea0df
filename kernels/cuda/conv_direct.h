// 2-D convolutions whose window holds few inputs, NCHW: one group, c_in * kh * kw taps up to
// kDirectConvMaxTaps and up to kDirectConvMaxChannels output channels — a network's stem over a
// 3-channel image (3 x 3 x 3 = 27 taps). As an implicit GEMM such a convolution has K = 27, less
// than one 32-wide tensor-core k tile, and its columns are gathered element by element; cuDNN's
// NCHW kernels for 3 input channels ran at about 250 GB/s on the H200. Here each thread takes
// one output pixel (n, y, x): the window's taps in registers (zeros in the padding), the filter
// [c_out, K] in shared memory as floats, and for every output channel in turn acc = 0,
// acc = fma(W[co, k], x_k, acc) for k = (ci, r, s) in order — the cpu target's chain — stored
// through the output accessor (bias, activation). Neighbouring threads take neighbouring
// columns, so each channel's stores coalesce and the windows' reads share cache lines.
// The channel count and window are template arguments: the taps' index arithmetic is constant.
#pragma once

#include "../common/window_shapes.h"
#include "common.h"

namespace vtc::kernels {

inline constexpr int64_t kDirectConvMaxTaps = 32, kDirectConvMaxChannels = 64;

// Whether conv2d_direct takes this convolution (windows larger than 1 x 1: a pointwise
// convolution is a GEMM over rows).
VTC_HD constexpr bool conv2d_direct_fits(const Conv2dShape& s) {
  return s.groups == 1 && s.kh * s.kw > 1 && s.c_in * s.kh * s.kw <= kDirectConvMaxTaps &&
         s.c_out <= kDirectConvMaxChannels;
}

// 256 threads, a pixel each (grid-stride past the cap), the filter as floats in shared memory.
VTC_HD constexpr Launch conv2d_direct_launch(const Conv2dShape& s) {
  const int64_t pixels = s.n * s.h_out * s.w_out;
  return Launch{{unsigned(clamp64(cdiv(pixels, 256), 1, kMaxGridStrideBlocks)), 1, 1},
                {256, 1, 1},
                unsigned(s.c_out * s.c_in * s.kh * s.kw * 4)};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

// Weights W[c_out, K] (K = CI * KH * KW, flattened as (ci, r, s)); bias and activation are the
// output accessor's epilogue. Launch: conv2d_direct_launch.
template <int CI, int KH, int KW, class Out, class In, class W>
__device__ void conv2d_direct(Out out, In in, W w, Conv2dShape s) {
  static_assert(Out::rank == 4 && In::rank == 4 && W::rank == 2, "conv2d_direct: NCHW");
  constexpr int K = CI * KH * KW;
  static_assert(K <= kDirectConvMaxTaps, "conv2d_direct: a window of few taps");
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  float* filter = reinterpret_cast<float*>(vtc_smem);
  const int c_out = int(s.c_out);
  for (int e = int(threadIdx.x); e < c_out * K; e += int(blockDim.x))
    filter[e] = float(w.load(Index<2>{e / K, e % K}));
  __syncthreads();
  const int h = int(s.h), wd = int(s.w), wo = int(s.w_out);
  const int64_t plane = s.h_out * s.w_out, pixels = s.n * plane;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < pixels; p += stride) {
    const int64_t nb = p / plane;
    const int rest = int(p % plane), oy = rest / wo, ox = rest % wo;
    const int y0 = oy * int(s.stride_h) - int(s.pad_top);
    const int x0 = ox * int(s.stride_w) - int(s.pad_left);
    float x[K];
#pragma unroll
    for (int ci = 0; ci < CI; ++ci)
#pragma unroll
      for (int r = 0; r < KH; ++r)
#pragma unroll
        for (int q = 0; q < KW; ++q) {
          const int y = y0 + r * int(s.dil_h), xx = x0 + q * int(s.dil_w);
          x[(ci * KH + r) * KW + q] = y >= 0 && y < h && xx >= 0 && xx < wd
                                          ? float(in.load(Index<4>{nb, ci, y, xx}))
                                          : 0.0f;
        }
#pragma unroll 1
    for (int co = 0; co < c_out; ++co) {
      const float* f = filter + co * K;
      float acc = 0.0f;
#pragma unroll
      for (int k = 0; k < K; ++k)
        acc = fmaf(f[k], x[k], acc);
      out.store(Index<4>{nb, co, oy, ox}, acc);
    }
  }
}

} // namespace vtc::kernels

#endif
