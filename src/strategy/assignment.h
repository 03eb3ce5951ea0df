// The state the strategies search over: which option (if any) makes each tensor of a VTOG
// virtual, the composed mapping of every virtual tensor onto physical tensors (paper §4.1,
// chains composed), and the latency of every step of the schedule under a cost model.
//
// A trial evaluates a move — options for distinct tensors, taken together — without changing
// the state: whether the result is legal (and why not), the latency it saves, and the copy work
// it makes impossible to remove later (a tensor made virtual one way can no longer be virtual
// the other way). Only the tensors whose mappings change (the move's tensors and those already
// virtual through them) and the steps that touch them are re-measured, so a trial costs what
// the move touches, not the graph.
//
// Legality (DESIGN.md): one base per virtual index (one option per tensor; conflicts between
// options never coexist); no cycles; graph inputs and constants are physical, and are never
// written unless donated; an in-place update must not clobber a value that a later step still
// reads; graph outputs are physical and contiguous (or an identity alias of a donated input they
// update in place); tensors that mappings load indices from are physical and computed before
// those accesses; ScatterND updates written by their producer need the data updated in place.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "strategy/cost_model.h"
#include "strategy/vtog.h"

namespace vtc {

struct Composed {
  Mapping mapping; // onto physical tensors only
  MappingProfile profile;
  std::vector<int> bases; // the physical tensors it reaches, ascending
};

struct Trial {
  bool legal = false;
  std::string reason; // when illegal
  double saving = 0;  // seconds of latency the move removes (negative: it adds)
  double forfeit = 0; // seconds of copy work it makes impossible to remove
  std::vector<int> options;
  // What commit() installs.
  std::vector<std::pair<int, std::shared_ptr<const Composed>>> composed;
  std::vector<std::pair<int, double>> step_costs;
};

class Assignment {
public:
  Assignment(const Vtog& g, const CostModel& model);

  const Vtog& vtog() const { return g_; }
  int choice(int t) const { return choice_[size_t(t)]; }
  const Composed* composed(int t) const { return composed_[size_t(t)].get(); }
  bool realized(int unit) const;
  double step_cost(int s) const { return step_cost_[size_t(s)]; }
  double latency() const;

  Trial trial(std::span<const int> options) const;
  void commit(const Trial& t);

  // Installs `options` (one per tensor at most) without checking, composes every chain and
  // returns every legality reason; empty when the assignment is legal. Composition failures and
  // cycles are reasons too; the tensors concerned stay physical.
  std::vector<std::string> assign(const std::vector<int>& options);

  // Why option `o` can never be taken, whatever else is chosen (a graph input or constant made
  // virtual, a graph output read through a mapping, an index tensor); "" when it may be.
  std::string static_reason(int o) const;

private:
  friend class AssignmentView;
  const Vtog& g_;
  const CostModel& model_;
  std::vector<int> choice_;
  std::vector<std::shared_ptr<const Composed>> composed_;
  std::vector<std::vector<int>> users_; // tensor -> virtual tensors whose option names it
  std::vector<double> step_cost_;
  std::vector<MappingProfile> scatter_profile_; // per unit with a scatter mapping
  std::vector<bool> mutated_;                   // physical tensors an in-place update changes
  std::vector<bool> static_ok_;                 // per option: static_reason is empty
  // Trial scratch (a trial is const but reuses these buffers).
  mutable std::vector<int> stamp_;
  mutable int cur_stamp_ = 0;
  mutable std::vector<int> hyp_choice_;
  mutable std::vector<std::shared_ptr<const Composed>> hyp_composed_;
  mutable std::vector<int> visit_;

  void recompute_mutated();
};

} // namespace vtc
