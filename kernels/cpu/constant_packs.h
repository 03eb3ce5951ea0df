// Packed forms of a program's constant operands, built on first use and kept for the
// program's lifetime. A convolution's weights are the A operand of its implicit GEMM; packing
// them into register-tile panels on every run costs as much as the arithmetic when the
// output plane is small, so a kernel given a ConstantRef packs them once. The executor owns
// one ConstantPacks per loaded program and hands it to every generated step; a pack is keyed
// by the constant's address (constants never move or change while their program lives) and
// by the packing's own parameters. The packed values are the values a kernel would pack on
// every run, so the cache changes speed only, never bits.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <tuple>
#include <type_traits>

namespace vtc::kernels {

class ConstantPacks {
public:
  // The pack for (key, tag, count elements of T), filled by fill(T*) the first time.
  template <typename T, typename Fill>
  std::shared_ptr<const T> get(const void* key, int64_t tag, int64_t count, Fill&& fill) {
    using F = std::remove_reference_t<Fill>;
    auto call = [](const void* f, void* dst) { (*static_cast<const F*>(f))(static_cast<T*>(dst)); };
    return std::static_pointer_cast<const T>(
        get_bytes(key, tag, count, int64_t(sizeof(T)), call, &fill));
  }

  // Bytes held by all packs.
  int64_t bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
  }

private:
  // get() apart from the element type and the filling: one copy of the lookup, the allocation
  // and the pack's deleter for every kernel, not one per call site.
  std::shared_ptr<void> get_bytes(const void* key, int64_t tag, int64_t count, int64_t size,
                                  void (*fill)(const void* context, void* dst),
                                  const void* context) {
    std::lock_guard<std::mutex> lock(mu_);
    const Key k{key, tag, count, size};
    auto it = packs_.find(k);
    if (it != packs_.end()) return it->second;
    const size_t bytes = (size_t(count > 0 ? count : 1) * size_t(size) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (!p) throw std::bad_alloc();
    std::shared_ptr<void> pack(p, [](void* q) { std::free(q); });
    fill(context, pack.get());
    bytes_ += int64_t(bytes);
    packs_.emplace(k, pack);
    return pack;
  }

  using Key = std::tuple<const void*, int64_t, int64_t, int64_t>;
  mutable std::mutex mu_;
  std::map<Key, std::shared_ptr<void>> packs_;
  int64_t bytes_ = 0;
};

// A constant operand as a kernel sees it for packing: the program's packs and the
// constant's address. Default-constructed: not a constant, pack on every run.
struct ConstantRef {
  ConstantPacks* packs = nullptr;
  const void* key = nullptr;
};

} // namespace vtc::kernels
