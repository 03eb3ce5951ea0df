// injective / covers decide symbolically where the offset is a plain strided form, and by
// enumerating every virtual index (through locate) where the tensors are small enough;
// otherwise the answer is unknown.
#include "mapping/analysis.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "mapping/layout.h"

namespace vtc {
namespace {

constexpr int64_t kMaxEnumerate = int64_t(1) << 22;

bool data_dependent(const Piece& p) {
  if (!p.searches.empty()) return true;
  for (IndexExpr e : p.index)
    if (e.has_load()) return true;
  return false;
}

// The offset is c + Σ a_k·i_k over distinct variables and the strides never overlap (sorted by
// |a|, each exceeds the span of the smaller ones): the piece alone is injective.
bool strided_injective(const Piece& p) {
  IndexExpr off = flat_offset(p);
  std::vector<std::pair<int64_t, int64_t>> strides; // |a|, extent
  for (auto& [c, atom] : off.sum_terms()) {
    if (atom.kind() != ExprKind::var) return false;
    strides.emplace_back(std::llabs(c), p.guard[size_t(atom.var_id())].size());
  }
  int64_t moving = 0; // guard dimensions that take more than one value must all move the offset
  for (const Range& r : p.guard)
    moving += r.size() > 1;
  if (moving != int64_t(strides.size())) return false;
  std::sort(strides.begin(), strides.end());
  int64_t span = 0;
  for (auto& [a, ext] : strides) {
    if (a <= span) return false;
    span += a * (ext - 1);
  }
  return true;
}

// Every (base, offset) a mapping reaches, by enumeration.
void enumerate(const Mapping& m, std::vector<std::pair<const Base*, int64_t>>& out) {
  Shape idx(m.shape.size(), 0);
  int64_t n = shape_numel(m.shape);
  std::map<const Base*, Shape> strides;
  for (int64_t flat = 0; flat < n; ++flat) {
    std::optional<Located> loc = locate(m, idx);
    if (loc && loc->base) {
      auto it = strides.try_emplace(loc->base, shape_strides(loc->base->shape)).first;
      int64_t off = 0;
      for (size_t d = 0; d < loc->index.size(); ++d)
        off += loc->index[d] * it->second[d];
      out.emplace_back(loc->base, off);
    }
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < m.shape[d]) break;
      idx[d] = 0;
    }
  }
}

bool has_duplicates(std::vector<std::pair<const Base*, int64_t>>& v) {
  std::sort(v.begin(), v.end());
  return std::adjacent_find(v.begin(), v.end()) != v.end();
}

bool intervals_disjoint(const std::vector<const Piece*>& ps) {
  for (size_t a = 0; a < ps.size(); ++a)
    for (size_t b = a + 1; b < ps.size(); ++b) {
      if (ps[a]->base != ps[b]->base) continue;
      Interval x = flat_offset(*ps[a]).bounds(), y = flat_offset(*ps[b]).bounds();
      if (!(x.hi < y.lo || y.hi < x.lo)) return false;
    }
  return true;
}

} // namespace

const char* tri_name(Tri t) {
  switch (t) {
  case Tri::no:
    return "no";
  case Tri::yes:
    return "yes";
  case Tri::unknown:
    return "unknown";
  }
  return "?";
}

Tri injective(const Mapping& m) {
  std::vector<const Piece*> data;
  for (const Piece& p : m.pieces) {
    if (p.is_constant()) continue;
    if (data_dependent(p)) return Tri::unknown;
    data.push_back(&p);
  }
  bool symbolic = intervals_disjoint(data);
  for (const Piece* p : data)
    symbolic = symbolic && strided_injective(*p);
  if (symbolic) return Tri::yes;
  if (shape_numel(m.shape) > kMaxEnumerate) return Tri::unknown;
  std::vector<std::pair<const Base*, int64_t>> hits;
  enumerate(m, hits);
  return has_duplicates(hits) ? Tri::no : Tri::yes;
}

Tri covers(const std::vector<const Mapping*>& writes, const Base* base) {
  int64_t volume = 0, total = 0;
  std::vector<const Piece*> data;
  for (const Mapping* m : writes) {
    total += shape_numel(m->shape);
    for (const Piece& p : m->pieces) {
      if (p.base != base) continue;
      if (data_dependent(p)) return Tri::unknown;
      data.push_back(&p);
      volume += box_volume(p.guard);
    }
  }
  bool symbolic = intervals_disjoint(data);
  for (const Piece* p : data)
    symbolic = symbolic && strided_injective(*p);
  if (symbolic) return volume == shape_numel(base->shape) ? Tri::yes : Tri::no;
  if (total > kMaxEnumerate) return Tri::unknown;
  std::vector<std::pair<const Base*, int64_t>> hits;
  for (const Mapping* m : writes)
    enumerate(*m, hits);
  std::erase_if(hits, [&](const auto& h) { return h.first != base; });
  if (int64_t(hits.size()) != shape_numel(base->shape) || has_duplicates(hits)) return Tri::no;
  return Tri::yes;
}

Result<Mapping> inverse(const Mapping& m, const Base* v) {
  if (m.pieces.size() != 1) return Result<Mapping>::fail("inverse needs exactly one piece");
  const Piece& p = m.pieces[0];
  if (p.is_constant() || data_dependent(p) || p.guard != full_box(m.shape))
    return Result<Mapping>::fail("inverse needs an unconditional piece over the whole tensor");
  if (shape_numel(m.shape) != shape_numel(p.base->shape))
    return Result<Mapping>::fail("inverse needs as many virtual as base elements (" +
                                 shape_str(m.shape) + " vs " + shape_str(p.base->shape) + ")");
  IndexExpr off = flat_offset(p);
  if (off.sum_constant() != 0)
    return Result<Mapping>::fail("inverse: the offset has a constant part");
  // Offset = Σ a_d·i_d with the a_d a permuted row-major layout of the virtual extents.
  std::vector<std::pair<int64_t, int>> terms; // a_d, d
  for (auto& [c, atom] : off.sum_terms()) {
    if (atom.kind() != ExprKind::var || c <= 0)
      return Result<Mapping>::fail("inverse: offset " + to_string(off) +
                                   " is not a positive strided form");
    terms.emplace_back(c, atom.var_id());
  }
  std::sort(terms.begin(), terms.end());
  int64_t expect = 1;
  for (auto& [a, d] : terms) {
    if (a != expect)
      return Result<Mapping>::fail("inverse: strides of " + to_string(off) + " leave gaps");
    expect *= m.shape[size_t(d)];
  }
  std::vector<IndexExpr> j = box_vars(full_box(p.base->shape));
  IndexExpr flat = flatten_index(j, p.base->shape);
  std::vector<IndexExpr> i(m.shape.size(), IndexExpr::constant(0));
  for (auto& [a, d] : terms)
    i[size_t(d)] = mod(floordiv(flat, a), m.shape[size_t(d)]);
  return {single_piece(p.base->shape, v, i), {}};
}

} // namespace vtc
