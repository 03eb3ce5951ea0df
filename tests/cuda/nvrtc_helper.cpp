#include "nvrtc_helper.h"

#include <chrono>

#include <nvrtc.h>

namespace vtc::cuda_test {

NvrtcOptions default_nvrtc_options() {
  NvrtcOptions o;
  o.include_dirs = {VTC_SOURCE_DIR, std::string(VTC_SOURCE_DIR) + "/tests/cuda",
                    std::string(VTC_CUDA_INCLUDE_DIR) + "/cccl"};
  return o;
}

NvrtcResult compile_cubin(const std::string& source, const std::string& name,
                          const NvrtcOptions& options) {
  NvrtcResult r;
  const auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram prog = nullptr;
  if (nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr) !=
      NVRTC_SUCCESS) {
    r.log = "nvrtcCreateProgram failed";
    return r;
  }
  std::vector<std::string> opts = {"-std=c++20", "-default-device",
                                   "--gpu-architecture=" + options.arch};
  for (const std::string& d : options.include_dirs)
    opts.push_back("-I" + d);
  opts.insert(opts.end(), options.extra.begin(), options.extra.end());
  std::vector<const char*> argv;
  for (const std::string& o : opts)
    argv.push_back(o.c_str());
  const nvrtcResult res = nvrtcCompileProgram(prog, int(argv.size()), argv.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  r.log.assign(log_size, '\0');
  if (log_size > 0) nvrtcGetProgramLog(prog, r.log.data());
  while (!r.log.empty() && (r.log.back() == '\0' || r.log.back() == '\n'))
    r.log.pop_back();
  if (res == NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetCUBINSize(prog, &n);
    r.cubin.resize(n);
    nvrtcGetCUBIN(prog, r.cubin.data());
    r.ok = n > 0;
    if (!r.ok) r.log += "\nno cubin (is the architecture a real one, sm_XX?)";
  } else {
    r.log = std::string(nvrtcGetErrorString(res)) + "\n" + r.log;
  }
  nvrtcDestroyProgram(&prog);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

} // namespace vtc::cuda_test
