// Options → the target's fusion, each kernel's implementation, a storage decision by the
// chosen strategy (greedy weighing the peak memory of the programs it would lower to, computed
// without lowering them: candidate_peak.h) and lower_program (see lowering.h).
#include "runtime/lowering.h"

#include <algorithm>
#include <functional>
#include <set>

#include "lower/lower.h"
#include "passes/canonicalize.h"
#include "passes/fusion.h"
#include "runtime/candidate_peak.h"
#include "strategy/cost_model.h"
#include "strategy/strategy.h"
#include "target/target.h"
#include "vtc/error.h"

namespace vtc {

KernelPlan plan_kernels(const Graph& g, const Options& options) {
  const Target& target = target_for(options.target);
  KernelPlan plan{fuse(g, target.fuse_options()), {}};
  for (const auto& [node, mode] : options.library_nodes) {
    const bool anchored =
        std::any_of(plan.kg.kernels.begin(), plan.kg.kernels.end(),
                    [&](const Kernel& k) { return k.anchor && k.anchor->name == node; });
    VTC_CHECK(anchored) << "library mode " << library_mode_name(mode) << " for node '" << node
                        << "': no kernel of the model is built around a node of that name";
  }
  target.choose_implementations(plan.kg, {options.library, options.library_nodes});
  StrategyOptions& so = plan.strategy;
  so.kind = options.strategy;
  so.donated = options.donate;
  so.transaction_bytes = target.transaction_bytes();
  so.peak_slack = target.peak_slack();
  for (const Kernel& k : plan.kg.kernels) {
    if (!target.generates_kernel(k)) {
      for (const Value* v : k.inputs)
        so.physical_only.insert(v);
      for (const Value* v : k.outputs)
        so.physical_only.insert(v);
    }
    for (const Value* v : target.physical_operands(k))
      so.physical_only.insert(v);
  }
  return plan;
}

Strategy choose_for_target(const Graph& g, const KernelPlan& plan, const Options& options,
                           const CostModel& model) {
  StrategyOptions so = plan.strategy;
  CandidatePeak peak(g, plan.kg);
  if (so.kind == StrategyKind::greedy)
    so.peak_bytes = [&peak](const Vtog& vtog, const CandidateStorage& c) { return peak(vtog, c); };
  return choose_strategy(plan.kg, so, model);
}

Program lower_strategy(const Graph& g, const KernelGraph& kg, const Strategy& strategy,
                       const Options& options) {
  StorageDecision decision;
  decision.strategy = strategy_kind_name(strategy.kind);
  for (const Value* v : strategy.virtual_values())
    decision.virtual_values.emplace(v, *strategy.operand(v).mapping);
  std::set<const Node*> remaining;
  for (const RemainingCopy& c : strategy.copies())
    remaining.insert(c.node);
  for (const Node* n : kg.movement)
    if (!remaining.count(n)) decision.eliminated.insert(n);
  decision.steps = strategy.steps();
  decision.aliases = strategy.aliases();
  const Target& target = target_for(options.target);
  LowerOptions lower;
  lower.donated = std::set<std::string>(options.donate.begin(), options.donate.end());
  lower.generates_kernel = [&target](const Kernel& k) { return target.generates_kernel(k); };
  lower.generates_copy = [&target](const Node& n) { return target.generates_copy(n); };
  Program program = lower_program(g, kg, decision, lower);
  target.choose_layouts(program);
  return program;
}

void canonicalize_for_target(Graph& g, TargetKind target) {
  canonicalize(g);
  target_for(target).prepare_graph(g);
}

Program lower_for_target(const Graph& g, const Options& options) {
  KernelPlan plan = plan_kernels(g, options);
  Strategy strategy = choose_for_target(g, plan, options, AnalyticCostModel());
  VTC_CHECK(strategy.tables().empty()) << "strategy " << strategy_kind_name(options.strategy)
                                       << " needs inverse index tables, which the cpu "
                                       << "target does not materialise yet";
  return lower_strategy(g, plan.kg, strategy, options);
}

} // namespace vtc
