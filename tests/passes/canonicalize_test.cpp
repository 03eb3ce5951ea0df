// Canonicalisation removes Identity nodes without changing what the graph computes.
#include <gtest/gtest.h>

#include "frontend/onnx_import.h"
#include "ir/printer.h"
#include "model_builder.h"
#include "passes/canonicalize.h"

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

} // namespace
} // namespace vtc
