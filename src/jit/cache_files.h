// The files of the JIT's on-disk caches (host_compiler's shared objects, nvrtc_compiler's
// cubins and PTX): the cache directory checked once, every file written under a unique
// temporary name and renamed into place — so concurrent processes compiling the same entry
// all succeed and a reader never sees a partial file — and entries proved whole by the
// SHA-256 of their bytes recorded in a K.ok file written last.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace vtc::jit {

// Creates `dir` when missing; throws vtc::Error naming it when it cannot be created, is not a
// directory or is not writable.
void ensure_cache_dir(const std::string& dir);

// A name no other thread or process uses at the same time: pid, a per-process counter and
// random bits (pids repeat across hosts sharing a network cache directory).
std::string unique_suffix();

// Renames `from` to `to` (atomic within one file system); on failure removes `from` and throws
// vtc::Error naming `to` and its directory.
void rename_into_place(const std::filesystem::path& from, const std::filesystem::path& to);

// Writes `content` to `path` through a unique temporary file and a rename. Throws vtc::Error
// naming the file and the cache directory when it cannot be written (disk full, read-only).
void write_atomically(const std::filesystem::path& path, const std::string& content);

// The bytes of a file; empty when it cannot be read.
std::string read_small_file(const std::filesystem::path& path);

// `data` exists and its SHA-256 is the one `ok` recorded (64 hex digits, trailing space
// ignored).
bool entry_valid(const std::filesystem::path& data, const std::filesystem::path& ok);

// Lines of `text`, counting a last line without a newline.
int64_t count_lines(const std::string& text);

} // namespace vtc::jit
