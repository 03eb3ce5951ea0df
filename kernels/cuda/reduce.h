// Row kernels' common part and the reductions: out[r] = reduce_j in[r, j] over a rank-2 view
// [rows, d] -> [rows] (code generation presents any set of reduced axes as such a view, as for
// the cpu target). One block per row (grid-stride over rows), row_threads(d) threads.
//
// Fixed order: thread t takes the 8-element slices t, t + T, t + 2T, ... of the row in turn
// (T = blockDim.x, a function of d), folds its elements in order, then the block combines by
// butterflies within warps and the warps in order (cuda::block_reduce). A slice moves as one
// vector where the accessor allows, else element by element: the same values, the same bits.
// In the normalisations (norm.h), rows of at most kRowCache elements stay in shared memory
// between passes (a row is read two or three times); longer ones, and the reductions' second
// pass (LogSumExp), read the row again through the accessor.
//
// Empty rows give the identity of the reduction (0 for sums, 1 for the product, -inf / +inf
// for max / min, -inf for the logarithms, NaN for the mean).
#pragma once

#include "common.h"

namespace vtc::kernels {

enum class ReduceKind { Sum, Mean, Max, Min, Prod, SumSquare, L1, L2, LogSum, LogSumExp };

struct RowsShape {
  int64_t rows = 1, d = 1;
  float eps = 0.0f; // normalisations
};

inline constexpr int64_t kRowCache = 12288; // floats: 48 KB
inline constexpr int64_t kMaxRowBlocks = int64_t(1) << 20;

VTC_HD constexpr int row_threads(int64_t d) {
  return int(clamp64(pow2_ceil(max64(1, cdiv(d, 16))), 32, 1024));
}

VTC_HD constexpr Launch rows_launch(const RowsShape& s) {
  const int64_t cache = s.d <= kRowCache ? s.d : 0;
  return Launch{{unsigned(clamp64(s.rows, 1, kMaxRowBlocks)), 1, 1},
                {unsigned(row_threads(s.d)), 1, 1},
                unsigned((cache + 32) * 4)};
}
// The reductions read a row once (LogSumExp twice, through the accessor): no row cache.
VTC_HD constexpr Launch reduce_launch(const RowsShape& s) {
  return Launch{{unsigned(clamp64(s.rows, 1, kMaxRowBlocks)), 1, 1},
                {unsigned(row_threads(s.d)), 1, 1},
                32 * 4};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

namespace cuda {

// The shared memory of a row kernel: 32 floats of reduction scratch, then the row cache.
struct RowSmem {
  float* scratch;
  float* cache; // nullptr when the row is too long
};
__device__ VTC_INLINE RowSmem row_smem(const RowsShape& s) {
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  float* base = reinterpret_cast<float*>(vtc_smem);
  return RowSmem{base, s.d <= kRowCache ? base + 32 : nullptr};
}

// fn(j, x[r, j]) for this thread's elements of row r, in its order. `first`: the first pass
// over the row, which fills the cache; later passes read it (each thread its own elements).
template <class X, class F>
__device__ VTC_INLINE void row_pass(const X& x, int64_t r, int64_t d, float* cache, bool first,
                                    F&& fn) {
  const int64_t T = blockDim.x;
  for (int64_t q = threadIdx.x; q * 8 < d; q += T) {
    const int64_t j0 = q * 8;
    float v[8];
    if (cache && !first) {
#pragma unroll
      for (int u = 0; u < 8; ++u)
        v[u] = j0 + u < d ? cache[j0 + u] : 0.0f;
    } else {
      const Index<2> i{r, j0};
      load_floats<8>(x, i, j0 + 8 <= d && vector_at<8>(x, i), d, v);
      if (cache)
#pragma unroll
        for (int u = 0; u < 8; ++u)
          if (j0 + u < d) cache[j0 + u] = v[u];
    }
#pragma unroll
    for (int u = 0; u < 8; ++u)
      if (j0 + u < d) fn(j0 + u, v[u]);
  }
}

// y[r, j] = fn(j, x[r, j]) for this thread's elements of row r (a later pass: the cache is
// filled), each 8-element slice stored as one vector where y allows.
template <class Y, class X, class F>
__device__ VTC_INLINE void row_store(const Y& y, const X& x, int64_t r, int64_t d, float* cache,
                                     F&& fn) {
  const int64_t T = blockDim.x;
  for (int64_t q = threadIdx.x; q * 8 < d; q += T) {
    const int64_t j0 = q * 8;
    float v[8];
    if (cache) {
#pragma unroll
      for (int u = 0; u < 8; ++u)
        v[u] = j0 + u < d ? cache[j0 + u] : 0.0f;
    } else {
      const Index<2> i{r, j0};
      load_floats<8>(x, i, j0 + 8 <= d && vector_at<8>(x, i), d, v);
    }
    float o[8];
#pragma unroll
    for (int u = 0; u < 8; ++u)
      o[u] = j0 + u < d ? fn(j0 + u, v[u]) : 0.0f;
    const Index<2> i{r, j0};
    store_floats<8>(y, i, j0 + 8 <= d && vector_at<8>(y, i), d, o);
  }
}

// The reduction of row r of kind K (every thread gets it). Uses row_pass (first pass).
template <ReduceKind K, class X>
__device__ VTC_INLINE float reduce_row(const X& x, int64_t r, int64_t d, const RowSmem& sm) {
  if constexpr (K == ReduceKind::Max || K == ReduceKind::Min) {
    float a = K == ReduceKind::Max ? neg_inf() : pos_inf();
    row_pass(x, r, d, sm.cache, true,
             [&](int64_t, float v) { a = K == ReduceKind::Max ? max_nan(a, v) : min_nan(a, v); });
    return K == ReduceKind::Max ? block_reduce(a, Max{}, sm.scratch)
                                : block_reduce(a, Min{}, sm.scratch);
  } else if constexpr (K == ReduceKind::Prod) {
    float a = 1.0f;
    row_pass(x, r, d, sm.cache, true, [&](int64_t, float v) { a *= v; });
    struct Mul {
      __device__ float operator()(float p, float q) const { return p * q; }
    };
    return block_reduce(a, Mul{}, sm.scratch);
  } else if constexpr (K == ReduceKind::LogSumExp) {
    const float m = block_reduce(
        [&] {
          float a = neg_inf();
          row_pass(x, r, d, sm.cache, true, [&](int64_t, float v) { a = max_nan(a, v); });
          return a;
        }(),
        Max{}, sm.scratch);
    if (isinf(m)) return m;
    float a = 0.0f;
    row_pass(x, r, d, sm.cache, false, [&](int64_t, float v) { a += expf(v - m); });
    return logf(block_reduce(a, Add{}, sm.scratch)) + m;
  } else {
    float a = 0.0f;
    row_pass(x, r, d, sm.cache, true, [&](int64_t, float v) {
      if constexpr (K == ReduceKind::SumSquare || K == ReduceKind::L2)
        a = fmaf(v, v, a);
      else if constexpr (K == ReduceKind::L1)
        a += fabsf(v);
      else
        a += v;
    });
    const float t = block_reduce(a, Add{}, sm.scratch);
    if constexpr (K == ReduceKind::Mean) return t / float(d);
    if constexpr (K == ReduceKind::L2) return sqrtf(t);
    if constexpr (K == ReduceKind::LogSum) return logf(t);
    return t;
  }
}

} // namespace cuda

// out[r] = reduce_j in[r, j] (out rank 1, in rank 2). Launch: reduce_launch.
template <ReduceKind K, class Out, class In> __device__ void reduce(Out out, In in, RowsShape s) {
  static_assert(Out::rank == 1 && In::rank == 2, "reduce: [rows, d] -> [rows]");
  const cuda::RowSmem sm{cuda::row_smem(s).scratch, nullptr};
  for (int64_t r = blockIdx.x; r < s.rows; r += gridDim.x) {
    const float v = cuda::reduce_row<K>(in, r, s.d, sm);
    if (threadIdx.x == 0) out.store(Index<1>{r}, v);
  }
}

} // namespace vtc::kernels

#endif
