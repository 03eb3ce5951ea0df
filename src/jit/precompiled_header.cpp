// The precompiled preamble's cache entry and the compiler run that builds it (see
// precompiled_header.h).
#include "jit/precompiled_header.h"

#include <chrono>
#include <filesystem>

#include "jit/cache_files.h"
#include "jit/cache_key.h"
#include "jit/process.h"

namespace vtc::jit {
namespace fs = std::filesystem;

namespace {

// GCC looks for `x.h.gch` beside an included `x.h`; clang takes precompiled headers only
// through -include-pch, so there the preamble stays text.
bool takes_gch(const std::string& compiler) {
  return compiler_identity(compiler).find("clang") == std::string::npos;
}

fs::path header_path(const std::string& preamble, const CompileOptions& options) {
  const std::string key = cache_key("// precompiled preamble\n" + preamble, options);
  return fs::absolute(options.cache_dir) / (key + ".h");
}

} // namespace

std::string preamble_include(const std::string& preamble, const CompileOptions& options) {
  if (!takes_gch(options.compiler)) return preamble;
  return "#include \"" + header_path(preamble, options).string() + "\"\n";
}

void write_preamble(const std::string& preamble, const CompileOptions& options) {
  if (!takes_gch(options.compiler)) return;
  ensure_cache_dir(options.cache_dir);
  const fs::path header = header_path(preamble, options);
  if (!fs::exists(header)) write_atomically(header, preamble);
}

bool preamble_built(const std::string& preamble, const CompileOptions& options) {
  if (!takes_gch(options.compiler)) return false;
  const fs::path header = header_path(preamble, options);
  std::error_code ec;
  return fs::exists(header, ec) && fs::exists(header.string() + ".gch", ec);
}

PreambleBuild build_preamble(const std::string& preamble, const CompileOptions& options) {
  PreambleBuild out;
  if (!takes_gch(options.compiler)) return out;
  write_preamble(preamble, options);
  const fs::path header = header_path(preamble, options);
  const fs::path gch = header.string() + ".gch";
  if (fs::exists(gch)) return out;
  const fs::path tmp =
      header.parent_path() / (header.stem().string() + "." + unique_suffix() + ".tmp.gch");
  std::vector<std::string> argv = split_command(options.compiler);
  for (const std::string& flag : effective_flags(options))
    if (flag != "-shared") argv.push_back(flag); // a link flag: nothing is linked here
  for (const std::string& include_dir : options.include_dirs)
    argv.push_back("-I" + include_dir);
  argv.insert(argv.end(), {"-x", "c++-header", header.string(), "-o", tmp.string()});
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult run = run_process(argv);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::error_code ec;
  if (!run.ok() || !fs::exists(tmp)) {
    fs::remove(tmp, ec);
    return out;
  }
  rename_into_place(tmp, gch);
  out.built = true;
  return out;
}

} // namespace vtc::jit
