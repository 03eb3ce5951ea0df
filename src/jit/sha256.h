// SHA-256 (FIPS 180-4), used by the JIT cache: the cache key of a compiled model (source,
// compiler identity, flags, kernel headers) and the digest that proves a cached shared object
// was written completely. A strong hash because the key names a binary that will be loaded
// and run: two different inputs must never share an entry.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vtc::jit {

// Incremental SHA-256: update() any number of times, then hex_digest() once.
class Sha256 {
public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  // Finishes the hash; the object must not be updated afterwards.
  std::array<uint8_t, 32> digest();
  std::string hex_digest();

private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lowercase hex SHA-256 of `text`.
std::string sha256_hex(std::string_view text);

// Lowercase hex SHA-256 of a file's bytes, or nullopt when the file cannot be read.
std::optional<std::string> sha256_file_hex(const std::string& path);

} // namespace vtc::jit
