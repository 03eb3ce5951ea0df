// Generated code under AddressSanitizer and UndefinedBehaviorSanitizer (CompileOptions::sanitize):
// the flags it is compiled with, and the check that this process can load it. A shared object
// built with -fsanitize=address needs the ASan runtime to be the process's first library:
// either vtc itself is built with the sanitizers (cmake -DVTC_SANITIZE=ON), or the runtime the
// JIT's compiler links is preloaded (LD_PRELOAD=$(c++ -print-file-name=libasan.so)). Loaded into
// any other process, the object's ASan initialiser would end the process from inside dlopen, so
// vtc checks before it compiles and throws instead.
#pragma once

#include <string>
#include <vector>

namespace vtc::jit {

// -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -O0 -g1,
// appended after CompileOptions::flags (the later -O wins).
std::vector<std::string> sanitizer_flags();

// Whether the ASan runtime is loaded in this process (its interface is visible to dlsym).
bool asan_runtime_loaded();

// Throws vtc::Error, saying how to run vtc under the sanitizers, unless asan_runtime_loaded().
void check_sanitizer_runtime();

} // namespace vtc::jit
