// matrix_flops: 2 x output elements x the reduction length of MatMul (batched, broadcast),
// Gemm (transposed A), grouped and depthwise Conv; 0 for other ops.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ops/matrix_flops.h"

namespace vtc {
namespace {

// A node `op` over values of the given shapes (f16), its output of shape `out`.
int64_t flops(const std::string& op, const std::vector<Shape>& ins, const Shape& out,
              std::map<std::string, Attribute> attrs = {}) {
  Graph g;
  std::vector<Value*> in;
  for (size_t k = 0; k < ins.size(); ++k) {
    Value* v = g.add_value("x" + std::to_string(k));
    v->type = TensorType{DType::f16, ins[k]};
    in.push_back(v);
  }
  Value* y = g.add_value("y");
  y->type = TensorType{DType::f16, out};
  Node* n = g.add_node(op, "n", in, {y});
  n->attrs = std::move(attrs);
  return matrix_flops(*n);
}

TEST(MatrixFlops, MatMulCountsEveryBatchOfTheBroadcastProduct) {
  EXPECT_EQ(flops("MatMul", {{2, 1, 5, 7}, {3, 7, 4}}, {2, 3, 5, 4}), 2 * 2 * 3 * 5 * 4 * 7);
  EXPECT_EQ(flops("MatMul", {{7}, {7, 4}}, {4}), 2 * 4 * 7);
}

TEST(MatrixFlops, GemmReadsKFromTheTransposedA) {
  EXPECT_EQ(flops("Gemm", {{6, 3}, {6, 5}}, {3, 5}, {{"transA", int64_t(1)}}), 2 * 3 * 5 * 6);
  EXPECT_EQ(flops("Gemm", {{3, 6}, {6, 5}}, {3, 5}), 2 * 3 * 5 * 6);
}

TEST(MatrixFlops, ConvCountsInputChannelsPerGroupTimesTaps) {
  // 3 x 3, 64 -> 32 channels, 20 x 20 output.
  EXPECT_EQ(flops("Conv", {{1, 64, 20, 20}, {32, 64, 3, 3}}, {1, 32, 20, 20}),
            2 * 32 * 400 * 64 * 9);
  // Depthwise: one input channel per group.
  EXPECT_EQ(flops("Conv", {{2, 16, 8, 8}, {16, 1, 5, 5}}, {2, 16, 8, 8}, {{"group", int64_t(16)}}),
            2 * 2 * 16 * 64 * 25);
}

TEST(MatrixFlops, OtherOpsHaveNone) {
  EXPECT_EQ(flops("Add", {{4, 4}, {4, 4}}, {4, 4}), 0);
}

} // namespace
} // namespace vtc
