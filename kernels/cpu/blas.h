// Matrix products by OpenBLAS, for the kernels the cpu target hands to the library (f32
// MatMul / Gemm on dense, physical, row-major operands): C[b] = op(A[b]) . op(B[b]) for each
// batch b, with op() a transposition when asked, and A[b], B[b] found at the given element
// offsets (broadcast batches repeat an offset) and C[b] at b * M * N. A single row (M = 1) or
// column (N = 1) goes to cblas_sgemv, which streams the matrix once where sgemm would pack it.
// OpenBLAS runs on as many threads as the OpenMP kernels around it (the Session's thread
// count). Only generated code that uses a library kernel includes this header, and its shared
// object then links -lopenblas.
#pragma once

// OpenBLAS's headers declare a global `bfloat16` (a uint16_t), which generated code (using
// namespace vtc::kernels) would find ambiguous with vtc::kernels::bfloat16: renamed here.
#define bfloat16 openblas_bfloat16
#include <cblas.h>
#undef bfloat16

#include <cstdint>

#include "parallel.h"

namespace vtc::kernels {

inline void blas_use_kernel_threads() {
  const int n = max_threads();
  if (openblas_get_num_threads() != n) openblas_set_num_threads(n);
}

// C[M, N] = op(A) . op(B): op(A) is [M, K] (A stored [K, M] when trans_a), op(B) is [K, N]
// (B stored [N, K] when trans_b); every matrix dense and row-major.
inline void blas_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a,
                       const float* b, float* c) {
  const int m = int(M), n = int(N), k = int(K);
  if (M == 1) {
    // c[n] = sum_k a[k] . op(B)[k, n]: a row of A is contiguous whether or not it is transposed.
    if (trans_b)
      cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, b, k, a, 1, 0.0f, c, 1);
    else
      cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, b, n, a, 1, 0.0f, c, 1);
    return;
  }
  if (N == 1) {
    // c[m] = sum_k op(A)[m, k] . b[k]: the column of B is contiguous either way.
    if (trans_a)
      cblas_sgemv(CblasRowMajor, CblasTrans, k, m, 1.0f, a, m, b, 1, 0.0f, c, 1);
    else
      cblas_sgemv(CblasRowMajor, CblasNoTrans, m, k, 1.0f, a, k, b, 1, 0.0f, c, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, trans_a ? m : k, b,
              trans_b ? k : n, 0.0f, c, n);
}

// blas_sgemm for each of `batch` products; a_offsets and b_offsets hold `batch` element
// offsets each, or are null for offset 0 throughout.
inline void blas_sgemm_batched(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N,
                               int64_t K, const float* a, const int64_t* a_offsets, const float* b,
                               const int64_t* b_offsets, float* c) {
  blas_use_kernel_threads();
  for (int64_t i = 0; i < batch; ++i)
    blas_sgemm(trans_a, trans_b, M, N, K, a + (a_offsets ? a_offsets[i] : 0),
               b + (b_offsets ? b_offsets[i] : 0), c + i * M * N);
}

} // namespace vtc::kernels
