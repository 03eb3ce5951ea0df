// The greedy loop: moves, a lazily updated priority queue, and the re-measurement of neighbours.
#include "strategy/greedy.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <set>

namespace vtc {
namespace {

struct Entry {
  int64_t key = 0; // (saving - forfeit) in picoseconds
  int pref = 0;    // write-side options in the move
  int move = 0;
  int version = 0;
};

struct Worse {
  bool operator()(const Entry& a, const Entry& b) const {
    if (a.key != b.key) return a.key < b.key;
    if (a.pref != b.pref) return a.pref < b.pref;
    return a.move > b.move;
  }
};

int64_t picoseconds(double s) {
  return std::llround(s * 1e12);
}

class Greedy {
public:
  Greedy(const Vtog& g, const CostModel& model, bool type1_only, const PeakOfCandidate& peak_of,
         double peak_slack)
      : g_(g), a_(g, model), type1_only_(type1_only), move_of_option_(g.options.size()),
        peak_slack_(peak_slack) {
    if (!type1_only && peak_of) peak_of_ = peak_of;
  }

  SearchResult run() {
    build_moves();
    version_.assign(moves_.size(), 0);
    held_.assign(moves_.size(), false);
    if (peak_of_) {
      candidate_.choice.assign(g_.tensors.size(), -1);
      candidate_.mapping.assign(g_.tensors.size(), nullptr);
      peak_ = physical_peak_ = peak_of_(candidate_);
    }
    for (size_t m = 0; m < moves_.size(); ++m)
      measure(int(m));
    while (!queue_.empty()) {
      Entry e = queue_.top();
      queue_.pop();
      if (e.version != version_[size_t(e.move)] || !live(e.move)) continue;
      Trial t = a_.trial(moves_[size_t(e.move)]);
      ++result_.trials;
      if (!t.legal) continue;
      int64_t key = picoseconds(t.saving - t.forfeit);
      if (key != e.key) { // stale: queue it again with its current value
        push(e.move, key);
        continue;
      }
      if (!type1_only_ && picoseconds(t.saving) <= 0) continue;
      if (raises_peak(e.move, t)) continue;
      take(e.move, t);
    }
    result_.options = chosen();
    return std::move(result_);
  }

private:
  bool eligible(int o) const {
    if (!a_.static_reason(o).empty()) return false;
    return !type1_only_ || g_.options[size_t(o)].type == Profitability::type1;
  }

  void add_move(std::vector<int> options) {
    int id = int(moves_.size());
    for (int o : options)
      move_of_option_[size_t(o)].push_back(id);
    int pref = 0;
    for (int o : options)
      pref += g_.options[size_t(o)].kind != OptionKind::read;
    pref_.push_back(pref);
    moves_.push_back(std::move(options));
  }

  void build_moves() {
    for (size_t o = 0; o < g_.options.size(); ++o)
      if (eligible(int(o))) add_move({int(o)});
    for (const VtogMovement& mv : g_.movement) {
      std::vector<int> read, write, in_place;
      std::set<int> read_t, write_t;
      for (int o : mv.options) {
        const VtogOption& opt = g_.options[size_t(o)];
        if (!eligible(o)) continue;
        if (opt.kind == OptionKind::read && read_t.insert(opt.tensor).second) read.push_back(o);
        if (opt.kind == OptionKind::write && write_t.insert(opt.tensor).second) write.push_back(o);
        if (opt.kind == OptionKind::in_place) in_place.push_back(o);
      }
      if (read.size() > 1) add_move(read);
      if (write.size() > 1) add_move(write);
      // The output updated in place, with the writes that realize the other units.
      for (int ip : in_place) {
        std::vector<int> group{ip};
        const std::vector<int>& done = g_.options[size_t(ip)].units;
        for (int o : write) {
          bool overlap = false;
          for (int u : g_.options[size_t(o)].units)
            overlap = overlap || std::find(done.begin(), done.end(), u) != done.end();
          if (!overlap) group.push_back(o);
        }
        if (group.size() > 1) add_move(group);
      }
    }
  }

  std::vector<int> chosen() const {
    std::vector<int> out;
    for (size_t t = 0; t < g_.tensors.size(); ++t)
      if (a_.choice(int(t)) >= 0) out.push_back(a_.choice(int(t)));
    std::sort(out.begin(), out.end());
    return out;
  }

