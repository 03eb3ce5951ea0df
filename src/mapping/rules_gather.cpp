// Rules for the gathers: Gather, GatherElements, GatherND. The read side indexes the data with
// `load(indices, ...)` terms (made non-negative with `mod dim`, which the simplifier drops when
// constant indices are known non-negative). The write side sends each data element to the one
// output position that gathers it, so it exists only for constant indices that gather every
// data element exactly once; the rule then derives an inverse table (a new constant tensor,
// returned in RuleResult::tables) and loads from it.
#include <algorithm>

#include "mapping/layout.h"
#include "mapping/rule_util.h"

namespace vtc {
namespace {

using namespace rule_util;

std::vector<IndexExpr> slice_of(const std::vector<IndexExpr>& v, size_t b, size_t e) {
  return std::vector<IndexExpr>(v.begin() + std::ptrdiff_t(b), v.begin() + std::ptrdiff_t(e));
}

// The constant indices of input 1, or a reason.
const Tensor* constant_indices(const Node& n, std::string& why) {
  const Value* v = n.input(1);
  if (!v->constant)
    why = "write side impossible: the indices '" + v->name + "' are known only at run time";
  return v->constant ? &*v->constant : nullptr;
}

// A derived table of inverse positions: values in [0, count).
const Base* table_base(const Node& n, const Shape& shape, int64_t count) {
  return intern_base(n.output(0), n.output(0)->name + ".inverse", shape, Interval{0, count - 1});
}

// ---- Gather: y[i] = x[i[:a], indices[i[a:a+q]], i[a+q:]] ----
RuleResult gather_read(const Node& n) {
  const Shape& x = in_shape(n, 0);
  const Shape& idx = in_shape(n, 1);
  const Shape& y = out_shape(n, 0);
  size_t a = size_t(normalize_axis(n, n.attr_int("axis", 0), int64_t(x.size()))), q = idx.size();
  std::vector<IndexExpr> i = box_vars(full_box(y));
  std::vector<IndexExpr> j = slice_of(i, 0, a);
  j.push_back(wrap_index(IndexExpr::load(in_base(n, 1), slice_of(i, a, a + q)), x[a]));
  for (size_t d = a + q; d < i.size(); ++d)
    j.push_back(i[d]);
  return one(single_piece(y, in_base(n, 0), j));
}

RuleResult gather_write(const Node& n) {
  std::string why;
  const Tensor* ind = constant_indices(n, why);
  if (!ind) return RuleResult::impossible(n, why);
  const Shape& x = in_shape(n, 0);
  size_t a = size_t(normalize_axis(n, n.attr_int("axis", 0), int64_t(x.size())));
  int64_t dim = x[a];
  Tensor inv(DType::i64, {dim});
  std::vector<bool> seen(size_t(dim), false);
  if (ind->numel() != dim)
    return RuleResult::impossible(n, "write side impossible: " + std::to_string(ind->numel()) +
                                         " indices cannot gather each of the " +
                                         std::to_string(dim) + " slices of axis " +
                                         std::to_string(a) + " exactly once");
  for (int64_t p = 0; p < ind->numel(); ++p) {
    int64_t v = floor_mod(ind->get_i64(p), dim);
    if (seen[size_t(v)])
      return RuleResult::impossible(n, "write side impossible: index " + std::to_string(v) +
                                           " is gathered twice");
    seen[size_t(v)] = true;
    inv.set_i64(v, p);
  }
  const Base* t = table_base(n, {dim}, dim);
  std::vector<IndexExpr> j = box_vars(full_box(x));
  std::vector<IndexExpr> i = slice_of(j, 0, a);
  for (IndexExpr e : unflatten_index(IndexExpr::load(t, {j[a]}), in_shape(n, 1)))
    i.push_back(e);
  for (size_t d = a + 1; d < j.size(); ++d)
    i.push_back(j[d]);
  RuleResult r = first_input(n, single_piece(x, out_base(n, 0), i));
  r.tables.emplace_back(t, std::move(inv));
  return r;
}

// ---- GatherElements: y[i] = x[i with axis a replaced by indices[i]] ----
RuleResult gather_elements_read(const Node& n) {
  const Shape& x = in_shape(n, 0);
  const Shape& y = out_shape(n, 0);
  size_t a = size_t(normalize_axis(n, n.attr_int("axis", 0), int64_t(x.size())));
  std::vector<IndexExpr> i = box_vars(full_box(y)), j = i;
  j[a] = wrap_index(IndexExpr::load(in_base(n, 1), i), x[a]);
  return one(single_piece(y, in_base(n, 0), j));
}

RuleResult gather_elements_write(const Node& n) {
  std::string why;
  const Tensor* ind = constant_indices(n, why);
  if (!ind) return RuleResult::impossible(n, why);
  const Shape& x = in_shape(n, 0);
  size_t a = size_t(normalize_axis(n, n.attr_int("axis", 0), int64_t(x.size())));
  if (ind->shape() != x)
    return RuleResult::impossible(n, "write side impossible: indices " + shape_str(ind->shape()) +
                                         " do not gather every element of " + shape_str(x));
  Tensor inv(DType::i64, x);
  std::vector<bool> seen(size_t(shape_numel(x)), false);
  Shape st = shape_strides(x);
  for (int64_t p = 0; p < ind->numel(); ++p) {
    int64_t pa = (p / st[a]) % x[a];
    int64_t v = floor_mod(ind->get_i64(p), x[a]);
    int64_t target = p + (v - pa) * st[a];
    if (seen[size_t(target)])
      return RuleResult::impossible(n, "write side impossible: an element is gathered twice");
    seen[size_t(target)] = true;
    inv.set_i64(target, pa);
  }
  const Base* t = table_base(n, x, x[a]);
  std::vector<IndexExpr> j = box_vars(full_box(x)), i = j;
  i[a] = IndexExpr::load(t, j);
  RuleResult r = first_input(n, single_piece(x, out_base(n, 0), i));
  r.tables.emplace_back(t, std::move(inv));
  return r;
}

// ---- GatherND: y[b, J, rest] = x[b, indices[b, J, :], rest] ----
struct NdDims {
  size_t b, k, q; // batch dims, tuple length, indices rank
};
NdDims nd_dims(const Node& n) {
  const Shape& idx = in_shape(n, 1);
  return {size_t(n.attr_int("batch_dims", 0)), size_t(idx.back()), idx.size()};
}

RuleResult gather_nd_read(const Node& n) {
  const Shape& x = in_shape(n, 0);
  const Shape& y = out_shape(n, 0);
  NdDims nd = nd_dims(n);
  std::vector<IndexExpr> i = box_vars(full_box(y));
  std::vector<IndexExpr> j = slice_of(i, 0, nd.b), row = slice_of(i, 0, nd.q - 1);
  for (size_t t = 0; t < nd.k; ++t) {
    std::vector<IndexExpr> at = row;
    at.push_back(IndexExpr::constant(int64_t(t)));
    j.push_back(wrap_index(IndexExpr::load(in_base(n, 1), at), x[nd.b + t]));
  }
  for (size_t d = nd.q - 1; d < i.size(); ++d)
    j.push_back(i[d]);
  return one(single_piece(y, in_base(n, 0), j));
}

RuleResult gather_nd_write(const Node& n) {
  std::string why;
  const Tensor* ind = constant_indices(n, why);
  if (!ind) return RuleResult::impossible(n, why);
  const Shape& x = in_shape(n, 0);
  NdDims nd = nd_dims(n);
  Shape batch(x.begin(), x.begin() + std::ptrdiff_t(nd.b));
  Shape tuple_space(x.begin() + std::ptrdiff_t(nd.b), x.begin() + std::ptrdiff_t(nd.b + nd.k));
  Shape rows(ind->shape().begin() + std::ptrdiff_t(nd.b), ind->shape().end() - 1);
  if (shape_numel(rows) != shape_numel(tuple_space))
    return RuleResult::impossible(n, "write side impossible: " + std::to_string(shape_numel(rows)) +
                                         " index tuples per batch cannot gather the " +
                                         std::to_string(shape_numel(tuple_space)) + " slices " +
                                         shape_str(tuple_space) + " exactly once");
  Shape table_shape = batch;
  table_shape.insert(table_shape.end(), tuple_space.begin(), tuple_space.end());
  Tensor inv(DType::i64, table_shape);
  std::vector<bool> seen(size_t(shape_numel(table_shape)), false);
  int64_t per_batch = shape_numel(rows), slices = shape_numel(tuple_space);
  Shape ts = shape_strides(tuple_space);
  for (int64_t bt = 0; bt < shape_numel(batch); ++bt)
    for (int64_t r = 0; r < per_batch; ++r) {
      int64_t at = 0;
      for (size_t t = 0; t < nd.k; ++t)
        at += floor_mod(ind->get_i64((bt * per_batch + r) * int64_t(nd.k) + int64_t(t)),
                        tuple_space[t]) *
              ts[t];
      int64_t flat = bt * slices + at;
      if (seen[size_t(flat)])
        return RuleResult::impossible(n, "write side impossible: a slice is gathered twice");
      seen[size_t(flat)] = true;
      inv.set_i64(flat, r);
    }
  const Base* t = table_base(n, table_shape, per_batch);
  std::vector<IndexExpr> j = box_vars(full_box(x));
  std::vector<IndexExpr> i = slice_of(j, 0, nd.b);
  for (IndexExpr e : unflatten_index(IndexExpr::load(t, slice_of(j, 0, nd.b + nd.k)), rows))
    i.push_back(e);
  for (size_t d = nd.b + nd.k; d < j.size(); ++d)
    i.push_back(j[d]);
  RuleResult res = first_input(n, single_piece(x, out_base(n, 0), i));
  res.tables.emplace_back(t, std::move(inv));
  return res;
}

} // namespace

void add_gather_rules(std::vector<MovementRule>& t) {
  // op                 read side              write side
  t.push_back({"Gather", gather_read, gather_write});
  t.push_back({"GatherElements", gather_elements_read, gather_elements_write});
  t.push_back({"GatherND", gather_nd_read, gather_nd_write});
}

} // namespace vtc
