// A virtual tensor strategy: the points-to graph chosen for a KernelGraph (paper §5.1) and what
// the code generator needs from it. Every tensor of the kernel graph is either physical (it owns
// storage) or virtual, with its mapping composed down to physical tensors only; data-movement
// nodes whose copy work is all realized disappear, the others remain copy kernels over their
// remaining units.
//
//   Strategy s = choose_strategy(kg, {.kind = StrategyKind::greedy, .donated = {"past_k"}},
//                                AnalyticCostModel());
//   s.operand(v)   physical, or the Mapping the kernel reads / writes v through
//   s.copies()     data-movement nodes that still run, with the units left to copy
//   s.physical()   tensors that need storage (the memory planner's input)
//   s.aliases()    graph outputs that are a donated input updated in place (KV cache)
//   s.steps()      execution order (index producers hoisted; lower in this order)
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "strategy/cost_model.h"
#include "strategy/greedy.h"
#include "strategy/vtog.h"
#include "vtc/options.h"

namespace vtc {

class Strategy;

struct StrategyOptions {
  StrategyKind kind = StrategyKind::greedy;
  std::vector<std::string> donated;               // graph inputs vtc may update in place
  int64_t transaction_bytes = kCpuCacheLineBytes; // memory transaction for edge types
  std::set<const Value*> physical_only;           // see VtogOptions::physical_only
  // The peak memory (bytes) of the program a candidate of the VTOG lowers to; greedy holds back
  // every move that would raise it (see greedy.h). Empty: memory is not weighed.
  std::function<int64_t(const Vtog&, const CandidateStorage&)> peak_bytes;
  double peak_slack = 0; // see greedy_search
};

struct Operand {
  bool physical = true;
  const Mapping* mapping = nullptr; // virtual: onto physical values (bases keyed by Value*)
};

struct RemainingCopy {
  const Node* node = nullptr;
  // (input slot, output slot) pairs the copy kernel still moves; input slot -1 is Pad's border.
  std::vector<std::pair<int, int>> units;
};

class Strategy {
public:
  StrategyKind kind = StrategyKind::none;
  std::string model; // the cost model that chose it
  std::shared_ptr<const Vtog> vtog;
  std::vector<int> chosen;                      // per VTOG tensor: its option, or -1 (physical)
  std::vector<std::optional<Mapping>> mappings; // per VTOG tensor: composed, when virtual
  std::vector<Commit> commits;                  // the search's rounds, in order
  std::vector<HeldBack> held_back;              // moves not taken: they raise peak memory
  double latency_none = 0;                      // seconds, everything physical
  double latency = 0;                           // seconds, this strategy

  Operand operand(const Value* v) const;
  bool is_virtual(const Value* v) const { return !operand(v).physical; }
  std::vector<const Value*> physical() const;
  std::vector<const Value*> virtual_values() const;
  std::vector<RemainingCopy> copies() const;
  std::vector<std::pair<const Value*, const Value*>> aliases() const; // (output, donated input)
  std::vector<Step> steps() const;
  std::vector<std::pair<const Base*, Tensor>> tables() const;
  // The lowering's view: virtual values with their mappings, data-movement nodes that no longer
  // run at all (see copies() for those that run part of their work).
  std::map<const Value*, Mapping> virtual_mappings() const;
  std::set<const Node*> eliminated_nodes() const;
  // Whether every unit of movement node m is realized.
  bool eliminated(int m) const;
  bool unit_realized(int u) const;
};

// Builds the VTOG of `kg`, searches it and returns the strategy. Throws vtc::Error on a bad
// donated name.
Strategy choose_strategy(const KernelGraph& kg, const StrategyOptions& o, const CostModel& model);

// The strategy that takes exactly `options` (or the options behind `edges`), with every reason
// it is illegal; `strategy` is set only when there is none. Edges must come in whole options:
// two conflicting edges, or part of an option, are reasons too.
struct PointsToResult {
  std::optional<Strategy> strategy;
  std::vector<std::string> reasons;
};
PointsToResult points_to_from_options(std::shared_ptr<const Vtog> g,
                                      const std::vector<int>& options, const CostModel& model);
PointsToResult points_to_from_edges(std::shared_ptr<const Vtog> g, const std::vector<int>& edges,
                                    const CostModel& model);

// Stable text form (`vtc opt --print-after=strategy`):
//   strategy greedy: 5 data-movement ops, 4 eliminated; latency 14.2 us (none: 22.9 us)
//   physical %qkv f32[1,128]
//   virtual  %k f32[1,32] <- Split 'qkv_split' write (partially contiguous)
//     piece 0: [0:1, 0:32] -> past_k[...]
//   copy     Concat 'indices' units (0->0) (1->0)
std::string print_strategy(const Strategy& s);

} // namespace vtc
