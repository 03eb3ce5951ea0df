// Row-wise normalisations over the last axis of a rank-2 view [rows, d]: softmax and
// log-softmax, LayerNorm (two-pass variance) and RMSNorm, with optional gamma / beta rank-1
// accessors over d and, for LayerNorm, optional per-row mean and inverse-standard-deviation
// outputs. One block per row in the order of reduce.h (launch: rows_launch); multiply-adds as
// fmaf in the cpu target's forms, so the result depends on the row's values only.
#pragma once

#include "reduce.h"

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

namespace cuda {

// y = (x - shift) * inv, then * gamma and + beta where present (the cpu target's forms).
template <class GA, class BA>
__device__ VTC_INLINE float scale_shift(float x, int64_t j, float shift, float inv, const GA& gamma,
                                        const BA& beta) {
  if constexpr (is_present<GA> && is_present<BA>)
    return fmaf((x - shift) * inv, float(gamma.load(Index<1>{j})), float(beta.load(Index<1>{j})));
  else if constexpr (is_present<GA>)
    return (x - shift) * inv * float(gamma.load(Index<1>{j}));
  else if constexpr (is_present<BA>)
    return fmaf(x - shift, inv, float(beta.load(Index<1>{j})));
  else
    return (x - shift) * inv;
}

} // namespace cuda

// y[r, j] = exp(x[r, j] - m) / sum_j exp(x[r, j] - m), m the row maximum.
template <class Y, class X> __device__ void softmax(Y y, X x, RowsShape s) {
  static_assert(Y::rank == 2 && X::rank == 2, "softmax: [rows, d]");
  using namespace cuda;
  const RowSmem sm = row_smem(s);
  for (int64_t r = blockIdx.x; r < s.rows; r += gridDim.x) {
    const float m = reduce_row<ReduceKind::Max>(x, r, s.d, sm);
    float a = 0.0f;
    row_pass(x, r, s.d, sm.cache, false, [&](int64_t, float v) { a += expf(v - m); });
    const float sum = block_reduce(a, Add{}, sm.scratch);
    row_store(y, x, r, s.d, sm.cache, [&](int64_t, float v) { return expf(v - m) / sum; });
  }
}

// y[r, j] = (x[r, j] - m) - log(sum_j exp(x[r, j] - m)).
template <class Y, class X> __device__ void log_softmax(Y y, X x, RowsShape s) {
  static_assert(Y::rank == 2 && X::rank == 2, "log_softmax: [rows, d]");
  using namespace cuda;
  const RowSmem sm = row_smem(s);
  for (int64_t r = blockIdx.x; r < s.rows; r += gridDim.x) {
    const float m = reduce_row<ReduceKind::Max>(x, r, s.d, sm);
    float a = 0.0f;
    row_pass(x, r, s.d, sm.cache, false, [&](int64_t, float v) { a += expf(v - m); });
    const float ls = logf(block_reduce(a, Add{}, sm.scratch));
    row_store(y, x, r, s.d, sm.cache, [&](int64_t, float v) { return (v - m) - ls; });
  }
}

// y[r, :] = (x[r, :] - mean) / sqrt(var + eps) * gamma + beta with the row's mean and biased
// variance (two passes); mean_out / inv_std_out [rows], when given, receive the mean and
// 1 / sqrt(var + eps).
template <class Y, class X, class GA = NoOperand, class BA = NoOperand, class MA = NoOperand,
          class IA = NoOperand>
__device__ void layer_norm(Y y, X x, GA gamma, BA beta, RowsShape s, MA mean_out = {},
                           IA inv_std_out = {}) {
  static_assert(Y::rank == 2 && X::rank == 2, "layer_norm: [rows, d]");
  using namespace cuda;
  const RowSmem sm = row_smem(s);
  for (int64_t r = blockIdx.x; r < s.rows; r += gridDim.x) {
    const float mean = reduce_row<ReduceKind::Sum>(x, r, s.d, sm) / float(s.d);
    float a = 0.0f;
    row_pass(x, r, s.d, sm.cache, false, [&](int64_t, float v) {
      const float dv = v - mean;
      a = fmaf(dv, dv, a);
    });
    const float var = block_reduce(a, Add{}, sm.scratch) / float(s.d);
    const float inv = 1.0f / sqrtf(var + s.eps);
    row_store(y, x, r, s.d, sm.cache,
              [&](int64_t j, float v) { return scale_shift(v, j, mean, inv, gamma, beta); });
    if (threadIdx.x == 0) {
      if constexpr (is_present<MA>) mean_out.store(Index<1>{r}, mean);
      if constexpr (is_present<IA>) inv_std_out.store(Index<1>{r}, inv);
    }
  }
}

// y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * gamma + beta.
template <class Y, class X, class GA = NoOperand, class BA = NoOperand>
__device__ void rms_norm(Y y, X x, GA gamma, BA beta, RowsShape s) {
  static_assert(Y::rank == 2 && X::rank == 2, "rms_norm: [rows, d]");
  using namespace cuda;
  const RowSmem sm = row_smem(s);
  for (int64_t r = blockIdx.x; r < s.rows; r += gridDim.x) {
    const float ms = reduce_row<ReduceKind::SumSquare>(x, r, s.d, sm) / float(s.d);
    const float inv = 1.0f / sqrtf(ms + s.eps);
    row_store(y, x, r, s.d, sm.cache,
              [&](int64_t j, float v) { return scale_shift(v, j, 0.0f, inv, gamma, beta); });
  }
}

} // namespace vtc::kernels

#endif
