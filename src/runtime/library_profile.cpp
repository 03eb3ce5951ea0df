// See library_profile.h.
#include "runtime/library_profile.h"

#include <algorithm>
#include <set>

namespace vtc {

namespace {

// The index of the kernel step anchored at `node`, or -1.
int kernel_step_of(const Program& p, const std::string& node) {
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const StepInfo& step = p.steps[s];
    if (step.kind == StepKind::kernel && step.kernel && step.kernel->anchor &&
        step.kernel->anchor->name == node)
      return int(s);
  }
  return -1;
}

// Whether every step reading a buffer copy step `c` writes is step `only` (and one does).
bool feeds_only(const Program& p, size_t c, size_t only) {
  bool read = false;
  for (int buffer : p.steps[c].writes)
    for (size_t s = c + 1; s < p.steps.size(); ++s) {
      const std::vector<int>& reads = p.steps[s].reads;
      if (std::find(reads.begin(), reads.end(), buffer) == reads.end()) continue;
      if (s != only) return false;
      read = true;
    }
  return read;
}

} // namespace

std::vector<std::pair<std::string, std::string>> library_nodes(const Program& p) {
  std::vector<std::pair<std::string, std::string>> nodes;
  for (const StepInfo& step : p.steps)
    if (step.kind == StepKind::kernel && step.kernel && step.kernel->anchor &&
        step.kernel->impl != KernelImpl::vtc_template)
      nodes.emplace_back(step.kernel->anchor->name, kernel_impl_name(step.kernel->impl));
  return nodes;
}

double node_ms(const Program& p, const std::vector<double>& step_ms, const std::string& node) {
  const int k = kernel_step_of(p, node);
  if (k < 0) return 0;
  double ms = step_ms[size_t(k)];
  for (size_t c = 0; c < size_t(k); ++c)
    if (p.steps[c].kind == StepKind::copy && feeds_only(p, c, size_t(k))) ms += step_ms[c];
  return ms;
}

std::vector<ProfiledNode> compare_nodes(const Program& library_plan,
                                        const std::vector<double>& library_step_ms,
                                        const Program& vtc_plan,
                                        const std::vector<double>& vtc_step_ms, double margin) {
  std::vector<ProfiledNode> nodes;
  for (const auto& [node, library] : library_nodes(library_plan)) {
    ProfiledNode n;
    n.node = node;
    n.library = library;
    n.library_ms = node_ms(library_plan, library_step_ms, node);
    n.vtc_ms = node_ms(vtc_plan, vtc_step_ms, node);
    n.on_library = n.vtc_ms <= 0 || n.vtc_ms >= (1 - margin) * n.library_ms;
    nodes.push_back(n);
  }
  return nodes;
}

std::map<std::string, LibraryMode> vtc_kernel_modes(const std::vector<ProfiledNode>& nodes) {
  std::map<std::string, LibraryMode> modes;
  for (const ProfiledNode& n : nodes)
    if (!n.on_library) modes[n.node] = LibraryMode::never;
  return modes;
}

} // namespace vtc
