// When OpenBLAS beats vtc's GEMM template on physical f32 operands, as measured by
// bench/kernels_bench (BM_MatMulVtc and BM_MatMulVtcSharedB against BM_MatMulOpenBlas); see
// the .cpp for the figures.
#pragma once

#include <cstdint>

#include "codegen/library_gemm.h"

namespace vtc {

// A matrix product as the two implementations run it: OpenBLAS as `batch` products of
// [M, K] . [K, N]; the template the same, except that batches sharing one B, which OpenBLAS
// folds into M, stay `folded` separate products of M / folded rows ([16, 1, K] . [K, N] is
// one 16-row product for OpenBLAS, sixteen 1-row products for the template).
// Whether the product should be computed by OpenBLAS rather than by the template.
bool prefer_library_gemm(const GemmShape& s);

} // namespace vtc
