// The memory plan of a Program: every intermediate buffer gets an offset in one arena, and
// two buffers share addresses only when no step needs both. A buffer is live from the first
// step that touches it (normally its writer) to the last step that reads it; one that is
// written and never read is still live for its writer's step. Inputs, outputs and constants
// are bound or owned elsewhere and are not in the arena. Virtual tensors have no buffer, so
// the arena size (`peak_bytes`) is where the memory saving of virtual tensors shows.
//
// Placement is greedy by size with best fit: buffers are placed largest first, each at the
// lowest-waste gap between the already placed buffers whose lifetimes overlap its own, or
// above all of them. Offsets are multiples of kArenaAlignment. The plan is deterministic:
// ties break on first step, then buffer id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lower/program.h"

namespace vtc {

inline constexpr int64_t kArenaAlignment = 64;

// The bytes a buffer of `bytes` takes in the arena: rounded up to kArenaAlignment.
inline int64_t arena_bytes(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

struct BufferLifetime {
  int first_step = -1; // -1: no step touches the buffer
  int last_step = -1;  // inclusive

  bool used() const { return first_step >= 0; }
  bool overlaps(const BufferLifetime& o) const {
    return used() && o.used() && first_step <= o.last_step && o.first_step <= last_step;
  }
};

struct MemoryPlan {
  // Per buffer of the Program (indexed by buffer id); offset -1 for buffers not in the arena
  // (inputs, outputs, constants). An intermediate no step touches needs no memory: offset 0,
  // size 0.
  std::vector<int64_t> offsets;
  std::vector<int64_t> sizes;            // bytes, rounded up to kArenaAlignment
  std::vector<BufferLifetime> lifetimes; // computed for every buffer
  int64_t peak_bytes = 0;                // the arena size
  int64_t total_intermediate_bytes = 0;  // the sum of sizes: the arena without reuse
};

// Offsets of buffers (sizes in bytes, multiples of kArenaAlignment; lifetimes all used) placed
// as described above, ties broken by their position in the lists; and the arena size. Finding
// the placed buffers live beside one costs the steps of its lifetime, not the buffers placed.
struct ArenaPlacement {
  std::vector<int64_t> offsets;
  int64_t peak_bytes = 0;
};
ArenaPlacement place_in_arena(const std::vector<int64_t>& sizes,
                              const std::vector<BufferLifetime>& lifetimes);

// Lifetimes of every buffer from the steps' reads and writes.
std::vector<BufferLifetime> buffer_lifetimes(const Program& program);

// Plans the arena for the intermediate buffers of `program`. Throws vtc::Error when a step
// names a buffer id that does not exist.
MemoryPlan plan_memory(const Program& program);

// "arena 1.50 MiB for 12 intermediates (4.00 MiB without reuse)" and one line per buffer.
std::string print_memory_plan(const Program& program, const MemoryPlan& plan);

} // namespace vtc
