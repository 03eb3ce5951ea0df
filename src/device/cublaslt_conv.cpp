// cuBLASLt's pointwise convolution (see cublaslt_conv.h): the library's functions resolved with
// dlsym and typed by <cublasLt.h>'s own declarations, the handle, and the plan of one shape.
#include "device/cublaslt_conv.h"

#include <cstdint>
#include <mutex>
#include <sstream>

#include "device/cuda_device.h"
#include "vtc/error.h"

#if VTC_HAS_CUBLASLT
#include <cublasLt.h>

#include "device/runtime_library.h"
#endif

namespace vtc::device {

namespace {

std::string shape_text(const kernels::Conv2dShape& s, DType t) {
  std::ostringstream o;
  o << "pointwise convolution x [" << s.n << ", " << s.c_in << ", " << s.h << ", " << s.w << "] w ["
    << s.c_out << ", " << s.c_in << ", 1, 1] -> [" << s.n << ", " << s.c_out << ", " << s.h_out
    << ", " << s.w_out << "] " << dtype_name(t);
  return o.str();
}

} // namespace

bool cublaslt_conv_fits(const kernels::Conv2dShape& s) {
  return s.kh == 1 && s.kw == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_top == 0 &&
         s.pad_left == 0 && s.groups == 1 && s.h_out == s.h && s.w_out == s.w &&
         s.h * s.w % 8 == 0 && s.c_in % 8 == 0;
}

#if VTC_HAS_CUBLASLT

namespace {

#define VTC_CUBLASLT_FUNCTIONS(X)                                                                  \
  X(cublasLtGetVersion)                                                                            \
  X(cublasLtGetStatusString)                                                                       \
  X(cublasLtCreate)                                                                                \
  X(cublasLtMatmulDescCreate)                                                                      \
  X(cublasLtMatmulDescDestroy)                                                                     \
  X(cublasLtMatrixLayoutCreate)                                                                    \
  X(cublasLtMatrixLayoutSetAttribute)                                                              \
  X(cublasLtMatrixLayoutDestroy)                                                                   \
  X(cublasLtMatmulPreferenceCreate)                                                                \
  X(cublasLtMatmulPreferenceSetAttribute)                                                          \
  X(cublasLtMatmulPreferenceDestroy)                                                               \
  X(cublasLtMatmulAlgoGetHeuristic)                                                                \
  X(cublasLtMatmulAlgoConfigGetAttribute)                                                          \
  X(cublasLtMatmul)

struct CublasLt {
#define VTC_MEMBER(name) decltype(&::name) name = nullptr;
  VTC_CUBLASLT_FUNCTIONS(VTC_MEMBER)
#undef VTC_MEMBER
  cublasLtHandle_t handle = nullptr;
  std::mutex mutex;
  std::string error; // empty when loaded
};

CublasLt& cublaslt() {
  static CublasLt* loaded = [] {
    auto* c = new CublasLt; // never destroyed: cuBLASLt may be used until exit
    RuntimeLibrary lib =
        open_runtime_library("VTC_CUBLASLT_LIBRARY", "libcublasLt.so.13", "cuBLASLt");
#define VTC_RESOLVE(name) c->name = reinterpret_cast<decltype(&::name)>(runtime_symbol(lib, #name));
    VTC_CUBLASLT_FUNCTIONS(VTC_RESOLVE)
#undef VTC_RESOLVE
    c->error = lib.error;
    if (c->error.empty() && c->cublasLtGetVersion() / 10000 != CUBLAS_VER_MAJOR)
      c->error = lib.file + " is cuBLASLt " + std::to_string(c->cublasLtGetVersion()) +
                 ", vtc was built for cuBLAS " + std::to_string(CUBLAS_VER_MAJOR);
    return c;
  }();
  return *loaded;
}

void check(const CublasLt& c, cublasStatus_t s, const std::string& what) {
  VTC_CHECK(s == CUBLAS_STATUS_SUCCESS) << what << ": cuBLASLt: " << c.cublasLtGetStatusString(s);
}

cublasLtHandle_t handle(CublasLt& c) {
  std::lock_guard lock(c.mutex);
  if (!c.handle) {
    cuda_device(); // the primary context current on this thread
    check(c, c.cublasLtCreate(&c.handle), "creating the cuBLASLt handle");
  }
  return c.handle;
}

// A column-major layout of `rows` x `cols` with leading dimension `ld`, `batch` of them
// `stride` elements apart.
cublasLtMatrixLayout_t layout(CublasLt& c, cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld,
                              int64_t batch, int64_t stride, const std::string& what) {
  cublasLtMatrixLayout_t l = nullptr;
  check(c, c.cublasLtMatrixLayoutCreate(&l, t, uint64_t(rows), uint64_t(cols), ld), what);
  const int32_t count = int32_t(batch);
  check(c,
        c.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                           sizeof(count)),
        what);
  check(c,
        c.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                           sizeof(stride)),
        what);
  return l;
}

} // namespace

bool cublaslt_available() {
  return cublaslt().error.empty();
}

std::string cublaslt_unavailable_reason() {
  return cublaslt().error;
}

struct CublasLtConv::Plan {
  CublasLt* c = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t x = nullptr, w = nullptr, y = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  std::string what, name;

