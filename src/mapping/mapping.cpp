// Pieces and mappings: construction helpers, point evaluation and the text printer.
#include "mapping/mapping.h"

#include "vtc/error.h"

namespace vtc {

Box full_box(const Shape& shape) {
  Box b;
  for (int64_t d : shape)
    b.push_back({0, d});
  return b;
}

int64_t box_volume(const Box& b) {
  int64_t v = 1;
  for (const Range& r : b)
    v *= r.size();
  return v;
}

IndexExpr box_var(const Box& b, int d) {
  // An empty range is never evaluated; a constant keeps the expressions well formed.
  if (b[d].size() == 0) return IndexExpr::constant(b[d].lo);
  return IndexExpr::var(d, b[d].lo, b[d].hi);
}

std::vector<IndexExpr> box_vars(const Box& b) {
  std::vector<IndexExpr> v;
  for (int d = 0; d < int(b.size()); ++d)
    v.push_back(box_var(b, d));
  return v;
}

Mapping single_piece(const Shape& shape, const Base* base, std::vector<IndexExpr> index) {
  VTC_CHECK(base && int(index.size()) == base->rank())
      << "mapping onto " << (base ? base->name : "null") << " needs one index per dimension";
  Mapping m{shape, {}};
  if (shape_numel(shape) > 0)
    m.pieces.push_back(Piece{full_box(shape), {}, base, std::move(index), 0});
  return m;
}

Mapping identity_mapping(const Base* base) {
  return single_piece(base->shape, base, box_vars(full_box(base->shape)));
}

Piece restrict_piece(const Piece& p, const Box& sub) {
  std::vector<IndexExpr> repl(sub.size());
  for (int d = 0; d < int(sub.size()); ++d)
    if (sub[d] != p.guard[d]) repl[d] = box_var(sub, d);
  Piece q = p;
  q.guard = sub;
  for (IndexExpr& e : q.index)
    e = substitute(e, repl);
  for (Search& s : q.searches)
    for (auto& [a, b] : s.eqs) {
      a = substitute(a, repl);
      b = substitute(b, repl);
    }
  prune_searches(q);
  return q;
}

bool prune_searches(Piece& p) {
  for (Search& s : p.searches) {
    for (auto& [a, b] : s.eqs)
      if (a.is_constant() && b.is_constant() && a != b) return false;
    std::erase_if(s.eqs, [](const auto& eq) { return eq.first == eq.second; });
  }
  return true;
}

IndexExpr flat_offset(const Piece& p) {
  VTC_CHECK(p.base) << "a constant piece has no offset";
  Shape strides = shape_strides(p.base->shape);
  IndexExpr off = IndexExpr::constant(0);
  for (size_t d = 0; d < p.index.size(); ++d)
    off = off + p.index[d] * strides[d];
  return off;
}

Interval bounds(IndexExpr e, const Box& box) {
  std::vector<IndexExpr> repl = box_vars(box);
  return substitute(e, repl).bounds();
}

namespace {

// Finds the value of search k (the last s that satisfies every equality), with variables
// 0..r+k-1 already set in `vars`.
bool run_search(const Search& s, std::vector<int64_t>& vars, const LoadFn& load) {
  size_t slot = vars.size();
  vars.push_back(0);
  int64_t found = -1;
  for (int64_t v = 0; v < s.extent; ++v) {
    vars[slot] = v;
    bool all = true;
    for (const auto& [a, b] : s.eqs)
      if (eval(a, vars, load) != eval(b, vars, load)) {
        all = false;
        break;
      }
    if (all) found = v;
  }
  vars[slot] = found;
  return found >= 0;
}

} // namespace

std::optional<Located> locate(const Mapping& m, std::span<const int64_t> index,
                              const LoadFn& load) {
  VTC_CHECK(int(index.size()) == m.rank())
      << "index of rank " << index.size() << " into a mapping of rank " << m.rank();
  for (int k = 0; k < int(m.pieces.size()); ++k) {
    const Piece& p = m.pieces[k];
    bool inside = true;
    for (int d = 0; d < p.rank() && inside; ++d)
      inside = index[d] >= p.guard[d].lo && index[d] < p.guard[d].hi;
    if (!inside) continue;
    std::vector<int64_t> vars(index.begin(), index.end());
    bool found = true;
    for (const Search& s : p.searches)
      if (!(found = run_search(s, vars, load))) break;
    if (!found) continue;
    Located loc;
    loc.piece = k;
    loc.base = p.base;
    loc.value = p.value;
    for (IndexExpr e : p.index)
      loc.index.push_back(eval(e, vars, load));
    return loc;
  }
  return std::nullopt;
}

std::string to_string(const Piece& p) {
  int r = p.rank();
  VarNamer name = [r](int id) {
    return id < r ? "i" + std::to_string(id) : "s" + std::to_string(id - r);
  };
  std::string out = "[";
  for (int d = 0; d < r; ++d)
    out += (d ? ", " : "") + std::to_string(p.guard[d].lo) + ":" + std::to_string(p.guard[d].hi);
  out += "]";
  for (size_t k = 0; k < p.searches.size(); ++k) {
    out += " search s" + std::to_string(k) + " in [0:" + std::to_string(p.searches[k].extent) +
           ") where ";
    for (size_t q = 0; q < p.searches[k].eqs.size(); ++q)
      out += (q ? " and " : "") + to_string(p.searches[k].eqs[q].first, name) +
             " == " + to_string(p.searches[k].eqs[q].second, name);
  }
  out += " -> ";
  if (p.is_constant()) {
    std::ostringstream os;
    os << "constant " << p.value;
    return out + os.str();
  }
  out += p.base->name + "[";
  for (size_t d = 0; d < p.index.size(); ++d)
    out += (d ? ", " : "") + to_string(p.index[d], name);
  return out + "]";
}

std::string to_string(const Mapping& m) {
  std::string out = "map " + shape_str(m.shape) + "\n";
  for (size_t k = 0; k < m.pieces.size(); ++k)
    out += "  piece " + std::to_string(k) + ": " + to_string(m.pieces[k]) + "\n";
  return out;
}

} // namespace vtc
