// Symbolic dimensions on models as PyTorch exports them (models/testdata/
// tiny_block_dynamic_{torchscript,dynamo}.onnx, written by models/export_dynamic.py): `batch`
// and `seq` bound through Options::dims at two sizes give onnxruntime's outputs, each binding
// compiles to its own entry of the code cache (the shapes are part of the generated code),
// and a dimension left unbound is refused with the error naming --dim.
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

#include "onnxruntime_peer.h"
#include "ref/compare.h"
#include "ref/random_inputs.h"
#include "vtc/vtc.h"

namespace vtc {
namespace {

namespace fs = std::filesystem;

std::string model_path(const std::string& exporter) {
  return std::string(VTC_SOURCE_DIR) + "/models/testdata/tiny_block_dynamic_" + exporter + ".onnx";
}

int cache_entries(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    n += e.path().extension() == ".so";
  return n;
}

class ExportedDims : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    cache_ = fs::temp_directory_path() /
             ("vtc-exported-dims-" + GetParam() + "-" + std::to_string(::getpid()));
    fs::remove_all(cache_);
  }
  void TearDown() override { fs::remove_all(cache_); }

  Options bound(int64_t batch, int64_t seq) const {
    Options o;
    o.dims = {{"batch", batch}, {"seq", seq}};
    o.cache_dir = cache_.string();
    return o;
  }
  fs::path cache_;
};

TEST_P(ExportedDims, BindingsMatchOnnxruntimeAndAreCachedApart) {
  const std::string path = model_path(GetParam());
  int entries = 0;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 4}, {3, 7}}) {
    Session session(path, bound(batch, seq));
    ASSERT_EQ(session.inputs().at(0).type, (TensorType{DType::f32, {batch, seq, 32}}));
    ASSERT_EQ(session.outputs().at(0).type, (TensorType{DType::f32, {batch, seq, 32}}));
    EXPECT_GT(session.compile_seconds(), 0) << "a new binding is compiled";
    EXPECT_EQ(cache_entries(cache_), entries + session.compiled_objects())
        << "the binding's parts are entries of their own";
    entries = cache_entries(cache_);

    TensorMap inputs{{"x", random_tensor(session.inputs()[0].type, 7 + uint64_t(batch))}};
    HostTensorMap ours = session.run(inputs);
    cli::PeerRun peer = cli::run_onnxruntime(path, inputs, 1, 0, 1, VTC_PYTHON);
    ASSERT_TRUE(peer.available) << peer.reason;
    Comparison c = compare_rel_l2(ours.at("y"), peer.outputs.at("y"), model_tolerance(DType::f32));
    EXPECT_TRUE(c.ok) << GetParam() << " batch " << batch << " seq " << seq << ": " << c.message;
  }
  Session again(path, bound(1, 4));
  EXPECT_EQ(again.compile_seconds(), 0) << "the first binding's code comes from the cache";
  EXPECT_EQ(cache_entries(cache_), entries);
}

TEST_P(ExportedDims, AnUnboundDimensionNamesTheFlag) {
  Options o;
  o.dims = {{"batch", 2}};
  o.target = TargetKind::ref;
  try {
    Session session(model_path(GetParam()), o);
    FAIL() << "seq is not bound";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x' has a symbolic dimension 'seq': give its size "
                                         "(Options::dims, --dim seq=N)"),
              std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Exporters, ExportedDims, ::testing::Values("torchscript", "dynamo"));

} // namespace
} // namespace vtc
