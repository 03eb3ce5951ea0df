// Step touches, lifetimes and the placement of a candidate's buffers, updated where it changed.
#include "runtime/candidate_peak.h"

#include <algorithm>
#include <set>

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

int CandidatePeak::buffer_of(const Value* v) {
  auto [it, fresh] = ids_.emplace(v, int(buffers_.size()));
  if (fresh) {
    buffers_.emplace_back();
    buffers_.back().size = arena_bytes(int64_t(v->type.nbytes()));
  }
  return it->second;
}

// The arena buffers step s touches under candidate c, in lower_program's order.
std::vector<int> CandidatePeak::touched(const Vtog& vtog, const CandidateStorage& c, int s) {
  std::vector<int> out;
  auto touch = [&](const Value* v) {
    if (!v) return;
    int t = vtog.tensor_of(v);
    for (const Value* stored : stored_values(v, t >= 0 ? c.mapping[size_t(t)] : nullptr))
      if (in_arena(stored)) out.push_back(buffer_of(stored));
  };
  const Step& step = vtog.steps[size_t(s)].step;
  if (step.is_kernel) {
    const Kernel& k = kg_.kernels[size_t(step.index)];
    for (const Value* v : k.inputs)
      touch(v);
    for (const Value* v : k.outputs)
      touch(v);
    return out;
  }
  bool runs = false;
  for (int u : vtog.movement[size_t(step.index)].units) {
    bool realized = false;
    for (int o : vtog.units[size_t(u)].realized_by)
      realized = realized || c.choice[size_t(vtog.options[size_t(o)].tensor)] == o;
    runs = runs || !realized;
  }
  if (!runs) return out;
  const Node* n = kg_.movement[size_t(step.index)];
  for (const Value* v : n->inputs)
    touch(v);
  for (const Value* v : n->outputs)
    touch(v);
  return out;
}

// Touches step s again; buffers whose lifetime or order may have changed go to `dirty`.
void CandidatePeak::retouch(const Vtog& vtog, const CandidateStorage& c, int s,
                            std::vector<int>& dirty) {
  std::vector<int> now = touched(vtog, c, s);
  std::vector<int>& old = touches_[size_t(s)];
  if (now == old) return;
  std::vector<int> a = old, b = now;
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  for (int id : a)
    if (!std::binary_search(b.begin(), b.end(), id)) {
      std::vector<int>& st = buffers_[size_t(id)].steps;
      st.erase(std::lower_bound(st.begin(), st.end(), s));
    }
  for (int id : b)
    if (!std::binary_search(a.begin(), a.end(), id)) {
      std::vector<int>& st = buffers_[size_t(id)].steps;
      st.insert(std::lower_bound(st.begin(), st.end(), s), s);
    }
  // Every buffer either list names: its lifetime or its position in this step may change.
  dirty.insert(dirty.end(), a.begin(), a.end());
  dirty.insert(dirty.end(), b.begin(), b.end());
  old = std::move(now);
}

// Every present buffer live at some step of [first, last]: those live at `first`, and those
// whose lifetime starts after it, inside the range.
void CandidatePeak::overlapping(int first, int last, std::vector<int>& out) const {
  if (first < 0) return;
  out.insert(out.end(), live_[size_t(first)].begin(), live_[size_t(first)].end());
  for (int s = first + 1; s <= last; ++s)
    out.insert(out.end(), starting_[size_t(s)].begin(), starting_[size_t(s)].end());
}

