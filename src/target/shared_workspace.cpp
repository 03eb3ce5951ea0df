// The shared workspace layout (see shared_workspace.h).
#include "target/shared_workspace.h"

#include <algorithm>

#include "vtc/error.h"

namespace vtc {

namespace {

int64_t round_up(int64_t v) {
  return (v + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
}

bool shares(const WorkspaceNeed& n) {
  return n.bytes > 0 && n.partial_bytes % kWorkspaceAlign == 0;
}

} // namespace

SharedWorkspace share_workspaces(const std::vector<WorkspaceNeed>& needs) {
  int64_t boundary = 0, counters = 0;
  for (const WorkspaceNeed& n : needs) {
    VTC_CHECK(n.bytes >= 0 && n.partial_bytes >= 0 && n.partial_bytes <= n.bytes)
        << "workspace of " << n.bytes << " bytes with " << n.partial_bytes
        << " bytes of partial sums";
    if (!shares(n)) continue;
    boundary = std::max(boundary, n.partial_bytes);
    counters = std::max(counters, n.bytes - n.partial_bytes);
  }
  SharedWorkspace out;
  out.bytes = boundary + round_up(counters);
  for (const WorkspaceNeed& n : needs) {
    if (n.bytes == 0) {
      out.offsets.push_back(-1);
    } else if (shares(n)) {
      out.offsets.push_back(boundary - n.partial_bytes);
    } else {
      out.offsets.push_back(out.bytes);
      out.bytes += round_up(n.bytes);
    }
  }
  return out;
}

} // namespace vtc
