// Pooling over the spatial dims of [N, C, spatial...] tensors: MaxPool (with the optional
// Indices output, row- or column-major), AveragePool (count_include_pad), GlobalAveragePool,
// GlobalMaxPool, and LRN, which pools squares across neighbouring channels. Windows come from
// the shared geometry in ops_nn_common.h (strides, dilations, pads, auto_pad, ceil_mode).
#include <cmath>
#include <limits>

#include "ops/ops_nn_common.h"

namespace vtc::nn {
namespace {

Shape spatial(const Shape& s) {
  return Shape(s.begin() + 2, s.end());
}

Window pool_window(const Node& node, const Shape& x) {
  VTC_CHECK(node.has_attr("kernel_shape"))
      << node.describe() << ": missing required attribute 'kernel_shape'";
  return make_window(node, spatial(x), node.attr_ints("kernel_shape"), true);
}

void check_pool_input(const Node& node, const TensorType& x, bool allow_int8) {
  bool ok = is_float(x.dtype) || (allow_int8 && (x.dtype == DType::i8 || x.dtype == DType::u8));
  VTC_CHECK(ok) << node.describe() << ": input X must be a float"
                << (allow_int8 ? ", int8 or uint8" : "") << " tensor, got " << type_str(x);
  check_rank_at_least(node, x, 3, "input X");
}

Shape pooled_shape(const Shape& x, const Shape& out_spatial) {
  Shape out{x[0], x[1]};
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  return out;
}

// ---- MaxPool / AveragePool

std::vector<TensorType> infer_max_pool(const InferInputs& in) {
  check_input_count(in, 1, 1);
  check_output_count(in.node, 1, 2);
  const TensorType& x = in.type(0);
  check_pool_input(in.node, x, true);
  int64_t order = in.node.attr_int("storage_order", 0);
  VTC_CHECK(order == 0 || order == 1)
      << in.node.describe() << ": storage_order " << order << " must be 0 or 1";
  Shape out = pooled_shape(x.shape, pool_window(in.node, x.shape).out);
  std::vector<TensorType> types{TensorType{x.dtype, out}, TensorType{DType::i64, out}};
  types.resize(in.node.outputs.size());
  return types;
}

// Row-major spatial position `pos` re-expressed column-major (first dim fastest).
int64_t column_major(int64_t pos, const Shape& dims) {
  int64_t result = 0, stride = 1;
  Shape idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = pos % dims[d];
    pos /= dims[d];
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    result += idx[d] * stride;
    stride *= dims[d];
  }
  return result;
}

std::vector<Tensor> eval_max_pool(const Node& node, const std::vector<const Tensor*>& in) {
  const Shape& xs = in[0]->shape();
  Window w = pool_window(node, xs);
  bool column = node.attr_int("storage_order", 0) == 1;
  int64_t planes = xs[0] * xs[1], in_n = w.in_numel(), out_n = w.out_numel();
  std::vector<double> x = load_f64(*in[0]);
  std::vector<double> y(size_t(planes * out_n));
  std::vector<int64_t> idx(size_t(planes * out_n));
  for_each_window(w, [&](int64_t op, const std::vector<Tap>& taps, int64_t) {
    for (int64_t p = 0; p < planes; ++p) {
      double best = -std::numeric_limits<double>::infinity();
      int64_t best_pos = -1;
      for (const Tap& t : taps) {
        double v = x[size_t(p * in_n + t.in_pos)];
        if (best_pos < 0 || v > best) {
          best = v;
          best_pos = t.in_pos;
        }
      }
      y[size_t(p * out_n + op)] = best;
      idx[size_t(p * out_n + op)] =
          best_pos < 0 ? -1 : p * in_n + (column ? column_major(best_pos, w.in) : best_pos);
    }
  });
  std::vector<Tensor> r;
  r.emplace_back(node.outputs[0]->type);
  store_f64(r[0], y);
  if (node.output(1)) {
    r.emplace_back(node.outputs[1]->type);
    store_i64(r[1], idx);
  } else if (node.outputs.size() > 1) {
    r.emplace_back();
  }
  return r;
}

std::vector<TensorType> infer_average_pool(const InferInputs& in) {
  check_input_count(in, 1, 1);
  check_output_count(in.node, 1, 1);
  const TensorType& x = in.type(0);
  check_pool_input(in.node, x, false);
  return {TensorType{x.dtype, pooled_shape(x.shape, pool_window(in.node, x.shape).out)}};
}

std::vector<Tensor> eval_average_pool(const Node& node, const std::vector<const Tensor*>& in) {
  const Shape& xs = in[0]->shape();
  Window w = pool_window(node, xs);
  bool include_pad = node.attr_int("count_include_pad", 0) != 0;
  int64_t planes = xs[0] * xs[1], in_n = w.in_numel(), out_n = w.out_numel();
  std::vector<double> x = load_f64(*in[0]);
  std::vector<double> y(size_t(planes * out_n));
  for_each_window(w, [&](int64_t op, const std::vector<Tap>& taps, int64_t padded) {
    int64_t count = include_pad ? padded : int64_t(taps.size());
    for (int64_t p = 0; p < planes; ++p) {
      double sum = 0;
      for (const Tap& t : taps)
        sum += x[size_t(p * in_n + t.in_pos)];
      y[size_t(p * out_n + op)] = count > 0 ? sum / double(count) : 0.0;
    }
  });
  std::vector<Tensor> r;
  r.emplace_back(node.outputs[0]->type);
  store_f64(r[0], y);
  return r;
}

// ---- GlobalAveragePool / GlobalMaxPool: [N, C, spatial...] -> [N, C, 1, ...]

std::vector<TensorType> infer_global_pool(const InferInputs& in) {
  check_input_count(in, 1, 1);
  check_output_count(in.node, 1, 1);
  const TensorType& x = in.type(0);
  check_pool_input(in.node, x, in.node.op == "GlobalMaxPool");
  return {TensorType{x.dtype, pooled_shape(x.shape, Shape(size_t(x.rank() - 2), 1))}};
}

std::vector<Tensor> eval_global_pool(const Node& node, const std::vector<const Tensor*>& in) {
  const Shape& xs = in[0]->shape();
  bool is_max = node.op == "GlobalMaxPool";
  int64_t planes = xs[0] * xs[1], in_n = shape_numel(spatial(xs));
  std::vector<double> x = load_f64(*in[0]);
  std::vector<double> y(static_cast<size_t>(planes));
  for (int64_t p = 0; p < planes; ++p) {
    double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t i = 0; i < in_n; ++i) {
      double v = x[size_t(p * in_n + i)];
      acc = is_max ? (v > acc ? v : acc) : acc + v;
    }
    y[size_t(p)] = is_max ? acc : (in_n > 0 ? acc / double(in_n) : 0.0);
  }
  std::vector<Tensor> r;
  r.emplace_back(node.outputs[0]->type);
  store_f64(r[0], y);
  return r;
}

