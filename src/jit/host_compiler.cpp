// The disk cache and the compiler run behind compile_object: the entry's files (validated and
// written atomically by cache_files.h), the compiler command line, and the error messages a
// user sees when any of it fails.
#include "jit/host_compiler.h"

#include "jit/progress.h"

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "jit/cache_files.h"
#include "jit/cache_key.h"
#include "jit/process.h"
#include "jit/sanitizer.h"
#include "jit/sha256.h"
#include "vtc/error.h"

namespace vtc::jit {
namespace fs = std::filesystem;
namespace {

constexpr int kDiagnosticLines = 30;

std::string first_lines(const std::string& text, int limit) {
  std::istringstream in(text);
  std::string out, line;
  int shown = 0, total = 0;
  while (std::getline(in, line)) {
    if (shown < limit) {
      out += line + "\n";
      ++shown;
    }
    ++total;
  }
  if (total > shown) out += "... (" + std::to_string(total - shown) + " more lines)\n";
  return out;
}

CompiledObject compile_impl(const std::string& source, const CompileOptions& options, bool force) {
  ensure_cache_dir(options.cache_dir);
  CompiledObject result;
  result.key = cache_key(source, options);
  fs::path dir(options.cache_dir);
  fs::path so = dir / (result.key + ".so");
  fs::path cpp = dir / (result.key + ".cpp");
  fs::path ok = dir / (result.key + ".ok");
  result.so_path = so.string();
  result.source_path = cpp.string();

  if (!force && entry_valid(so, ok)) {
    if (!fs::exists(cpp)) write_atomically(cpp, source);
    if (options.verbose)
      std::cerr << "vtc: generated C++ " << result.key.substr(0, 16) << " (cached)\n";
    result.cached = true;
    return result;
  }

  write_atomically(cpp, source);
  fs::path tmp_so = dir / (result.key + "." + unique_suffix() + ".tmp.so");
  std::vector<std::string> argv = split_command(options.compiler);
  const std::vector<std::string> flags = effective_flags(options);
  argv.insert(argv.end(), flags.begin(), flags.end());
  for (const std::string& include : options.include_dirs)
    argv.push_back("-I" + include);
  argv.insert(argv.end(), {"-o", tmp_so.string(), cpp.string()});
  argv.insert(argv.end(), options.link_objects.begin(), options.link_objects.end());
  for (const std::string& library : options.libraries)
    argv.push_back("-l" + library);

  if (options.verbose) {
    std::cerr << "vtc: compiling " << count_lines(source) << " lines of generated C++ ("
              << cpp.string() << ") ..." << std::flush;
  }
  if (options.progress)
    options.progress->stage("compiling " + std::to_string(count_lines(source)) + " lines of C++");
  auto start = std::chrono::steady_clock::now();
  ProcessResult run = run_process(argv);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.verbose) {
    if (run.ok())
      std::cerr << " done in " << std::fixed << std::setprecision(2) << result.seconds << " s\n";
    else
      std::cerr << " failed\n";
  }

  std::error_code ec;
  if (!run.ok()) fs::remove(tmp_so, ec);
  VTC_CHECK(run.start_error == 0) << "jit: C++ compiler '" << options.compiler
                                  << "' cannot be run (" << run.describe_status() << ")";
  VTC_CHECK(run.ok()) << "jit: compiling generated C++ " << cpp.string() << " failed ('"
                      << options.compiler << "', " << run.describe_status() << "):\n"
                      << first_lines(run.output, kDiagnosticLines);

  std::optional<std::string> digest = sha256_file_hex(tmp_so.string());
  VTC_CHECK(digest.has_value()) << "jit: compiler '" << options.compiler
                                << "' reported success but wrote no shared object for "
                                << cpp.string();
  rename_into_place(tmp_so, so);
  write_atomically(ok, *digest + "\n");
  return result;
}

} // namespace

CompiledObject compile_object(const std::string& source, const CompileOptions& options) {
  return compile_impl(source, options, /*force=*/false);
}

bool object_cached(const std::string& source, const CompileOptions& options) {
  const std::string key = cache_key(source, options);
  const fs::path dir(options.cache_dir);
  return entry_valid(dir / (key + ".so"), dir / (key + ".ok"));
}

std::string compile_shared_object(const std::string& source, const CompileOptions& options) {
  return compile_object(source, options).so_path;
}

LoadedObject compile_and_load(const std::string& source, const CompileOptions& options) {
  if (options.sanitize) check_sanitizer_runtime(); // before dlopen, which would end the process
  CompiledObject object = compile_object(source, options);
  if (object.cached) {
    try {
      SharedLibrary library(object.so_path);
      return {std::move(object), std::move(library)};
    } catch (const Error& e) {
      if (options.verbose)
        std::cerr << "vtc: cached " << object.so_path << " does not load (" << e.what()
                  << "); rebuilding\n";
    }
    object = compile_impl(source, options, /*force=*/true);
  }
  SharedLibrary library(object.so_path);
  return {std::move(object), std::move(library)};
}

std::optional<LoadedObject> load_cached_object(const std::string& key,
                                               const CompileOptions& options) {
  const fs::path dir(options.cache_dir);
  CompiledObject object;
  object.key = key;
  object.so_path = (dir / (key + ".so")).string();
  object.source_path = (dir / (key + ".cpp")).string();
  object.cached = true;
  if (!entry_valid(object.so_path, dir / (key + ".ok"))) return std::nullopt;
  if (options.sanitize) check_sanitizer_runtime(); // before dlopen, which would end the process
  try {
    SharedLibrary library(object.so_path);
    return LoadedObject{std::move(object), std::move(library)};
  } catch (const Error& e) {
    if (options.verbose)
      std::cerr << "vtc: cached " << object.so_path << " does not load (" << e.what() << ")\n";
    return std::nullopt;
  }
}

} // namespace vtc::jit
