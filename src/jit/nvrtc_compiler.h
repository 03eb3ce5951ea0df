// CUDA C++ → PTX or cubin with NVRTC, in process, through an on-disk cache: the compiler of the
// cuda target, whose generated code includes the kernel headers of kernels/common (and, later,
// kernels/cuda) and is compiled for one architecture at run time.
//
// A cache entry for key K (nvrtc_cache_key: the source, the kernel headers it includes, the
// architecture, the flags, the NVRTC version and the driver the code is for) is, in
// NvrtcOptions::cache_dir:
//   K.cu            the source (named in compile errors; the program name NVRTC reports)
//   K.cubin / K.ptx the code
//   K.ok            the SHA-256 of the code's bytes, written last: an entry is valid only when
//                   it matches, so a truncated or half-written entry is rebuilt, never used
//   K.log           the full NVRTC log, written when compilation fails
// with every file written atomically, as host_compiler's entries are (cache_files.h).
//
// NVRTC is part of vtc only where CMake found the CUDA toolkit (VTC_HAS_NVRTC); elsewhere
// nvrtc_available() is false and everything else throws vtc::Error saying so.
#pragma once

#include <string>
#include <vector>

#include "jit/compile_options.h"

namespace vtc::jit {

// Was vtc built with NVRTC?
bool nvrtc_available();

// NVRTC's version, "13.0" (nvrtcVersion).
std::string nvrtc_version();

// The include directories every NVRTC compile gets after NvrtcOptions::include_dirs: CCCL's
// (cuda::std, found under the CUDA toolkit when vtc was configured) and the toolkit's own.
std::vector<std::string> nvrtc_toolkit_include_dirs();

// -std=c++20 -default-device (every function a device function unless marked otherwise).
std::vector<std::string> default_nvrtc_flags();

enum class GpuCode { ptx, cubin };

struct NvrtcOptions {
  // The architecture: a cubin is SASS for it as given ("sm_90a": Hopper with wgmma and TMA);
  // PTX is for its virtual form ("compute_90a"). Either spelling may be given.
  std::string arch = "sm_90a";
  // Passed to NVRTC before the include directories.
  std::vector<std::string> flags = default_nvrtc_flags();
  // --include-path directories (the kernel headers). Every header the source includes from
  // them, directly or not, is part of the cache key; the toolkit's headers are covered by the
  // NVRTC version.
  std::vector<std::string> include_dirs;
  // The CUDA driver the code will be loaded by (cuDriverGetVersion; 0 when not known), part of
  // the cache key: a driver upgrade can change how PTX is compiled and what a cubin may use.
  int driver_version = 0;
  // Where K.cu, K.cubin or K.ptx, K.ok and K.log live; created when missing.
  std::string cache_dir = default_cache_dir();
  // Progress on stderr: "compiling <n> lines of CUDA C++ with NVRTC ... done in X s", "(cached)".
  bool verbose = false;
};

struct GpuObject {
  std::string key;         // the cache key (64 hex digits)
  std::string code;        // the PTX text or the cubin's bytes
  std::string code_path;   // <cache_dir>/<key>.cubin or .ptx
  std::string source_path; // <cache_dir>/<key>.cu
  std::string log;         // NVRTC's log (warnings) when it ran; empty when cached
  bool cached = false;     // true when a valid entry was found and NVRTC did not run
  double seconds = 0;      // time spent in NVRTC (0 when cached)
};

// The 64-hex-digit key of `source` compiled to `code` with `options`.
std::string nvrtc_cache_key(const std::string& source, GpuCode code, const NvrtcOptions& options);

// Compiles `source` unless a valid cache entry exists. Throws vtc::Error when the cache
// directory cannot be created or written (naming it), and when compilation fails: one line
// naming K.cu and quoting the first error of NVRTC's log, whose whole text is in K.log.
GpuObject nvrtc_compile(const std::string& source, GpuCode code, const NvrtcOptions& options);

} // namespace vtc::jit