  ~Plan() {
    if (x) c->cublasLtMatrixLayoutDestroy(x);
    if (w) c->cublasLtMatrixLayoutDestroy(w);
    if (y) c->cublasLtMatrixLayoutDestroy(y);
    if (op) c->cublasLtMatmulDescDestroy(op);
  }
};

CublasLtConv::CublasLtConv(const kernels::Conv2dShape& s, DType dtype)
    : plan_(std::make_unique<Plan>()) {
  Plan& p = *plan_;
  p.what = shape_text(s, dtype);
  CublasLt& c = cublaslt();
  VTC_CHECK(c.error.empty()) << p.what << ": " << c.error;
  VTC_CHECK(dtype == DType::f16 || dtype == DType::bf16)
      << p.what << ": cuBLASLt runs f16 and bf16 convolutions here";
  VTC_CHECK(cublaslt_conv_fits(s)) << p.what << ": not a product cuBLASLt runs here";
  p.c = &c;
  cublasLtHandle_t h = handle(c);
  const cudaDataType_t t = dtype == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  // Column-major, image by image: y' [hw, c_out] = x' [hw, c_in] . w' [c_in, c_out], where
  // x' is x's [c_in, hw] rows read as columns (and so for w and y).
  const int64_t hw = s.h * s.w;
  p.x = layout(c, t, hw, s.c_in, hw, s.n, hw * s.c_in, p.what + " (input)");
  p.w = layout(c, t, s.c_in, s.c_out, s.c_in, s.n, 0, p.what + " (weights)");
  p.y = layout(c, t, hw, s.c_out, hw, s.n, hw * s.c_out, p.what + " (output)");
  check(c, c.cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), p.what);

  cublasLtMatmulPreference_t pref = nullptr;
  check(c, c.cublasLtMatmulPreferenceCreate(&pref), p.what);
  const uint64_t limit = kCublasLtWorkspaceLimit;
  const uint32_t aligned = 16;
  cublasStatus_t st = c.cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit));
  for (cublasLtMatmulPreferenceAttributes_t a :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (st == CUBLAS_STATUS_SUCCESS)
      st = c.cublasLtMatmulPreferenceSetAttribute(pref, a, &aligned, sizeof(aligned));
  cublasLtMatmulHeuristicResult_t found{};
  int returned = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = c.cublasLtMatmulAlgoGetHeuristic(h, p.op, p.x, p.w, p.y, p.y, pref, 1, &found, &returned);
  c.cublasLtMatmulPreferenceDestroy(pref);
  check(c, st, p.what + " (choosing the algorithm)");
  VTC_CHECK(returned > 0 && found.state == CUBLAS_STATUS_SUCCESS &&
            found.workspaceSize <= kCublasLtWorkspaceLimit)
      << p.what << ": cuBLASLt has no algorithm for it within " << (kCublasLtWorkspaceLimit >> 20)
      << " MiB of workspace";
  p.algo = found.algo;
  p.workspace = found.workspaceSize;
  int32_t id = -1, tile = -1, split = -1;
  size_t written = 0;
  c.cublasLtMatmulAlgoConfigGetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id),
                                         &written);
  c.cublasLtMatmulAlgoConfigGetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile),
                                         &written);
  c.cublasLtMatmulAlgoConfigGetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split,
                                         sizeof(split), &written);
  p.name = "cuBLASLt algorithm " + std::to_string(id) + ", tile " + std::to_string(tile) +
           ", split-K " + std::to_string(split);
}

CublasLtConv::~CublasLtConv() = default;

size_t CublasLtConv::workspace_bytes() const {
  return plan_->workspace;
}

std::string CublasLtConv::algorithm() const {
  return plan_->name;
}

void CublasLtConv::run(CUstream stream, CUdeviceptr x, CUdeviceptr w, CUdeviceptr y,
                       CUdeviceptr workspace) const {
  const Plan& p = *plan_;
  VTC_CHECK((x | w | y) % 16 == 0) << p.what << ": operands not 16-byte aligned";
  const float one = 1.0f, zero = 0.0f;
  auto ptr = [](CUdeviceptr a) { return reinterpret_cast<void*>(uintptr_t(a)); };
  check(*p.c,
        p.c->cublasLtMatmul(p.c->handle, p.op, &one, ptr(x), p.x, ptr(w), p.w, &zero, ptr(y), p.y,
                            ptr(y), p.y, &p.algo, ptr(workspace), p.workspace,
                            reinterpret_cast<cudaStream_t>(stream)),
        p.what);
}

#else // !VTC_HAS_CUBLASLT

bool cublaslt_available() {
  return false;
}

std::string cublaslt_unavailable_reason() {
  return "vtc was built without cuBLASLt's headers (<cublasLt.h>)";
}

struct CublasLtConv::Plan {};

CublasLtConv::CublasLtConv(const kernels::Conv2dShape& s, DType dtype) {
  VTC_FAIL() << shape_text(s, dtype) << ": " << cublaslt_unavailable_reason();
}
CublasLtConv::~CublasLtConv() = default;
size_t CublasLtConv::workspace_bytes() const {
  return 0;
}
std::string CublasLtConv::algorithm() const {
  return "";
}
void CublasLtConv::run(CUstream, CUdeviceptr, CUdeviceptr, CUdeviceptr, CUdeviceptr) const {}

#endif

} // namespace vtc::device
