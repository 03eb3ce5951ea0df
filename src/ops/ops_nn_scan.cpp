// Ops that work along one axis by position rather than by reduction: CumSum (exclusive,
// reverse), TopK (largest or smallest k, ties to the lower index, always sorted) and Trilu
// (keep the upper or lower triangle of the last two dims, shifted by diagonal k).
#include <algorithm>
#include <cstring>
#include <numeric>

#include "ops/ops_nn_common.h"

namespace vtc::nn {
namespace {

// Reads a scalar integer operand (0-D or one-element) such as CumSum's axis or Trilu's k.
int64_t scalar_int(const Node& node, const Tensor& t, const char* what) {
  VTC_CHECK(is_integer(t.dtype()) && t.numel() == 1 && t.rank() <= 1)
      << node.describe() << ": " << what << " must be an integer scalar, got "
      << type_str(t.type());
  return t.get_i64(0);
}

void check_scalar_int_type(const Node& node, const TensorType& t, const char* what) {
  VTC_CHECK(is_integer(t.dtype) && t.numel() == 1 && t.rank() <= 1)
      << node.describe() << ": " << what << " must be an integer scalar, got " << type_str(t);
}

// ---- CumSum

std::vector<TensorType> infer_cumsum(const InferInputs& in) {
  check_input_count(in, 2, 2);
  check_output_count(in.node, 1, 1);
  const TensorType& x = in.type(0);
  check_numeric(in.node, x, "input x");
  check_rank_at_least(in.node, x, 1, "input x");
  check_scalar_int_type(in.node, in.type(1), "axis");
  if (const Tensor* axis = in.constant(1))
    normalize_axis(in.node, scalar_int(in.node, *axis, "axis"), x.rank());
  return {x};
}

template <typename V> void cumsum(const Node& node, const Tensor& xt, int64_t axis, Tensor& out) {
  bool exclusive = node.attr_int("exclusive", 0) != 0, reverse = node.attr_int("reverse", 0) != 0;
  AxisView v = axis_view(xt.shape(), axis);
  std::vector<V> x = load_values<V>(xt);
  std::vector<V> y(x.size());
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      V acc = 0;
      for (int64_t step = 0; step < v.len; ++step) {
        size_t k = size_t(v.at(o, reverse ? v.len - 1 - step : step, i));
        if (exclusive) {
          y[k] = acc;
          acc = wrap_add(acc, x[k]);
        } else {
          acc = wrap_add(acc, x[k]);
          y[k] = acc;
        }
      }
    }
  store_values(out, y);
}

std::vector<Tensor> eval_cumsum(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  int64_t axis = normalize_axis(node, scalar_int(node, *in[1], "axis"), x.rank());
  Tensor out(node.outputs[0]->type);
  if (is_float(x.dtype()))
    cumsum<double>(node, x, axis, out);
  else
    cumsum<int64_t>(node, x, axis, out);
  std::vector<Tensor> r;
  r.push_back(std::move(out));
  return r;
}

// ---- TopK: K as input (opset >= 10) or attribute k (opset 1).

int64_t topk_k(const Node& node, const std::vector<int64_t>& k_input) {
  if (node.has_attr("k")) return node.attr_int("k");
  VTC_CHECK(k_input.size() == 1) << node.describe() << ": K must hold one value, got "
                                 << k_input.size();
  return k_input[0];
}

std::vector<TensorType> infer_topk(const InferInputs& in) {
  const Node& node = in.node;
  check_input_count(in, node.has_attr("k") ? 1 : 2, node.has_attr("k") ? 1 : 2);
  check_output_count(node, 1, 2);
  const TensorType& x = in.type(0);
  check_numeric(node, x, "input X");
  check_rank_at_least(node, x, 1, "input X");
  int64_t axis = normalize_axis(node, node.attr_int("axis", -1), x.rank());
  int64_t k = topk_k(node, node.has_attr("k") ? std::vector<int64_t>{} : in.ints(1));
  VTC_CHECK(k >= 0 && k <= x.shape[size_t(axis)])
      << node.describe() << ": k " << k << " out of range for axis " << axis << " of "
      << type_str(x);
  Shape out = x.shape;
  out[size_t(axis)] = k;
  std::vector<TensorType> types{TensorType{x.dtype, out}, TensorType{DType::i64, out}};
  types.resize(node.outputs.size());
  return types;
}

template <typename V>
void topk(const Tensor& xt, const AxisView& v, int64_t k, bool largest, std::vector<V>& values,
          std::vector<int64_t>& indices) {
  std::vector<V> x = load_values<V>(xt);
  std::vector<int64_t> order(size_t(v.len));
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      std::iota(order.begin(), order.end(), 0);
      auto before = [&](int64_t a, int64_t b) {
        V xa = x[size_t(v.at(o, a, i))], xb = x[size_t(v.at(o, b, i))];
        if (xa != xb) return largest ? xa > xb : xa < xb;
        return a < b;
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        size_t dst = size_t((o * k + j) * v.inner + i);
        values[dst] = x[size_t(v.at(o, order[size_t(j)], i))];
        indices[dst] = order[size_t(j)];
      }
    }
}