  // Whether taking move m would raise the peak memory beyond what the slack allows; such a move
  // is held back for good.
  bool raises_peak(int m, const Trial& t) {
    if (!peak_of_) return false;
    std::vector<std::pair<int, const Mapping*>> before;
    for (auto& [tensor, c] : t.composed)
      before.push_back({tensor, candidate_.mapping[size_t(tensor)]});
    overlay(t);
    int64_t after = peak_of_(candidate_);
    const int64_t allowed =
        std::min(physical_peak_, peak_ + int64_t(std::floor(double(peak_) * peak_slack_)));
    if (after <= allowed) {
      peak_ = std::min(peak_, after);
      return false;
    }
    for (int o : t.options)
      candidate_.choice[size_t(g_.options[size_t(o)].tensor)] = -1;
    for (auto [tensor, mapping] : before)
      candidate_.mapping[size_t(tensor)] = mapping;
    changed_since_asked_ = candidate_.changed; // the next question sees them restored
    held_[size_t(m)] = true;
    const VtogOption& first = g_.options[size_t(moves_[size_t(m)].front())];
    result_.held_back.push_back({moves_[size_t(m)], first.movement, t.saving, peak_, after});
    return true;
  }

  // The candidate with trial t's choices and composed mappings installed; `changed` names
  // them and whatever a held-back move left to restore.
  void overlay(const Trial& t) {
    candidate_.changed = std::move(changed_since_asked_);
    changed_since_asked_.clear();
    for (int o : t.options)
      candidate_.choice[size_t(g_.options[size_t(o)].tensor)] = o;
    for (auto& [tensor, c] : t.composed) {
      candidate_.mapping[size_t(tensor)] = &c->mapping;
      candidate_.changed.push_back(tensor);
    }
  }

  bool live(int m) const {
    if (held_[size_t(m)]) return false;
    for (int o : moves_[size_t(m)])
      if (a_.choice(g_.options[size_t(o)].tensor) >= 0) return false;
    return true;
  }

  void push(int m, int64_t key) { queue_.push({key, pref_[size_t(m)], m, ++version_[size_t(m)]}); }

  void measure(int m) {
    if (!live(m)) return;
    Trial t = a_.trial(moves_[size_t(m)]);
    ++result_.trials;
    if (t.legal)
      push(m, picoseconds(t.saving - t.forfeit));
    else
      ++version_[size_t(m)]; // drop queued entries until a neighbour changes
  }

  void take(int m, const Trial& t) {
    a_.commit(t);
    if (peak_of_)
      for (auto& [tensor, c] : t.composed)
        candidate_.mapping[size_t(tensor)] = &a_.composed(tensor)->mapping;
    const VtogOption& first = g_.options[size_t(moves_[size_t(m)].front())];
    result_.commits.push_back({moves_[size_t(m)], first.movement, t.saving, t.forfeit});
    std::set<int> tensors;
    for (auto& [tensor, c] : t.composed) {
      tensors.insert(tensor);
      for (int b : c->bases)
        tensors.insert(b);
      for (int e : g_.tensors[size_t(tensor)].in_edges)
        tensors.insert(g_.edges[size_t(e)].from);
    }
    for (int o : moves_[size_t(m)]) {
      const VtogOption& opt = g_.options[size_t(o)];
      for (int e : opt.edges)
        tensors.insert(g_.edges[size_t(e)].to);
      for (int other : g_.movement[size_t(opt.movement)].options)
        tensors.insert(g_.options[size_t(other)].tensor);
    }
    std::set<int> again;
    for (int x : tensors)
      for (int o : g_.tensors[size_t(x)].options)
        for (int mv : move_of_option_[size_t(o)])
          again.insert(mv);
    for (int mv : again)
      measure(mv);
  }

  const Vtog& g_;
  Assignment a_;
  bool type1_only_;
  std::vector<std::vector<int>> moves_;
  std::vector<int> pref_;
  std::vector<std::vector<int>> move_of_option_;
  std::vector<int> version_;
  std::vector<bool> held_;
  PeakOfCandidate peak_of_;
  CandidateStorage candidate_;           // the committed state, as peak_of_ sees it
  std::vector<int> changed_since_asked_; // tensors restored after the last question
  double peak_slack_ = 0;
  int64_t peak_ = 0;          // the lowest peak of a committed state
  int64_t physical_peak_ = 0; // the peak with everything physical
  std::priority_queue<Entry, std::vector<Entry>, Worse> queue_;
  SearchResult result_;
};

} // namespace

SearchResult greedy_search(const Vtog& g, const CostModel& model, bool type1_only,
                           const PeakOfCandidate& peak_of, double peak_slack) {
  return Greedy(g, model, type1_only, peak_of, peak_slack).run();
}

} // namespace vtc
