// Rules for the scatters: ScatterND, ScatterElements (and its opset-9 name Scatter), with
// reduction "none". Read side: the output is the data with the updates overlaid — an overlay
// piece that searches the indices for a row hitting the virtual index (the indices may be known
// only at run time, the KV-cache position of a decode step) and reads the updates there, then
// the data piece for every other index (paper §4.4: Type I for the data). Write side: the
// producer of the updates writes them straight into the output at the loaded indices, and the
// data is the output itself (updated in place).
#include "mapping/layout.h"
#include "mapping/rule_util.h"

namespace vtc {
namespace {

using namespace rule_util;

RuleResult reductions_combine(const Node& n) {
  return RuleResult::impossible(n, "reduction '" + n.attr_string("reduction", "none") +
                                       "' combines elements instead of moving them");
}
bool moves(const Node& n) {
  return n.attr_string("reduction", "none") == "none";
}

// ---- ScatterND: y[indices[u, :], rest] = updates[u, rest] ----
RuleResult scatter_nd_read(const Node& n) {
  if (!moves(n)) return reductions_combine(n);
  const Shape& y = out_shape(n, 0);
  const Shape& idx = in_shape(n, 1);
  size_t k = size_t(idx.back()), r = y.size();
  Shape rows(idx.begin(), idx.end() - 1);
  Mapping m{y, {}};
  if (shape_numel(rows) > 0 && shape_numel(y) > 0) {
    Piece overlay{full_box(y), {}, in_base(n, 2), {}, 0};
    std::vector<IndexExpr> i = box_vars(overlay.guard);
    IndexExpr s = IndexExpr::var(int(r), 0, shape_numel(rows));
    std::vector<IndexExpr> row = unflatten_index(s, rows);
    Search search{shape_numel(rows), {}};
    for (size_t t = 0; t < k; ++t) {
      std::vector<IndexExpr> at = row;
      at.push_back(IndexExpr::constant(int64_t(t)));
      search.eqs.emplace_back(wrap_index(IndexExpr::load(in_base(n, 1), at), y[t]), i[t]);
    }
    overlay.searches.push_back(std::move(search));
    overlay.index = row;
    for (size_t d = k; d < r; ++d)
      overlay.index.push_back(i[d]);
    if (prune_searches(overlay)) m.pieces.push_back(std::move(overlay));
  }
  Mapping data = identity_mapping(in_base(n, 0));
  m.pieces.insert(m.pieces.end(), data.pieces.begin(), data.pieces.end());
  return one(std::move(m));
}

RuleResult scatter_nd_write(const Node& n) {
  if (!moves(n)) return reductions_combine(n);
  const Shape& y = out_shape(n, 0);
  const Shape& idx = in_shape(n, 1);
  const Shape& upd = in_shape(n, 2);
  size_t k = size_t(idx.back()), q = idx.size();
  std::vector<IndexExpr> u = box_vars(full_box(upd));
  std::vector<IndexExpr> row(u.begin(), u.begin() + std::ptrdiff_t(q - 1)), i;
  for (size_t t = 0; t < k; ++t) {
    std::vector<IndexExpr> at = row;
    at.push_back(IndexExpr::constant(int64_t(t)));
    i.push_back(wrap_index(IndexExpr::load(in_base(n, 1), at), y[t]));
  }
  for (size_t d = q - 1; d < u.size(); ++d)
    i.push_back(u[d]);
  RuleResult res;
  res.mappings.resize(3);
  res.mappings[0] = identity_mapping(out_base(n, 0));
  res.mappings[2] = single_piece(upd, out_base(n, 0), i);
  return res;
}

// ---- ScatterElements: y[u with axis a = indices[u]] = updates[u] ----
RuleResult scatter_elements_read(const Node& n) {
  if (!moves(n)) return reductions_combine(n);
  const Shape& y = out_shape(n, 0);
  const Shape& upd = in_shape(n, 2);
  size_t r = y.size(), a = size_t(normalize_axis(n, n.attr_int("axis", 0), int64_t(r)));
  Mapping m{y, {}};
  if (shape_numel(upd) > 0) {
    Box g = full_box(y);
    for (size_t d = 0; d < r; ++d)
      if (d != a) g[d] = {0, upd[d]};
    std::vector<IndexExpr> i = box_vars(g), u = i;
    u[a] = IndexExpr::var(int(r), 0, upd[a]);
    Search search{upd[a], {{wrap_index(IndexExpr::load(in_base(n, 1), u), y[a]), i[a]}}};
    m.pieces.push_back(Piece{g, {std::move(search)}, in_base(n, 2), u, 0});
  }
  Mapping data = identity_mapping(in_base(n, 0));
  m.pieces.insert(m.pieces.end(), data.pieces.begin(), data.pieces.end());
  return one(std::move(m));
}

RuleResult scatter_elements_write(const Node& n) {
  if (!moves(n)) return reductions_combine(n);
  const Shape& y = out_shape(n, 0);
  const Shape& upd = in_shape(n, 2);
  size_t a = size_t(normalize_axis(n, n.attr_int("axis", 0), int64_t(y.size())));
  std::vector<IndexExpr> u = box_vars(full_box(upd)), i = u;
  i[a] = wrap_index(IndexExpr::load(in_base(n, 1), u), y[a]);
  RuleResult res;
  res.mappings.resize(3);
  res.mappings[0] = identity_mapping(out_base(n, 0));
  res.mappings[2] = single_piece(upd, out_base(n, 0), i);
  return res;
}

} // namespace

void add_scatter_rules(std::vector<MovementRule>& t) {
  // op                  read side               write side
  t.push_back({"ScatterND", scatter_nd_read, scatter_nd_write});
  t.push_back({"ScatterElements", scatter_elements_read, scatter_elements_write});
  t.push_back({"Scatter", scatter_elements_read, scatter_elements_write});
}

} // namespace vtc
