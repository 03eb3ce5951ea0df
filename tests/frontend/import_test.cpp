// ONNX import: folding of the shape arithmetic exporters emit, external data, declared types.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "frontend/external_data_map.h"
#include "frontend/onnx_import.h"
#include "ir/printer.h"
#include "model_builder.h"
#include "ref/interpreter.h"
#include "vtc/error.h"

namespace vtc {
namespace {

using testing::ModelBuilder;

TEST(Import, FoldsShapeGatherConcatReshapeChain) {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 3, 4});
  b.initializer("zero", Tensor::from<int64_t>({1}, {0}));
  b.initializer("minus_one", Tensor::from<int64_t>({1}, {-1}));
  b.node("Shape", {"x"}, {"s"}, "shape");
  b.node("Gather", {"s", "zero"}, {"batch"}, "gather");
  auto& cat = b.node("Concat", {"batch", "minus_one"}, {"new_shape"}, "concat");
  ModelBuilder::set_int(cat, "axis", 0);
  b.node("Reshape", {"x", "new_shape"}, {"y"}, "reshape");
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), ".", "chain.onnx");
  EXPECT_EQ(print_graph(g), "graph test (opset 17)\n"
                            "  input  %x: f32[2,3,4]\n"
                            "  const  %new_shape: i64[2] = [2,-1]\n"
                            "  %y: f32[2,12] = Reshape(%x, %new_shape)\n"
                            "  output %y\n");
}

TEST(Import, FoldsConstantOfShapeAndRange) {
  ModelBuilder b;
  b.input("x", DType::f32, {4});
  b.initializer("shape", Tensor::from<int64_t>({1}, {4}));
  b.initializer("start", Tensor::from<float>({}, {1.0f}));
  b.initializer("limit", Tensor::from<float>({}, {9.0f}));
  b.initializer("delta", Tensor::from<float>({}, {2.0f}));
  b.node("ConstantOfShape", {"shape"}, {"zeros"});
  b.node("Range", {"start", "limit", "delta"}, {"r"});
  b.node("Add", {"zeros", "r"}, {"z"});
  b.node("Add", {"x", "z"}, {"y"});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), ".", "fold.onnx");
  ASSERT_EQ(g.nodes().size(), 1u);
  const Value* z = g.nodes()[0]->input(1);
  ASSERT_TRUE(z->constant);
  EXPECT_EQ(z->constant->get_f64(0), 1.0);
  EXPECT_EQ(z->constant->get_f64(3), 7.0);
}

TEST(Import, ReadsExternalData) {
  auto dir = std::filesystem::temp_directory_path() / "vtc_external_data_test";
  std::filesystem::create_directories(dir);
  std::vector<float> w = {1, 2, 3, 4, 5, 6};
  {
    std::ofstream f(dir / "weights.bin", std::ios::binary);
    float pad = 0;
    f.write(reinterpret_cast<const char*>(&pad), 4); // the tensor starts at offset 4
    f.write(reinterpret_cast<const char*>(w.data()), 24);
  }
  ModelBuilder b;
  b.input("x", DType::f32, {2, 3});
  auto* init = b.model().mutable_graph()->add_initializer();
  init->set_name("w");
  init->set_data_type(1);
  init->add_dims(2);
  init->add_dims(3);
  init->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair{"location", "weights.bin"}, {"offset", "4"}, {"length", "24"}}) {
    auto* e = init->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  b.node("Add", {"x", "w"}, {"y"});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), dir.string(), "external.onnx");
  const Value* wv = g.find_value("w");
  ASSERT_TRUE(wv && wv->constant);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(wv->constant->get_f64(i), w[size_t(i)]);

  // A file shorter than the tensor is an error naming the file.
  init->mutable_external_data(2)->set_value("24");
  init->mutable_external_data(1)->set_value("8");
  try {
    import_onnx_bytes(b.bytes(), dir.string(), "external.onnx");
    FAIL() << "short external file accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weights.bin"), std::string::npos) << e.what();
  }
}

