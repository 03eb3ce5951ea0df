// When OpenBLAS beats vtc's GEMM template on physical f32 operands, as measured by
// bench/kernels_bench (BM_MatMulVtc against BM_MatMulOpenBlas); see the .cpp for the figures.
#pragma once

#include <cstdint>

namespace vtc {

// Whether `batch` products of [M, K] . [K, N] (batches already folded into M where B is
// shared) should be computed by OpenBLAS rather than by the template.
bool prefer_library_gemm(int64_t batch, int64_t M, int64_t N, int64_t K);

} // namespace vtc
