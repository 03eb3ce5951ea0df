// cuda_device(): cuInit once, then each device queried and its primary context retained on its
// first use, under one mutex; DeviceInfo lives in a map of unique_ptrs so that references to it
// stay valid as other devices are added.
#include "device/cuda_device.h"

#include <map>
#include <memory>
#include <mutex>

#include "vtc/error.h"

namespace vtc::device {

std::string cuda_arch(int cc_major, int cc_minor) {
  std::string arch = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  if (cc_minor == 0 && (cc_major == 9 || cc_major == 10)) arch += "a";
  return arch;
}

std::string DeviceInfo::arch() const {
  return cuda_arch(cc_major, cc_minor);
}

#if VTC_HAS_CUDA_DRIVER

namespace {

DeviceInfo query_device(const CudaDriver& d, int ordinal) {
  DeviceInfo info;
  info.ordinal = ordinal;
  info.driver_version = d.version;
  const std::string where = "target cuda: device " + std::to_string(ordinal) + ": ";
  check(d.cuDeviceGet(&info.device, ordinal), where + "cuDeviceGet");
  char name[256] = {};
  check(d.cuDeviceGetName(name, static_cast<int>(sizeof name) - 1, info.device),
        where + "cuDeviceGetName");
  info.name = name;
  auto attribute = [&](CUdevice_attribute a, const char* what) {
    int value = 0;
    check(d.cuDeviceGetAttribute(&value, a, info.device),
          where + "cuDeviceGetAttribute(" + what + ")");
    return value;
  };
  info.cc_major =
      attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR");
  info.cc_minor =
      attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR");
  info.sm_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT");
  info.max_shared_per_block_optin = static_cast<size_t>(attribute(
      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"));
  size_t total = 0;
  check(d.cuDeviceTotalMem(&total, info.device), where + "cuDeviceTotalMem");
  info.total_memory = static_cast<int64_t>(total);
  check(d.cuDevicePrimaryCtxRetain(&info.context, info.device), where + "cuDevicePrimaryCtxRetain");
  return info;
}

} // namespace

void DeviceInfo::make_current() const {
  check(cuda_driver().cuCtxSetCurrent(context),
        "target cuda: device " + std::to_string(ordinal) + ": cuCtxSetCurrent");
}

const DeviceInfo& cuda_device(int ordinal) {
  static std::mutex mutex;
  static int count = 0; // devices, once cuInit succeeded
  static std::map<int, std::unique_ptr<const DeviceInfo>> devices;
  const CudaDriver& d = cuda_driver();
  const DeviceInfo* info = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (count == 0) count = init_cuda(d);
    VTC_CHECK(ordinal >= 0 && ordinal < count)
        << "target cuda: no CUDA device " << ordinal << " (the driver counts " << count << ")";
    auto it = devices.find(ordinal);
    if (it == devices.end())
      it = devices.emplace(ordinal, std::make_unique<const DeviceInfo>(query_device(d, ordinal)))
               .first;
    info = it->second.get();
  }
  info->make_current();
  return *info;
}

#else // !VTC_HAS_CUDA_DRIVER

void DeviceInfo::make_current() const {
  no_cuda_toolkit();
}
const DeviceInfo& cuda_device(int) {
  no_cuda_toolkit();
}

#endif

} // namespace vtc::device
