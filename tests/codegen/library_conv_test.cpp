// The cuDNN form of convolution kernels on the cuda target: which convolutions have one (16-bit
// operands read from memory, one group, padding cuDNN's symmetric padding reproduces), and
// the cuda target's choice per library mode with the operands it then keeps physical.
#include <gtest/gtest.h>

#include "codegen/library_conv.h"
#include "device/cudnn_conv.h"
#include "frontend/onnx_import.h"
#include "model_builder.h"
#include "passes/fusion.h"
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

Model model() {
  ModelBuilder b;
  b.input("x_f16", DType::f16, {1, 8, 8, 8});
  b.input("x_f32", DType::f32, {1, 8, 8, 8});
  b.input("x_large", DType::f16, {1, 8, 200, 200}); // 40000 pixels
  add_conv(b, "large_pointwise", DType::f16, 1, {0, 0, 0, 0}, 1, 1, "x_large");
  add_conv(b, "same3x3", DType::f16, 3, {1, 1, 1, 1}, 1);
  add_conv(b, "pointwise", DType::f16, 1, {0, 0, 0, 0}, 1);
  add_conv(b, "unused_bottom_pad", DType::f16, 3, {1, 1, 0, 0}, 2); // 4x4 either way
  add_conv(b, "extra_bottom_pad", DType::f16, 3, {0, 0, 1, 1}, 2);  // 4x4, symmetric 3x3
  add_conv(b, "grouped", DType::f16, 3, {1, 1, 1, 1}, 1, 2);
  add_conv(b, "float", DType::f32, 3, {1, 1, 1, 1}, 1);
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
  EXPECT_EQ(kernel_of(m.kg, "same3x3").impl, KernelImpl::cudnn_conv);
  EXPECT_EQ(kernel_of(m.kg, "pointwise").impl, KernelImpl::cudnn_conv); // 64 pixels
  EXPECT_EQ(kernel_of(m.kg, "large_pointwise").impl, KernelImpl::vtc_template);
  EXPECT_EQ(kernel_of(m.kg, "grouped").impl, KernelImpl::vtc_template);
  EXPECT_EQ(kernel_of(m.kg, "float").impl, KernelImpl::vtc_template);
  const Kernel& same = kernel_of(m.kg, "same3x3");
  EXPECT_EQ(target.physical_operands(same),
            (std::vector<const Value*>{same.anchor->inputs[0], same.anchor->inputs[1]}));
  target.choose_implementations(m.kg, LibraryMode::always);
  EXPECT_EQ(kernel_of(m.kg, "large_pointwise").impl, KernelImpl::cudnn_conv);
  EXPECT_EQ(kernel_of(m.kg, "extra_bottom_pad").impl, KernelImpl::vtc_template);
}

} // namespace
} // namespace vtc
