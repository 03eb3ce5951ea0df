// Row kernels' common part and the reductions: out[r] = reduce_j in[r, j] over a rank-2 view
// [rows, d] -> [rows] (code generation presents any set of reduced axes as such a view, as for
// the cpu target). One block per row (grid-stride over rows), row_threads(d) threads; rows
// of at most 512 a warp each, eight to a block (reduce_rows_per_block), combined as a block of
// one warp would.
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
// Rows a reduction's block takes: rows short enough for one warp (row_threads 32: d <= 512)
// go eight to a block, a warp each, which combines them as a one-warp block would (the same
// slices, the same butterflies): a block a row of 49 (ShuffleNet's global average pool over
// 7 x 7 planes at batch 16, 16384 rows) ran at 70 GB/s, block launches more than reads.
VTC_HD constexpr int reduce_rows_per_block(int64_t d) {
  return row_threads(d) == 32 ? 8 : 1;
}
// The reductions read a row once (LogSumExp twice, through the accessor): no row cache.
VTC_HD constexpr Launch reduce_launch(const RowsShape& s) {
  const int per_block = reduce_rows_per_block(s.d);
  return Launch{{unsigned(clamp64(cdiv(s.rows, per_block), 1, kMaxRowBlocks)), 1, 1},
                {unsigned(row_threads(s.d) * per_block), 1, 1},
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

// The threads that take one row: a whole block (combined by block_reduce), or one warp of it
// (reduce_rows_per_block; warp_reduce, what block_reduce gives for a block of one warp).
struct BlockRow {
  float* scratch;
  __device__ VTC_INLINE int64_t threads() const { return blockDim.x; }
  __device__ VTC_INLINE int64_t rank() const { return threadIdx.x; }
  template <class F> __device__ VTC_INLINE float combine(float v, F op) const {
    return block_reduce(v, op, scratch);
  }
};
struct WarpRow {
  __device__ VTC_INLINE int64_t threads() const { return 32; }
  __device__ VTC_INLINE int64_t rank() const { return threadIdx.x % 32; }
  template <class F> __device__ VTC_INLINE float combine(float v, F op) const {
    return warp_reduce(v, op);
  }
};

// fn(j, x[r, j]) for this thread's elements of row r, in its order. `first`: the first pass
// over the row, which fills the cache; later passes read it (each thread its own elements).
template <class X, class F, class G = BlockRow>
__device__ VTC_INLINE void row_pass(const X& x, int64_t r, int64_t d, float* cache, bool first,
                                    F&& fn, const G& g = G{}) {
  const int64_t T = g.threads();
  for (int64_t q = g.rank(); q * 8 < d; q += T) {
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

// The reduction of row r of kind K (every thread of the row's group `g` gets it). Uses row_pass
// (first pass).
template <ReduceKind K, class X, class G>
__device__ VTC_INLINE float reduce_row(const X& x, int64_t r, int64_t d, float* cache, const G& g) {
  if constexpr (K == ReduceKind::Max || K == ReduceKind::Min) {
    float a = K == ReduceKind::Max ? neg_inf() : pos_inf();
    row_pass(
        x, r, d, cache, true,
        [&](int64_t, float v) { a = K == ReduceKind::Max ? max_nan(a, v) : min_nan(a, v); }, g);
    return K == ReduceKind::Max ? g.combine(a, Max{}) : g.combine(a, Min{});
  } else if constexpr (K == ReduceKind::Prod) {
    float a = 1.0f;
    row_pass(
        x, r, d, cache, true, [&](int64_t, float v) { a *= v; }, g);
    struct Mul {
      __device__ float operator()(float p, float q) const { return p * q; }
    };
    return g.combine(a, Mul{});
  } else if constexpr (K == ReduceKind::LogSumExp) {
    const float m = g.combine(
        [&] {
          float a = neg_inf();
          row_pass(
              x, r, d, cache, true, [&](int64_t, float v) { a = max_nan(a, v); }, g);
          return a;
        }(),
        Max{});
    if (isinf(m)) return m;
    float a = 0.0f;
    row_pass(
        x, r, d, cache, false, [&](int64_t, float v) { a += expf(v - m); }, g);
    return logf(g.combine(a, Add{})) + m;
  } else {
    float a = 0.0f;
    row_pass(
        x, r, d, cache, true,
        [&](int64_t, float v) {
          if constexpr (K == ReduceKind::SumSquare || K == ReduceKind::L2)
            a = fmaf(v, v, a);
          else if constexpr (K == ReduceKind::L1)
            a += fabsf(v);
          else
            a += v;
        },
        g);
    const float t = g.combine(a, Add{});
    if constexpr (K == ReduceKind::Mean) return t / float(d);
    if constexpr (K == ReduceKind::L2) return sqrtf(t);
    if constexpr (K == ReduceKind::LogSum) return logf(t);
    return t;
  }
}

// The block-wide form (norm.h's row kernels).
template <ReduceKind K, class X>
__device__ VTC_INLINE float reduce_row(const X& x, int64_t r, int64_t d, const RowSmem& sm) {
  return reduce_row<K>(x, r, d, sm.cache, BlockRow{sm.scratch});
}

} // namespace cuda

// out[r] = reduce_j in[r, j] (out rank 1, in rank 2). Launch: reduce_launch.
template <ReduceKind K, class Out, class In> __device__ void reduce(Out out, In in, RowsShape s) {
  static_assert(Out::rank == 1 && In::rank == 2, "reduce: [rows, d] -> [rows]");
  const int per_block = reduce_rows_per_block(s.d);
  if (per_block > 1) { // a warp a row
    const int64_t warp = threadIdx.x / 32;
    for (int64_t r = int64_t(blockIdx.x) * per_block + warp; r < s.rows;
         r += int64_t(gridDim.x) * per_block) {
      const float v = cuda::reduce_row<K>(in, r, s.d, nullptr, cuda::WarpRow{});
      if (threadIdx.x % 32 == 0) out.store(Index<1>{r}, v);
    }
    return;
  }
  const cuda::RowSmem sm{cuda::row_smem(s).scratch, nullptr};
  for (int64_t r = blockIdx.x; r < s.rows; r += gridDim.x) {
    const float v = cuda::reduce_row<K>(in, r, s.d, sm);
    if (threadIdx.x == 0) out.store(Index<1>{r}, v);
  }
}

} // namespace vtc::kernels

#endif
