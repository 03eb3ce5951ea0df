// Canonicalisation removes Identity nodes without changing what the graph computes.
#include <cstring>
#include <map>

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

// Relu -> Cast -> Transpose -> MatMul: the Relu and the Cast move below the Transpose (fusion
// then reads them into the product), computing the same bits.
TEST(Canonicalize, MovesUnaryNodesBelowATransposeIntoAProduct) {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 3, 4});
  b.input("w", DType::f16, {2, 3, 5});
  b.node("Relu", {"x"}, {"r"}, "relu");
  ModelBuilder::set_int(b.node("Cast", {"r"}, {"c"}, "cast"), "to", 10);
  ModelBuilder::set_ints(b.node("Transpose", {"c"}, {"t"}, "transpose"), "perm", {0, 2, 1});
  b.node("MatMul", {"t", "w"}, {"y"}, "product");
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), ".", "m.onnx");
  std::vector<float> xs(24), ws(30);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = float(int(i * 7 % 11) - 5) * 0.37f;
  for (size_t i = 0; i < ws.size(); ++i)
    ws[i] = float(int(i * 5 % 9) - 4) * 0.21f;
  Tensor w(DType::f16, {2, 3, 5});
  for (int64_t i = 0; i < 30; ++i)
    w.set_f64(i, ws[size_t(i)]);
  const std::map<std::string, Tensor> inputs{{"x", Tensor::from<float>({2, 3, 4}, xs)}, {"w", w}};
  Tensor before = run_reference(g, inputs).at("y");
  EXPECT_EQ(canonicalize(g), 2);
  EXPECT_EQ(print_graph(g), "graph test (opset 17)\n"
                            "  input  %x: f32[2,3,4]\n"
                            "  input  %w: f16[2,3,5]\n"
                            "  %x/transposed: f32[2,4,3] = Transpose(%x) {perm=[0,2,1]}\n"
                            "  %r/transposed: f32[2,4,3] = Relu(%x/transposed)\n"
                            "  %t: f16[2,4,3] = Cast(%r/transposed) {to=10}\n"
                            "  %y: f16[2,4,5] = MatMul(%t, %w)\n"
                            "  output %y\n");
  Tensor after = run_reference(g, inputs).at("y");
  ASSERT_EQ(after.type(), before.type());
  EXPECT_EQ(std::memcmp(after.raw(), before.raw(), before.nbytes()), 0);
}

// A Transpose whose value is not on its way to a product, or whose input has other users,
// keeps the nodes above it.
TEST(Canonicalize, KeepsUnaryNodesAboveOtherTransposes) {
  ModelBuilder b;
  b.input("x", DType::f32, {3, 4});
  b.input("w", DType::f32, {3, 5});
  b.node("Relu", {"x"}, {"r"}, "relu");
  ModelBuilder::set_ints(b.node("Transpose", {"r"}, {"t"}, "transpose"), "perm", {1, 0});
  b.node("Sigmoid", {"t"}, {"y"}, "to_output");
  b.node("Neg", {"x"}, {"n"}, "neg");
  ModelBuilder::set_ints(b.node("Transpose", {"n"}, {"nt"}, "transpose_shared"), "perm", {1, 0});
  b.node("MatMul", {"nt", "w"}, {"z"}, "product");
  b.node("Add", {"n", "n"}, {"s"}, "other_use");
  b.output("y");
  b.output("z");
  b.output("s");
  Graph g = import_onnx_bytes(b.bytes(), ".", "m.onnx");
  const std::string printed = print_graph(g);
  EXPECT_EQ(canonicalize(g), 0);
  EXPECT_EQ(print_graph(g), printed);
}

} // namespace
} // namespace vtc
