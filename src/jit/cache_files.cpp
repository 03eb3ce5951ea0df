// Atomic writes and entry validation shared by the JIT's caches.
#include "jit/cache_files.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

#include "jit/sha256.h"
#include "vtc/error.h"

namespace vtc::jit {
namespace fs = std::filesystem;

void ensure_cache_dir(const std::string& dir) {
  VTC_CHECK(!dir.empty()) << "jit: no cache directory given (CompileOptions::cache_dir is empty)";
  std::error_code ec;
  fs::create_directories(dir, ec);
  VTC_CHECK(!ec) << "jit: cannot create cache directory '" << dir << "': " << ec.message();
  VTC_CHECK(fs::is_directory(dir, ec))
      << "jit: cache directory '" << dir << "' exists but is not a directory";
  VTC_CHECK(access(dir.c_str(), W_OK | X_OK) == 0)
      << "jit: cache directory '" << dir << "' is not writable: " << std::strerror(errno);
}

std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t random_bits = [] {
    std::random_device device;
    return (uint64_t(device()) << 32) ^ device();
  }();
  std::ostringstream s;
  s << getpid() << '-' << counter++ << '-' << std::hex << (random_bits ^ uint64_t(getpid()));
  return s.str();
}

void rename_into_place(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) fs::remove(from, ec);
  VTC_CHECK(!ec) << "jit: cannot write '" << to.string() << "' in cache directory '"
                 << to.parent_path().string() << "': " << ec.message();
}

void write_atomically(const fs::path& path, const std::string& content) {
  fs::path tmp = path;
  tmp += "." + unique_suffix() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    VTC_CHECK(out) << "jit: cannot create '" << tmp.string() << "' in cache directory '"
                   << path.parent_path().string() << "': " << std::strerror(errno);
    out << content;
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      VTC_FAIL() << "jit: cannot write '" << tmp.string() << "' in cache directory '"
                 << path.parent_path().string() << "' (disk full?)";
    }
  }
  rename_into_place(tmp, path);
}

std::string read_small_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  return text.str();
}

bool entry_valid(const fs::path& data, const fs::path& ok) {
  std::string recorded = read_small_file(ok);
  while (!recorded.empty() && std::isspace(static_cast<unsigned char>(recorded.back())))
    recorded.pop_back();
  if (recorded.size() != 64) return false;
  std::optional<std::string> actual = sha256_file_hex(data.string());
  return actual && *actual == recorded;
}

int64_t count_lines(const std::string& text) {
  int64_t lines = std::count(text.begin(), text.end(), '\n');
  return lines + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

} // namespace vtc::jit
