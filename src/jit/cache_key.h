// The cache key of a compiled model: SHA-256 over everything that determines the bytes of
// the shared object — the generated source, the compiler's identity (its `--version`
// output), the flags, the libraries linked, and the content of every kernel header the source
// includes from the include directories, directly or through other headers. Editing a kernel
// template, changing a flag or upgrading the compiler therefore gives a new key, and stale
// binaries are never loaded. Headers outside the include directories (the standard library)
// are covered by the compiler's identity. When a flag asks for the host CPU (-march=native),
// the host CPU's identity is part of the key too, so a cache directory shared between machines
// never hands one machine code built for another's instruction set. The flags hashed are
// effective_flags(): the sanitizers' included.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jit/compile_options.h"
#include "jit/sha256.h"

namespace vtc::jit {

// Splits a command such as "ccache g++" into its words.
std::vector<std::string> split_command(const std::string& command);

// `<compiler> --version` output, run once per compiler command per process. Throws
// vtc::Error naming the compiler when it cannot be run.
std::string compiler_identity(const std::string& compiler);

// The host CPU as /proc/cpuinfo describes its first processor (vendor, family, model, feature
// flags; not the clock or core numbering), read once per process; empty where unavailable.
std::string host_cpu_identity();

// Paths of the headers that `source` includes from `include_dirs`, transitively, in the order
// first met. `#include "x"` is looked up beside the including header first, as compilers do;
// names found in no include directory (system headers) are skipped.
std::vector<std::string> included_headers(const std::string& source,
                                          const std::vector<std::string>& include_dirs);

// Appends `part` to `hash` with its length in front, so that no two different lists of parts
// give the same byte stream. Every key of vtc's caches is built from such parts.
void hash_part(Sha256& hash, std::string_view part);

// The parts for the headers `source` includes from `include_dirs` (included_headers): their
// count, then each one's file name and content.
void hash_included_headers(Sha256& hash, const std::string& source,
                           const std::vector<std::string>& include_dirs);

// The 64-hex-digit key of `source` compiled with `options`.
std::string cache_key(const std::string& source, const CompileOptions& options);

} // namespace vtc::jit
