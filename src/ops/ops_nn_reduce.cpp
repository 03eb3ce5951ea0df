// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare (axes as attribute before opset 18 and as
// input after; keepdims; noop_with_empty_axes, which reduces over no axis so the op's
// elementwise part still applies, as in the ONNX reference), and ArgMax / ArgMin (keepdims,
// select_last_index). Floats reduce in double; integers sum and multiply in wrapping int64.
#include <cmath>
#include <limits>

#include "ops/ops_nn_common.h"

namespace vtc::nn {
namespace {

enum class Reduce { sum, mean, max, min, prod, l1, l2, log_sum, log_sum_exp, sum_square };

Reduce reduce_kind(const Node& node) {
  static const std::pair<const char*, Reduce> kinds[] = {{"ReduceSum", Reduce::sum},
                                                         {"ReduceMean", Reduce::mean},
                                                         {"ReduceMax", Reduce::max},
                                                         {"ReduceMin", Reduce::min},
                                                         {"ReduceProd", Reduce::prod},
                                                         {"ReduceL1", Reduce::l1},
                                                         {"ReduceL2", Reduce::l2},
                                                         {"ReduceLogSum", Reduce::log_sum},
                                                         {"ReduceLogSumExp", Reduce::log_sum_exp},
                                                         {"ReduceSumSquare", Reduce::sum_square}};
  for (const auto& [name, kind] : kinds)
    if (node.op == name) return kind;
  VTC_FAIL() << node.describe() << ": not a reduction";
}

// Which dims are reduced and the output shape.
struct ReducePlan {
  std::vector<bool> reduced;
  Shape out;
};

// `axes` is the attribute or the constant axes input, nullptr when neither is given.
ReducePlan reduce_plan(const Node& node, const Shape& in, const std::vector<int64_t>* axes) {
  int64_t rank = int64_t(in.size());
  bool keepdims = node.attr_int("keepdims", 1) != 0;
  bool noop = node.attr_int("noop_with_empty_axes", 0) != 0;
  ReducePlan p;
  p.reduced.assign(in.size(), !axes || axes->empty() ? !noop : false);
  if (axes)
    for (int64_t a : *axes) {
      int64_t d = normalize_axis(node, a, rank);
      VTC_CHECK(d < rank) << node.describe() << ": axis " << a << " of a scalar";
      VTC_CHECK(!p.reduced[size_t(d)])
          << node.describe() << ": axis " << a << " appears twice in axes";
      p.reduced[size_t(d)] = true;
    }
  for (size_t d = 0; d < in.size(); ++d)
    if (!p.reduced[d])
      p.out.push_back(in[d]);
    else if (keepdims)
      p.out.push_back(1);
  return p;
}

std::vector<TensorType> infer_reduce(const InferInputs& in) {
  const Node& node = in.node;
  check_input_count(in, 1, 2);
  check_output_count(node, 1, 1);
  const TensorType& x = in.type(0);
  Reduce kind = reduce_kind(node);
  if (kind != Reduce::max && kind != Reduce::min) check_numeric(node, x, "input data");
  std::vector<int64_t> axes;
  bool has_axes = node.has_attr("axes") || in.has(1);
  VTC_CHECK(!(node.has_attr("axes") && in.has(1)))
      << node.describe() << ": axes given both as attribute and as input";
  if (node.has_attr("axes")) axes = node.attr_ints("axes");
  if (in.has(1)) axes = in.ints(1);
  return {TensorType{x.dtype, reduce_plan(node, x.shape, has_axes ? &axes : nullptr).out}};
}

// For every input element, the flat index of the output element it reduces into.
std::vector<int64_t> reduce_targets(const Shape& in, const std::vector<bool>& reduced) {
  Shape kept(in);
  for (size_t d = 0; d < in.size(); ++d)
    if (reduced[d]) kept[d] = 1;
  Shape strides = shape_strides(kept);
  std::vector<int64_t> targets(size_t(shape_numel(in)));
  std::vector<int64_t> idx(in.size(), 0);
  for (size_t i = 0; i < targets.size(); ++i) {
    int64_t t = 0;
    for (size_t d = 0; d < in.size(); ++d)
      if (!reduced[d]) t += idx[d] * strides[d];
    targets[i] = t;
    next_index(idx, in);
  }
  return targets;
}

std::vector<double> reduce_f64(Reduce kind, const std::vector<double>& x,
                               const std::vector<int64_t>& target, int64_t out_n) {
  const double inf = std::numeric_limits<double>::infinity();
  double init = kind == Reduce::max || kind == Reduce::log_sum_exp ? -inf
                : kind == Reduce::min                              ? inf
                : kind == Reduce::prod                             ? 1.0
                                                                   : 0.0;
  std::vector<double> acc(size_t(out_n), init);
  std::vector<int64_t> count(size_t(out_n), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    double& a = acc[size_t(target[i])];
    double v = x[i];
    ++count[size_t(target[i])];
    switch (kind) {
    case Reduce::sum:
    case Reduce::mean:
    case Reduce::log_sum:
      a += v;
      break;
    case Reduce::max:
    case Reduce::log_sum_exp:
      a = std::isnan(v) || v > a ? v : a;
      break;
    case Reduce::min:
      a = std::isnan(v) || v < a ? v : a;
      break;
    case Reduce::prod:
      a *= v;
      break;
    case Reduce::l1:
      a += std::abs(v);
      break;
    case Reduce::l2:
    case Reduce::sum_square:
      a += v * v;
      break;
    }
  }
  if (kind == Reduce::log_sum_exp) {
    // Second pass: sum of exp(x - max), so large inputs do not overflow.
    std::vector<double> sum(size_t(out_n), 0.0);
    for (size_t i = 0; i < x.size(); ++i) {
      double m = acc[size_t(target[i])];
      if (std::isfinite(m)) sum[size_t(target[i])] += std::exp(x[i] - m);
    }
    for (size_t o = 0; o < acc.size(); ++o)
      if (std::isfinite(acc[o])) acc[o] += std::log(sum[o]);
  }
  for (size_t o = 0; o < acc.size(); ++o) {
    if (kind == Reduce::mean) acc[o] = acc[o] / double(count[o]);
    if (kind == Reduce::l2) acc[o] = std::sqrt(acc[o]);
    if (kind == Reduce::log_sum) acc[o] = std::log(acc[o]);
  }
  return acc;
}

// Integer Sum, Prod, Max, Min, L1 and SumSquare, exact (wrapping on overflow).
std::vector<int64_t> reduce_i64(Reduce kind, const std::vector<int64_t>& x,
                                const std::vector<int64_t>& target, int64_t out_n) {
  int64_t init = kind == Reduce::max    ? std::numeric_limits<int64_t>::min()
                 : kind == Reduce::min  ? std::numeric_limits<int64_t>::max()
                 : kind == Reduce::prod ? 1
                                        : 0;
  std::vector<int64_t> acc(size_t(out_n), init);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t& a = acc[size_t(target[i])];
    int64_t v = x[i];
    switch (kind) {
    case Reduce::max:
      a = std::max(a, v);
      break;
    case Reduce::min:
      a = std::min(a, v);
      break;
    case Reduce::prod:
      a = wrap_mul(a, v);
      break;
    case Reduce::l1:
      a = wrap_add(a, v < 0 ? wrap_mul<int64_t>(v, -1) : v);
      break;
    case Reduce::sum_square:
      a = wrap_add(a, wrap_mul(v, v));
      break;
    case Reduce::sum:
    case Reduce::mean:
    case Reduce::l2:
    case Reduce::log_sum:
    case Reduce::log_sum_exp:
      a = wrap_add(a, v);
      break;
    }
  }
  return acc;
}

std::vector<Tensor> eval_reduce(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  std::vector<int64_t> axes;
  const std::vector<int64_t>* axes_ptr = nullptr;
  if (node.has_attr("axes")) {
    axes = node.attr_ints("axes");
    axes_ptr = &axes;
  } else if (in.size() > 1 && in[1]) {
    axes = in[1]->to_i64_vector();
    axes_ptr = &axes;
  }
  ReducePlan plan = reduce_plan(node, x.shape(), axes_ptr);
  std::vector<int64_t> target = reduce_targets(x.shape(), plan.reduced);
  Tensor out(node.outputs[0]->type);
  Reduce kind = reduce_kind(node);
  bool exact_int = !is_float(x.dtype()) && kind != Reduce::mean && kind != Reduce::l2 &&
                   kind != Reduce::log_sum && kind != Reduce::log_sum_exp;
  if (exact_int) {
    store_i64(out, reduce_i64(kind, load_i64(x), target, out.numel()));
  } else {
    std::vector<double> r = reduce_f64(kind, load_f64(x), target, out.numel());
    if (is_float(out.dtype()))
      store_f64(out, r);
    else
      for (int64_t i = 0; i < out.numel(); ++i)
        out.set_i64(i, f64_to_i64(r[size_t(i)]));
  }
  std::vector<Tensor> res;
  res.push_back(std::move(out));
  return res;
}

// ---- ArgMax / ArgMin: int64 index of the first (or, with select_last_index, last) extreme.

std::vector<TensorType> infer_arg(const InferInputs& in) {
  check_input_count(in, 1, 1);
  check_output_count(in.node, 1, 1);
  const TensorType& x = in.type(0);
  check_numeric(in.node, x, "input data");
  check_rank_at_least(in.node, x, 1, "input data");
  int64_t axis = normalize_axis(in.node, in.node.attr_int("axis", 0), x.rank());
  Shape out = x.shape;
  if (in.node.attr_int("keepdims", 1) != 0)
    out[size_t(axis)] = 1;
  else
    out.erase(out.begin() + axis);
  return {TensorType{DType::i64, out}};
}

template <typename V>
std::vector<int64_t> arg_extreme(const Tensor& t, const AxisView& v, bool is_max, bool last) {
  std::vector<V> x = load_values<V>(t);
  std::vector<int64_t> r(size_t(v.outer * v.inner), 0);
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      int64_t best = 0;
      for (int64_t a = 1; a < v.len; ++a) {
        V cur = x[size_t(v.at(o, a, i))], b = x[size_t(v.at(o, best, i))];
        bool better = is_max ? (cur > b || (last && cur == b)) : (cur < b || (last && cur == b));
        if (better) best = a;
      }
      r[size_t(o * v.inner + i)] = best;
    }
  return r;
}

std::vector<Tensor> eval_arg(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  AxisView v = axis_view(x.shape(), normalize_axis(node, node.attr_int("axis", 0), x.rank()));
  bool is_max = node.op == "ArgMax", last = node.attr_int("select_last_index", 0) != 0;
  Tensor out(node.outputs[0]->type);
  store_i64(out, is_float(x.dtype()) ? arg_extreme<double>(x, v, is_max, last)
                                     : arg_extreme<int64_t>(x, v, is_max, last));
  std::vector<Tensor> res;
  res.push_back(std::move(out));
  return res;
}

} // namespace

void register_reduce_ops(OpTable& t) {
  for (const char* name :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    t.add(OpDef{name, OpKind::compute, infer_reduce, eval_reduce});
  t.add(OpDef{"ArgMax", OpKind::compute, infer_arg, eval_arg});
  t.add(OpDef{"ArgMin", OpKind::compute, infer_arg, eval_arg});
}

} // namespace vtc::nn