// ---- LRN: y = x / (bias + alpha / size * sum of x^2 over `size` neighbouring channels)^beta

std::vector<TensorType> infer_lrn(const InferInputs& in) {
  check_input_count(in, 1, 1);
  check_output_count(in.node, 1, 1);
  const TensorType& x = in.type(0);
  check_float(in.node, x, "input X");
  check_rank_at_least(in.node, x, 2, "input X");
  int64_t size = in.node.attr_int("size");
  VTC_CHECK(size > 0) << in.node.describe() << ": size " << size << " must be positive";
  return {x};
}

std::vector<Tensor> eval_lrn(const Node& node, const std::vector<const Tensor*>& in) {
  int64_t size = node.attr_int("size");
  double alpha = node.attr_float("alpha", 1e-4f), beta = node.attr_float("beta", 0.75f);
  double bias = node.attr_float("bias", 1.0f);
  AxisView v = axis_view(in[0]->shape(), 1);
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::vector<double> x = load_f64(*in[0]);
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t c = 0; c < v.len; ++c)
      for (int64_t i = 0; i < v.inner; ++i) {
        double sq = 0;
        for (int64_t j = std::max<int64_t>(0, c - before); j <= std::min(v.len - 1, c + after); ++j)
          sq += x[size_t(v.at(o, j, i))] * x[size_t(v.at(o, j, i))];
        size_t k = size_t(v.at(o, c, i));
        y[k] = x[k] / std::pow(bias + alpha / double(size) * sq, beta);
      }
  std::vector<Tensor> r;
  r.emplace_back(node.outputs[0]->type);
  store_f64(r[0], y);
  return r;
}

} // namespace

void register_pool_ops(OpTable& t) {
  t.add(OpDef{"MaxPool", OpKind::compute, infer_max_pool, eval_max_pool});
  t.add(OpDef{"AveragePool", OpKind::compute, infer_average_pool, eval_average_pool});
  t.add(OpDef{"GlobalAveragePool", OpKind::compute, infer_global_pool, eval_global_pool});
  t.add(OpDef{"GlobalMaxPool", OpKind::compute, infer_global_pool, eval_global_pool});
  t.add(OpDef{"LRN", OpKind::compute, infer_lrn, eval_lrn});
}

} // namespace vtc::nn
