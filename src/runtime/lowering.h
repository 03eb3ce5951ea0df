// The Session's one call into the compiler: vtc::Options (strategy, donated inputs, library
// kernels) turned into the lowering's options, and the canonical graph lowered to a Program.
#pragma once

#include "lower/program.h"
#include "passes/kernel_graph.h"
#include "strategy/strategy.h"
#include "vtc/vtc.h"

namespace vtc {

// The fused kernels of a graph with each one's implementation chosen (Options::library), and
// the strategy options that follow: operands of kernels run on the reference interpreter or
// on a library are physical-only. Decided before any strategy, so all strategies share it.
struct KernelPlan {
  KernelGraph kg;
  StrategyOptions strategy;
};
KernelPlan plan_kernels(const Graph& g, const Options& options);

Program lower_for_target(const Graph& g, const Options& options);

} // namespace vtc