// A region of at least kMappedRegionMinBytes at an aligned offset past the first page is mapped,
// not copied: the values are the file's, a write changes the tensor and not the file, and a
// copy of the tensor owns its bytes.
TEST(Import, MapsLargeExternalRegions) {
  auto dir = std::filesystem::temp_directory_path() / "vtc_mapped_external_test";
  std::filesystem::create_directories(dir);
  const int64_t n = kMappedRegionMinBytes / 4 + 1000;
  std::vector<float> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    w[size_t(i)] = float(i % 977) * 0.5f;
  const int64_t offset = 4096 + 12;
  {
    std::ofstream f(dir / "big.bin", std::ios::binary);
    std::vector<char> pad(size_t(offset), 0);
    f.write(pad.data(), std::streamsize(pad.size()));
    f.write(reinterpret_cast<const char*>(w.data()), std::streamsize(n * 4));
  }
  ModelBuilder b;
  b.input("x", DType::f32, {n});
  auto* init = b.model().mutable_graph()->add_initializer();
  init->set_name("w");
  init->set_data_type(1);
  init->add_dims(n);
  init->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair<std::string, std::string>{"location", "big.bin"},
                      {"offset", std::to_string(offset)},
                      {"length", std::to_string(n * 4)}}) {
    auto* e = init->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  b.node("Add", {"x", "w"}, {"y"});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), dir.string(), "mapped.onnx");
  Value* wv = g.find_value("w");
  ASSERT_TRUE(wv && wv->constant);
  Tensor& t = *wv->constant;
  EXPECT_TRUE(t.is_mapped());
  EXPECT_EQ(std::memcmp(t.raw(), w.data(), size_t(n * 4)), 0);
  Tensor copy = t;
  EXPECT_FALSE(copy.is_mapped());
  t.data<float>()[5] = -1.0f;
  EXPECT_EQ(copy.data<float>()[5], w[5]);
  EXPECT_FALSE(copy.bitwise_equal(t));
  Tensor moved = std::move(t);
  EXPECT_TRUE(moved.is_mapped());
  EXPECT_EQ(moved.data<float>()[5], -1.0f);
  // The file is unchanged: imported again, the value is the file's.
  Graph again = import_onnx_bytes(b.bytes(), dir.string(), "mapped.onnx");
  EXPECT_EQ(again.find_value("w")->constant->get_f64(5), double(w[5]));
  // An offset that is not a multiple of the element size is read as a copy.
  init->mutable_external_data(1)->set_value(std::to_string(offset - 2));
  Graph unaligned = import_onnx_bytes(b.bytes(), dir.string(), "mapped.onnx");
  EXPECT_FALSE(unaligned.find_value("w")->constant->is_mapped());
  std::filesystem::remove_all(dir);
}

TEST(Import, FrozenInputsBecomeConstants) {
  ModelBuilder b;
  b.input("x", DType::f32, {6});
  b.input("shape", DType::i64, {2});
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y");
  EXPECT_THROW(import_onnx_bytes(b.bytes(), ".", "m.onnx"), Error);
  ImportOptions options;
  options.frozen_inputs["shape"] = Tensor::from<int64_t>({2}, {3, 2});
  Graph g = import_onnx_bytes(b.bytes(), ".", "m.onnx", options);
  EXPECT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.outputs[0]->type.shape, (Shape{3, 2}));
}

// A model exported with dynamic axes: x [batch, seq, 8] -> Transpose -> y [batch, 8, seq].
std::string dynamic_axes_model() {
  ModelBuilder b;
  b.input("x", DType::f32, {1, 1, 8});
  auto& t = b.node("Transpose", {"x"}, {"y"});
  ModelBuilder::set_ints(t, "perm", {0, 2, 1});
  b.output("y");
  auto* dims = b.model()
                   .mutable_graph()
                   ->mutable_input(0)
                   ->mutable_type()
                   ->mutable_tensor_type()
                   ->mutable_shape();
  dims->mutable_dim(0)->set_dim_param("batch");
  dims->mutable_dim(1)->set_dim_param("seq");
  return b.bytes();
}

std::string import_error(const std::string& bytes, const ImportOptions& options) {
  try {
    import_onnx_bytes(bytes, ".", "dyn.onnx", options);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Import, SymbolicDimensionsTakeTheSizesGiven) {
  ImportOptions options;
  options.dims = {{"batch", 3}, {"seq", 5}};
  Graph g = import_onnx_bytes(dynamic_axes_model(), ".", "dyn.onnx", options);
  EXPECT_EQ(g.inputs[0]->type.shape, (Shape{3, 5, 8}));
  EXPECT_EQ(g.outputs[0]->type.shape, (Shape{3, 8, 5}));
}

TEST(Import, SymbolicDimensionsWithoutASizeOrUnknownNamesAreNamed) {
  ImportOptions options;
  options.dims = {{"batch", 3}};
  EXPECT_EQ(import_error(dynamic_axes_model(), options),
            "dyn.onnx: input 'x' has a symbolic dimension 'seq': give its size (Options::dims, "
            "--dim seq=N)");
  options.dims = {{"batch", 3}, {"seq", 5}, {"heads", 2}};
  EXPECT_EQ(import_error(dynamic_axes_model(), options),
            "dyn.onnx: dimension 'heads' is given a size, but no graph input has a symbolic "
            "dimension of that name");
}

TEST(Import, RunsImportedGraph) {
  ModelBuilder b;
  b.input("x", DType::f32, {2, 2});
  b.initializer("w", Tensor::from<float>({2, 2}, {1, 2, 3, 4}));
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  Graph g = import_onnx_bytes(b.bytes(), ".", "mm.onnx");
  TensorMap out = run_reference(g, {{"x", Tensor::from<float>({2, 2}, {1, 0, 0, 1})}});
  EXPECT_EQ(out.at("y").get_f64(1), 2.0);
  EXPECT_EQ(out.at("y").get_f64(2), 3.0);
}

} // namespace
} // namespace vtc
