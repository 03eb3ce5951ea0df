// The GPU the cuda target runs on: what vtc needs to know of it (name, compute capability and the
// NVRTC architecture it gives, SMs, memory, the opt-in shared memory limit) and its primary
// context, retained on first use and kept for the life of the process (releasing it at exit
// would race the driver's own teardown). Driver calls act on the calling thread's current
// context: cuda_device() makes the device's current on the thread that calls it, and
// DeviceInfo::make_current() does so on any other before it calls the driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "device/cuda_driver.h"

namespace vtc::device {

struct DeviceInfo {
  int ordinal = 0;
  std::string name; // "NVIDIA H200"
  int cc_major = 0; // compute capability 9.0: cc_major 9, cc_minor 0
  int cc_minor = 0;
  int sm_count = 0;
  int driver_version = 0; // cuDriverGetVersion: 13000 for CUDA 13.0
  int64_t total_memory = 0;
  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: the most shared memory one block can
  // have, static and dynamic together, once a kernel raises its dynamic limit.
  size_t max_shared_per_block_optin = 0;
  CUdevice device = 0;
  CUcontext context = nullptr; // the primary context

  // The architecture NVRTC compiles for: cuda_arch(cc_major, cc_minor).
  std::string arch() const;
  // Makes the primary context current on the calling thread (cuCtxSetCurrent).
  void make_current() const;
};

// "sm_90a" for compute capability 9.0 and "sm_100a" for 10.0 (the arch-specific features:
// Hopper's wgmma and TMA, Blackwell's tcgen05), "sm_<major><minor>" otherwise ("sm_86").
std::string cuda_arch(int cc_major, int cc_minor);

// Device `ordinal`: on the first call (of any ordinal) loads the driver and calls cuInit; on the
// first of this ordinal queries it and retains its primary context; on every call makes that
// context current on the calling thread. Thread-safe; the reference stays valid for the life of
// the process. Throws vtc::Error, one line starting "target cuda:", where there is no driver or
// no device (cuda_driver(), init_cuda()) or no device `ordinal`.
const DeviceInfo& cuda_device(int ordinal = 0);

} // namespace vtc::device
