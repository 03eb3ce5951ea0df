// The JIT's defaults, and the only place vtc's JIT reads environment variables.
#include "jit/compile_options.h"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include "jit/sanitizer.h"

namespace vtc::jit {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

} // namespace

std::string default_compiler() {
  std::string cxx = env("CXX");
  return cxx.empty() ? std::string("c++") : cxx;
}

std::string default_cache_dir() {
  namespace fs = std::filesystem;
  std::string xdg = env("XDG_CACHE_HOME");
  // The XDG base directory spec says relative paths are invalid and must be ignored.
  if (!xdg.empty() && fs::path(xdg).is_absolute()) return (fs::path(xdg) / "vtc").string();
  std::string home = env("HOME");
  if (!home.empty()) return (fs::path(home) / ".cache" / "vtc").string();
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return (tmp / ("vtc-cache-" + std::to_string(getuid()))).string();
}

std::string default_source_dir(const std::string& built_from) {
  std::string dir = env("VTC_SOURCE_DIR");
  return dir.empty() ? built_from : dir;
}

std::vector<std::string> default_compile_flags() {
  // -ffp-contract=off: arithmetic stays exactly as written (kernels call std::fma where they
  // mean it), so the same kernel gives the same bits whatever accessors it is inlined with —
  // what keeps every strategy bitwise identical. -fno-math-errno: the square root is the
  // instruction, which vectorises (std::sqrt setting errno kept Sqrt scalar at 8 GB/s in f32
  // against 16 without); no result changes. -O3 rather than -O2: -O2 with the dynamic
  // vectorisation cost model compiled 25-36 % faster cold (two cores: ShuffleNet V2 25.2 ->
  // 16.5 s, YOLO11n 49.4 -> 35.7, EfficientViT 39.8 -> 28.7, full size f32) but ran the Llama-3
  // layer 1.28x and EfficientViT 1.09x slower (medians of five alternated `vtc bench` runs).
  // -fno-trapping-math: no floating-point operation is taken to trap, so selects on float
  // comparisons (exp's range clamp and NaN test, a ReLU) are if-converted and their loops
  // vectorise; GCC 12 kept vmath.h's exp scalar without it (1.2 against 7.3 GB/s of copy on an
  // AVX2 host). The operations and their order are unchanged, so are the bits.
  // -fno-tree-slp-vectorize: GCC 12.2's straight-line vectoriser miscompiled a convolution with
  // a residual epilogue (1x1, stride 2, bias + Add + Relu, ResNet's downsample) when enough
  // other convolutions shared its translation unit: wrong values, no sanitizer report, right
  // at -O2, under clang and with the same kernel in a smaller unit. 24 of the 44 zoo models
  // failed `vtc check` through it (the unit split decides which); none with this flag. The
  // kernels' vector code is explicit (simd.h) and loops still vectorise.
  // -mprefer-vector-width=512 (x86-64): loops the compiler vectorises (fused epilogues, maps)
  // use the host's widest vectors; GCC's default for AVX-512 hosts is 256-bit, half of what
  // the kernels' own code uses. Best of four alternated rounds on two cores of an AVX-512 host:
  // EfficientNet 0.293 -> 0.274 ms, GPT-2 0.063 -> 0.055, MobileNetV2 0.337 -> 0.324, LRASPP
  // 0.401 -> 0.381. Lanes compute what they computed before: the bits do not change.
  return {
    "-O3", "-march=native",
#if defined(__x86_64__)
        "-mprefer-vector-width=512",
#endif
        "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math", "-fno-tree-slp-vectorize",
        "-fopenmp", "-std=c++20", "-shared", "-fPIC"
  };
}

std::string default_prebuilt_dir(const std::string& built_in) {
  const char* value = std::getenv("VTC_PREBUILT_DIR");
  return value ? std::string(value) : built_in;
}

bool default_sanitize() {
  std::string value = env("VTC_SANITIZE");
  return !value.empty() && value != "0";
}

std::vector<std::string> effective_flags(const CompileOptions& options) {
  std::vector<std::string> flags = options.flags;
  if (options.sanitize) {
    std::vector<std::string> more = sanitizer_flags();
    flags.insert(flags.end(), more.begin(), more.end());
  }
  return flags;
}

} // namespace vtc::jit
