// Library convolutions on the cuda target (skipped where no GPU runs a Session): a pointwise
// convolution runs on cuBLASLt and a 3 x 3 one on cuDNN, each followed by its generated
// epilogue (bias, Sigmoid, a residual add), over a batch of images; outputs within f16
// tolerance of the reference interpreter and bit for bit equal under none, type1 and greedy;
// the program names each library in its steps. Between two channels-last cuDNN convolutions
// the tensor lies channels-last, with the same bits; a caller's input is staged for cuDNN.
#include <fstream>
#include <set>
#include <string>

#include "conv_chain_model.h"
#include "device/cublaslt_conv.h"
#include "device/cudnn_conv.h"
#include "model_builder.h"
#include "runtime_test_util.h"

namespace vtc {
namespace {

using testing::ModelBuilder;
using testing::RuntimeTest;

// testing::ramp's values as f16 (small multiples of `scale`).
Tensor ramp_f16(const Shape& shape, float scale) {
  const Tensor f = testing::ramp(shape, scale);
  Tensor h(DType::f16, shape);
  for (int64_t i = 0; i < f.numel(); ++i)
    h.set_f64(i, f.get_f64(i));
  return h;
}

// x [3, 16, 12, 8] -> Transpose of the plane -> Conv 1 x 1 (24 channels, bias) ->
// Sigmoid = s; Conv 3 x 3 of s (pad 1, bias) + s -> y. Library mode 'always', so the pointwise
// convolution runs on cuBLASLt though its input is computed by a data-movement op.
std::string write_convs(const std::string& path) {
  ModelBuilder b;
  b.input("x", DType::f16, {3, 16, 12, 8});
  b.initializer("pw_w", ramp_f16({24, 16, 1, 1}, 0.01f));
  b.initializer("pw_b", ramp_f16({24}, 0.1f));
  b.initializer("sq_w", ramp_f16({24, 24, 3, 3}, 0.003f));
  b.initializer("sq_b", ramp_f16({24}, 0.05f));
  ModelBuilder::set_ints(b.node("Transpose", {"x"}, {"r"}, "plane"), "perm", {0, 1, 3, 2});
  b.node("Conv", {"r", "pw_w", "pw_b"}, {"pw"}, "pointwise");
  b.node("Sigmoid", {"pw"}, {"s"}, "sigmoid");
  ModelBuilder::set_ints(b.node("Conv", {"s", "sq_w", "sq_b"}, {"sq"}, "square"), "pads",
                         {1, 1, 1, 1});
  b.node("Add", {"sq", "s"}, {"y"}, "residual");
  b.output("y");
  std::ofstream(path, std::ios::binary) << b.bytes();
  return path;
}

TEST_F(RuntimeTest, CudaLibraryConvolutionsMatchTheReference) {
  const std::string path = write_convs((dir_ / "library_convs.onnx").string());
  Options o = options();
  o.target = TargetKind::cuda;
  o.profile = false;
  o.library = LibraryMode::always;
  try {
    Session probe(path, o);
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  if (!device::cudnn_available() || !device::cublaslt_available())
    GTEST_SKIP() << device::cudnn_unavailable_reason() << device::cublaslt_unavailable_reason();
  testing::expect_strategies_match_reference(
      path, o, 1e-2, [](const std::string& strategy, const Session& s) {
        int cublaslt = 0, cudnn = 0;
        for (const StepInfo& step : s.program().steps) {
          cublaslt += step.name.find("(cublaslt)") != std::string::npos;
          cudnn += step.name.find("(cudnn)") != std::string::npos;
        }
        EXPECT_EQ(cublaslt, 1) << strategy;
        EXPECT_EQ(cudnn, 1) << strategy;
      });
}

TEST_F(RuntimeTest, CudaTensorsBetweenChannelsLastConvolutionsLieChannelsLast) {
  const std::string path = (dir_ / "conv_chain.onnx").string();
  std::ofstream(path, std::ios::binary) << testing::conv_chain_model().bytes();
  Options o = options();
  o.target = TargetKind::cuda;
  o.profile = false;
  try {
    Session probe(path, o);
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  if (!device::cudnn_available()) GTEST_SKIP() << device::cudnn_unavailable_reason();
  testing::expect_strategies_match_reference(
      path, o, 1e-2, [](const std::string& strategy, const Session& s) {
        const Program& p = s.program();
        std::set<std::string> held;
        for (const Value* v : p.storage.channels_last)
          held.insert(v->name);
        EXPECT_EQ(held, (std::set<std::string>{"c0", "a"})) << strategy;
      });
}

} // namespace
} // namespace vtc
