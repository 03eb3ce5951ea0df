// How the JIT compiles generated host C++: which compiler, which flags, where the kernel
// templates are, where compiled shared objects are cached, whether under the sanitizers. The
// defaults come from the environment ($CXX, $XDG_CACHE_HOME, $HOME, $VTC_SANITIZE) in one place,
// compile_options.cpp, and nowhere else in vtc; the CLI and the API overwrite fields (e.g.
// --cache-dir) afterwards.
#pragma once

#include <string>
#include <vector>

namespace vtc::jit {

// $CXX when set and non-empty, else "c++".
std::string default_compiler();
// $XDG_CACHE_HOME/vtc when $XDG_CACHE_HOME is an absolute path, else $HOME/.cache/vtc when
// $HOME is set, else <system temp dir>/vtc-cache-<uid>.
std::string default_cache_dir();
// The vtc source tree whose kernels/ generated code includes: $VTC_SOURCE_DIR when set and
// non-empty (a binary run away from the tree it was built from), else `built_from`.
std::string default_source_dir(const std::string& built_from);
// -O3 -march=native [-mprefer-vector-width=512 on x86-64] -ffp-contract=off -fno-math-errno
// -fno-trapping-math -fno-tree-slp-vectorize -fopenmp -std=c++20 -shared -fPIC
std::vector<std::string> default_compile_flags();
// Whether $VTC_SANITIZE is set to anything but "" or "0".
bool default_sanitize();
// Where the objects vtc builds with itself lie (`vtc prebuild`): $VTC_PREBUILT_DIR when set
// (empty: none), else `built_in`.
std::string default_prebuilt_dir(const std::string& built_in);

struct CompileOptions {
  // The compiler command; split on whitespace, so a launcher such as "ccache g++" works.
  std::string compiler = default_compiler();
  // Passed to the compiler before the include directories; must produce a shared object.
  std::vector<std::string> flags = default_compile_flags();
  // Libraries the generated code calls, linked after the source as -l<name> (e.g. "openblas").
  std::vector<std::string> libraries;
  // Shared objects linked after the source, by absolute path: what the generated code declares
  // and does not define (explicit instantiations compiled once for many sources) comes from
  // them when it is loaded.
  std::vector<std::string> link_objects;
  // -I directories (the kernel templates, <repo>/kernels/cpu). Every header the source
  // includes from them, directly or not, is part of the cache key.
  std::vector<std::string> include_dirs;
  // Where <key>.so, <key>.cpp and <key>.ok live; created when missing.
  std::string cache_dir = default_cache_dir();
  // Read-only entries built with vtc itself (`vtc prebuild`: the kernel headers precompiled,
  // the GEMM engines' shared instances), used where they match and never written at run time;
  // empty: none. A model's first compile then starts without them to build.
  std::string prebuilt_dir;
  // Build the generated code with AddressSanitizer and UBSan (sanitizer.h): the flags become
  // effective_flags(), and the process must have the ASan runtime loaded. Executors then
  // allocate each buffer on its own, so an out-of-bounds access is reported (executor.h).
  bool sanitize = default_sanitize();
  // Progress on stderr: "compiling <n> lines of generated C++ ... done in X s", "(cached)".
  bool verbose = false;
  // Where compiling reports its progress as it goes (not owned; null: nowhere).
  class Progress* progress = nullptr;
};

// The flags the compiler runs with: `flags`, then sanitizer_flags() when `sanitize`. The cache
// key covers exactly these.
std::vector<std::string> effective_flags(const CompileOptions& options);

} // namespace vtc::jit
