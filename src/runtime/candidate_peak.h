// The arena size of the program a strategy candidate would lower to, kept up to date as the
// search asks about one candidate after another, without lowering or re-planning anything.
//
// The buffers are the physical intermediates the steps touch (a virtual operand touches its
// bases and the index tensors its mapping loads), each live from the first to the last step
// touching it, ordered for placement as plan_memory orders them (largest first, then first
// step, then the order lower_program creates them: first touch). Lowering also inserts
// index-check steps, but each reads only its index tensor right after that tensor's last
// writer, inside its lifetime, so overlaps are the same and the figure is plan_memory's.
//
// Between two questions only the tensors the search changed are looked at: the steps touching
// them are touched again, the buffers whose size, lifetime or order changed are placed again,
// and so is every later buffer beside a buffer that moved — a buffer's offset depends only on
// the buffers placed before it that are live beside it, so nothing else can move. On a
// layered model a question costs the layer it touches, not the model.
#pragma once

#include <cstdint>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "passes/kernel_graph.h"
#include "strategy/greedy.h"
#include "strategy/vtog.h"

namespace vtc {

class CandidatePeak {
public:
  CandidatePeak(const Graph& g, const KernelGraph& kg);
  // The arena size of `candidate`, whose `changed` lists the tensors that differ from the
  // candidate of the previous call (ignored on the first call, which looks at everything).
  int64_t operator()(const Vtog& vtog, const CandidateStorage& candidate);

private:
  struct Buffer {
    int64_t size = 0;
    std::vector<int> steps; // steps touching it, ascending, distinct
    int first = -1, last = -1, seq = 0;
    int64_t offset = 0;
    bool present() const { return first >= 0; }
    auto key() const { return std::make_tuple(-size, first, seq); }
  };

  bool in_arena(const Value* v) const;
  int buffer_of(const Value* v);
  std::vector<int> touched(const Vtog& vtog, const CandidateStorage& c, int step);
  void retouch(const Vtog& vtog, const CandidateStorage& c, int step, std::vector<int>& dirty);
  void overlapping(int first, int last, std::vector<int>& out) const;
  int64_t place(int b);
  bool before(int a, int b) const {
    return std::make_pair(buffers_[size_t(a)].key(), a) <
           std::make_pair(buffers_[size_t(b)].key(), b);
  }

  const KernelGraph& kg_;
  std::unordered_set<const Value*> bound_; // graph inputs and outputs: not in the arena
  std::unordered_map<const Value*, int> ids_;
  std::vector<Buffer> buffers_;
  std::vector<std::vector<int>> touches_;  // per VTOG step: buffers touched, in touch order
  std::vector<std::vector<int>> live_;     // per VTOG step: present buffers live there
  std::vector<std::vector<int>> starting_; // per VTOG step: present buffers live from there
  std::vector<int> near_;                  // place()'s scratch
  std::vector<uint64_t> taken_;
  bool started_ = false;
};

} // namespace vtc
