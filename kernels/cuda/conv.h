// 2-D convolution, NCHW, as an implicit GEMM on the kernels of gemm.h: batch (n, g),
// M = c_out / groups, N = h_out * w_out, K = (c_in / groups) * kh * kw with k = (ci, r, s):
//   C[(n, g), m, p] = sum_k W[g * M + m, k] * In[n, g * Cin_g + ci, y*sh - pt + r*dh, x*sw - pl +
//   s*dw]
// (p = y * w_out + x; reads outside the input are zero). The weights come as a rank-2 reader
// [c_out, K] (code generation flattens the filter's (ci, r, s), which a dense weight holds
// contiguously, so its rows move by cp.async); the input is gathered element by element
// through its accessor (im2col-free); the output accessor (its epilogue: bias, activation)
// receives C at [n, g * M + m, y, x]. The products run in the GEMM's order, a function of the
// shape: conv2d_f32's is the cpu target's chain over k, padding taps included as zeros.
#pragma once

#include "gemm.h"
#include "pool.h"

namespace vtc::kernels {

VTC_HD constexpr GemmShape conv2d_gemm_shape(const Conv2dShape& s) {
  return GemmShape{s.n * s.groups, s.c_out / s.groups, s.h_out * s.w_out,
                   s.c_in / s.groups * s.kh * s.kw};
}
VTC_HD constexpr Launch conv2d_tc_launch(const Conv2dShape& s) {
  return gemm_tc_launch(conv2d_gemm_shape(s));
}
VTC_HD constexpr Launch conv2d_f32_launch(const Conv2dShape& s) {
  return gemm_f32_launch(conv2d_gemm_shape(s));
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

namespace cuda {

// W[c_out, K] as the GEMM's A[(n, g), m, k].
template <class W> struct ConvWeights {
  using value_type = typename W::value_type;
  static constexpr int rank = 3;
  static constexpr int64_t contig = W::contig;
  static constexpr bool has_ptr = W::has_ptr;
  W w;
  int64_t groups, m;
  __device__ Index<2> at(const Index<3>& i) const {
    return Index<2>{i[0] % groups * m + i[1], i[2]};
  }
  __device__ auto load(const Index<3>& i) const { return w.load(at(i)); }
  __device__ auto ptr(const Index<3>& i) const { return w.ptr(at(i)); }
};

// The input as the GEMM's B[(n, g), k, p]: gathered, zero outside the input.
template <class In> struct ConvColumns {
  using value_type = typename In::value_type;
  static constexpr int rank = 3;
  static constexpr int64_t contig = 1;
  static constexpr bool has_ptr = false;
  In in;
  Conv2dShape s;
  __device__ float load(const Index<3>& i) const {
    const int64_t cin_g = s.c_in / s.groups, khw = s.kh * s.kw;
    const int64_t nb = i[0] / s.groups, g = i[0] % s.groups, k = i[1], p = i[2];
    const int64_t ci = k / khw, r = k % khw / s.kw, q = k % s.kw;
    const int64_t y = p / s.w_out * s.stride_h - s.pad_top + r * s.dil_h;
    const int64_t x = p % s.w_out * s.stride_w - s.pad_left + q * s.dil_w;
    if (y < 0 || y >= s.h || x < 0 || x >= s.w) return 0.0f;
    return float(in.load(Index<4>{nb, g * cin_g + ci, y, x}));
  }
};

// The output [n, c_out, h_out, w_out] as the GEMM's C[(n, g), m, p].
template <class Out> struct ConvOutput {
  using value_type = typename Out::value_type;
  static constexpr int rank = 3;
  static constexpr int64_t contig = 1;
  static constexpr bool has_ptr = false;
  Out out;
  int64_t groups, m, w_out;
  __device__ void store(const Index<3>& i, float v) const {
    out.store(Index<4>{i[0] / groups, i[0] % groups * m + i[1], i[2] / w_out, i[2] % w_out}, v);
  }
};

} // namespace cuda

// f16 / bf16 input and weights on the tensor cores. Launch: conv2d_tc_launch.
template <class Out, class In, class W>
__device__ void conv2d_tc(Out out, In in, W w, Conv2dShape s) {
  static_assert(Out::rank == 4 && In::rank == 4 && W::rank == 2,
                "conv2d: NCHW, weights [c_out, K]");
  const int64_t m = s.c_out / s.groups;
  gemm_tc(cuda::ConvOutput<Out>{out, s.groups, m, s.w_out}, cuda::ConvWeights<W>{w, s.groups, m},
          cuda::ConvColumns<In>{in, s}, conv2d_gemm_shape(s));
}

// f32 on CUDA cores. Launch: conv2d_f32_launch.
template <class Out, class In, class W>
__device__ void conv2d_f32(Out out, In in, W w, Conv2dShape s) {
  static_assert(Out::rank == 4 && In::rank == 4 && W::rank == 2,
                "conv2d: NCHW, weights [c_out, K]");
  const int64_t m = s.c_out / s.groups;
  gemm_f32(cuda::ConvOutput<Out>{out, s.groups, m, s.w_out}, cuda::ConvWeights<W>{w, s.groups, m},
           cuda::ConvColumns<In>{in, s}, conv2d_gemm_shape(s));
}

} // namespace vtc::kernels

#endif