std::vector<Tensor> eval_topk(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  int64_t axis = normalize_axis(node, node.attr_int("axis", -1), x.rank());
  int64_t k = topk_k(node, node.has_attr("k") ? std::vector<int64_t>{} : in[1]->to_i64_vector());
  bool largest = node.attr_int("largest", 1) != 0;
  AxisView v = axis_view(x.shape(), axis);
  Tensor values(node.outputs[0]->type);
  std::vector<int64_t> indices(size_t(values.numel()));
  if (is_float(x.dtype())) {
    std::vector<double> vals(size_t(values.numel()));
    topk<double>(x, v, k, largest, vals, indices);
    store_f64(values, vals);
  } else {
    std::vector<int64_t> vals(size_t(values.numel()));
    topk<int64_t>(x, v, k, largest, vals, indices);
    store_i64(values, vals);
  }
  std::vector<Tensor> r;
  r.push_back(std::move(values));
  if (node.outputs.size() > 1) {
    r.emplace_back();
    if (node.output(1)) {
      r[1] = Tensor(node.outputs[1]->type);
      store_i64(r[1], indices);
    }
  }
  return r;
}

// ---- Trilu: element (..., i, j) is kept when j - i >= k (upper) or j - i <= k (lower).

std::vector<TensorType> infer_trilu(const InferInputs& in) {
  check_input_count(in, 1, 2);
  check_output_count(in.node, 1, 1);
  const TensorType& x = in.type(0);
  check_rank_at_least(in.node, x, 2, "input");
  if (in.has(1)) check_scalar_int_type(in.node, in.type(1), "k");
  return {x};
}

std::vector<Tensor> eval_trilu(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  int64_t k = in.size() > 1 && in[1] ? scalar_int(node, *in[1], "k") : 0;
  bool upper = node.attr_int("upper", 1) != 0;
  int64_t rows = x.shape()[size_t(x.rank() - 2)], cols = x.shape().back();
  size_t esize = dtype_size(x.dtype());
  Tensor out(node.outputs[0]->type); // zero-filled
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t i = (e / cols) % rows, j = e % cols;
    bool keep = upper ? j - i >= k : j - i <= k;
    if (keep) std::memcpy(out.raw() + size_t(e) * esize, x.raw() + size_t(e) * esize, esize);
  }
  std::vector<Tensor> r;
  r.push_back(std::move(out));
  return r;
}

} // namespace

void register_scan_ops(OpTable& t) {
  t.add(OpDef{"CumSum", OpKind::compute, infer_cumsum, eval_cumsum});
  t.add(OpDef{"TopK", OpKind::compute, infer_topk, eval_topk});
  t.add(OpDef{"Trilu", OpKind::compute, infer_trilu, eval_trilu});
}

} // namespace vtc::nn
