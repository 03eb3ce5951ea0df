// cuBLASLt's matrix product for the cuda target's pointwise convolutions. A 1 x 1 convolution
// of stride 1 without padding over NCHW tensors is, image by image, the product
// y[c_out, h*w] = w[c_out, c_in] . x[c_in, h*w]: one strided-batched cuBLASLt product whose
// batch is the images (the weights shared, batch stride 0). libcublasLt.so.13 is opened with
// dlopen at first use ($VTC_CUBLASLT_LIBRARY names another file) and one handle serves the
// process. A CublasLtConv is one shape: its layouts and the algorithm cuBLASLt's heuristics
// rank first within kCublasLtWorkspaceLimit bytes of workspace, asked for operands aligned to
// 16 bytes (the same answer for the same shape, so every strategy of a model runs the same
// algorithm and gets the same bits).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "device/conv_plan.h"
#include "kernels/common/window_shapes.h"
#include "vtc/dtype.h"

namespace vtc::device {

inline constexpr size_t kCublasLtWorkspaceLimit = size_t(32) << 20;

// Whether cuBLASLt loads on this machine (a GPU is not needed to answer).
bool cublaslt_available();
// Why it does not ("" when it does).
std::string cublaslt_unavailable_reason();

// Whether `shape` is a convolution CublasLtConv runs: 1 x 1 window, stride 1, no padding, one
// group, and rows of whole 16-byte groups (h*w and c_in multiples of 8), so that every image's
// operands start 16-byte aligned.
bool cublaslt_conv_fits(const kernels::Conv2dShape& shape);

class CublasLtConv final : public ConvPlan {
public:
  // A pointwise convolution of `dtype` (f16 or bf16; the product accumulates in f32) that
  // cublaslt_conv_fits. Throws a vtc::Error naming the shape when cuBLASLt is missing or has no
  // algorithm for it.
  CublasLtConv(const kernels::Conv2dShape& shape, DType dtype);
  ~CublasLtConv() override;

  size_t workspace_bytes() const override;
  std::string algorithm() const override; // "cuBLASLt algorithm 66, tile 20, ..."
  // Queues y = conv(x, w); every pointer 16-byte aligned.
  void run(CUstream stream, CUdeviceptr x, CUdeviceptr w, CUdeviceptr y,
           CUdeviceptr workspace) const override;

private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
};

} // namespace vtc::device
