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

void check_constant_indices(const IndexCheck& check) {
  const Tensor& t = *check.indices->constant;
  for (int64_t f = 0; f < t.numel(); ++f) {
    const int64_t v = t.get_i64(f);
    const int64_t size = check.bound_of(f).size;
    VTC_CHECK(v >= -size && v < size) << index_check_error(check, v, f);
  }
}

} // namespace vtc
