// Fusion: epilogues, prologues, multi-use values and data movement between kernels, checked
// on the printed kernel graph (golden text).
#include <gtest/gtest.h>

#include "frontend/onnx_import.h"
#include "model_builder.h"
#include "passes/fusion.h"

namespace vtc {
namespace {

using testing::ModelBuilder;

Graph import(const ModelBuilder& b) {
  return import_onnx_bytes(b.bytes(), ".", "m.onnx");
}

Tensor ones(Shape s) {
  return Tensor::from<float>(s, std::vector<float>(size_t(shape_numel(s)), 1));
}

TEST(Fusion, BiasAndActivationJoinTheGemmAsEpilogue) {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 4});
  b.initializer("w", ones({4, 3}));
  b.initializer("bias", ones({3}));
  b.node("MatMul", {"x", "w"}, {"mm"}, "proj");
  b.node("Add", {"mm", "bias"}, {"biased"}, "add_bias");
  b.node("Relu", {"biased"}, {"y"}, "act");
  b.output("y");
  Graph g = import(b);
  EXPECT_EQ(print_kernel_graph(fuse(g)),
            "kernel k0 gemm [MatMul 'proj', Add 'add_bias', Relu 'act'] (%x, %w, %bias) -> (%y)\n");
}

TEST(Fusion, ScalingBecomesAPrologue) {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 4});
  b.input("s", DType::f32, {2, 1});
  b.initializer("w", ones({4, 3}));
  b.node("Mul", {"x", "s"}, {"scaled"}, "scale");
  b.node("MatMul", {"scaled", "w"}, {"y"}, "proj");
  b.output("y");
  EXPECT_EQ(print_kernel_graph(fuse(import(b))),
            "kernel k0 gemm [Mul 'scale', MatMul 'proj'] (%x, %s, %w) -> (%y)\n");
}

TEST(Fusion, DataMovementStaysBetweenKernels) {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 6});
  b.initializer("w", ones({6, 6}));
  b.initializer("shape", Tensor::from<int64_t>({3}, {2, 2, 3}));
  b.node("MatMul", {"x", "w"}, {"mm"}, "proj");
  b.node("Reshape", {"mm", "shape"}, {"r"}, "split_heads");
  auto& t = b.node("Transpose", {"r"}, {"t"}, "to_heads");
  ModelBuilder::set_ints(t, "perm", {1, 0, 2});
  b.node("Softmax", {"t"}, {"y"}, "attn");
  b.output("y");
  EXPECT_EQ(print_kernel_graph(fuse(import(b))),
            "kernel k0 gemm [MatMul 'proj'] (%x, %w) -> (%mm)\n"
            "move   Reshape 'split_heads' (%mm, %shape) -> (%r)\n"
            "move   Transpose 'to_heads' (%r) -> (%t)\n"
            "kernel k1 softmax [Softmax 'attn'] (%t) -> (%y)\n");
}

TEST(Fusion, ResidualAddOfAnEarlierValueIsAnEpilogue) {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 4});
  b.initializer("w", ones({4, 4}));
  b.node("MatMul", {"x", "w"}, {"mm"}, "proj");
  b.node("Add", {"mm", "x"}, {"y"}, "residual");
  b.output("y");
  EXPECT_EQ(print_kernel_graph(fuse(import(b))),
            "kernel k0 gemm [MatMul 'proj', Add 'residual'] (%x, %w) -> (%y)\n");
}

TEST(Fusion, MultiUseValueIsWrittenOnce) {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 4});
  b.initializer("w", ones({4, 4}));
  b.node("Sigmoid", {"x"}, {"sx"}, "sig");
  b.node("MatMul", {"sx", "w"}, {"a"}, "left");
  b.node("Add", {"a", "sx"}, {"y"}, "join");
  b.output("y");
  EXPECT_EQ(print_kernel_graph(fuse(import(b))),
            "kernel k0 elementwise [Sigmoid 'sig'] (%x) -> (%sx)\n"
            "kernel k1 gemm [MatMul 'left', Add 'join'] (%sx, %w) -> (%y)\n");
}

TEST(Fusion, BroadcastingConsumerIsNotAnEpilogue) {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 4});
  b.input("big", DType::f32, {3, 2, 4});
  auto& r = b.node("ReduceSum", {"x"}, {"s"}, "sum");
  ModelBuilder::set_ints(r, "axes", {1});
  b.node("Add", {"s", "big"}, {"y"}, "spread");
  b.output("y");
  EXPECT_EQ(print_kernel_graph(fuse(import(b))),
            "kernel k0 reduce [ReduceSum 'sum'] (%x) -> (%s)\n"
            "kernel k1 elementwise [Add 'spread'] (%s, %big) -> (%y)\n");
}

// A stem: Conv, Relu, then a MaxPool of the Relu (and, when `second_use`, a Sigmoid of it too).
ModelBuilder stem(bool second_use) {
  ModelBuilder b;
  b.input("x", DType::f32, {1, 3, 32, 32});
  b.initializer("w", ones({8, 3, 3, 3}));
  auto& c = b.node("Conv", {"x", "w"}, {"c"}, "conv");
  ModelBuilder::set_ints(c, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "act");
  auto& p = b.node("MaxPool", {"r"}, {"y"}, "pool");
  ModelBuilder::set_ints(p, "kernel_shape", {3, 3});
  ModelBuilder::set_ints(p, "strides", {2, 2});
  ModelBuilder::set_ints(p, "pads", {1, 1, 1, 1});
  b.output("y");
  if (second_use) {
    b.node("Sigmoid", {"r"}, {"s"}, "other");
    b.output("s");
  }
  return b;
}

FuseOptions pool_into_conv() {
  FuseOptions o;
  o.max_pool_tail = [](const Node& conv, const Node& pool) {
    return conv.op == "Conv" && pool.op == "MaxPool";
  };
  return o;
}

TEST(Fusion, MaxPoolJoinsTheConvWhenTheTargetSaysSo) {
  Graph g = import(stem(false));
  EXPECT_EQ(print_kernel_graph(fuse(g, pool_into_conv())),
            "kernel k0 conv [Conv 'conv', Relu 'act', MaxPool 'pool'] (%x, %w) -> (%y)\n");
  EXPECT_EQ(print_kernel_graph(fuse(g)),
            "kernel k0 conv [Conv 'conv', Relu 'act'] (%x, %w) -> (%r)\n"
            "kernel k1 pool [MaxPool 'pool'] (%r) -> (%y)\n");
  FuseOptions refuse;
  refuse.max_pool_tail = [](const Node&, const Node&) { return false; };
  EXPECT_EQ(print_kernel_graph(fuse(g, refuse)), print_kernel_graph(fuse(g)));
}

TEST(Fusion, MaxPoolStaysApartWhenTheConvValueHasAnotherUse) {
  Graph g = import(stem(true));
  EXPECT_EQ(print_kernel_graph(fuse(g, pool_into_conv())),
            "kernel k0 conv [Conv 'conv', Relu 'act'] (%x, %w) -> (%r)\n"
            "kernel k1 pool [MaxPool 'pool'] (%r) -> (%y)\n"
            "kernel k2 elementwise [Sigmoid 'other'] (%r) -> (%s)\n");
}

} // namespace
} // namespace vtc
