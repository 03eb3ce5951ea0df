// The sanitizer flags of generated code and the ASan-runtime check (see sanitizer.h).
#include "jit/sanitizer.h"

#include <dlfcn.h>

#include "vtc/error.h"

namespace vtc::jit {

std::vector<std::string> sanitizer_flags() {
  // -fno-sanitize-recover=all: the first UBSan finding ends the process as an ASan one does, so
  // a test run cannot pass over it. -O0 -g1: every load and store instrumented as written, with
  // file:line in the reports, and half the compile time of -O1 (a 2,800-line unit of the Llama
  // layer: 8.5 s against 18 s). The arithmetic is the same at every level (-ffp-contract=off
  // stays), so outputs stay bitwise equal between strategies.
  // -mno-avx512f (after -march=native): AddressSanitizer does not check AVX-512's masked loads
  // and stores, and the kernels' short runs and row tails are masked stores there, so an overrun
  // through them went unreported; the AVX2 paths use none.
  return {"-fsanitize=address,undefined",
          "-fno-sanitize-recover=all",
          "-fno-omit-frame-pointer",
          "-O0",
          "-g1",
          "-mno-avx512f"};
}

bool asan_runtime_loaded() {
  return dlsym(RTLD_DEFAULT, "__asan_init") != nullptr;
}

void check_sanitizer_runtime() {
  VTC_CHECK(asan_runtime_loaded())
      << "sanitize: generated code built with AddressSanitizer needs the ASan runtime loaded "
         "first: run vtc with LD_PRELOAD=$(c++ -print-file-name=libasan.so) (and "
         "ASAN_OPTIONS=detect_leaks=0), or build vtc with cmake -DVTC_SANITIZE=ON";
}

} // namespace vtc::jit
