// Run lengths by substitution: the innermost k virtual dimensions are flattened into one index
// f = h·q + l (l < q) and the physical offset is re-simplified; a run of q holds when the offset
// is exactly l plus terms free of l. The simplifier's div/mod rules do the reasoning. A piece
// found by a search holds a run only over dimensions its search equations do not read.
#include "mapping/contiguity.h"

#include <algorithm>
#include <numeric>

namespace vtc {
namespace {

std::vector<int64_t> divisors_descending(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t k = 1; k * k <= n; ++k)
    if (n % k == 0) {
      d.push_back(k);
      if (k != n / k) d.push_back(n / k);
    }
  std::sort(d.rbegin(), d.rend());
  return d;
}

// The offset with the last `k` guard dimensions replaced by the flat index h·q + l; h and l are
// fresh variables `fresh` and `fresh + 1`. False when the run does not hold.
bool run_holds(const Piece& p, IndexExpr offset, int k, int64_t q, int fresh, int64_t* align) {
  int r = p.rank();
  int64_t total = 1;
  for (int d = r - k; d < r; ++d)
    total *= p.guard[d].size();
  IndexExpr h = IndexExpr::var(fresh, 0, total / q), l = IndexExpr::var(fresh + 1, 0, q);
  IndexExpr f = h * q + l;
  std::vector<IndexExpr> repl(static_cast<size_t>(fresh));
  int64_t stride = 1;
  for (int d = r - 1; d >= r - k; --d) {
    repl[size_t(d)] = mod(floordiv(f, stride), p.guard[d].size()) + p.guard[d].lo;
    stride *= p.guard[d].size();
  }
  IndexExpr e = substitute(offset, repl);
  int64_t g = e.sum_constant();
  bool unit = false;
  for (auto& [c, atom] : e.sum_terms()) {
    if (atom.kind() == ExprKind::var && atom.var_id() == fresh + 1) {
      unit = c == 1;
      continue;
    }
    if (atom.uses_var(fresh + 1)) return false;
    g = std::gcd(g, c);
  }
  if (!unit && q > 1) return false;
  *align = g == 0 ? q : std::gcd(g, q);
  return true;
}

} // namespace

const char* profitability_name(Profitability p) {
  switch (p) {
  case Profitability::type1:
    return "Type I";
  case Profitability::partial:
    return "partially contiguous";
  case Profitability::type2:
    return "Type II";
  }
  return "?";
}

Contiguity piece_contiguity(const Piece& p) {
  Contiguity c;
  int r = p.rank();
  if (p.is_constant() || r == 0 || box_volume(p.guard) == 0) return c;
  IndexExpr offset = flat_offset(p);
  int fresh = r + int(p.searches.size());
  // Whether a search's equations read dimension d: the piece then holds or not, and finds
  // its row, element by element along it.
  auto searched = [&](int d) {
    for (const Search& s : p.searches)
      for (const auto& [a, b] : s.eqs)
        if (a.uses_var(d) || b.uses_var(d)) return true;
    return false;
  };
  for (int k = 1; k <= r; ++k) {
    if (searched(r - k)) break;
    int64_t total = 1;
    for (int d = r - k; d < r; ++d)
      total *= p.guard[d].size();
    int64_t best = 0, align = 1;
    for (int64_t q : divisors_descending(total))
      if (run_holds(p, offset, k, q, fresh, &align)) {
        best = q;
        break;
      }
    if (best > c.run || k == 1) c.run = std::max<int64_t>(best, 1), c.alignment = best ? align : 1;
    if (best != total) break;
  }
  return c;
}

Contiguity contiguity(const Mapping& m, int64_t elem_bytes, int64_t transaction_bytes) {
  Contiguity out;
  bool first = true;
  int data_pieces = 0;
  for (const Piece& p : m.pieces) {
    if (p.is_constant()) continue;
    ++data_pieces;
    Contiguity c = piece_contiguity(p);
    // A run must not straddle the piece's start on the innermost dimension.
    if (p.rank() > 0 && p.guard.back().lo != 0) c.run = std::gcd(c.run, p.guard.back().lo);
    if (first || c.run < out.run) out.run = c.run, out.alignment = std::gcd(c.alignment, c.run);
    first = false;
  }
  const Piece* only = m.pieces.size() == 1 ? &m.pieces[0] : nullptr;
  bool type1 = only && !only->is_constant() && only->searches.empty() &&
               only->guard == full_box(m.shape) && out.run == shape_numel(m.shape);
  if (data_pieces == 0) out.run = shape_numel(m.shape);
  if (type1)
    out.type = Profitability::type1;
  else if (out.run * elem_bytes >= transaction_bytes)
    out.type = Profitability::partial;
  else
    out.type = Profitability::type2;
  return out;
}

} // namespace vtc
