// Host memory for the intermediate buffers of a Program, as the Executor binds them. Normally
// one zeroed arena laid out by the memory plan, buffers sharing addresses where their lifetimes
// allow. Under the sanitizers (CompileOptions::sanitize) each buffer is instead a zeroed heap
// block of exactly its bytes, and every empty buffer points at a zero-byte block: ASan's
// redzones then lie right after each buffer's last byte, so an out-of-bounds access through a
// mapping is reported rather than landing in a neighbouring buffer of the arena or in its
// alignment padding. The plan's offsets are not used then, but its sizes still say which
// buffers need memory, so both layouts hold the same buffers.
#pragma once

#include <cstddef>
#include <vector>

#include "lower/program.h"
#include "runtime/memory_plan.h"

namespace vtc {

class HostBuffers {
public:
  // Allocates the intermediates of `program` that `plan` gives memory, in one arena or, when
  // `separate`, one block each. Throws vtc::Error when an allocation fails.
  HostBuffers(const Program& program, const MemoryPlan& plan, bool separate);
  ~HostBuffers();
  HostBuffers(const HostBuffers&) = delete;
  HostBuffers& operator=(const HostBuffers&) = delete;

  // The address of intermediate buffer `id`; empty() when the plan gives it no memory.
  void* intermediate(int id) const;
  // The address every empty buffer is bound to: generated code never sees a null pointer.
  void* empty() const { return empty_; }
  bool separate() const { return separate_; }

private:
  bool separate_ = false;
  std::byte* arena_ = nullptr;
  std::vector<std::byte*> addresses_; // per buffer id; null where it has no memory
  std::vector<std::byte*> blocks_;    // separate: every block allocated
  void* empty_ = nullptr;
};

} // namespace vtc
