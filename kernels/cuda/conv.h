// 2-D convolution, NCHW, as an implicit GEMM: batch (n, g), M = c_out / groups,
// N = h_out * w_out, K = (c_in / groups) * kh * kw with k = (ci, r, s):
//   C[(n, g), m, p] = sum_k W[g * M + m, k] * In[n, g * Cin_g + ci, y*sh - pt + r*dh, x*sw - pl +
//   s*dw]
// (p = y * w_out + x; reads outside the input are zero). The weights come as a rank-2 reader
// [c_out, K] (code generation flattens the filter's (ci, r, s), which a dense weight holds
// contiguously, so its rows move by cp.async); the output accessor (its epilogue: bias,
// activation) receives C at [n, g * M + m, y, x].
//
// conv2d_tc (f16 / bf16) runs on gemm_tc.h's tiles with its plan (TcPlan of the GEMM's shape:
// tile, split-K): B is gathered by ConvGather, each thread keeping one column p of the block's
// tile — its input origin (y, x) computed once — and 16 of the k tile's 32 rows, loaded into
// registers before the tile's products and stored to shared memory after them (at once for
// 128-row tiles: tc_holds). conv2d_f32 runs
// on gemm_f32 with ConvColumns (a gather per element); its order is the cpu target's chain over
// k, padding taps included as zeros.
#pragma once

#include "gemm.h"
#include "gemm_tc.h"
#include "pool.h"

namespace vtc::kernels {

VTC_HD constexpr GemmShape conv2d_gemm_shape(const Conv2dShape& s) {
  return GemmShape{s.n * s.groups, s.c_out / s.groups, s.h_out * s.w_out,
                   s.c_in / s.groups * s.kh * s.kw};
}
VTC_HD constexpr TcPlan conv2d_tc_plan(const Conv2dShape& s) {
  const GemmShape g = conv2d_gemm_shape(s);
  TcPlan p = plan_gemm_tc(g.batch, g.m, g.n, g.k);
  p.a_shared = s.groups == 1; // one group: the same weights for every image
  return p;
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

// B of the implicit GEMM for gemm_tc's tiles: thread tid keeps column tid % BN of the tile and
// rows tid / BN + j * (T / BN) of each k tile (T = 2 BN threads: 16 rows), their bits (0 in the
// padding) held in registers from fetch to put.
template <class In, int BN, int T, bool Hold> struct ConvGather {
  static constexpr int kGroups = T / BN, kRows = gemm_tc_config::kBK / kGroups;
  static_assert(T % BN == 0 && kRows % 2 == 0, "whole row groups, rows in pairs");
  const In& in;
  const Conv2dShape& s;
  int64_t nb = 0, cbase = 0, y0 = 0, x0 = 0;
  bool column = false;
  unsigned held[kRows / 2];

  __device__ VTC_INLINE void start(int64_t bi, int64_t n0) {
    const int64_t p = n0 + int(threadIdx.x) % BN;
    nb = bi / s.groups;
    cbase = bi % s.groups * (s.c_in / s.groups);
    column = p < s.h_out * s.w_out;
    y0 = p / s.w_out * s.stride_h - s.pad_top;
    x0 = p % s.w_out * s.stride_w - s.pad_left;
  }
  // 32-bit index arithmetic (the shape's extents are literals: divisions by constants).
  __device__ VTC_INLINE uint16_t bits_at(int64_t k64, int64_t K) const {
    const int k = int(k64), khw = int(s.kh * s.kw), kw = int(s.kw);
    const int ci = k / khw, r = k % khw / kw, q = k % kw;
    const int y = int(y0) + r * int(s.dil_h), x = int(x0) + q * int(s.dil_w);
    const bool inside = column && k64 < K && y >= 0 && y < int(s.h) && x >= 0 && x < int(s.w);
    using T16 = typename In::value_type;
    if (!inside) return uint16_t(0);
    if constexpr (In::has_ptr)
      return raw_bits(*in.ptr(Index<4>{nb, cbase + ci, y, x}));
    else
      return raw_bits(from_compute<T16>(in.load(Index<4>{nb, cbase + ci, y, x})));
  }
  __device__ VTC_INLINE void fetch(int64_t, int64_t k0, int64_t, int64_t K, int64_t,
                                   uint16_t* tile) {
    const int g = int(threadIdx.x) / BN;
#pragma unroll
    for (int j = 0; j < kRows; j += 2)
      held[j / 2] = unsigned(bits_at(k0 + g + j * kGroups, K)) |
                    unsigned(bits_at(k0 + g + (j + 1) * kGroups, K)) << 16;
    if constexpr (!Hold) store(tile);
  }
  __device__ VTC_INLINE void put(uint16_t* tile) const {
    if constexpr (Hold) store(tile);
  }
  __device__ VTC_INLINE void store(uint16_t* tile) const {
    const int g = int(threadIdx.x) / BN, c = int(threadIdx.x) % BN;
#pragma unroll
    for (int j = 0; j < kRows; j += 2) {
      tile[(g + j * kGroups) * (BN + 8) + c] = uint16_t(held[j / 2]);
      tile[(g + (j + 1) * kGroups) * (BN + 8) + c] = uint16_t(held[j / 2] >> 16);
    }
  }
};

} // namespace cuda

// f16 / bf16 input and weights on the tensor cores, BM x BN the plan's tile (conv2d_tc_plan).
// Launch: gemm_tc_launch(plan); workspace gemm_tc_workspace_bytes(plan).
template <int BM, int BN, class Out, class In, class W>
__device__ void conv2d_tc(Out out, In in, W w, TcWorkspace ws, Conv2dShape s, TcPlan p) {
  static_assert(Out::rank == 4 && In::rank == 4 && W::rank == 2,
                "conv2d: NCHW, weights [c_out, K]");
  using namespace cuda;
  const int64_t m = s.c_out / s.groups;
  const ConvOutput<Out> o{out, s.groups, m, s.w_out};
  const ConvWeights<W> a{w, s.groups, m};
  ConvGather<In, BN, tc_threads(BM), tc_holds(BM)> lb{in, s};
  tc_run<BM, BN>(o, a, lb, ws, p);
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
