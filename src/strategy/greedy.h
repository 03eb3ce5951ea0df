// The points-to graph search (paper §5.2, figure 10): global greedy over the VTOG. Everything
// starts physical. Each round takes the move with the largest latency saving and re-measures
// the moves whose saving it can change — those with edges pointing at the tensors it made
// virtual (they now compose through them), at their bases, and at the same data-movement node
// — until the best saving is ≤ 0. A move makes one tensor virtual through one option (its
// compatible out-edges), or makes every input (or every output) of one data-movement node
// virtual at once, so that the three writes of a Concat's inputs into its output compete with
// its one read as a whole.
//
// Moves are ranked by saving minus forfeit (the copy work the move makes impossible to remove
// later: making a Concat input virtual of the Concat's output strands the Slice that produces
// it), then by the number of write-side options (a producer writing once through a mapping
// rather than every consumer reading through it), then by id — so the result is deterministic.
// Savings are compared in whole picoseconds. The paper's complexity holds: O(|V|) rounds, each
// re-measuring the moves next to what changed.
//
// Virtual tensors free memory but can also lengthen lifetimes: the output of a Concat made
// virtual from its write side is live from its first input's producer on. Given the peak memory
// of a candidate program, the search holds back every move that would raise it above the lowest
// peak seen so far by more than `peak_slack` of that peak, or above the peak with everything
// physical; the candidate is the committed state with the move's trial laid over it (no
// re-composition), so asking costs what the estimate costs. With no slack the peak only falls.
//
// `type1` is the same loop over options whose every edge is Type I (always profitable), which
// it takes whenever legal; `none` takes nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "strategy/assignment.h"

namespace vtc {

struct Commit {
  std::vector<int> options;
  int movement = 0;  // the data-movement node the move belongs to
  double saving = 0; // seconds, measured when taken
  double forfeit = 0;
};

// A move the search would have taken but held back because the program's peak memory with it
// would exceed the peak without it.
struct HeldBack {
  std::vector<int> options;
  int movement = 0;
  double saving = 0;       // seconds
  int64_t peak_before = 0; // bytes
  int64_t peak_after = 0;
};

struct SearchResult {
  std::vector<int> options; // chosen, ascending
  std::vector<Commit> commits;
  std::vector<HeldBack> held_back;
  int trials = 0; // moves evaluated
};

// A candidate points-to graph as a peak-memory estimate sees it, per VTOG tensor: its chosen
// option (-1: physical) and its composed mapping onto physical tensors (null: physical); and
// the tensors whose entries differ from the candidate asked about before (so that an estimate
// may update what it knew rather than start again).
struct CandidateStorage {
  std::vector<int> choice;
  std::vector<const Mapping*> mapping;
  std::vector<int> changed;
};

// The peak memory (bytes) of the program of a candidate.
using PeakOfCandidate = std::function<int64_t(const CandidateStorage& candidate)>;

// With `peak_of`, greedy never takes a move that raises the peak above (1 + peak_slack) times
// the lowest peak it has seen, nor above the peak of everything physical; type1 ignores it.
SearchResult greedy_search(const Vtog& g, const CostModel& model, bool type1_only,
                           const PeakOfCandidate& peak_of = {}, double peak_slack = 0);

} // namespace vtc
