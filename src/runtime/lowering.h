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

// The strategy Options::strategy names over plan.kg; greedy weighs the peak memory of the
// program each candidate lowers to, so its peak never exceeds that of none.
Strategy choose_for_target(const Graph& g, const KernelPlan& plan, const Options& options,
                           const CostModel& model);

// The program that stores plan.kg's values as `strategy` decides.
Program lower_strategy(const Graph& g, const KernelGraph& kg, const Strategy& strategy,
                       const Options& options);

Program lower_for_target(const Graph& g, const Options& options);

// The imported graph made ready for `target`'s planning: canonicalised, then rewritten by the
// target (Target::prepare_graph). Every entry point that lowers a model calls it, so all of
// them lower the same graph.
void canonicalize_for_target(Graph& g, TargetKind target);

} // namespace vtc
