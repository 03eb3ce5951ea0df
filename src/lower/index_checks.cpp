// The index inputs and bounds of each indexing op follow the reference interpreter
// (ops/ops_movement_index.cpp), so that the error names the same axis and range.
#include "lower/index_checks.h"

#include "ops/op_registry.h"
#include "ops/ops_movement_util.h"
#include "vtc/error.h"

namespace vtc {

std::optional<IndexCheck> index_check_of(const Node& n) {
  const bool gather = n.op == "Gather",
             elements = n.op == "GatherElements" || n.op == "ScatterElements" || n.op == "Scatter";
  const bool nd = n.op == "GatherND" || n.op == "ScatterND";
  if (!gather && !elements && !nd) return std::nullopt;
  const Value* data = n.input(0);
  const Value* indices = n.input(1);
  if (!data || !indices) return std::nullopt;
  const Shape& x = data->type.shape;
  IndexCheck check;
  check.node = &n;
  check.indices = indices;
  if (gather || elements) {
    const int64_t axis = normalize_axis(n, n.attr_int("axis", 0), int64_t(x.size()));
    check.bounds.push_back({x[size_t(axis)], axis});
    return check;
  }
  const Shape& q = indices->type.shape;
  VTC_CHECK(!q.empty()) << n.describe() << ": indices of rank 0";
  const int64_t first = n.op == "GatherND" ? n.attr_int("batch_dims", 0) : 0;
  for (int64_t t = 0; t < q.back(); ++t)
    check.bounds.push_back({x.at(size_t(first + t)), first + t});
  return check;
}

std::string index_check_error(const IndexCheck& check, int64_t value, int64_t flat) {
  const IndexBound& b = check.bound_of(flat);
  return movement::index_out_of_range(*check.node, value, b.size, b.axis);
}

namespace {

// Ops whose output elements are elements of their first input.
bool moves_elements(const Node& n) {
  return n.op == "Reshape" || n.op == "Unsqueeze" || n.op == "Squeeze" || n.op == "Flatten" ||
         n.op == "Expand" || n.op == "Identity";
}

// Every element of `v` in [-size, size).
bool values_within(const Value* v, int64_t size, const CheckedRange& checked, int depth = 0) {
  if (!v || depth > 16) return false;
  if (v->constant) {
    for (int64_t f = 0; f < v->constant->numel(); ++f) {
      const int64_t x = v->constant->get_i64(f);
      if (x < -size || x >= size) return false;
    }
    return true;
  }
  if (checked(v, size)) return true;
  const Node* p = v->producer;
  if (!p) return false;
  if (moves_elements(*p)) return values_within(p->input(0), size, checked, depth + 1);
  if (p->op == "Concat") {
    for (const Value* in : p->inputs)
      if (!values_within(in, size, checked, depth + 1)) return false;
    return true;
  }
  return false;
}

} // namespace

bool indices_known_in_range(const IndexCheck& check, const CheckedRange& checked) {
  const std::vector<IndexBound>& b = check.bounds;
  bool uniform = true;
  for (const IndexBound& x : b)
    uniform &= x.size == b[0].size;
  if (uniform) return values_within(check.indices, b[0].size, checked);
  // A tuple: a Concat along the last axis, each part holding coordinates [at, at + width).
  const Node* p = check.indices->producer;
  const int64_t rank = int64_t(check.indices->type.shape.size());
  if (!p || p->op != "Concat" || rank == 0) return false;
  const int64_t axis = p->attr_int("axis", 0);
  if (axis != -1 && axis != rank - 1) return false;
  int64_t at = 0;
  for (const Value* in : p->inputs) {
    if (!in || in->type.shape.size() != size_t(rank)) return false;
    const int64_t width = in->type.shape.back();
    if (at + width > int64_t(b.size())) return false;
    bool same = true;
    for (int64_t c = at; c < at + width; ++c)
      same &= b[size_t(c)].size == b[size_t(at)].size;
    if (same && width > 0) {
      if (!values_within(in, b[size_t(at)].size, checked)) return false;
    } else if (in->constant) {
      for (int64_t f = 0; f < in->constant->numel(); ++f) {
        const int64_t x = in->constant->get_i64(f), size = b[size_t(at + f % width)].size;
        if (x < -size || x >= size) return false;
      }
    } else {
      return false;
    }
    at += width;
  }
  return at == int64_t(b.size());
}

void check_constant_indices(const IndexCheck& check) {
  const Tensor& t = *check.indices->constant;
  for (int64_t f = 0; f < t.numel(); ++f) {
    const int64_t v = t.get_i64(f);
    const int64_t size = check.bound_of(f).size;
    VTC_CHECK(v >= -size && v < size) << index_check_error(check, v, f);
  }
}

} // namespace vtc
