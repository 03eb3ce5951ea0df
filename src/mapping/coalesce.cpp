// Coalescing by composition: the merged view is a reshape of the shared index space composed
// with each mapping, kept only when the merged variable stays a plain term of the sums that
// give each piece's offset in its base (the index expressions per base dimension may hold
// floordiv and mod of it: [m floordiv 16, m mod 16] into a [16, 16] base is the offset m).
#include "mapping/coalesce.h"

#include "mapping/compose.h"
#include "mapping/layout.h"
#include "vtc/error.h"

namespace vtc {

namespace {

// Whether variable v occurs in e only as a term of sums, never under floordiv, mod or a load.
bool affine_in(IndexExpr e, int v) {
  if (!e.uses_var(v)) return true;
  switch (e.kind()) {
  case ExprKind::constant:
  case ExprKind::var:
    return true;
  case ExprKind::sum:
    for (const auto& [c, atom] : e.sum_terms())
      if (atom.kind() != ExprKind::var && atom.uses_var(v)) return false;
    return true;
  case ExprKind::floordiv:
  case ExprKind::mod:
  case ExprKind::load:
    return false;
  }
  return false;
}

// Whether a piece's element offset in its base (what the accessor computes) and its searches
// are affine in variable v; a constant piece has no offset.
bool affine_in(const Piece& p, int v) {
  if (!p.is_constant() && !affine_in(flat_offset(p), v)) return false;
  for (const Search& s : p.searches)
    for (const auto& [x, y] : s.eqs)
      if (!affine_in(x, v) || !affine_in(y, v)) return false;
  return true;
}

// `m` read over `shape` (of m's size, row-major in the same order), when the pieces are m's
// and each stays affine in variable d, or `renames` (a dimension of extent 1 merged: variable d
// is the other one under a new name, wherever it occurs). The reshape goes from m's own shape, not
// from an earlier merge, so that every merged variable is unflattened in one canonical form
// ((m floordiv 10) mod 6, never (m mod 60) floordiv 10), which the simplifier folds back.
std::optional<Mapping> merged(const Mapping& m, const Shape& shape, int d, bool renames) {
  static const char kKey = 0;
  const Base* w = intern_base(&kKey, "coalesced", m.shape);
  Result<Mapping> c = compose(reshape_mapping(shape, w), w, m);
  if (!c.ok() || c->pieces.size() != m.pieces.size()) return std::nullopt;
  for (const Piece& p : c->pieces)
    if (!renames && !affine_in(p, d)) return std::nullopt;
  return *c.value;
}

} // namespace

CoalescedSpace coalesce(const std::vector<Mapping>& mappings) {
  VTC_CHECK(!mappings.empty()) << "coalesce of no mappings";
  CoalescedSpace space{mappings[0].shape, mappings};
  for (const Mapping& m : mappings)
    VTC_CHECK(m.shape == space.shape)
        << "coalesce: mappings over " << shape_str(space.shape) << " and " << shape_str(m.shape);
  for (int d = int(space.shape.size()) - 2; d >= 0; --d) {
    Shape shape = space.shape;
    const bool renames = shape[size_t(d)] == 1 || shape[size_t(d + 1)] == 1;
    shape[size_t(d)] *= shape[size_t(d + 1)];
    shape.erase(shape.begin() + d + 1);
    std::vector<Mapping> views;
    for (const Mapping& m : mappings) {
      std::optional<Mapping> v = merged(m, shape, d, renames);
      if (!v) break;
      views.push_back(std::move(*v));
    }
    if (views.size() != mappings.size()) continue;
    space.shape = std::move(shape);
    space.mappings = std::move(views);
  }
  return space;
}

} // namespace vtc
