// cuDNN's convolution for the cuda target's library convolutions. libcudnn.so.9 is opened with
// dlopen at first use (never linked; $VTC_CUDNN_LIBRARY names another file) and one handle
// serves the process, in the device's primary context. A CudnnConv is one convolution shape:
// its descriptors, the algorithm cuDNN's heuristics rank first among those that run in at most
// kCudnnWorkspaceLimit bytes of workspace (the heuristics answer the same for the same shape,
// so every strategy of a model runs the same algorithm and gets the same bits), and that
// algorithm's workspace. Built without <cudnn.h>, cudnn_available() is false and a CudnnConv
// throws.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "device/conv_plan.h"
#include "device/cuda_driver.h"
#include "kernels/common/window_shapes.h"
#include "vtc/dtype.h"

namespace vtc::device {

inline constexpr size_t kCudnnWorkspaceLimit = size_t(256) << 20;

// Whether cuDNN loads on this machine (a GPU is not needed to answer).
bool cudnn_available();
// Why it does not ("" when it does).
std::string cudnn_unavailable_reason();

class CudnnConv final : public ConvPlan {
public:
  // A convolution over NCHW tensors of `dtype` (f16 or bf16; the product accumulates in f32),
  // weights [c_out, c_in, kh, kw], padded by pad_top / pad_left on both sides. Throws a
  // vtc::Error naming the shape when cuDNN is missing or has no algorithm for it.
  CudnnConv(const kernels::Conv2dShape& shape, DType dtype);
  ~CudnnConv() override;

  size_t workspace_bytes() const override;
  // cuDNN's name for the algorithm ("cuDNN IMPLICIT_PRECOMP_GEMM", ...).
  std::string algorithm() const override;
  void run(CUstream stream, CUdeviceptr x, CUdeviceptr w, CUdeviceptr y,
           CUdeviceptr workspace) const override;

private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
};

} // namespace vtc::device
