// The CUDA driver API, loaded at run time: libcuda.so.1 is opened with dlopen the first time the
// cuda target asks for it and each driver function is resolved through cuGetProcAddress, so that
// vtc builds and runs where there is no driver (every cpu test; `--target cuda` then fails with
// one line). <cuda.h> is included for its types only; vtc never links libcuda.
//
// Each function is asked for at the CUDA version whose form the toolkit's <cuda.h> gives its
// plain name, and typed by the matching PFN_ typedef of <cudaTypedefs.h>: cuMemAlloc at 3020
// (cuMemAlloc_v2), cuEventElapsedTime at 12080 (its _v2). Asking for everything at CUDA_VERSION
// would be wrong: CUDA 13's cuGetProcAddress answers "cuCtxSynchronize" at 13000 with
// cuCtxSynchronize_v2(CUcontext), while <cuda.h> keeps the plain name for the old form (2000).
// The driver must support the toolkit's CUDA version at least: NVRTC's code and these entry
// points are those of the toolkit vtc was built with.
//
// Without the CUDA toolkit (VTC_HAS_CUDA_DRIVER 0) the driver's handle types are declared here
// as opaque pointers, CudaDriver has no functions, and every entry point throws vtc::Error
// "target cuda: vtc was built without the CUDA toolkit".
#pragma once

#include <string>
#include <string_view>

#ifndef VTC_HAS_CUDA_DRIVER
#define VTC_HAS_CUDA_DRIVER 0
#endif

#if VTC_HAS_CUDA_DRIVER
#include <cuda.h>
#include <cudaTypedefs.h>
#else
// The handles that the device layer's declarations name, so that code passing them along builds
// without the toolkit; nothing can make one.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
#endif

namespace vtc::device {

#if VTC_HAS_CUDA_DRIVER
// X(name, version): every function CudaDriver holds, asked for at `version`, its type
// PFN_<name>_v<version>. cuGetErrorName and cuGetErrorString come first, so that a later
// failure can be described.
#if CUDA_VERSION >= 12080
#define VTC_CUDA_EVENT_ELAPSED_TIME(X) X(cuEventElapsedTime, 12080)
#else
#define VTC_CUDA_EVENT_ELAPSED_TIME(X) X(cuEventElapsedTime, 2000)
#endif
#define VTC_CUDA_DRIVER_FUNCTIONS(X)                                                               \
  X(cuGetErrorName, 6000)                                                                          \
  X(cuGetErrorString, 6000)                                                                        \
  X(cuInit, 2000)                                                                                  \
  X(cuDriverGetVersion, 2020)                                                                      \
  X(cuDeviceGetCount, 2000)                                                                        \
  X(cuDeviceGet, 2000)                                                                             \
  X(cuDeviceGetName, 2000)                                                                         \
  X(cuDeviceGetAttribute, 2000)                                                                    \
  X(cuDeviceTotalMem, 3020)                                                                        \
  X(cuDevicePrimaryCtxRetain, 7000)                                                                \
  X(cuDevicePrimaryCtxRelease, 11000)                                                              \
  X(cuCtxSetCurrent, 4000)                                                                         \
  X(cuCtxSynchronize, 2000)                                                                        \
  X(cuModuleLoadData, 2000)                                                                        \
  X(cuModuleUnload, 2000)                                                                          \
  X(cuModuleGetFunction, 2000)                                                                     \
  X(cuModuleGetGlobal, 3020)                                                                       \
  X(cuFuncSetAttribute, 9000)                                                                      \
  X(cuFuncGetAttribute, 2020)                                                                      \
  X(cuMemAlloc, 3020)                                                                              \
  X(cuMemFree, 3020)                                                                               \
  X(cuMemcpyHtoD, 3020)                                                                            \
  X(cuMemcpyDtoH, 3020)                                                                            \
  X(cuMemcpyDtoD, 3020)                                                                            \
  X(cuMemcpyHtoDAsync, 3020)                                                                       \
  X(cuMemcpyDtoHAsync, 3020)                                                                       \
  X(cuMemcpyDtoDAsync, 3020)                                                                       \
  X(cuMemsetD8, 3020)                                                                              \
  X(cuMemsetD8Async, 3020)                                                                         \
  X(cuMemGetInfo, 3020)                                                                            \
  X(cuMemHostAlloc, 2020)                                                                          \
  X(cuMemHostGetDevicePointer, 3020)                                                               \
  X(cuMemFreeHost, 2000)                                                                           \
  X(cuPointerGetAttribute, 4000)                                                                   \
  X(cuPointerGetAttributes, 7000)                                                                  \
  X(cuLaunchKernel, 4000)                                                                          \
  X(cuStreamCreate, 2000)                                                                          \
  X(cuStreamDestroy, 4000)                                                                         \
  X(cuStreamSynchronize, 2000)                                                                     \
  X(cuStreamBeginCapture, 10010)                                                                   \
  X(cuStreamEndCapture, 10000)                                                                     \
  X(cuGraphInstantiateWithFlags, 11040)                                                            \
  X(cuGraphLaunch, 10000)                                                                          \
  X(cuGraphDestroy, 10000)                                                                         \
  X(cuGraphExecDestroy, 10000)                                                                     \
  X(cuEventCreate, 2000)                                                                           \
  X(cuEventDestroy, 4000)                                                                          \
  X(cuEventRecord, 2000)                                                                           \
  X(cuEventRecordWithFlags, 11010)                                                                 \
  X(cuEventSynchronize, 2000)                                                                      \
  VTC_CUDA_EVENT_ELAPSED_TIME(X)

// Functions a driver may lack; their pointers are then null.
#define VTC_CUDA_OPTIONAL_DRIVER_FUNCTIONS(X) X(cuModuleLoadDataEx, 2010) X(cuLaunchKernelEx, 11060)
#endif

// The loaded driver: one typed pointer per function, named as <cuda.h> names it, so that
// `driver.cuMemAlloc(&p, n)` reads like the API (a name <cuda.h> defines as a macro, cuMemAlloc
// → cuMemAlloc_v2, names the member and its uses alike).
struct CudaDriver {
  std::string library; // the path dlopen was given
  int version = 0;     // cuDriverGetVersion: 13000 for CUDA 13.0
#if VTC_HAS_CUDA_DRIVER
#define VTC_CUDA_DRIVER_MEMBER(name, version) PFN_##name##_v##version name = nullptr;
  VTC_CUDA_DRIVER_FUNCTIONS(VTC_CUDA_DRIVER_MEMBER)
  VTC_CUDA_OPTIONAL_DRIVER_FUNCTIONS(VTC_CUDA_DRIVER_MEMBER)
#undef VTC_CUDA_DRIVER_MEMBER
#endif

  // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; "CUDA error 2" where the driver cannot name it.
  std::string error_text(CUresult r) const;
};

// The driver of this machine, libcuda.so.1, loaded and resolved on the first call (once, whichever
// thread calls first; a failure is remembered and thrown again). Throws vtc::Error, one line:
//   "target cuda: no CUDA driver on this machine (libcuda.so.1: cannot open shared object ...)"
//   "target cuda: the CUDA driver supports CUDA 12.4, vtc was built with the CUDA 13.0 toolkit;
//    update the driver"
//   "target cuda: the CUDA 13.0 driver has no cuLaunchKernel (cuGetProcAddress: ...)"
const CudaDriver& cuda_driver();

// Loads and resolves the driver at `library` (a name dlopen searches for, or a path): what
// cuda_driver() does once with "libcuda.so.1", throwing the same errors. The library stays loaded
// for the life of the process once this succeeds.
CudaDriver load_cuda_driver(const std::string& library);

// cuInit(0) and the number of devices, at least one. Throws "target cuda: no CUDA device
// (cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected))" when cuInit fails and
// "target cuda: no CUDA device (the driver counts 0)" when there is none.
int init_cuda(const CudaDriver& driver);

// Throws vtc::Error "<what>: CUDA_ERROR_X (description)" unless r is CUDA_SUCCESS (with the names
// of cuda_driver(), or "CUDA error <r>" where it is not loaded).
void check(CUresult r, std::string_view what);

// A CUDA version as cuDriverGetVersion and CUDA_VERSION give it, 12040, as text: "12.4".
std::string cuda_version_text(int version);

// CUDA_VERSION of the toolkit vtc was built with (13000); 0 without one.
int cuda_toolkit_version();

#if !VTC_HAS_CUDA_DRIVER
// Throws "target cuda: vtc was built without the CUDA toolkit": every entry point of the device
// layer, in a build without it.
[[noreturn]] void no_cuda_toolkit();
#endif

} // namespace vtc::device
