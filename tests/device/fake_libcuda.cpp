// A stand-in for libcuda.so.1, built in variants (tests/device/CMakeLists.txt), for testing how
// the device layer loads a driver and what it says when it cannot, on machines without one. It
// reports FAKE_DRIVER_VERSION, hands out functions through cuGetProcAddress_v2 (all but
// FAKE_OMIT; none at all with FAKE_NO_PROC_ADDRESS, as a driver older than CUDA 12) and records
// the version and flags each was asked for; cuInit returns FAKE_INIT_RESULT and cuDeviceGetCount
// FAKE_DEVICE_COUNT. The functions a test does not call are one stub that fails.
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include <cuda.h>

#ifndef FAKE_DRIVER_VERSION
#define FAKE_DRIVER_VERSION CUDA_VERSION
#endif
#ifndef FAKE_INIT_RESULT
#define FAKE_INIT_RESULT CUDA_SUCCESS
#endif
#ifndef FAKE_DEVICE_COUNT
#define FAKE_DEVICE_COUNT 1
#endif
#ifndef FAKE_OMIT
#define FAKE_OMIT ""
#endif
#ifndef FAKE_NO_PROC_ADDRESS
#define FAKE_NO_PROC_ADDRESS 0
#endif

namespace {

#if !FAKE_NO_PROC_ADDRESS
std::map<std::string, std::pair<int, cuuint64_t>>& requests() {
  static std::map<std::string, std::pair<int, cuuint64_t>> r;
  return r;
}

struct ErrorInfo {
  CUresult code;
  const char* name;
  const char* description;
};
const ErrorInfo kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
};

CUresult fake_get_error_name(CUresult r, const char** s) {
  for (const ErrorInfo& e : kErrors)
    if (e.code == r) return *s = e.name, CUDA_SUCCESS;
  *s = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_get_error_string(CUresult r, const char** s) {
  for (const ErrorInfo& e : kErrors)
    if (e.code == r) return *s = e.description, CUDA_SUCCESS;
  *s = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_init(unsigned) {
  return FAKE_INIT_RESULT;
}

CUresult fake_device_get_count(int* n) {
  *n = FAKE_DEVICE_COUNT;
  return CUDA_SUCCESS;
}

CUresult fake_unimplemented() {
  return CUDA_ERROR_NOT_SUPPORTED;
}
#endif

} // namespace

extern "C" {

CUresult cuDriverGetVersion(int* version) {
  *version = FAKE_DRIVER_VERSION;
  return CUDA_SUCCESS;
}

#if !FAKE_NO_PROC_ADDRESS
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  requests()[symbol] = {cuda_version, flags};
  *pfn = nullptr;
  if (std::strcmp(symbol, FAKE_OMIT) == 0) {
    if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  }
  if (cuda_version > FAKE_DRIVER_VERSION) {
    if (status) *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return CUDA_ERROR_NOT_FOUND;
  }
  const std::pair<const char*, void*> known[] = {
      {"cuGetErrorName", reinterpret_cast<void*>(&fake_get_error_name)},
      {"cuGetErrorString", reinterpret_cast<void*>(&fake_get_error_string)},
      {"cuInit", reinterpret_cast<void*>(&fake_init)},
      {"cuDriverGetVersion", reinterpret_cast<void*>(&cuDriverGetVersion)},
      {"cuDeviceGetCount", reinterpret_cast<void*>(&fake_device_get_count)},
  };
  *pfn = reinterpret_cast<void*>(&fake_unimplemented);
  for (const auto& [name, fn] : known)
    if (std::strcmp(symbol, name) == 0) *pfn = fn;
  if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

// The version `symbol` was last asked for at, or -1; and the flags it was asked with.
int fake_cuda_requested_version(const char* symbol) {
  auto it = requests().find(symbol);
  return it == requests().end() ? -1 : it->second.first;
}
unsigned long long fake_cuda_requested_flags(const char* symbol) {
  auto it = requests().find(symbol);
  return it == requests().end() ? ~0ull : it->second.second;
}
#endif

} // extern "C"
