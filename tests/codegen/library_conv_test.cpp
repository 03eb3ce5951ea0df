// The library form of convolution kernels on the cuda target: which convolutions have one (16-bit
// operands read from memory, one group, padding cuDNN's symmetric padding reproduces), which
// library takes each (cuDNN, cuBLASLt for pointwise ones) per library mode, and the operands the
// target then keeps physical.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "codegen/library_conv.h"
#include "device/cublaslt_conv.h"
#include "device/cudnn_conv.h"
#include "frontend/onnx_import.h"
#include "kernels/cuda/conv_direct.h"
#include "kernels/cuda/pointwise_tc.h"
#include "model_builder.h"
#include "passes/canonicalize.h"
#include "passes/fusion.h"
#include "runtime/lowering.h"
#include "target/cuda_target.h"
#include "vtc/error.h"

namespace vtc {
namespace {

using testing::ModelBuilder;

const Kernel& kernel_of(const KernelGraph& kg, const std::string& anchor) {
  for (const Kernel& k : kg.kernels)
    if (k.anchor && k.anchor->name == anchor) return k;
  throw std::runtime_error("no kernel anchored at " + anchor);
}

// x_<dtype> (or `x`) [1, 8, h, w] through Conv `name` with weights [8, 8 / group, k, k].
void add_conv(ModelBuilder& b, const std::string& name, DType t, int64_t k,
              const std::vector<int64_t>& pads, int64_t stride, int64_t group = 1,
              std::string x = "") {
  if (x.empty()) x = std::string("x_") + dtype_name(t);
  b.initializer(name + "_w", Tensor(t, {8, 8 / group, k, k}));
  onnx::NodeProto& n = b.node("Conv", {x, name + "_w"}, {name + "_y"}, name);
  ModelBuilder::set_ints(n, "pads", pads);
  ModelBuilder::set_ints(n, "strides", {stride, stride});
  ModelBuilder::set_int(n, "group", group);
  b.output(name + "_y");
}

struct Model {
  Graph g;
  KernelGraph kg;
};

// A square model input through a Transpose of its plane: the convolutions read tensors the
// program computes, not the caller's buffers.
void add_computed_input(ModelBuilder& b, const std::string& name, DType t,
                        std::vector<int64_t> shape) {
  b.input("in_" + name, t, shape);
  onnx::NodeProto& n = b.node("Transpose", {"in_" + name}, {name}, "transpose_" + name);
  ModelBuilder::set_ints(n, "perm", {0, 1, 3, 2});
}

Model model() {
  ModelBuilder b;
  add_computed_input(b, "x_f16", DType::f16, {1, 8, 8, 8});
  add_computed_input(b, "x_f32", DType::f32, {1, 8, 8, 8});
  add_computed_input(b, "x_large", DType::f16, {1, 8, 200, 200}); // 40000 pixels
  add_conv(b, "large_pointwise", DType::f16, 1, {0, 0, 0, 0}, 1, 1, "x_large");
  // A pointwise convolution of a convolution's output (a kernel's, not a data-movement op's).
  b.initializer("feeder_w", Tensor(DType::f16, {8, 8, 3, 3}));
  ModelBuilder::set_ints(b.node("Conv", {"x_f16", "feeder_w"}, {"fed"}, "feeder"), "pads",
                         {1, 1, 1, 1});
  add_conv(b, "after_conv", DType::f16, 1, {0, 0, 0, 0}, 1, 1, "fed");
  add_conv(b, "same3x3", DType::f16, 3, {1, 1, 1, 1}, 1);
  add_conv(b, "pointwise", DType::f16, 1, {0, 0, 0, 0}, 1);
  add_conv(b, "unused_bottom_pad", DType::f16, 3, {1, 1, 0, 0}, 2); // 4x4 either way
  add_conv(b, "extra_bottom_pad", DType::f16, 3, {0, 0, 1, 1}, 2);  // 4x4, symmetric 3x3
  add_conv(b, "grouped", DType::f16, 3, {1, 1, 1, 1}, 1, 2);
  add_conv(b, "float", DType::f32, 3, {1, 1, 1, 1}, 1);
  // A stem: 3 channels, 3 x 3, stride 2 (27 taps).
  add_computed_input(b, "x_image", DType::f16, {1, 3, 16, 16});
  b.initializer("stem_w", Tensor(DType::f16, {8, 3, 3, 3}));
  onnx::NodeProto& stem = b.node("Conv", {"x_image", "stem_w"}, {"stem_y"}, "stem");
  ModelBuilder::set_ints(stem, "pads", {1, 1, 1, 1});
  ModelBuilder::set_ints(stem, "strides", {2, 2});
  b.output("stem_y");
  // A 3 x 3 convolution of a model input as it is (channels-last: staged by the prologue), and
  // a pointwise one (NCHW on cuDNN: it would read the caller's buffer).
  b.input("x_bound", DType::f16, {1, 8, 8, 8});
  add_conv(b, "of_input", DType::f16, 3, {1, 1, 1, 1}, 1, 1, "x_bound");
  add_conv(b, "pointwise_of_input", DType::f16, 1, {0, 0, 0, 0}, 1, 1, "x_bound");
  // A 3 x 3 convolution of a computed tensor with weights the caller gives.
  b.input("w_bound", DType::f16, {8, 8, 3, 3});
  b.node("Conv", {"x_f16", "w_bound"}, {"bound_weights_y"}, "bound_weights");
  b.output("bound_weights_y");
  Model m;
  m.g = import_onnx_bytes(b.bytes(), ".", "m.onnx");
  m.kg = fuse(m.g);
  return m;
}

TEST(LibraryConvForm, SixteenBitOneGroupSymmetricPadding) {
  Model m = model();
  std::optional<LibraryConvShape> same = library_conv_form(kernel_of(m.kg, "same3x3"));
  ASSERT_TRUE(same);
  EXPECT_EQ(same->dtype, DType::f16);
  EXPECT_EQ(same->shape.kh, 3);
  EXPECT_EQ(same->shape.pad_top, 1);
  EXPECT_EQ(same->shape.h_out, 8);
  EXPECT_EQ(same->output_elements(), 8 * 8 * 8);
  EXPECT_TRUE(library_conv_form(kernel_of(m.kg, "pointwise")));
  std::optional<LibraryConvShape> unused = library_conv_form(kernel_of(m.kg, "unused_bottom_pad"));
  ASSERT_TRUE(unused);
  EXPECT_EQ(unused->shape.h_out, 4);
  EXPECT_FALSE(library_conv_form(kernel_of(m.kg, "extra_bottom_pad")));
  EXPECT_FALSE(library_conv_form(kernel_of(m.kg, "grouped")));
  EXPECT_FALSE(library_conv_form(kernel_of(m.kg, "float")));
  // Forms of convolutions of caller-bound tensors (the target keeps them on vtc's kernels).
  EXPECT_TRUE(library_conv_form(kernel_of(m.kg, "of_input")));
  EXPECT_TRUE(library_conv_form(kernel_of(m.kg, "bound_weights")));
}

TEST(LibraryConvChoice, WindowsOfFewTapsStayOnTheDirectKernel) {
  Model m = model();
  std::optional<LibraryConvShape> stem = library_conv_form(kernel_of(m.kg, "stem"));
  ASSERT_TRUE(stem);
  EXPECT_TRUE(kernels::conv2d_direct_fits(stem->shape));
  EXPECT_FALSE(prefer_cudnn_conv(*stem));
  std::optional<LibraryConvShape> same = library_conv_form(kernel_of(m.kg, "same3x3"));
  ASSERT_TRUE(same); // 8 channels x 3 x 3 = 72 taps
  EXPECT_FALSE(kernels::conv2d_direct_fits(same->shape));
  EXPECT_TRUE(prefer_cudnn_conv(*same));
}

// Without cuBLASLt, pointwise convolutions go to cuDNN on small planes and stay on gemm_tc on
// large ones; with it, to cuBLASLt where its 16-byte rows allow.
TEST(LibraryConvChoice, PointwiseConvolutionsByLibrary) {
  Model m = model();
  std::optional<LibraryConvShape> small = library_conv_form(kernel_of(m.kg, "pointwise"));
  std::optional<LibraryConvShape> large = library_conv_form(kernel_of(m.kg, "large_pointwise"));
  ASSERT_TRUE(small && large);
  EXPECT_TRUE(device::cublaslt_conv_fits(small->shape));
  EXPECT_TRUE(device::cublaslt_conv_fits(large->shape));
  const ConvLibraries cudnn_only{true, false}, both{true, true};
  EXPECT_EQ(preferred_conv_impl(*small, cudnn_only), KernelImpl::cudnn_conv);
  EXPECT_EQ(preferred_conv_impl(*large, cudnn_only), KernelImpl::vtc_template);
  EXPECT_EQ(preferred_conv_impl(*small, both), KernelImpl::cublaslt_conv);
  EXPECT_EQ(preferred_conv_impl(*large, both), KernelImpl::cublaslt_conv);
  // An input a data-movement op computes keeps the choice made without cuBLASLt.
  EXPECT_EQ(preferred_conv_impl(*small, both, true), KernelImpl::cudnn_conv);
  EXPECT_EQ(preferred_conv_impl(*large, both, true), KernelImpl::vtc_template);
  std::optional<LibraryConvShape> same = library_conv_form(kernel_of(m.kg, "same3x3"));
  ASSERT_TRUE(same);
  EXPECT_FALSE(device::cublaslt_conv_fits(same->shape));
  EXPECT_EQ(preferred_conv_impl(*same, both), KernelImpl::cudnn_conv);
  kernels::Conv2dShape odd = small->shape; // rows of 7 x 7 pixels are not 16-byte groups
  odd.h = odd.w = odd.h_out = odd.w_out = 7;
  EXPECT_FALSE(device::cublaslt_conv_fits(odd));
  kernels::Conv2dShape strided = large->shape;
  strided.stride_h = strided.stride_w = 2;
  EXPECT_FALSE(device::cublaslt_conv_fits(strided));
}

// A pointwise convolution of few input channels over many pixels stays on vtc's pointwise_tc
// with either library (EfficientViT's 16 -> 64 channels at batch 16); one of 32 inputs and 128
// outputs, or of few pixels, goes to cuBLASLt as before.
TEST(LibraryConvChoice, FewInputChannelsStayOnPointwiseTc) {
  const ConvLibraries both{true, true};
  const kernels::Conv2dShape expand{16, 16, 256, 256, 64, 256, 256, 1, 1, 1, 1, 1, 1, 1, 0, 0};
  EXPECT_TRUE(kernels::pointwise_tc_takes(expand));
  EXPECT_EQ(preferred_conv_impl(LibraryConvShape{expand, DType::f16}, both),
            KernelImpl::vtc_template);
  EXPECT_EQ(preferred_conv_impl(LibraryConvShape{expand, DType::bf16}, both),
            KernelImpl::vtc_template);
  kernels::Conv2dShape wide = expand; // 32 -> 128 over 128^2: measured slower there
  wide.c_in = 32;
  wide.c_out = 128;
  wide.h = wide.w = wide.h_out = wide.w_out = 128;
  EXPECT_FALSE(kernels::pointwise_tc_takes(wide));
  EXPECT_EQ(preferred_conv_impl(LibraryConvShape{wide, DType::f16}, both),
            KernelImpl::cublaslt_conv);
  kernels::Conv2dShape one_image = expand; // 512 tiles of 128 pixels: short of 4 a processor
  one_image.n = 1;
  EXPECT_FALSE(kernels::pointwise_tc_takes(one_image));
  kernels::Conv2dShape strided = expand;
  strided.stride_h = strided.stride_w = 2;
  strided.h_out = strided.w_out = 128;
  EXPECT_FALSE(kernels::pointwise_tc_takes(strided));
}

// cuDNN runs channels-last on large outputs whose channels and rows are whole vectors.
TEST(LibraryConvChoice, ChannelsLastWhereMeasuredFaster) {
  if (std::getenv("VTC_CUDNN_CHANNELS_LAST")) GTEST_SKIP() << "VTC_CUDNN_CHANNELS_LAST is set";
  // C3k2's 3 x 3 at batch 16: 16 x 160 x 160 output pixels of 32 channels.
  const kernels::Conv2dShape c3k2{16, 64, 160, 160, 32, 160, 160, 3, 3, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_TRUE(cudnn_channels_last(c3k2));
  kernels::Conv2dShape one_image = c3k2; // 25600 pixels: a window of taps at any size
  one_image.n = 1;
  EXPECT_TRUE(cudnn_channels_last(one_image));
  kernels::Conv2dShape pointwise = one_image; // cuDNN's GEMM over NCHW, no transpose
  pointwise.kh = pointwise.kw = 1;
  pointwise.pad_top = pointwise.pad_left = 0;
  EXPECT_FALSE(cudnn_channels_last(pointwise));
  pointwise.n = 16; // 409600 pixels in rows of whole vectors
  EXPECT_TRUE(cudnn_channels_last(pointwise));
  kernels::Conv2dShape odd_channels = c3k2; // ShuffleNet V2's 58 channels
  odd_channels.c_in = odd_channels.c_out = 58;
  EXPECT_FALSE(cudnn_channels_last(odd_channels));
  kernels::Conv2dShape short_rows = c3k2; // pointwise, rows of 20 pixels: not whole vectors
  short_rows.n = 256;
  short_rows.kh = short_rows.kw = 1;
  short_rows.pad_top = short_rows.pad_left = 0;
  short_rows.h = short_rows.w = short_rows.h_out = short_rows.w_out = 20;
  EXPECT_FALSE(cudnn_channels_last(short_rows));
}

TEST(LibraryConvChoice, ModesAndPhysicalOperands) {
  Model m = model();
  const CudaTarget target;
  target.choose_implementations(m.kg, LibraryMode::never);
  for (const Kernel& k : m.kg.kernels)
    EXPECT_EQ(k.impl, KernelImpl::vtc_template) << k.name;
  EXPECT_TRUE(target.physical_operands(kernel_of(m.kg, "same3x3")).empty());
  if (!device::cudnn_available()) {
    EXPECT_THROW(target.choose_implementations(m.kg, LibraryMode::always), Error);
    GTEST_SKIP() << device::cudnn_unavailable_reason();
  }
  target.choose_implementations(m.kg, LibraryMode::automatic);
  // Pointwise convolutions of a kernel's output go to cuBLASLt where it loads; those of a
  // data-movement op's (the Transposes) are chosen as without it.
  const KernelImpl pointwise =
      device::cublaslt_available() ? KernelImpl::cublaslt_conv : KernelImpl::cudnn_conv;
  EXPECT_EQ(kernel_of(m.kg, "same3x3").impl, KernelImpl::cudnn_conv);
  EXPECT_EQ(kernel_of(m.kg, "after_conv").impl, pointwise);
  EXPECT_EQ(kernel_of(m.kg, "pointwise").impl, KernelImpl::cudnn_conv); // 64 pixels
  EXPECT_EQ(kernel_of(m.kg, "large_pointwise").impl, KernelImpl::vtc_template);
  EXPECT_EQ(kernel_of(m.kg, "grouped").impl, KernelImpl::vtc_template);
  EXPECT_EQ(kernel_of(m.kg, "float").impl, KernelImpl::vtc_template);
  EXPECT_EQ(kernel_of(m.kg, "stem").impl, KernelImpl::vtc_template);
  // A caller's buffer read by a library call stays out of the replayed graphs; staged by a
  // generated prologue it does not.
  EXPECT_EQ(kernel_of(m.kg, "of_input").impl, KernelImpl::cudnn_conv);
  EXPECT_EQ(kernel_of(m.kg, "pointwise_of_input").impl, KernelImpl::vtc_template);
  EXPECT_EQ(kernel_of(m.kg, "bound_weights").impl, KernelImpl::vtc_template);
  // Channels-last cuDNN reads its input through the prologue (any mapping): only the weights
  // must be physical; NCHW cuDNN and cuBLASLt read both operands as they lie.
  const Kernel& same = kernel_of(m.kg, "same3x3");
  EXPECT_EQ(target.physical_operands(same), (std::vector<const Value*>{same.anchor->inputs[1]}));
  EXPECT_EQ(target.physical_operands(kernel_of(m.kg, "pointwise")).size(), 2u);
  target.choose_implementations(m.kg, LibraryMode::always);
  EXPECT_EQ(kernel_of(m.kg, "large_pointwise").impl, pointwise);
  EXPECT_EQ(kernel_of(m.kg, "stem").impl, KernelImpl::cudnn_conv);
  EXPECT_EQ(kernel_of(m.kg, "of_input").impl, KernelImpl::cudnn_conv);
  EXPECT_EQ(kernel_of(m.kg, "pointwise_of_input").impl, KernelImpl::vtc_template);
  EXPECT_EQ(kernel_of(m.kg, "bound_weights").impl, KernelImpl::vtc_template);
  EXPECT_EQ(kernel_of(m.kg, "extra_bottom_pad").impl, KernelImpl::vtc_template);
}

// A stem (conv2d_direct) read only by a channels-last cuDNN convolution is held NHWC: the stem
// stores it so and the reader takes it as it lies. A convolution whose input is a model input
// stages it through the prologue.
TEST(ChannelsLastLayouts, StemHeldForItsCudnnReaderAndBoundInputsStaged) {
  if (!device::cudnn_available()) GTEST_SKIP() << device::cudnn_unavailable_reason();
  ModelBuilder b;
  add_computed_input(b, "x_image", DType::f16, {2, 3, 32, 32});
  b.initializer("stem_w", Tensor(DType::f16, {16, 3, 3, 3}));
  onnx::NodeProto& stem = b.node("Conv", {"x_image", "stem_w"}, {"stem_y"}, "stem");
  ModelBuilder::set_ints(stem, "pads", {1, 1, 1, 1});
  ModelBuilder::set_ints(stem, "strides", {2, 2});
  b.initializer("next_w", Tensor(DType::f16, {16, 16, 3, 3}));
  ModelBuilder::set_ints(b.node("Conv", {"stem_y", "next_w"}, {"next_y"}, "next"), "pads",
                         {1, 1, 1, 1});
  b.output("next_y");
  b.input("x_bound", DType::f16, {2, 8, 16, 16});
  add_conv(b, "of_input", DType::f16, 3, {1, 1, 1, 1}, 1, 1, "x_bound");
  for (StrategyKind strategy : {StrategyKind::none, StrategyKind::greedy}) {
    Graph g = import_onnx_bytes(b.bytes(), ".", "m.onnx");
    canonicalize(g);
    Options o;
    o.target = TargetKind::cuda;
    o.strategy = strategy;
    Program p = lower_for_target(g, o);
    std::set<std::string> held;
    for (const Value* v : p.storage.channels_last)
      held.insert(v->name);
    EXPECT_EQ(held, std::set<std::string>{"stem_y"}) << strategy_kind_name(strategy);
    for (const StepInfo& st : p.steps) {
      if (!st.kernel || st.kernel->anchor->op != "Conv") continue;
      const std::string name = st.kernel->anchor->name;
      EXPECT_EQ(st.kernel->impl, name == "stem" ? KernelImpl::vtc_template : KernelImpl::cudnn_conv)
          << name;
    }
  }
}

} // namespace
} // namespace vtc
