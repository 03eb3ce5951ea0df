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
// prepared [c_out, kh, kw, c_in], the raw product NHWC, read by library_epilogue_nhwc).
struct LibraryConvCall {
  LibraryConvShape conv;
  int x_buffer = -1, w_buffer = -1;
  KernelImpl library = KernelImpl::cudnn_conv;
  bool channels_last = false;
};

// The form of kernel k, or nullopt when cuDNN cannot compute it.
std::optional<LibraryConvShape> library_conv_form(const Kernel& k);

// Whether cuDNN convolutions run channels-last: yes, unless $VTC_CUDNN_CHANNELS_LAST is "0"
// (NCHW weights and raw product, which cuDNN transposes itself on every call: kept to compare).
bool cudnn_channels_last();

} // namespace vtc
