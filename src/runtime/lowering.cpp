// Options → fusion, a storage decision by the chosen strategy, and lower_program (see
// lowering.h).
#include "runtime/lowering.h"

#include <set>

#include "codegen/cpu_codegen.h"
#include "lower/lower.h"
#include "passes/fusion.h"
#include "strategy/cost_model.h"
#include "strategy/strategy.h"
#include "support/error.h"

namespace vtc {

Program lower_for_target(const Graph& g, const Options& options) {
  KernelGraph kg = fuse(g);
  auto kind = parse_strategy_kind(options.strategy);
  VTC_CHECK(kind) << "unknown strategy '" << options.strategy << "' (none, type1, greedy)";
  StrategyOptions so;
  so.kind = *kind;
  so.donated = options.donate;
  for (const Kernel& k : kg.kernels)
    if (!can_generate_kernel(k)) {
      for (const Value* v : k.inputs)
        so.physical_only.insert(v);
      for (const Value* v : k.outputs)
        so.physical_only.insert(v);
    }
  Strategy strategy = choose_strategy(kg, so, AnalyticCostModel());
  VTC_CHECK(strategy.tables().empty())
      << "strategy " << options.strategy << " needs inverse index tables, which the cpu "
      << "target does not materialise yet";
  StorageDecision decision;
  decision.strategy = strategy_kind_name(*kind);
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

} // namespace vtc
