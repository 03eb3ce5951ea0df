// The op table and helpers shared by the op family files.
#include "ops/op_registry.h"

#include <algorithm>
#include <limits>

#include "vtc/error.h"

namespace vtc {

const TensorType& InferInputs::type(size_t i) const {
  Value* v = node.input(i);
  VTC_CHECK(v) << node.describe() << ": input " << i << " is missing";
  VTC_CHECK(v->has_type) << node.describe() << ": input '" << v->name << "' has no known type";
  return v->type;
}

const Tensor* InferInputs::constant(size_t i) const {
  Value* v = node.input(i);
  return v && v->constant ? &*v->constant : nullptr;
}

std::vector<int64_t> InferInputs::ints(size_t i) const {
  const Tensor* t = constant(i);
  if (!t) {
    Value* v = node.input(i);
    throw NeedsConstantInput(node.describe() + ": input " + std::to_string(i) +
                                 (v ? " '" + v->name + "'" : std::string()) +
                                 " must be a constant (static shapes only)",
                             int(i));
  }
  return t->to_i64_vector();
}

void OpTable::add(OpDef def) {
  VTC_CHECK(!find(def.name)) << "op " << def.name << " registered twice";
  defs_.push_back(std::move(def));
}

void OpTable::mark_elementwise_since(size_t first) {
  for (size_t i = first; i < defs_.size(); ++i)
    defs_[i].elementwise = true;
}

const OpDef* OpTable::find(std::string_view op) const {
  for (const OpDef& d : defs_)
    if (d.name == op) return &d;
  return nullptr;
}

std::vector<const OpDef*> OpTable::all() const {
  std::vector<const OpDef*> v;
  for (const OpDef& d : defs_)
    v.push_back(&d);
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return v;
}

static const OpTable& table() {
  static const OpTable t = [] {
    OpTable t;
    register_movement_ops(t);
    size_t first_elementwise = t.size();
    register_elementwise_ops(t); // every op of this family is elementwise
    t.mark_elementwise_since(first_elementwise);
    register_nn_ops(t);
    register_shape_ops(t);
    return t;
  }();
  return t;
}

const OpDef* find_op(std::string_view op) {
  return table().find(op);
}
std::vector<const OpDef*> all_ops() {
  return table().all();
}

int64_t normalize_axis(const Node& node, int64_t axis, int64_t rank) {
  VTC_CHECK(axis >= -rank && axis < std::max<int64_t>(rank, 1))
      << node.describe() << ": axis " << axis << " out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

SliceAxis slice_axis(const Node& node, int64_t dim, int64_t s, int64_t e, int64_t step) {
  VTC_CHECK(step != 0) << node.describe() << ": slice step 0";
  // numpy differs for start < -dim with step < 0 (empty there), onnxruntime for
  // end = INT64_MAX with step < 0 (read as "to the front"); this is the spec's text.
  if (s < 0) s += dim;
  if (e < 0) e += dim;
  int64_t len = 0;
  if (step > 0) {
    s = std::clamp<int64_t>(s, 0, dim);
    e = std::clamp<int64_t>(e, 0, dim);
    if (e > s) len = (e - s - 1) / step + 1;
  } else {
    s = std::min(std::max<int64_t>(s, 0), dim - 1);
    e = std::min(std::max<int64_t>(e, -1), dim - 1);
    int64_t mag =
        step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step;
    if (s > e) len = (s - e - 1) / mag + 1;
  }
  return {len > 0 ? s : 0, len};
}

Shape broadcast_shapes(const Node& node, const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    VTC_CHECK(da == db || da == 1 || db == 1) << node.describe() << ": shapes " << shape_str(a)
                                              << " and " << shape_str(b) << " do not broadcast";
    out[i] = da == 1 ? db : da;
  }
  return out;
}

} // namespace vtc
