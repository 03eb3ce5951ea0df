// LibraryChoice: the library mode each kernel's implementation is chosen under, from the
// session's Options (library, and library_nodes per anchor node). Targets read it when they
// set Kernel::impl; the profiled choice on cuda fills the per-node part.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "passes/kernel_graph.h"
#include "vtc/options.h"

namespace vtc {

// The library mode each kernel is chosen under: `mode`, or the one `nodes` names for the
// kernel's anchor (Options::library and library_nodes).
struct LibraryChoice {
  LibraryChoice(LibraryMode m = LibraryMode::automatic) : mode(m) {}
  LibraryChoice(LibraryMode m, std::map<std::string, LibraryMode> per_node)
      : mode(m), nodes(std::move(per_node)) {}
  LibraryMode mode;
  std::map<std::string, LibraryMode> nodes;
  LibraryMode of(const Kernel& k) const {
    if (!k.anchor) return mode;
    auto it = nodes.find(k.anchor->name);
    return it == nodes.end() ? mode : it->second;
  }
  // Whether any kernel may be chosen under `m`.
  bool uses(LibraryMode m) const {
    if (mode == m) return true;
    for (const auto& [node, each] : nodes)
      if (each == m) return true;
    return false;
  }
};

} // namespace vtc
