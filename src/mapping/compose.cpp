// compose(): pulls inner guards back through outer index expressions and substitutes.
#include "mapping/compose.h"

#include "vtc/error.h"

namespace vtc {
namespace {

// +1 non-decreasing, -1 non-increasing, 2 constant, 0 unknown — in every variable.
int monotonicity(IndexExpr e) {
  switch (e.kind()) {
  case ExprKind::constant:
    return 2;
  case ExprKind::var:
    return 1;
  case ExprKind::floordiv:
    return monotonicity(e.arg());
  case ExprKind::mod:
  case ExprKind::load:
    return 0;
  case ExprKind::sum: {
    int dir = 2;
    for (auto& [c, atom] : e.sum_terms()) {
      int m = monotonicity(atom);
      if (m == 0) return 0;
      if (m == 2) continue;
      m = c > 0 ? m : -m;
      if (dir == 2)
        dir = m;
      else if (dir != m)
        return 0;
    }
    return dir;
  }
  }
  return 0;
}

int64_t eval_at(IndexExpr e, int var, int64_t v) {
  std::vector<int64_t> vars(size_t(var) + 1, 0);
  vars[size_t(var)] = v;
  return eval(e, vars);
}

// First x in [lo, hi) with pred(x) true, for pred false...true over the range; hi when none.
template <typename Pred> int64_t first_true(int64_t lo, int64_t hi, Pred pred) {
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (pred(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

constexpr int64_t kMaxEnumerate = int64_t(1) << 16;
constexpr size_t kMaxRuns = 64;

// The outer piece restricted to where its index expressions fall inside the inner guard; one
// result per sub-box, or a reason.
Result<std::vector<Piece>> pull_back(const Piece& outer, const Box& inner_guard) {
  std::vector<Piece> parts{outer};
  for (size_t d = 0; d < inner_guard.size(); ++d) {
    std::vector<Piece> next;
    Range t = inner_guard[d];
    for (Piece& part : parts) {
      IndexExpr e = part.index[d];
      Interval b = e.bounds();
      if (b.within(t.lo, t.hi - 1)) {
        next.push_back(std::move(part));
        continue;
      }
      if (b.hi < t.lo || b.lo >= t.hi) continue;
      int v = e.single_var();
      if (v < 0 || v >= part.rank())
        return Result<std::vector<Piece>>::fail(
            "index " + to_string(e) + " crosses the inner guard [" + std::to_string(t.lo) + ":" +
            std::to_string(t.hi) + ") and depends on more than one virtual index");
      auto runs = preimage(e, v, part.guard[v], t);
      if (!runs)
        return Result<std::vector<Piece>>::fail("the preimage of [" + std::to_string(t.lo) + ":" +
                                                std::to_string(t.hi) + ") under " + to_string(e) +
                                                " is not a small union of ranges");
      for (Range r : *runs) {
        Box sub = part.guard;
        sub[v] = r;
        next.push_back(restrict_piece(part, sub));
      }
    }
    parts = std::move(next);
    if (parts.size() > kMaxComposedPieces)
      return Result<std::vector<Piece>>::fail("composition needs more than " +
                                              std::to_string(kMaxComposedPieces) + " pieces");
  }
  return {std::move(parts), {}};
}

// outer (already restricted) followed by inner: inner's expressions over outer's.
Piece chain(const Piece& outer, const Piece& inner) {
  int r = outer.rank();
  size_t w = inner.guard.size();
  std::vector<IndexExpr> repl(w + inner.searches.size());
  for (size_t d = 0; d < w; ++d)
    repl[d] = outer.index[d];
  for (size_t k = 0; k < inner.searches.size(); ++k)
    repl[w + k] = IndexExpr::var(r + int(outer.searches.size() + k), 0, inner.searches[k].extent);
  Piece p;
  p.guard = outer.guard;
  p.searches = outer.searches;
  for (const Search& s : inner.searches) {
    Search t{s.extent, {}};
    for (auto& [a, b] : s.eqs)
      t.eqs.emplace_back(substitute(a, repl), substitute(b, repl));
    p.searches.push_back(std::move(t));
  }
  p.base = inner.base;
  p.value = inner.value;
  for (IndexExpr e : inner.index)
    p.index.push_back(substitute(e, repl));
  return p;
}

bool contains(const Box& outer, const Box& inner) {
  for (size_t d = 0; d < outer.size(); ++d)
    if (inner[d].lo < outer[d].lo || inner[d].hi > outer[d].hi) return false;
  return true;
}

// Drops pieces that an earlier unconditional piece shadows entirely.
void drop_unreachable(Mapping& m) {
  std::vector<Piece> kept;
  for (Piece& p : m.pieces) {
    bool shadowed = false;
    for (const Piece& q : kept)
      if (q.searches.empty() && contains(q.guard, p.guard)) shadowed = true;
    if (!shadowed && box_volume(p.guard) > 0) kept.push_back(std::move(p));
  }
  m.pieces = std::move(kept);
}

} // namespace

std::optional<std::vector<Range>> preimage(IndexExpr e, int var, Range within, Range target) {
  int mono = monotonicity(e);
  auto in = [&](int64_t x) {
    int64_t y = eval_at(e, var, x);
    return y >= target.lo && y < target.hi;
  };
  if (mono == 2) {
    if (in(within.lo)) return std::vector<Range>{within};
    return std::vector<Range>{};
  }
  if (mono != 0) {
    // e moves one way: the preimage is one range, found by two binary searches.
    auto at = [&](int64_t x) { return eval_at(e, var, x); };
    int64_t a, b;
    if (mono > 0) {
      a = first_true(within.lo, within.hi, [&](int64_t x) { return at(x) >= target.lo; });
      b = first_true(within.lo, within.hi, [&](int64_t x) { return at(x) >= target.hi; });
    } else {
      a = first_true(within.lo, within.hi, [&](int64_t x) { return at(x) < target.hi; });
      b = first_true(within.lo, within.hi, [&](int64_t x) { return at(x) < target.lo; });
    }
    if (a >= b) return std::vector<Range>{};
    return std::vector<Range>{{a, b}};
  }
  if (within.size() > kMaxEnumerate) return std::nullopt;
  std::vector<Range> runs;
  for (int64_t x = within.lo; x < within.hi; ++x) {
    if (!in(x)) continue;
    if (!runs.empty() && runs.back().hi == x)
      runs.back().hi = x + 1;
    else
      runs.push_back({x, x + 1});
    if (runs.size() > kMaxRuns) return std::nullopt;
  }
  return runs;
}

Result<Mapping> compose(const Mapping& outer, const Base* w, const Mapping& inner) {
  VTC_CHECK(w && inner.shape == w->shape)
      << "compose: inner mapping of shape " << shape_str(inner.shape) << " for base "
      << (w ? w->name + shape_str(w->shape) : std::string("null"));
  Mapping out{outer.shape, {}};
  for (const Piece& p : outer.pieces) {
    if (p.base != w) {
      out.pieces.push_back(p);
      continue;
    }
    for (const Piece& q : inner.pieces) {
      Result<std::vector<Piece>> parts = pull_back(p, q.guard);
      if (!parts.ok())
        return Result<Mapping>::fail("compose through " + w->name + ": " + parts.reason);
      for (const Piece& part : *parts) {
        Piece c = chain(part, q);
        if (prune_searches(c)) out.pieces.push_back(std::move(c));
      }
      if (out.pieces.size() > kMaxComposedPieces)
        return Result<Mapping>::fail("compose through " + w->name + ": more than " +
                                     std::to_string(kMaxComposedPieces) + " pieces");
    }
  }
  drop_unreachable(out);
  return {std::move(out), {}};
}

} // namespace vtc
