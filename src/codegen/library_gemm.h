// The OpenBLAS form of a matrix-product kernel on the cpu target. A kernel has one when its
// anchor is an f32 MatMul or Gemm whose two matrix operands are read from memory (no fused
// prologue computes them) and whose one output is f32 with the product's shape (the product
// itself, or the result of its epilogue, which is then applied in place over the product).
// Batches fold into rows when the right operand is shared by all of them
// ([B, M, K] . [K, N] is one [B*M, K] . [K, N] product); otherwise each batch is a product of
// its own, at offsets that repeat for broadcast batches.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_call.h"
#include "passes/kernel_graph.h"

namespace vtc {

// The shape of a matrix product as a library sees it.
struct GemmShape {
  int64_t batch = 1, M = 0, N = 0, K = 0;
  int64_t folded = 1;
};

struct LibraryGemm {
  const Value* a = nullptr;   // op(A) is [M, K]: A is stored [M, K], or [K, M] when trans_a
  const Value* b = nullptr;   // op(B) is [K, N]: B is stored [K, N], or [N, K] when trans_b
  const Value* out = nullptr; // the kernel's output, dense [batch, M, N]
  bool trans_a = false, trans_b = false;
  int64_t batch = 1, M = 0, N = 0, K = 0;
  // Batches folded into M (B shared by all of them); the template runs them as `folded`
  // separate products of M / folded rows.
  int64_t folded = 1;
  // Element offsets of each batch's A and B; empty when batch is 1.
  std::vector<int64_t> a_offsets, b_offsets;

  GemmShape shape() const { return {batch, M, N, K, folded}; }
};

// The form of kernel k, or nullopt when OpenBLAS cannot compute it.
std::optional<LibraryGemm> library_gemm_form(const Kernel& k);

// The call computing the product of `g` into the dense output: `a`, `b` and `c` are C++
// expressions of type float* for the buffers of g.a, g.b and g.out (kernels/cpu/blas.h).
KernelCall library_gemm_call(const LibraryGemm& g, const std::string& a, const std::string& b,
                             const std::string& c);

} // namespace vtc
