// Kernel calls of row ops: Softmax and LogSoftmax along an axis, LayerNormalization over the
// trailing axes, and the Reduce* family over any set of axes — each over a rank-2 view
// [rows, d] of its operands (d over the reduced axes, rows over the others).
#include <algorithm>
#include <map>

#include "codegen/kernel_calls.h"
#include "ops/op_registry.h"
#include "vtc/error.h"

namespace vtc {

std::string rows_shape_text(const kernels::RowsShape& s) {
  return "RowsShape{" + std::to_string(s.rows) + ", " + std::to_string(s.d) + ", float(" +
         literal(double(s.eps)) + ")}";
}

namespace {

bool on_cuda(const KernelContext& c) {
  return c.g.dialect().library() == KernelLibrary::cuda;
}

// A rank-2 view [rows, d] of `shape`: `d` over the dims in `inner` (in order), rows over the
// others (in order); the index terms of the original for (i[0], i[1]).
IndexTerms rows_view(const Shape& shape, const std::vector<int>& inner) {
  Shape outer_dims, inner_dims;
  std::vector<int> outer;
  for (int d = 0; d < int(shape.size()); ++d)
    if (std::find(inner.begin(), inner.end(), d) == inner.end()) {
      outer.push_back(d);
      outer_dims.push_back(shape[size_t(d)]);
    }
  for (int d : inner)
    inner_dims.push_back(shape[size_t(d)]);
  IndexTerms ro = unflatten(0, outer_dims), ri = unflatten(1, inner_dims);
  IndexTerms xs(shape.size());
  for (size_t k = 0; k < outer.size(); ++k)
    xs[size_t(outer[k])] = ro[k];
  for (size_t k = 0; k < inner.size(); ++k)
    xs[size_t(inner[k])] = ri[k];
  return xs;
}

bool is_trailing(const std::vector<int>& axes, int rank) {
  for (size_t k = 0; k < axes.size(); ++k)
    if (axes[k] != rank - int(axes.size()) + int(k)) return false;
  return true;
}

const std::map<std::string, std::string>& reduce_kinds() {
  static const std::map<std::string, std::string> kinds = {
      {"ReduceSum", "Sum"},       {"ReduceMean", "Mean"},
      {"ReduceMax", "Max"},       {"ReduceMin", "Min"},
      {"ReduceProd", "Prod"},     {"ReduceSumSquare", "SumSquare"},
      {"ReduceL1", "L1"},         {"ReduceL2", "L2"},
      {"ReduceLogSum", "LogSum"}, {"ReduceLogSumExp", "LogSumExp"}};
  return kinds;
}

// The reduced axes of a Reduce* node, sorted and unique; nullopt when they are not known
// before run time or the node reduces nothing.
std::optional<std::vector<int>> reduced_axes(const Node& n) {
  const int r = n.inputs[0]->type.rank();
  std::vector<int64_t> axes = n.attr_ints("axes");
  if (!n.has_attr("axes") && n.input(1)) {
    if (!n.inputs[1]->constant) return std::nullopt;
    axes = n.inputs[1]->constant->to_i64_vector();
  }
  if (axes.empty() && n.attr_int("noop_with_empty_axes", 0)) return std::nullopt;
  std::vector<int> red;
  if (axes.empty())
    for (int d = 0; d < r; ++d)
      red.push_back(d);
  for (int64_t a : axes)
    red.push_back(int(normalize_axis(n, a, r)));
  std::sort(red.begin(), red.end());
  red.erase(std::unique(red.begin(), red.end()), red.end());
  return red;
}

std::vector<KernelCall> softmax(KernelContext& c, const Node& n) {
  const Shape& s = n.inputs[0]->type.shape;
  int r = int(s.size());
  int axis = int(normalize_axis(n, n.attr_int("axis", -1), r));
  int64_t d = s[size_t(axis)], rows = shape_numel(s) / std::max<int64_t>(d, 1);
  IndexTerms xs = rows_view(s, {axis});
  Acc X = c.g.view(c.g.value(n.inputs[0]), 2, xs, axis == r - 1);
  Acc Y = c.g.view(c.output(), 2, xs, axis == r - 1);
  const char* f = n.op == "Softmax" ? "softmax" : "log_softmax";
  if (on_cuda(c)) {
    const kernels::RowsShape rs{rows, d, 0.0f};
    KernelCall call{f, {}, {Y.init, X.init, rows_shape_text(rs)}};
    call.launch = kernels::rows_launch(rs);
    return {call};
  }
  return {{f, {}, {Y.init, X.init, std::to_string(rows), std::to_string(d)}}};
}

std::vector<KernelCall> layer_norm(KernelContext& c, const Node& n) {
  AccessorEmitter& g = c.g;
  const Shape& s = n.inputs[0]->type.shape;
  int r = int(s.size());
  int axis = int(normalize_axis(n, n.attr_int("axis", -1), r));
  std::vector<int> inner;
  for (int d = axis; d < r; ++d)
    inner.push_back(d);
  Shape inner_dims(s.begin() + axis, s.end());
  int64_t d = shape_numel(inner_dims), rows = shape_numel(s) / std::max<int64_t>(d, 1);
  IndexTerms xs = rows_view(s, inner);
  Acc X = g.view(g.value(n.inputs[0]), 2, xs, true);
  Acc Y = g.view(c.output(), 2, xs, true);
  auto param = [&](const Value* p) {
    IndexTerms ji = unflatten(0, inner_dims);
    IndexTerms idx;
    int pr = p->type.rank();
    for (int k = 0; k < pr; ++k)
      idx.push_back(p->type.shape[size_t(k)] == 1 ? IndexTerm::zero()
                                                  : ji[size_t(k + int(ji.size()) - pr)]);
    return g.view(g.value(p), 1, idx, true);
  };
  if (on_cuda(c)) {
    const kernels::RowsShape rs{rows, d, n.attr_float("epsilon", 1e-5f)};
    KernelCall call{"layer_norm",
                    {},
                    {Y.init, X.init, param(n.inputs[1]).init,
                     n.input(2) ? param(n.inputs[2]).init : std::string("NoOperand{}"),
                     rows_shape_text(rs)}};
    call.launch = kernels::rows_launch(rs);
    return {call};
  }
  KernelCall call{"layer_norm",
                  {},
                  {Y.init, X.init, std::to_string(rows), std::to_string(d),
                   literal(double(n.attr_float("epsilon", 1e-5f))), param(n.inputs[1]).init}};
  if (n.input(2)) call.args.push_back(param(n.inputs[2]).init);
  return {call};
}

std::vector<KernelCall> reduce(KernelContext& c, const Node& n) {
  const std::string& kind = reduce_kinds().at(n.op);
  const Shape& s = n.inputs[0]->type.shape;
  int r = int(s.size());
  std::vector<int> red = *reduced_axes(n);
  int64_t reduced = 1;
  for (int d : red)
    reduced *= s[size_t(d)];
  int64_t outer = shape_numel(s) / std::max<int64_t>(reduced, 1);
  IndexTerms xs = rows_view(s, red);
  // Over trailing axes of a dense input each row is one run of `reduced` values in memory,
  // which the kernel reduces where it lies; the view's inner accessor knows only the runs of
  // its last dimension (a plane's rows, for a mean over H and W).
  const bool trailing = is_trailing(red, r);
  const bool dense_rows = trailing && c.g.physical(n.inputs[0]);
  Acc X = c.g.view(c.g.value(n.inputs[0]), 2, xs, trailing, dense_rows ? reduced : 0);
  // Output index from the outer coordinate: kept dims unflattened, reduced dims 0 (keepdims).
  Shape kept_dims;
  for (int d = 0; d < r; ++d)
    if (!std::binary_search(red.begin(), red.end(), d)) kept_dims.push_back(s[size_t(d)]);
  IndexTerms ko = unflatten(0, kept_dims);
  IndexTerms oi;
  bool keep = n.attr_int("keepdims", 1) != 0;
  for (int d = 0, k = 0; d < r; ++d) {
    if (std::binary_search(red.begin(), red.end(), d)) {
      if (keep) oi.push_back(IndexTerm::zero());
    } else {
      oi.push_back(ko[size_t(k++)]);
    }
  }
  Acc Y = c.g.view(c.output(), 1, oi, false);
  if (on_cuda(c)) {
    const kernels::RowsShape rs{outer, reduced, 0.0f};
    KernelCall call{"reduce", {"ReduceKind::" + kind}, {Y.init, X.init, rows_shape_text(rs)}};
    call.launch = kernels::reduce_launch(rs);
    return {call};
  }
  return {{"reduce",
           {"ReduceKind::" + kind},
           {Y.init, X.init, std::to_string(outer), std::to_string(reduced)}}};
}

} // namespace

bool row_supported(const Kernel& k) {
  const Node& a = *k.anchor;
  if (a.op == "Softmax" || a.op == "LogSoftmax") return a.inputs[0]->type.rank() > 0;
  if (a.op == "LayerNormalization") return true;
  return reduce_kinds().count(a.op) && reduced_axes(a).has_value();
}

std::vector<KernelCall> row_calls(KernelContext& c) {
  const Node& a = *c.kernel.anchor;
  if (a.op == "Softmax" || a.op == "LogSoftmax") return softmax(c, a);
  if (a.op == "LayerNormalization") return layer_norm(c, a);
  return reduce(c, a);
}

} // namespace vtc
