// cuDNN's convolution for the cuda target's library convolutions. libcudnn.so.9 is opened with
// dlopen at first use (never linked; $VTC_CUDNN_LIBRARY names another file) and one handle
// serves the process, in the device's primary context. A CudnnConv is one convolution shape:
// its descriptors, the algorithm cuDNN's heuristics rank first among those that run in at most
// kCudnnWorkspaceLimit bytes of workspace (the heuristics answer the same for the same shape,
// so every strategy of a model runs the same algorithm and gets the same bits), and that
// algorithm's workspace. Channels-last (where codegen's cudnn_channels_last says), the
// weights are transposed once to [c_out, kh, kw, c_in] (prepare_weights), the input is
// transposed to NHWC at the start of the workspace on every call (cuDNN has no algorithm for
// an NCHW input with NHWC weights and output), and the raw product is written NHWC: cuDNN's
// tensor-core kernels are channels-last, and given NCHW weights and output it transposes both
// in kernels of its own on every call; where the program holds the input channels-last
// already (`input_channels_last`), it is read as it lies. Built without <cudnn.h>,
// cudnn_available() is false and a CudnnConv throws.
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
  // A convolution of an NCHW input of `dtype` (f16 or bf16; the product accumulates in f32),
  // weights [c_out, c_in, kh, kw], padded by pad_top / pad_left on both sides, into an NHWC
  // raw product with weights prepared channels-last when `channels_last` (the input given
  // NHWC when `input_channels_last` too), else all NCHW. Throws a vtc::Error naming the shape
  // when cuDNN is missing or has no algorithm for it.
  CudnnConv(const kernels::Conv2dShape& shape, DType dtype, bool channels_last,
            bool input_channels_last = false);
  ~CudnnConv() override;

  size_t workspace_bytes() const override;
  void prepare_weights(CUstream stream, CUdeviceptr w) override;
  size_t prepared_bytes() const override;
  // cuDNN's name for the algorithm ("cuDNN IMPLICIT_PRECOMP_GEMM", ...).
  std::string algorithm() const override;
  void run(CUstream stream, CUdeviceptr x, CUdeviceptr w, CUdeviceptr y,
           CUdeviceptr workspace) const override;

private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
};

} // namespace vtc::device
