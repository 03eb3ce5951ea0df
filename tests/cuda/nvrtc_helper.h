// A small NVRTC driver for the cuda kernel tests: CUDA C++ source -> cubin for one
// architecture, with the options the cuda target compiles with (C++20, -default-device, the
// repository root and CCCL on the include path). Local to the tests until the jit's own NVRTC
// compiler exists.
#pragma once

#include <string>
#include <vector>

namespace vtc::cuda_test {

struct NvrtcResult {
  bool ok = false;
  std::string log;         // NVRTC's log (errors and warnings)
  std::vector<char> cubin; // when ok
  double seconds = 0;      // compile time
};

struct NvrtcOptions {
  std::string arch = "sm_90a";
  std::vector<std::string> include_dirs; // -I each
  std::vector<std::string> extra;        // further options
};

// The include directories the tests compile with: the source tree (kernels/..., tests/cuda)
// and CCCL from the toolkit.
NvrtcOptions default_nvrtc_options();

NvrtcResult compile_cubin(const std::string& source, const std::string& name,
                          const NvrtcOptions& options);

} // namespace vtc::cuda_test
