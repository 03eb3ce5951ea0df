// A library convolution's plan as the cuda target runs it: made once per distinct shape when a
// unit is loaded, then queued on the executor's stream each run, writing the raw product (the
// output's shape in the output's dtype, dense NCHW or, for a channels-last cuDNN plan, NHWC)
// that the step's generated epilogue reads. cuDNN (cudnn_conv.h) and cuBLASLt for pointwise
// convolutions (cublaslt_conv.h) implement it.
#pragma once

#include <cstddef>
#include <string>

#include "device/cuda_driver.h"

namespace vtc::device {

class ConvPlan {
public:
  virtual ~ConvPlan() = default;
  // Bytes of workspace run() needs.
  virtual size_t workspace_bytes() const = 0;
  // The library's name for what it runs ("cuDNN IMPLICIT_PRECOMP_GEMM", ...).
  virtual std::string algorithm() const = 0;
  // Readies the weights at `w` for run() in the layout the plan reads them in (queued on
  // `stream`): called once per weights buffer, after its upload and before any run. The plan
  // keeps what it made (redone when called again for the same address); prepared_bytes()
  // counts it.
  virtual void prepare_weights(CUstream /*stream*/, CUdeviceptr /*w*/) {}
  virtual size_t prepared_bytes() const { return 0; }
  // Queues y = conv(x, w) on `stream`; `workspace` holds workspace_bytes().
  virtual void run(CUstream stream, CUdeviceptr x, CUdeviceptr w, CUdeviceptr y,
                   CUdeviceptr workspace) const = 0;
};

} // namespace vtc::device
