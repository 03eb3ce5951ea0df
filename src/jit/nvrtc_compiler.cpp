// NVRTC behind nvrtc_compile: the cache entry (cache_files.h), the option list, the program's
// life, and the one-line errors a user sees. Without VTC_HAS_NVRTC only the parts that need no
// NVRTC remain, and compiling throws.
#include "jit/nvrtc_compiler.h"

#include <cctype>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "jit/cache_files.h"
#include "jit/cache_key.h"
#include "jit/sha256.h"
#include "vtc/error.h"

#ifndef VTC_HAS_NVRTC
#define VTC_HAS_NVRTC 0
#endif
#if VTC_HAS_NVRTC
#include <nvrtc.h>
#endif

namespace vtc::jit {
namespace fs = std::filesystem;
namespace {

// "sm_90a" or "compute_90a" as the architecture `code` is compiled for: sm_ for a cubin,
// compute_ for PTX.
std::string arch_for(const std::string& arch, GpuCode code) {
  std::string tail;
  for (const char* prefix : {"sm_", "compute_"})
    if (arch.rfind(prefix, 0) == 0) tail = arch.substr(std::string(prefix).size());
  bool valid = !tail.empty();
  for (char c : tail)
    valid = valid && std::isalnum(static_cast<unsigned char>(c));
  VTC_CHECK(valid) << "jit: NVRTC architecture '" << arch
                   << "' is neither sm_<N> nor compute_<N> (e.g. sm_90a)";
  return (code == GpuCode::cubin ? "sm_" : "compute_") + tail;
}

const char* extension(GpuCode code) {
  switch (code) {
  case GpuCode::ptx:
    return ".ptx";
  case GpuCode::cubin:
    return ".cubin";
  }
  return ".bin";
}

const char* code_name(GpuCode code) {
  return extension(code) + 1;
}

// The code recorded for the entry, when `ok` holds the SHA-256 of exactly those bytes.
std::optional<std::string> valid_entry(const fs::path& code_path, const fs::path& ok) {
  std::string recorded = read_small_file(ok);
  while (!recorded.empty() && std::isspace(static_cast<unsigned char>(recorded.back())))
    recorded.pop_back();
  if (recorded.size() != 64 || !fs::exists(code_path)) return std::nullopt;
  std::string code = read_small_file(code_path);
  if (sha256_hex(code) != recorded) return std::nullopt;
  return code;
}

#if VTC_HAS_NVRTC

// The line of an NVRTC log that reports its first error ("K.cu(3): error: ...", "... catastrophic
// error: ...", "nvrtc: error: ..."), else its first non-empty line.
std::string first_error(const std::string& log) {
  std::istringstream in(log);
  std::string first_line;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
      line.pop_back();
    if (line.find("error: ") != std::string::npos || line.find("error :") != std::string::npos)
      return line;
    if (first_line.empty()) first_line = line;
  }
  return first_line.empty() ? std::string("(NVRTC wrote no log)") : first_line;
}

void check(nvrtcResult result, const char* call) {
  VTC_CHECK(result == NVRTC_SUCCESS)
      << "jit: NVRTC " << call << " failed: " << nvrtcGetErrorString(result);
}

// One NVRTC program, destroyed with its owner.
class Program {
public:
  Program(const std::string& source, const std::string& name) {
    check(nvrtcCreateProgram(&program_, source.c_str(), name.c_str(), 0, nullptr, nullptr),
          "nvrtcCreateProgram");
  }
  ~Program() { nvrtcDestroyProgram(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  nvrtcResult compile(const std::vector<std::string>& options) {
    std::vector<const char*> argv;
    for (const std::string& o : options)
      argv.push_back(o.c_str());
    return nvrtcCompileProgram(program_, int(argv.size()), argv.data());
  }
  std::string log() const {
    size_t size = 0;
    check(nvrtcGetProgramLogSize(program_, &size), "nvrtcGetProgramLogSize");
    std::string text(size, '\0');
    if (size > 0) check(nvrtcGetProgramLog(program_, text.data()), "nvrtcGetProgramLog");
    while (!text.empty() && text.back() == '\0')
      text.pop_back();
    return text;
  }
  std::string code(GpuCode kind) const {
    size_t size = 0;
    std::string bytes;
    switch (kind) {
    case GpuCode::ptx:
      check(nvrtcGetPTXSize(program_, &size), "nvrtcGetPTXSize");
      bytes.resize(size);
      if (size > 0) check(nvrtcGetPTX(program_, bytes.data()), "nvrtcGetPTX");
      while (!bytes.empty() && bytes.back() == '\0') // the text's terminator
        bytes.pop_back();
      break;
    case GpuCode::cubin:
      check(nvrtcGetCUBINSize(program_, &size), "nvrtcGetCUBINSize");
      bytes.resize(size);
      if (size > 0) check(nvrtcGetCUBIN(program_, bytes.data()), "nvrtcGetCUBIN");
      break;
    }
    return bytes;
  }

private:
  nvrtcProgram program_ = nullptr;
};

std::vector<std::string> nvrtc_arguments(GpuCode code, const NvrtcOptions& options) {
  std::vector<std::string> args = options.flags;
  args.push_back("--gpu-architecture=" + arch_for(options.arch, code));
  for (const std::string& dir : options.include_dirs)
    args.push_back("--include-path=" + dir);
  for (const std::string& dir : nvrtc_toolkit_include_dirs())
    args.push_back("--include-path=" + dir);
  return args;
}

#endif

void require_nvrtc() {
  VTC_CHECK(nvrtc_available())
      << "jit: vtc was built without NVRTC (CMake found no CUDA toolkit with NVRTC, or "
         "VTC_NVRTC=OFF): cannot compile CUDA C++";
}

} // namespace

bool nvrtc_available() {
  return VTC_HAS_NVRTC != 0;
}

std::string nvrtc_version() {
  require_nvrtc();
#if VTC_HAS_NVRTC
  int major = 0, minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
#else
  return "";
#endif
}

std::vector<std::string> nvrtc_toolkit_include_dirs() {
  std::vector<std::string> dirs;
#ifdef VTC_CCCL_INCLUDE_DIR
  dirs.push_back(VTC_CCCL_INCLUDE_DIR);
#endif
#ifdef VTC_CUDA_INCLUDE_DIR
  dirs.push_back(VTC_CUDA_INCLUDE_DIR);
#endif
  return dirs;
}

std::vector<std::string> default_nvrtc_flags() {
  return {"-std=c++20", "-default-device"};
}

std::string nvrtc_cache_key(const std::string& source, GpuCode code, const NvrtcOptions& options) {
  Sha256 hash;
  hash_part(hash, "vtc-jit-nvrtc-v2");
  hash_part(hash, nvrtc_version());
  hash_part(hash, std::to_string(options.driver_version));
  hash_part(hash, code_name(code));
  hash_part(hash, arch_for(options.arch, code));
  hash_part(hash, std::to_string(options.flags.size()));
  for (const std::string& flag : options.flags)
    hash_part(hash, flag);
  hash_included_headers(hash, source, options.include_dirs);
  hash_part(hash, source);
  return hash.hex_digest();
}

GpuObject nvrtc_compile(const std::string& source, GpuCode code, const NvrtcOptions& options) {
  require_nvrtc();
  VTC_CHECK(!options.cache_dir.empty())
      << "jit: no cache directory given (NvrtcOptions::cache_dir is empty)";
  ensure_cache_dir(options.cache_dir);
  GpuObject result;
  result.key = nvrtc_cache_key(source, code, options);
  const fs::path dir(options.cache_dir);
  const fs::path cu = dir / (result.key + ".cu"), ok = dir / (result.key + ".ok");
  const fs::path out = dir / (result.key + extension(code)), log = dir / (result.key + ".log");
  result.code_path = out.string();
  result.source_path = cu.string();
  const std::string arch = arch_for(options.arch, code);

  if (std::optional<std::string> cached = valid_entry(out, ok)) {
    if (!fs::exists(cu)) write_atomically(cu, source);
    if (options.verbose)
      std::cerr << "vtc: CUDA C++ " << result.key.substr(0, 16) << " for " << arch << " (cached)\n";
    result.code = std::move(*cached);
    result.cached = true;
    return result;
  }

  write_atomically(cu, source);
  if (options.verbose) {
    std::cerr << "vtc: compiling " << count_lines(source) << " lines of CUDA C++ (" << cu.string()
              << ") with NVRTC for " << arch << " ..." << std::flush;
  }
#if VTC_HAS_NVRTC
  const auto start = std::chrono::steady_clock::now();
  Program program(source, cu.string()); // the name NVRTC's diagnostics give the source
  const nvrtcResult compiled = program.compile(nvrtc_arguments(code, options));
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.log = program.log();
  if (options.verbose) {
    if (compiled == NVRTC_SUCCESS)
      std::cerr << " done in " << std::fixed << std::setprecision(2) << result.seconds << " s\n";
    else
      std::cerr << " failed\n";
  }
  if (compiled != NVRTC_SUCCESS) {
    write_atomically(log, result.log.empty() ? std::string(nvrtcGetErrorString(compiled)) + "\n"
                                             : result.log);
    // The first error names the file and line itself when it is in the source ("K.cu(3): error:
    // ..."); otherwise (an error in the options, or of NVRTC itself) the source is named here.
    const std::string error = first_error(result.log);
    const std::string where = error.rfind(cu.string(), 0) == 0 ? "" : " on " + cu.string();
    const std::string status = compiled == NVRTC_ERROR_COMPILATION
                                   ? ""
                                   : std::string(", ") + nvrtcGetErrorString(compiled);
    VTC_FAIL() << "jit: NVRTC " << nvrtc_version() << " (" << arch << status << ") failed" << where
               << ": " << error << " (full log: " << log.string() << ")";
  }
  result.code = program.code(code);
#endif
  VTC_CHECK(!result.code.empty()) << "jit: NVRTC reported success but produced no "
                                  << code_name(code) << " for " << cu.string() << " (" << arch
                                  << ")";
  write_atomically(out, result.code);
  write_atomically(ok, sha256_hex(result.code) + "\n");
  return result;
}

} // namespace vtc::jit
