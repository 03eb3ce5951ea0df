// Buffers and lifetimes of a candidate's program, step by step as lower_program touches them.
#include "runtime/candidate_peak.h"

#include "lower/lower.h"
#include "runtime/memory_plan.h"

namespace vtc {

CandidatePeak::CandidatePeak(const Graph& g, const KernelGraph& kg) : kg_(kg) {
  bound_.insert(g.inputs.begin(), g.inputs.end());
  bound_.insert(g.outputs.begin(), g.outputs.end());
}

bool CandidatePeak::in_arena(const Value* v) const {
  return !v->constant && !bound_.count(v);
}

int64_t CandidatePeak::operator()(const Vtog& vtog, const CandidateStorage& c) const {
  auto realized = [&](int u) {
    for (int o : vtog.units[size_t(u)].realized_by)
      if (c.choice[size_t(vtog.options[size_t(o)].tensor)] == o) return true;
    return false;
  };
  std::unordered_map<const Value*, int> buffer_of;
  std::vector<int64_t> sizes;
  std::vector<BufferLifetime> lifetimes;
  int step = 0;
  auto touch = [&](const Value* v) {
    if (!v) return;
    int t = vtog.tensor_of(v);
    const Mapping* m = t >= 0 ? c.mapping[size_t(t)] : nullptr;
    for (const Value* stored : stored_values(v, m)) {
      if (!in_arena(stored)) continue;
      auto [it, fresh] = buffer_of.emplace(stored, int(sizes.size()));
      if (fresh) {
        sizes.push_back(arena_bytes(int64_t(stored->type.nbytes())));
        lifetimes.push_back({step, step});
      }
      lifetimes[size_t(it->second)].last_step = step;
    }
  };
  for (const VtogStep& s : vtog.steps) {
    if (s.step.is_kernel) {
      const Kernel& k = kg_.kernels[size_t(s.step.index)];
      for (const Value* v : k.inputs)
        touch(v);
      for (const Value* v : k.outputs)
        touch(v);
    } else {
      bool runs = false;
      for (int u : vtog.movement[size_t(s.step.index)].units)
        runs = runs || !realized(u);
      if (!runs) continue;
      const Node* n = kg_.movement[size_t(s.step.index)];
      for (const Value* v : n->inputs)
        touch(v);
      for (const Value* v : n->outputs)
        touch(v);
    }
    ++step;
  }
  return place_in_arena(sizes, lifetimes).peak_bytes;
}

} // namespace vtc
