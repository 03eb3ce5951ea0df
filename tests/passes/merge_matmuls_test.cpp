// Sibling matrix products merge into one product and a Split, computing the same bits; products
// of other inputs, of different weight rows or dtypes, or writing graph outputs stay apart.
#include <gtest/gtest.h>

#include "frontend/onnx_import.h"
#include "model_builder.h"
#include "passes/merge_matmuls.h"
#include "ref/interpreter.h"

namespace vtc {
namespace {

using testing::ModelBuilder;

Tensor ramp(Shape shape, float step) {
  Tensor t(DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_f64(i, double(step * float(i % 23) - 1.0f));
  return t;
}

int count_ops(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes())
    n += node->op == op;
  return n;
}

// x [2, 3, 8] times q [8, 5], k [8, 4], v [8, 5]: one group of three; r [3, 8] times w2 alone.
TEST(MergeMatmuls, SiblingsBecomeOneProductAndASplit) {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 3, 8});
  b.input("r", DType::f32, {3, 8});
  b.initializer("q", ramp({8, 5}, 0.25f));
  b.initializer("k", ramp({8, 4}, 0.5f));
  b.initializer("v", ramp({8, 5}, 0.125f));
  b.initializer("w2", ramp({8, 6}, 0.75f));
  b.node("MatMul", {"x", "q"}, {"xq"}, "q_proj");
  b.node("MatMul", {"x", "k"}, {"xk"}, "k_proj");
  b.node("MatMul", {"x", "v"}, {"xv"}, "v_proj");
  b.node("MatMul", {"r", "w2"}, {"rw"}, "alone");
  b.node("Relu", {"xq"}, {"yq"});
  b.node("Relu", {"xk"}, {"yk"});
  b.node("Relu", {"xv"}, {"yv"});
  b.node("Relu", {"rw"}, {"yr"});
  for (const char* y : {"yq", "yk", "yv", "yr"})
    b.output(y);
  Graph g = import_onnx_bytes(b.bytes(), ".", "m.onnx");
  TensorMap in{{"x", ramp({2, 3, 8}, 0.3f)}, {"r", ramp({3, 8}, 0.2f)}};
  TensorMap before = run_reference(g, in);
  EXPECT_EQ(merge_sibling_matmuls(g), 1);
  EXPECT_EQ(count_ops(g, "MatMul"), 2);
  EXPECT_EQ(count_ops(g, "Split"), 1);
  const Value* xq = g.find_value("xq");
  ASSERT_TRUE(xq && xq->producer);
  EXPECT_EQ(xq->producer->op, "Split");
  EXPECT_EQ(xq->producer->inputs[0]->type.shape, (Shape{2, 3, 14}));
  TensorMap after = run_reference(g, in);
  for (const char* y : {"yq", "yk", "yv", "yr"})
    EXPECT_TRUE(after.at(y).bitwise_equal(before.at(y))) << y;
}

// Products whose results are graph outputs are not merged (graph outputs own their storage).
TEST(MergeMatmuls, LeavesGraphOutputsAndOtherShapesAlone) {
  ModelBuilder b;
  b.input("x", DType::f32, {4, 8});
  b.initializer("a", ramp({8, 3}, 0.25f));
  b.initializer("c", ramp({8, 3}, 0.5f));
  b.node("MatMul", {"x", "a"}, {"xa"});
  b.node("MatMul", {"x", "c"}, {"xc"});
  b.output("xa");
  b.output("xc");
  Graph g = import_onnx_bytes(b.bytes(), ".", "m.onnx");
  EXPECT_EQ(merge_sibling_matmuls(g), 0);
  EXPECT_EQ(count_ops(g, "MatMul"), 2);
}

} // namespace
} // namespace vtc
