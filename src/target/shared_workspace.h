// One device buffer for the workspaces of every generated kernel of a loaded unit. A split-K or
// split-KV kernel's workspace is its partial sums, written before they are read, then counters
// that start zero and that the kernel leaves zero (kernels/cuda/NOTES.md). The unit's kernels run
// one after another on one stream (each waits for the one before it), so their partial sums may
// share bytes and so may their counters, as long as no kernel's counters lie on bytes another
// kernel writes partial sums to. The layout puts every partial-sum region so that it ends at one
// boundary and every counter region so that it starts there: the buffer is the largest of each
// instead of the sum of all.
#pragma once

#include <cstdint>
#include <vector>

namespace vtc {

// One kernel's workspace: `bytes` in all, the first `partial_bytes` of them partial sums.
struct WorkspaceNeed {
  int64_t bytes = 0;
  int64_t partial_bytes = 0;
};

struct SharedWorkspace {
  int64_t bytes = 0;            // the one buffer (zeroed once)
  std::vector<int64_t> offsets; // per need, where its workspace starts; -1 for none
};

// Offsets are multiples of kWorkspaceAlign. A need whose partial sums are not a multiple of it
// gets bytes of its own after the shared part.
inline constexpr int64_t kWorkspaceAlign = 16; // the widest access (ld.global.v4)
SharedWorkspace share_workspaces(const std::vector<WorkspaceNeed>& needs);

} // namespace vtc
