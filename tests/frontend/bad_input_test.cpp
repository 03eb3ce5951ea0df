// Bad input of every kind gives a vtc::Error naming the file, node, op or input — never a
// crash: corrupted and truncated models, unknown ops, undefined values, wrong inputs.
#include <gtest/gtest.h>

#include "frontend/onnx_import.h"
#include "model_builder.h"
#include "ref/interpreter.h"
#include "vtc/error.h"

namespace vtc {
namespace {

using testing::ModelBuilder;

// Runs `fn`, expecting a vtc::Error whose message contains every one of `needles`.
template <typename Fn> void expect_error(Fn&& fn, std::initializer_list<const char*> needles) {
  try {
    fn();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    for (const char* n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "'" << n << "' not in: " << e.what();
  }
}

std::string small_model() {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 3});
  b.initializer("w", Tensor::from<float>({3, 4}, std::vector<float>(12, 1.0f)));
  b.node("MatMul", {"x", "w"}, {"y"}, "proj");
  b.output("y");
  return b.bytes();
}

TEST(BadInput, TruncatedModelNamesTheFile) {
  std::string bytes = small_model();
  int rejected = 0;
  for (size_t len = 0; len < bytes.size(); ++len) {
    try {
      import_onnx_bytes(bytes.substr(0, len), ".", "cut.onnx");
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cut.onnx"), std::string::npos) << e.what();
      ++rejected;
    }
  }
  EXPECT_EQ(rejected, int(bytes.size())); // no prefix is a complete, valid model
}

TEST(BadInput, CorruptedBytesNeverCrash) {
  std::string bytes = small_model();
  uint64_t s = 12345;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string m = bytes;
    for (int k = 0; k < 3; ++k) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      m[size_t(s >> 33) % m.size()] = char(s >> 56);
    }
    try {
      import_onnx_bytes(m, ".", "corrupt.onnx");
    } catch (const Error&) {
    }
  }
}

TEST(BadInput, UnknownOpNamesNodeAndOp) {
  ModelBuilder b;
  b.input("x", DType::f32, {2});
  b.node("FrobnicateTensor", {"x"}, {"y"}, "mystery");
  b.output("y");
  expect_error([&] { import_onnx_bytes(b.bytes(), ".", "m.onnx"); },
               {"m.onnx", "mystery", "FrobnicateTensor", "unsupported op"});
  EXPECT_THROW(import_onnx_bytes(b.bytes(), ".", "m.onnx"), Unsupported);
}

TEST(BadInput, UndefinedValueNamesNodeAndValue) {
  ModelBuilder b;
  b.input("x", DType::f32, {2});
  b.node("Add", {"x", "ghost"}, {"y"}, "adder");
  b.output("y");
  expect_error([&] { import_onnx_bytes(b.bytes(), ".", "m.onnx"); }, {"adder", "ghost"});
}

TEST(BadInput, ShapeMismatchNamesNodeAndShapes) {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 3});
  b.initializer("w", Tensor::from<float>({4, 4}, std::vector<float>(16, 1.0f)));
  b.node("MatMul", {"x", "w"}, {"y"}, "proj");
  b.output("y");
  expect_error([&] { import_onnx_bytes(b.bytes(), ".", "m.onnx"); }, {"proj", "MatMul"});
}

TEST(BadInput, WrongOrMissingRunInputsNameTheInput) {
  Graph g = import_onnx_bytes(small_model(), ".", "m.onnx");
  expect_error([&] { run_reference(g, {}); }, {"missing input", "x", "f32[2,3]"});
  expect_error(
      [&] {
        run_reference(g, {{"x", Tensor(DType::f32, {3, 2})}});
      },
      {"x", "f32[3,2]", "f32[2,3]"});
  expect_error([&] { run_reference(g, {{"x", Tensor(DType::f16, {2, 3})}}); }, {"x", "f16[2,3]"});
}

TEST(BadInput, MissingModelFileNamesThePath) {
  expect_error([] { import_onnx_file("/nonexistent/model.onnx"); }, {"/nonexistent/model.onnx"});
}

TEST(BadInput, RawDataSizeMismatchNamesInitializer) {
  ModelBuilder b;
  b.input("x", DType::f32, {2});
  auto* init = b.model().mutable_graph()->add_initializer();
  init->set_name("bias");
  init->set_data_type(1);
  init->add_dims(1000000000);
  init->set_raw_data(std::string(8, '\0'));
  b.node("Add", {"x", "bias"}, {"y"});
  b.output("y");
  expect_error([&] { import_onnx_bytes(b.bytes(), ".", "m.onnx"); }, {"bias", "raw_data"});
}

TEST(BadInput, SymbolicDimensionIsUnsupported) {
  ModelBuilder b;
  b.input("x", DType::f32, {2});
  b.model()
      .mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("batch");
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_THROW(import_onnx_bytes(b.bytes(), ".", "m.onnx"), Unsupported);
}

// Found by the loader fuzzer: a Reshape whose shape multiplies past 64 bits.
TEST(BadInput, ShapeProductOverflowNamesTheNode) {
  ModelBuilder b;
  b.input("x", DType::f32, {2});
  b.initializer("shape", Tensor::from<int64_t>({3}, {4699, 144115188075855871, -1}));
  b.node("Reshape", {"x", "shape"}, {"y"}, "huge");
  b.output("y");
  expect_error([&] { import_onnx_bytes(b.bytes(), ".", "m.onnx"); }, {"huge", "Reshape"});
  EXPECT_THROW(shape_numel({int64_t(1) << 40, int64_t(1) << 40}), Error);
}

TEST(BadInput, OpsetOutOfRangeIsUnsupported) {
  ModelBuilder b(99);
  b.input("x", DType::f32, {2});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  expect_error([&] { import_onnx_bytes(b.bytes(), ".", "m.onnx"); }, {"opset 99"});
}

} // namespace
} // namespace vtc
