// The library form of a convolution kernel on the cuda target. A kernel has one when its
// anchor is a 2-D (or 1-D) Conv of one group over f16 or bf16 operands read from memory (no
// fused prologue computes the input or the weights), with padding cuDNN's symmetric padding
// gives the same output for. cuDNN (or cuBLASLt, for a pointwise one) computes the raw product into
// a scratch buffer (the output's shape, dense, in the output's dtype); a generated kernel then
// reads it, adds the bias and applies the fused epilogue chain, and stores through the output's
// accessor, which may be virtual. Only the input and the weights must be physical.
#pragma once

#include <cstdint>
#include <optional>

#include "kernels/common/window_shapes.h"
#include "passes/kernel_graph.h"
#include "vtc/dtype.h"

namespace vtc {

// A convolution as cuDNN runs it: NCHW input and output, weights [c_out, c_in, kh, kw],
// symmetric padding (pad_top on both sides of the height, pad_left of the width).
struct LibraryConvShape {
  kernels::Conv2dShape shape;
  DType dtype = DType::f16;
  int64_t output_elements() const { return shape.n * shape.c_out * shape.h_out * shape.w_out; }
};

// One library convolution of a step: its shape, the buffers of its input and weights (their
// addresses are read from the executor's table when the call is made), the library
// (KernelImpl::cudnn_conv or cublaslt_conv), and whether it runs channels-last (cuDNN: weights
// prepared [c_out, kh, kw, c_in], the raw product NHWC, read by library_epilogue_nhwc), and
// whether its input buffer already holds the input channels-last (StorageMap::channels_last:
// no transpose before the call), or the call before it staged the input NHWC in the executor's
// staging buffer (`input_staged`: library_prologue_nhwc; x_buffer is then -1).
struct LibraryConvCall {
  LibraryConvShape conv;
  int x_buffer = -1, w_buffer = -1;
  KernelImpl library = KernelImpl::cudnn_conv;
  bool channels_last = false;
  bool input_channels_last = false;
  bool input_staged = false;
  // >= 0: the raw product goes to this buffer, the kernel's output's own (an intermediate of the
  // product's type, size and layout), and the epilogue stores over it in place, each value where
  // it read it; -1: to the executor's scratch (library_conv_product_buffer).
  int y_buffer = -1;
  // The input as the library reads it: NHWC, from its buffer or from the staging buffer.
  bool reads_nhwc() const { return input_channels_last || input_staged; }
};

// The form of kernel k, or nullopt when cuDNN cannot compute it.
std::optional<LibraryConvShape> library_conv_form(const Kernel& k);

// Whether cuDNN runs convolution `s` channels-last: where its channels are whole 8-element
// vectors and either its window has more than one tap or its output rows are whole vectors and
// it has at least kChannelsLastPixels pixels over the batch. NCHW, cuDNN transposes the input,
// the weights and the output in kernels of its own on every call; channels-last, the weights
// are prepared once, the input is transposed by one call and the epilogue reads the output
// NHWC. Measured on the H200 (vtc bench greedy, f16, torch-exported models):
// - large planes (NCHW / channels-last where channels and rows are whole vectors from 16384
//   pixels / every convolution channels-last): C3k2 b16 0.742 / 0.696 / 0.693 ms, YOLO11n b16
//   1.892 / 1.889 / 1.977, ShuffleNet V2 b16 (58 and 116 channels) 0.753 / 0.759 / 1.217, but
//   YOLO11n b1 0.642 / 0.684 / 0.685: cuDNN computes a small pointwise convolution as a GEMM
//   over NCHW with no transpose at all, which channels-last would add; hence 65536 pixels.
// - windows of taps at every size (pixel rule alone / with every window channels-last,
//   alternated twice in one run): YOLO11n b1 0.647 / 0.616 ms (75 cuDNN transposes a run ->
//   26), YOLO11n b16 1.92 / 1.855, C3k2 b1 0.088 / 0.079, C3k2 b16 0.70 / 0.70.
// $VTC_CUDNN_CHANNELS_LAST "0" keeps every convolution NCHW, "1" makes every one channels-last,
// "pixels" applies the pixel rule alone (to compare).
inline constexpr int64_t kChannelsLastPixels = 65536;
bool cudnn_channels_last(const kernels::Conv2dShape& s);

} // namespace vtc
