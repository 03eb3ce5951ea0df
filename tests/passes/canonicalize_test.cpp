// Canonicalisation removes Identity nodes without changing what the graph computes.
#include <gtest/gtest.h>

#include "frontend/onnx_import.h"
#include "ir/printer.h"
#include "model_builder.h"
#include "passes/canonicalize.h"
#include "ref/interpreter.h"

namespace vtc {
namespace {

using testing::ModelBuilder;

TEST(Canonicalize, RemovesIdentityChains) {
  ModelBuilder b;
  b.input("x", DType::f32, {2});
  b.node("Identity", {"x"}, {"a"});
  b.node("Relu", {"a"}, {"r"});
  b.node("Identity", {"r"}, {"y"});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), ".", "m.onnx");
  EXPECT_EQ(canonicalize(g), 2);
  EXPECT_EQ(print_graph(g), "graph test (opset 17)\n"
                            "  input  %x: f32[2]\n"
                            "  %y: f32[2] = Relu(%x)\n"
                            "  output %y\n");
}

TEST(Canonicalize, KeepsIdentityBetweenGraphInputAndOutput) {
  ModelBuilder b;
  b.input("x", DType::f32, {2});
  b.node("Identity", {"x"}, {"y"});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), ".", "m.onnx");
  EXPECT_EQ(canonicalize(g), 0);
}

TEST(Canonicalize, FoldsInferenceBatchNormIntoMultiplyAdd) {
  ModelBuilder b;
  b.input("x", DType::f32, {1, 2, 3});
  b.initializer("scale", Tensor::from<float>({2}, {2, 1}));
  b.initializer("bias", Tensor::from<float>({2}, {1, 0}));
  b.initializer("mean", Tensor::from<float>({2}, {0.5f, 0}));
  b.initializer("var", Tensor::from<float>({2}, {3, 0}));
  auto& bn = b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn");
  auto* eps = bn.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(1.0f);
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), ".", "m.onnx");
  Tensor x = Tensor::from<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor before = run_reference(g, {{"x", x}}).at("y");
  canonicalize(g);
  EXPECT_EQ(print_graph(g), "graph test (opset 17)\n"
                            "  input  %x: f32[1,2,3]\n"
                            "  const  %bn/scale_folded: f32[2,1] = [1,1]\n"
                            "  const  %bn/shift_folded: f32[2,1] = [0.5,0]\n"
                            "  %bn/scaled: f32[1,2,3] = Mul(%x, %bn/scale_folded)\n"
                            "  %y: f32[1,2,3] = Add(%bn/scaled, %bn/shift_folded)\n"
                            "  output %y\n");
  Tensor after = run_reference(g, {{"x", x}}).at("y");
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_NEAR(after.get_f64(i), before.get_f64(i), 1e-6);
}

} // namespace
} // namespace vtc
