// cuDNN's convolution (see cudnn_conv.h): the library's functions resolved with dlsym and
// typed by <cudnn.h>'s own declarations, the handle, and the plan of one shape.
#include "device/cudnn_conv.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "device/cuda_device.h"
#include "device/cuda_objects.h"
#include "vtc/error.h"

#if VTC_HAS_CUDNN
#include <cudnn.h>

#include "device/runtime_library.h"
#endif

namespace vtc::device {

namespace {

std::string shape_text(const kernels::Conv2dShape& s, DType t) {
  std::ostringstream o;
  o << "convolution x [" << s.n << ", " << s.c_in << ", " << s.h << ", " << s.w << "] w ["
    << s.c_out << ", " << s.c_in / s.groups << ", " << s.kh << ", " << s.kw << "] -> [" << s.n
    << ", " << s.c_out << ", " << s.h_out << ", " << s.w_out << "] " << dtype_name(t)
    << " (strides " << s.stride_h << "x" << s.stride_w << ", dilations " << s.dil_h << "x"
    << s.dil_w << ", pads " << s.pad_top << "x" << s.pad_left << ")";
  return o.str();
}

} // namespace

#if VTC_HAS_CUDNN

namespace {

#define VTC_CUDNN_FUNCTIONS(X)                                                                     \
  X(cudnnGetVersion)                                                                               \
  X(cudnnGetErrorString)                                                                           \
  X(cudnnCreate)                                                                                   \
  X(cudnnSetStream)                                                                                \
  X(cudnnCreateTensorDescriptor)                                                                   \
  X(cudnnSetTensor4dDescriptor)                                                                    \
  X(cudnnDestroyTensorDescriptor)                                                                  \
  X(cudnnCreateFilterDescriptor)                                                                   \
  X(cudnnSetFilter4dDescriptor)                                                                    \
  X(cudnnDestroyFilterDescriptor)                                                                  \
  X(cudnnCreateConvolutionDescriptor)                                                              \
  X(cudnnSetConvolution2dDescriptor)                                                               \
  X(cudnnSetConvolutionMathType)                                                                   \
  X(cudnnDestroyConvolutionDescriptor)                                                             \
  X(cudnnGetConvolution2dForwardOutputDim)                                                         \
  X(cudnnGetConvolutionForwardAlgorithmMaxCount)                                                   \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                                        \
  X(cudnnConvolutionForward)                                                                       \
  X(cudnnTransformTensor)

struct Cudnn {
#define VTC_MEMBER(name) decltype(&::name) name = nullptr;
  VTC_CUDNN_FUNCTIONS(VTC_MEMBER)
#undef VTC_MEMBER
  cudnnHandle_t handle = nullptr;
  std::mutex mutex;  // the handle's stream is set for each call
  std::string error; // empty when loaded
};

Cudnn& cudnn() {
  static Cudnn* loaded = [] {
    auto* c = new Cudnn; // never destroyed: cuDNN may be used until exit
    RuntimeLibrary lib = open_runtime_library("VTC_CUDNN_LIBRARY", "libcudnn.so.9", "cuDNN");
#define VTC_RESOLVE(name) c->name = reinterpret_cast<decltype(&::name)>(runtime_symbol(lib, #name));
    VTC_CUDNN_FUNCTIONS(VTC_RESOLVE)
#undef VTC_RESOLVE
    c->error = lib.error;
    if (c->error.empty() && c->cudnnGetVersion() / 10000 != CUDNN_MAJOR)
      c->error = lib.file + " is cuDNN " + std::to_string(c->cudnnGetVersion()) +
                 ", vtc was built for cuDNN " + std::to_string(CUDNN_MAJOR);
    return c;
  }();
  return *loaded;
}

void check(const Cudnn& c, cudnnStatus_t s, const std::string& what) {
  VTC_CHECK(s == CUDNN_STATUS_SUCCESS) << what << ": cuDNN: " << c.cudnnGetErrorString(s);
}

cudnnHandle_t handle(Cudnn& c) {
  std::lock_guard lock(c.mutex);
  if (!c.handle) {
    cuda_device(); // the primary context current on this thread
    check(c, c.cudnnCreate(&c.handle), "creating the cuDNN handle");
  }
  return c.handle;
}

cudnnDataType_t data_type(DType t) {
  return t == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
}

std::string algorithm_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
  case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
    return "IMPLICIT_GEMM";
  case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
    return "IMPLICIT_PRECOMP_GEMM";
  case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
    return "GEMM";
  case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT:
    return "DIRECT";
  case CUDNN_CONVOLUTION_FWD_ALGO_FFT:
    return "FFT";
  case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING:
    return "FFT_TILING";
  case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD:
    return "WINOGRAD";
  case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED:
    return "WINOGRAD_NONFUSED";
  default:
    return "algorithm " + std::to_string(int(a));
  }
}

} // namespace

bool cudnn_available() {
  return cudnn().error.empty();
}

std::string cudnn_unavailable_reason() {
  return cudnn().error;
}

