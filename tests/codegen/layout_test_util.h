// The program a target lowers an ONNX model to, and the names of the tensors it holds
// channels-last: the helpers of the layout tests (cpu_layouts_test.cpp, cuda_layouts_test.cpp).
#pragma once

#include <memory>
#include <set>
#include <string>

#include "frontend/onnx_import.h"
#include "passes/canonicalize.h"
#include "runtime/lowering.h"

namespace vtc::testing {

// The program and the graph its values live in.
struct Lowered {
  std::unique_ptr<Graph> graph;
  Program program;
};

inline Lowered lowered(const std::string& bytes, TargetKind target, StrategyKind strategy) {
  auto g = std::make_unique<Graph>(import_onnx_bytes(bytes, ".", "conv_chain.onnx"));
  canonicalize(*g);
  Options o;
  o.target = target;
  o.strategy = strategy;
  o.profile = false;
  Program p = lower_for_target(*g, o);
  return {std::move(g), std::move(p)};
}

// The names of the values p holds channels-last.
inline std::set<std::string> held(const Program& p) {
  std::set<std::string> names;
  for (const Value* v : p.storage.channels_last)
    names.insert(v->name);
  return names;
}

} // namespace vtc::testing
