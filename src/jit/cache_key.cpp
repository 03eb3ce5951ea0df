// Cache keys: compiler identity, include scanning and the hash that combines them. Each
// part of the key is hashed with its length in front, so no two different lists of parts
// produce the same byte stream.
#include "jit/cache_key.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "jit/process.h"
#include "jit/sha256.h"
#include "vtc/error.h"

namespace vtc::jit {
namespace fs = std::filesystem;
namespace {

struct Include {
  std::string name;
  bool quoted = false;
};

// Parses `# include "name"` or `#include <name>`; other lines give nothing.
bool parse_include(std::string_view line, Include& out) {
  size_t i = 0;
  auto skip_space = [&] {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
      ++i;
  };
  skip_space();
  if (i >= line.size() || line[i] != '#') return false;
  ++i;
  skip_space();
  constexpr std::string_view kInclude = "include";
  if (line.substr(i, kInclude.size()) != kInclude) return false;
  i += kInclude.size();
  skip_space();
  if (i >= line.size() || (line[i] != '"' && line[i] != '<')) return false;
  char close = line[i] == '"' ? '"' : '>';
  size_t end = line.find(close, i + 1);
  if (end == std::string_view::npos || end == i + 1) return false;
  out.quoted = close == '"';
  out.name = std::string(line.substr(i + 1, end - i - 1));
  return true;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  VTC_CHECK(in) << "jit: cannot read kernel header '" << path.string() << "'";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// A kernel header as read once in this process: its text and the SHA-256 of it, read again
// only when the file's size or modification time changes. Every unit's cache key scans and
// hashes the same headers; reading and hashing them for each of a model's kernels was most
// of loading a cached model (SqueezeNet: about 0.5 G of 0.85 G instructions).
struct HeaderFile {
  uintmax_t size = 0;
  fs::file_time_type written;
  std::string text, digest;
};

std::shared_ptr<const HeaderFile> header_file(const fs::path& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const HeaderFile>> files;
  std::error_code size_error, time_error;
  const uintmax_t size = fs::file_size(path, size_error);
  const fs::file_time_type written = fs::last_write_time(path, time_error);
  const bool stamped = !size_error && !time_error;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = files.find(path.string());
    if (stamped && it != files.end() && it->second->size == size && it->second->written == written)
      return it->second;
  }
  auto file = std::make_shared<HeaderFile>();
  file->size = size;
  file->written = written;
  file->text = read_file(path);
  file->digest = sha256_hex(file->text);
  std::lock_guard<std::mutex> lock(mutex);
  if (stamped) files[path.string()] = file;
  return file;
}

} // namespace

void hash_part(Sha256& hash, std::string_view part) {
  uint64_t size = part.size();
  hash.update(&size, sizeof size);
  hash.update(part);
}

std::vector<std::string> split_command(const std::string& command) {
  std::vector<std::string> words;
  std::istringstream in(command);
  for (std::string word; in >> word;)
    words.push_back(word);
  return words;
}

std::string compiler_identity(const std::string& compiler) {
  static std::mutex mutex;
  static std::map<std::string, std::string> identities;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = identities.find(compiler);
  if (it != identities.end()) return it->second;

  std::vector<std::string> argv = split_command(compiler);
  VTC_CHECK(!argv.empty()) << "jit: no C++ compiler given (CompileOptions::compiler is empty)";
  argv.push_back("--version");
  ProcessResult result = run_process(argv);
  VTC_CHECK(result.start_error == 0)
      << "jit: C++ compiler '" << compiler << "' cannot be run (" << result.describe_status()
      << "); install one or name it with $CXX";
  VTC_CHECK(result.ok()) << "jit: C++ compiler '" << compiler << "' failed on --version ("
                         << result.describe_status() << "): " << result.output;
  return identities.emplace(compiler, result.output).first->second;
}

std::string host_cpu_identity() {
  static const std::string identity = [] {
    static const std::set<std::string> kStableFields = {
        "vendor_id",       "cpu family",       "model",       "model name", "stepping", "flags",
        "CPU implementer", "CPU architecture", "CPU variant", "CPU part",   "Features", "isa"};
    std::ifstream in("/proc/cpuinfo");
    std::string out;
    for (std::string line; std::getline(in, line) && !line.empty();) {
      std::string field = line.substr(0, line.find(':'));
      while (!field.empty() && std::isspace(static_cast<unsigned char>(field.back())))
        field.pop_back();
      if (kStableFields.count(field)) out += line + "\n";
    }
    return out;
  }();
  return identity;
}

std::vector<std::string> included_headers(const std::string& source,
                                          const std::vector<std::string>& include_dirs) {
  std::vector<std::string> found;
  std::set<std::string> seen;
  // (text, directory of the file the text came from; empty for the generated source)
  std::vector<std::pair<std::string, fs::path>> pending = {{source, fs::path()}};
  while (!pending.empty()) {
    auto [text, dir] = std::move(pending.back());
    pending.pop_back();
    std::vector<std::pair<std::string, fs::path>> children;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      Include inc;
      if (!parse_include(line, inc)) continue;
      fs::path resolved;
      if (inc.quoted && !dir.empty() && is_file(dir / inc.name)) resolved = dir / inc.name;
      for (size_t d = 0; resolved.empty() && d < include_dirs.size(); ++d)
        if (is_file(fs::path(include_dirs[d]) / inc.name))
          resolved = fs::path(include_dirs[d]) / inc.name;
      if (resolved.empty()) continue;
      resolved = fs::weakly_canonical(resolved);
      if (!seen.insert(resolved.string()).second) continue;
      found.push_back(resolved.string());
      children.emplace_back(header_file(resolved)->text, resolved.parent_path());
    }
    // Visit children in source order (the stack pops the last pushed first).
    for (auto it = children.rbegin(); it != children.rend(); ++it)
      pending.push_back(std::move(*it));
  }
  return found;
}

void hash_included_headers(Sha256& hash, const std::string& source,
                           const std::vector<std::string>& include_dirs) {
  std::vector<std::string> headers = included_headers(source, include_dirs);
  hash_part(hash, std::to_string(headers.size()));
  for (const std::string& header : headers) {
    // The content (its digest), not the path: the same kernels in another checkout share the
    // entry.
    hash_part(hash, fs::path(header).filename().string());
    hash_part(hash, header_file(header)->digest);
  }
}

std::string cache_key(const std::string& source, const CompileOptions& options) {
  Sha256 hash;
  hash_part(hash, "vtc-jit-host-cpp-v2");
  hash_part(hash, compiler_identity(options.compiler));
  const std::vector<std::string> flags = effective_flags(options);
  hash_part(hash, std::to_string(flags.size()));
  bool native = false;
  for (const std::string& flag : flags) {
    hash_part(hash, flag);
    native = native || flag.find("native") != std::string::npos;
  }
  hash_part(hash, native ? host_cpu_identity() : std::string());
  hash_part(hash, std::to_string(options.libraries.size()));
  for (const std::string& library : options.libraries)
    hash_part(hash, library);
  if (!options.link_objects.empty()) { // (keys without them as they were)
    hash_part(hash, "link " + std::to_string(options.link_objects.size()));
    for (const std::string& object : options.link_objects)
      hash_part(hash, object);
  }
  hash_included_headers(hash, source, options.include_dirs);
  hash_part(hash, source);
  return hash.hex_digest();
}

} // namespace vtc::jit