struct CudnnConv::Plan {
  Cudnn* c = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo{};
  size_t workspace = 0;
  std::string what;
  bool channels_last = false;
  bool input_channels_last = false; // x given NHWC: no copy
  // Channels-last: the weights as given ([c_out, c_in, kh, kw] as a 4-D tensor) and as
  // prepared, and the prepared copy of each weights buffer, by its address; the input as given
  // (NCHW; x is its NHWC copy, made at the start of the workspace on every call).
  cudnnTensorDescriptor_t w_given = nullptr, w_prepared = nullptr, x_given = nullptr;
  size_t weight_bytes = 0, input_copy_bytes = 0;
  std::map<CUdeviceptr, DeviceBuffer> prepared;

  ~Plan() {
    if (x) c->cudnnDestroyTensorDescriptor(x);
    if (y) c->cudnnDestroyTensorDescriptor(y);
    if (w) c->cudnnDestroyFilterDescriptor(w);
    if (conv) c->cudnnDestroyConvolutionDescriptor(conv);
    if (w_given) c->cudnnDestroyTensorDescriptor(w_given);
    if (w_prepared) c->cudnnDestroyTensorDescriptor(w_prepared);
    if (x_given) c->cudnnDestroyTensorDescriptor(x_given);
  }
};

CudnnConv::CudnnConv(const kernels::Conv2dShape& s, DType dtype, bool channels_last,
                     bool input_channels_last)
    : plan_(std::make_unique<Plan>()) {
  Plan& p = *plan_;
  p.what = shape_text(s, dtype);
  VTC_CHECK(channels_last || !input_channels_last)
      << p.what << ": an input given channels-last to an NCHW plan";
  p.channels_last = channels_last;
  p.input_channels_last = input_channels_last;
  Cudnn& c = cudnn();
  VTC_CHECK(c.error.empty()) << p.what << ": " << c.error;
  VTC_CHECK(dtype == DType::f16 || dtype == DType::bf16)
      << p.what << ": cuDNN runs f16 and bf16 convolutions here";
  p.c = &c;
  cudnnHandle_t h = handle(c);
  const cudnnDataType_t t = data_type(dtype);
  auto i = [](int64_t v) { return int(v); };
  check(c, c.cudnnCreateTensorDescriptor(&p.x), p.what);
  check(c, c.cudnnCreateTensorDescriptor(&p.y), p.what);
  check(c, c.cudnnCreateFilterDescriptor(&p.w), p.what);
  check(c, c.cudnnCreateConvolutionDescriptor(&p.conv), p.what);
  const cudnnTensorFormat_t layout = channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  check(c, c.cudnnSetTensor4dDescriptor(p.x, layout, t, i(s.n), i(s.c_in), i(s.h), i(s.w)),
        p.what + " (input)");
  check(c,
        c.cudnnSetFilter4dDescriptor(p.w, t, layout, i(s.c_out), i(s.c_in / s.groups), i(s.kh),
                                     i(s.kw)),
        p.what + " (weights)");
  if (channels_last) {
    // cuDNN has no algorithm for an NCHW input with NHWC weights and output.
    if (!input_channels_last)
      p.input_copy_bytes = (size_t(s.n * s.c_in * s.h * s.w) * dtype_size(dtype) + 255) / 256 * 256;
    check(c, c.cudnnCreateTensorDescriptor(&p.x_given), p.what);
    check(c,
          c.cudnnSetTensor4dDescriptor(p.x_given, CUDNN_TENSOR_NCHW, t, i(s.n), i(s.c_in), i(s.h),
                                       i(s.w)),
          p.what + " (input as given)");
    p.weight_bytes = size_t(s.c_out * (s.c_in / s.groups) * s.kh * s.kw) * dtype_size(dtype);
    check(c, c.cudnnCreateTensorDescriptor(&p.w_given), p.what);
    check(c, c.cudnnCreateTensorDescriptor(&p.w_prepared), p.what);
    for (auto [d, f] : {std::pair{p.w_given, CUDNN_TENSOR_NCHW}, {p.w_prepared, CUDNN_TENSOR_NHWC}})
      check(
          c,
          c.cudnnSetTensor4dDescriptor(d, f, t, i(s.c_out), i(s.c_in / s.groups), i(s.kh), i(s.kw)),
          p.what + " (weights' layouts)");
  }
  check(c,
        c.cudnnSetConvolution2dDescriptor(p.conv, i(s.pad_top), i(s.pad_left), i(s.stride_h),
                                          i(s.stride_w), i(s.dil_h), i(s.dil_w),
                                          CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        p.what + " (convolution)");
  check(c, c.cudnnSetConvolutionMathType(p.conv, CUDNN_TENSOR_OP_MATH), p.what);
  int n = 0, ch = 0, ho = 0, wo = 0;
  check(c, c.cudnnGetConvolution2dForwardOutputDim(p.conv, p.x, p.w, &n, &ch, &ho, &wo), p.what);
  VTC_CHECK(n == s.n && ch == s.c_out && ho == s.h_out && wo == s.w_out)
      << p.what << ": cuDNN's output is [" << n << ", " << ch << ", " << ho << ", " << wo << "]";
  check(c, c.cudnnSetTensor4dDescriptor(p.y, layout, t, n, ch, ho, wo), p.what + " (output)");

  int count = 0;
  check(c, c.cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count), p.what);
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(size_t(std::max(count, 1)));
  int returned = 0;
  check(c,
        c.cudnnGetConvolutionForwardAlgorithm_v7(h, p.x, p.w, p.conv, p.y, int(perf.size()),
                                                 &returned, perf.data()),
        p.what + " (choosing the algorithm)");
  bool found = false;
  for (int k = 0; k < returned && !found; ++k) {
    const cudnnConvolutionFwdAlgoPerf_t& r = perf[size_t(k)];
    if (r.status != CUDNN_STATUS_SUCCESS || r.memory > kCudnnWorkspaceLimit) continue;
    p.algo = r.algo;
    p.workspace = r.memory;
    check(c, c.cudnnSetConvolutionMathType(p.conv, r.mathType), p.what);
    found = true;
  }
  VTC_CHECK(found) << p.what << ": cuDNN has no algorithm for it within "
                   << (kCudnnWorkspaceLimit >> 20) << " MiB of workspace";
}