// Places buffer b after every buffer before it in order (best fit, as place_in_arena does).
// Offsets and sizes are multiples of kArenaAlignment: a taken range is sorted as one word.
int64_t CandidatePeak::place(int b) {
  const Buffer& buf = buffers_[size_t(b)];
  near_.clear();
  overlapping(buf.first, buf.last, near_);
  taken_.clear();
  for (int other : near_)
    if (before(other, b)) {
      const Buffer& o = buffers_[size_t(other)];
      taken_.push_back(uint64_t(o.offset / kArenaAlignment) << 32 |
                       uint64_t((o.offset + o.size) / kArenaAlignment));
    }
  std::sort(taken_.begin(), taken_.end());
  int64_t best = -1, best_waste = 0, cursor = 0;
  for (uint64_t range : taken_) {
    int64_t begin = int64_t(range >> 32) * kArenaAlignment;
    int64_t end = int64_t(range & 0xffffffffu) * kArenaAlignment;
    int64_t gap = begin - cursor;
    if (gap >= buf.size && (best < 0 || gap - buf.size < best_waste)) {
      best = cursor;
      best_waste = gap - buf.size;
    }
    cursor = std::max(cursor, end);
  }
  return best < 0 ? cursor : best;
}

int64_t CandidatePeak::operator()(const Vtog& vtog, const CandidateStorage& c) {
  std::vector<int> steps;
  if (!started_) {
    started_ = true;
    touches_.assign(vtog.steps.size(), {});
    live_.assign(vtog.steps.size(), {});
    starting_.assign(vtog.steps.size(), {});
    for (size_t s = 0; s < vtog.steps.size(); ++s)
      steps.push_back(int(s));
  } else {
    for (int t : c.changed) {
      const VtogTensor& tensor = vtog.tensors[size_t(t)];
      if (tensor.producer_step >= 0) steps.push_back(tensor.producer_step);
      steps.insert(steps.end(), tensor.reader_steps.begin(), tensor.reader_steps.end());
      for (int o : tensor.options)
        steps.push_back(vtog.movement[size_t(vtog.options[size_t(o)].movement)].step);
    }
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  }
  std::vector<int> dirty;
  for (int s : steps)
    retouch(vtog, c, s, dirty);
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());

  // New lifetimes and order keys; the live lists follow. Buffers beside a changed one, before
  // or after the change, are placed again.
  auto cmp = [this](int a, int b) { return before(a, b); };
  std::vector<int> again, moved;
  auto beside = [&](int first, int last) { overlapping(first, last, again); };
  auto drop = [](std::vector<int>& list, int id) {
    auto it = std::find(list.begin(), list.end(), id);
    *it = list.back();
    list.pop_back();
  };
  for (int id : dirty) {
    Buffer& b = buffers_[size_t(id)];
    int first = b.steps.empty() ? -1 : b.steps.front();
    int last = b.steps.empty() ? -1 : b.steps.back();
    int seq = 0;
    if (first >= 0) {
      const std::vector<int>& t = touches_[size_t(first)];
      seq = int(std::find(t.begin(), t.end(), id) - t.begin());
    }
    if (first == b.first && last == b.last && seq == b.seq) continue;
    moved.push_back(id);
    beside(b.first, b.last);
    for (int s = b.first; s >= 0 && s <= b.last; ++s)
      drop(live_[size_t(s)], id);
    if (b.first >= 0) drop(starting_[size_t(b.first)], id);
    b.first = first, b.last = last, b.seq = seq;
    for (int s = first; s >= 0 && s <= last; ++s)
      live_[size_t(s)].push_back(id);
    if (first >= 0) starting_[size_t(first)].push_back(id);
    beside(first, last);
  }
  std::set<int, decltype(cmp)> queue(cmp);
  for (int id : again)
    if (buffers_[size_t(id)].present()) queue.insert(id);
  std::sort(moved.begin(), moved.end());
  std::vector<int> near;
  near.reserve(64);
  while (!queue.empty()) {
    int id = *queue.begin();
    queue.erase(queue.begin());
    Buffer& b = buffers_[size_t(id)];
    int64_t offset = place(id);
    if (offset == b.offset && !std::binary_search(moved.begin(), moved.end(), id)) continue;
    b.offset = offset;
    near.clear();
    overlapping(b.first, b.last, near);
    for (int other : near)
      if (before(id, other)) queue.insert(other);
  }
  int64_t peak = 0;
  for (const Buffer& b : buffers_)
    if (b.present()) peak = std::max(peak, b.offset + b.size);
  return peak;
}

} // namespace vtc
