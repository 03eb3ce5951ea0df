// Loading libcuda: dlopen, the driver's version against the toolkit's, then every function of
// VTC_CUDA_DRIVER_FUNCTIONS through cuGetProcAddress_v2 (the one symbol taken with dlsym, with
// cuDriverGetVersion, whose form has not changed since CUDA 2.2, to say how old a driver without
// it is). Without VTC_HAS_CUDA_DRIVER every entry point throws.
#include "device/cuda_driver.h"

#include <dlfcn.h>
#include <utility>

#include "vtc/error.h"

namespace vtc::device {

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

#if VTC_HAS_CUDA_DRIVER

namespace {

const char* const kNoDriver = "target cuda: no CUDA driver on this machine";

struct LoadedDriver {
  CudaDriver driver;
  std::string error; // empty when the driver loaded
};

const LoadedDriver& loaded_driver() {
  static const LoadedDriver loaded = [] {
    LoadedDriver l;
    try {
      l.driver = load_cuda_driver("libcuda.so.1");
    } catch (const Error& e) {
      l.error = e.what();
    }
    return l;
  }();
  return loaded;
}

// dlopen's handle, closed unless released (a driver that failed to load is not kept).
struct LibraryHandle {
  void* handle = nullptr;
  ~LibraryHandle() {
    if (handle) dlclose(handle);
  }
  void* release() { return std::exchange(handle, nullptr); }
};

} // namespace

std::string CudaDriver::error_text(CUresult r) const {
  const char* name = nullptr;
  const char* description = nullptr;
  if (cuGetErrorName) cuGetErrorName(r, &name);
  if (cuGetErrorString) cuGetErrorString(r, &description);
  if (!name) return "CUDA error " + std::to_string(static_cast<int>(r));
  std::string text = name;
  if (description) text += std::string(" (") + description + ")";
  return text;
}

CudaDriver load_cuda_driver(const std::string& library) {
  dlerror();
  LibraryHandle lib{dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL)};
  if (!lib.handle) {
    // dlerror() usually begins with the library's name already.
    const char* e = dlerror();
    std::string why = e ? e : "not loadable";
    if (why.rfind(library, 0) != 0) why = library + ": " + why;
    VTC_FAIL() << kNoDriver << " (" << why << ")";
  }
  auto get_version =
      reinterpret_cast<PFN_cuDriverGetVersion_v2020>(dlsym(lib.handle, "cuDriverGetVersion"));
  VTC_CHECK(get_version) << kNoDriver << " (" << library
                         << " is not a CUDA driver: it has no cuDriverGetVersion)";
  CudaDriver d;
  d.library = library;
  CUresult r = get_version(&d.version);
  VTC_CHECK(r == CUDA_SUCCESS) << kNoDriver << " (" << library
                               << ": cuDriverGetVersion: CUDA error " << static_cast<int>(r) << ")";
  VTC_CHECK(d.version >= CUDA_VERSION)
      << "target cuda: the CUDA driver supports CUDA " << cuda_version_text(d.version)
      << ", vtc was built with the CUDA " << cuda_version_text(CUDA_VERSION)
      << " toolkit; update the driver";
  auto get_proc =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(lib.handle, "cuGetProcAddress_v2"));
  VTC_CHECK(get_proc) << "target cuda: the CUDA " << cuda_version_text(d.version)
                      << " driver has no cuGetProcAddress_v2";

  // Each function at the version its PFN_ type is for, in the legacy default-stream form (the
  // stream 0 of these calls is the legacy default stream, as it is for code linking libcuda).
  auto resolve = [&](const char* name, int version, void** fn, bool optional) {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = get_proc(name, fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
    if (r == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS && *fn) return;
    *fn = nullptr;
    if (optional) return;
    std::string why = r != CUDA_SUCCESS ? d.error_text(r) : "no function returned";
    if (status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)
      why += ", not at CUDA " + cuda_version_text(version);
    VTC_FAIL() << "target cuda: the CUDA " << cuda_version_text(d.version) << " driver has no "
               << name << " (cuGetProcAddress: " << why << ")";
  };
#define VTC_RESOLVE(name, version)                                                                 \
  resolve(#name, version, reinterpret_cast<void**>(&d.name), false);
  VTC_CUDA_DRIVER_FUNCTIONS(VTC_RESOLVE)
#undef VTC_RESOLVE
#define VTC_RESOLVE(name, version) resolve(#name, version, reinterpret_cast<void**>(&d.name), true);
  VTC_CUDA_OPTIONAL_DRIVER_FUNCTIONS(VTC_RESOLVE)
#undef VTC_RESOLVE
  lib.release();
  return d;
}

const CudaDriver& cuda_driver() {
  const LoadedDriver& l = loaded_driver();
  if (!l.error.empty()) throw Error(l.error);
  return l.driver;
}

int init_cuda(const CudaDriver& driver) {
  CUresult r = driver.cuInit(0);
  VTC_CHECK(r == CUDA_SUCCESS) << "target cuda: no CUDA device (cuInit: " << driver.error_text(r)
                               << ")";
  int count = 0;
  r = driver.cuDeviceGetCount(&count);
  VTC_CHECK(r == CUDA_SUCCESS) << "target cuda: no CUDA device (cuDeviceGetCount: "
                               << driver.error_text(r) << ")";
  VTC_CHECK(count > 0) << "target cuda: no CUDA device (the driver counts 0)";
  return count;
}

void check(CUresult r, std::string_view what) {
  if (r == CUDA_SUCCESS) return;
  const LoadedDriver& l = loaded_driver();
  std::string text = l.error.empty() ? l.driver.error_text(r)
                                     : "CUDA error " + std::to_string(static_cast<int>(r));
  VTC_FAIL() << what << ": " << text;
}

int cuda_toolkit_version() {
  return CUDA_VERSION;
}

#else // !VTC_HAS_CUDA_DRIVER

void no_cuda_toolkit() {
  VTC_FAIL() << "target cuda: vtc was built without the CUDA toolkit";
}

std::string CudaDriver::error_text(CUresult r) const {
  return "CUDA error " + std::to_string(r);
}
const CudaDriver& cuda_driver() {
  no_cuda_toolkit();
}
CudaDriver load_cuda_driver(const std::string&) {
  no_cuda_toolkit();
}
int init_cuda(const CudaDriver&) {
  no_cuda_toolkit();
}
void check(CUresult r, std::string_view what) {
  if (r != 0) VTC_FAIL() << what << ": CUDA error " << r;
}
int cuda_toolkit_version() {
  return 0;
}

#endif

} // namespace vtc::device
