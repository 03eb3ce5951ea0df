// The Executor's intermediate buffers: one arena, or one block each (see host_buffers.h).
#include "runtime/host_buffers.h"

#include <cstdlib>
#include <cstring>

#include "vtc/error.h"

namespace vtc {

namespace {

// The address of every empty buffer in an arena layout.
alignas(64) std::byte empty_storage[64];

// `bytes` zeroed bytes aligned as the arena's buffers are. posix_memalign, unlike aligned_alloc,
// takes any size, so the block ends exactly at the buffer's last byte.
std::byte* allocate_zeroed(size_t bytes, const char* what) {
  void* p = nullptr;
  VTC_CHECK(posix_memalign(&p, size_t(kArenaAlignment), bytes) == 0 && p)
      << "cannot allocate the " << bytes << "-byte " << what;
  if (bytes) std::memset(p, 0, bytes);
  return static_cast<std::byte*>(p);
}

} // namespace

HostBuffers::HostBuffers(const Program& program, const MemoryPlan& plan, bool separate)
    : separate_(separate), addresses_(program.buffers.size(), nullptr) {
  if (separate_) {
    empty_ = allocate_zeroed(0, "empty buffer");
    blocks_.push_back(static_cast<std::byte*>(empty_));
  } else {
    empty_ = empty_storage;
    if (plan.peak_bytes > 0) arena_ = allocate_zeroed(size_t(plan.peak_bytes), "arena");
  }
  for (size_t id = 0; id < program.buffers.size(); ++id) {
    const BufferInfo& b = program.buffers[id];
    if (b.role != BufferRole::intermediate || plan.sizes[id] == 0) continue;
    if (separate_) {
      blocks_.push_back(allocate_zeroed(b.type.nbytes(), ("buffer '" + b.name + "'").c_str()));
      addresses_[id] = blocks_.back();
    } else {
      addresses_[id] = arena_ + plan.offsets[id];
    }
  }
}

HostBuffers::~HostBuffers() {
  std::free(arena_);
  for (std::byte* b : blocks_)
    std::free(b);
}

void* HostBuffers::intermediate(int id) const {
  std::byte* p = addresses_.at(size_t(id));
  return p ? static_cast<void*>(p) : empty_;
}

} // namespace vtc
