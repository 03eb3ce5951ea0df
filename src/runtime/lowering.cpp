// Options → fusion, each kernel's implementation, a storage decision by the chosen strategy
// (greedy weighing the peak memory of the programs it would lower to),
// and lower_program (see lowering.h).
#include "runtime/lowering.h"

#include <set>

#include "codegen/conv_max_pool_rule.h"
#include "codegen/cpu_codegen.h"
#include "codegen/kernel_choice.h"
#include "lower/lower.h"
#include "passes/fusion.h"
#include "runtime/memory_plan.h"
#include "strategy/cost_model.h"
#include "strategy/strategy.h"
#include "support/error.h"

namespace vtc {

KernelPlan plan_kernels(const Graph& g, const Options& options) {
  KernelPlan plan{fuse(g, cpu_fuse_options()), {}};
  auto kind = parse_strategy_kind(options.strategy);
  VTC_CHECK(kind) << "unknown strategy '" << options.strategy << "' (none, type1, greedy)";
  auto library = parse_library_mode(options.library);
  VTC_CHECK(library) << "unknown library mode '" << options.library << "' (auto, never, always)";
  choose_kernel_impls(plan.kg, *library);
  StrategyOptions& so = plan.strategy;
  so.kind = *kind;
  so.donated = options.donate;
  for (const Kernel& k : plan.kg.kernels) {
    if (!can_generate_kernel(k)) {
      for (const Value* v : k.inputs)
        so.physical_only.insert(v);
      for (const Value* v : k.outputs)
        so.physical_only.insert(v);
    }
    for (const Value* v : library_operands(k))
      so.physical_only.insert(v);
  }
  return plan;
}

Strategy choose_for_target(const Graph& g, const KernelPlan& plan, const Options& options,
                           const CostModel& model) {
  StrategyOptions so = plan.strategy;
  if (so.kind == StrategyKind::greedy)
    so.peak_bytes = [&](const Strategy& s) {
      return plan_memory(lower_strategy(g, plan.kg, s, options)).peak_bytes;
    };
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
  LowerOptions lower;
  lower.donated = std::set<std::string>(options.donate.begin(), options.donate.end());
  return lower_program(g, kg, decision, lower);
}

Program lower_for_target(const Graph& g, const Options& options) {
  KernelPlan plan = plan_kernels(g, options);
  Strategy strategy = choose_for_target(g, plan, options, AnalyticCostModel());
  VTC_CHECK(strategy.tables().empty())
      << "strategy " << options.strategy << " needs inverse index tables, which the cpu "
      << "target does not materialise yet";
  return lower_strategy(g, plan.kg, strategy, options);
}

} // namespace vtc