CudnnConv::~CudnnConv() = default;

size_t CudnnConv::workspace_bytes() const {
  return plan_->input_copy_bytes + plan_->workspace;
}

std::string CudnnConv::algorithm() const {
  return "cuDNN " + algorithm_name(plan_->algo) + (plan_->channels_last ? " (NHWC)" : "");
}

namespace {

void* ptr(CUdeviceptr a) {
  return reinterpret_cast<void*>(uintptr_t(a));
}

} // namespace

void CudnnConv::prepare_weights(CUstream stream, CUdeviceptr w) {
  Plan& p = *plan_;
  if (!p.channels_last) return;
  // Transposed again when the address is seen again: another executor's constants may have
  // come to lie where an earlier one's were.
  auto it = p.prepared.find(w);
  if (it == p.prepared.end()) it = p.prepared.emplace(w, DeviceBuffer(p.weight_bytes)).first;
  DeviceBuffer& to = it->second;
  Cudnn& c = *p.c;
  const float one = 1.0f, zero = 0.0f;
  std::lock_guard lock(c.mutex);
  check(c, c.cudnnSetStream(c.handle, reinterpret_cast<cudaStream_t>(stream)), p.what);
  check(
      c,
      c.cudnnTransformTensor(c.handle, &one, p.w_given, ptr(w), &zero, p.w_prepared, ptr(to.ptr())),
      p.what + " (weights to channels-last)");
}

size_t CudnnConv::prepared_bytes() const {
  return plan_->prepared.size() * plan_->weight_bytes;
}

void CudnnConv::run(CUstream stream, CUdeviceptr x, CUdeviceptr w, CUdeviceptr y,
                    CUdeviceptr workspace) const {
  const Plan& p = *plan_;
  if (p.channels_last) {
    auto it = p.prepared.find(w);
    VTC_CHECK(it != p.prepared.end()) << p.what << ": weights not prepared (prepare_weights)";
    w = it->second.ptr();
  }
  Cudnn& c = *p.c;
  const float one = 1.0f, zero = 0.0f;
  std::lock_guard lock(c.mutex);
  check(c, c.cudnnSetStream(c.handle, reinterpret_cast<cudaStream_t>(stream)), p.what);
  if (p.channels_last && !p.input_channels_last) {
    check(c, c.cudnnTransformTensor(c.handle, &one, p.x_given, ptr(x), &zero, p.x, ptr(workspace)),
          p.what + " (input to channels-last)");
    x = workspace;
    workspace += p.input_copy_bytes;
  }
  check(c,
        c.cudnnConvolutionForward(c.handle, &one, p.x, ptr(x), p.w, ptr(w), p.conv, p.algo,
                                  ptr(workspace), p.workspace, &zero, p.y, ptr(y)),
        p.what);
}

#else // !VTC_HAS_CUDNN

bool cudnn_available() {
  return false;
}

std::string cudnn_unavailable_reason() {
  return "vtc was built without cuDNN's headers (<cudnn.h>)";
}

struct CudnnConv::Plan {};

CudnnConv::CudnnConv(const kernels::Conv2dShape& s, DType dtype, bool, bool) {
  VTC_FAIL() << shape_text(s, dtype) << ": " << cudnn_unavailable_reason();
}
CudnnConv::~CudnnConv() = default;
size_t CudnnConv::workspace_bytes() const {
  return 0;
}
void CudnnConv::prepare_weights(CUstream, CUdeviceptr) {}
size_t CudnnConv::prepared_bytes() const {
  return 0;
}
std::string CudnnConv::algorithm() const {
  return "";
}
void CudnnConv::run(CUstream, CUdeviceptr, CUdeviceptr, CUdeviceptr, CUdeviceptr) const {}

#endif

} // namespace vtc::device
