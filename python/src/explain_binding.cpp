// Session.explain(): the strategy the session was compiled with, chosen again from its
// canonical graph and options exactly as lowering chose it (plan_kernels, choose_for_target,
// the analytic cost model), and returned as the structured records `vtc explain` prints
// (strategy/explain.h) -- one dict per data-movement node. Target ref, which runs the
// reference interpreter on the graph, has none.
#include <optional>

#include <nanobind/stl/string.h>

#include "bindings.h"
#include "ir/graph.h"
#include "runtime/lowering.h"
#include "strategy/cost_model.h"
#include "strategy/explain.h"

namespace nb = nanobind;

namespace vtc::python {

namespace {

nb::dict held_back_as_dict(const HeldBackMove& h) {
  nb::dict d;
  d["side"] = h.side;
  d["tensor"] = h.tensor;
  d["saving_seconds"] = h.saving;
  d["peak_bytes_before"] = h.peak_before;
  d["peak_bytes_after"] = h.peak_after;
  return d;
}

nb::dict movement_as_dict(const MovementExplanation& e) {
  nb::dict d;
  d["node"] = e.node->name;
  d["op"] = e.node->op;
  d["became"] = e.became;
  d["eliminated"] = e.eliminated;
  d["mapping_type"] = e.mapping_type;
  d["saving_seconds"] = e.saving;
  nb::list held;
  for (const HeldBackMove& h : e.held_back)
    held.append(held_back_as_dict(h));
  d["held_back"] = held;
  return d;
}

} // namespace

nb::list explain_as_data(const Session& session) {
  VTC_CHECK(session.has_program())
      << "target ref runs the reference interpreter: there is no strategy to explain";
  std::optional<KernelPlan> plan; // what the explanations' nodes point into
  std::vector<MovementExplanation> movements;
  {
    nb::gil_scoped_release release;
    plan.emplace(plan_kernels(session.graph(), session.options()));
    Strategy s = choose_for_target(session.graph(), *plan, session.options(), AnalyticCostModel());
    movements = explain_movements(s);
  }
  nb::list out;
  for (const MovementExplanation& e : movements)
    out.append(movement_as_dict(e));
  return out;
}

} // namespace vtc::python
