// Normalisations in their inference form: BatchNormalization (running statistics; training
// mode is rejected), InstanceNormalization, LayerNormalization (optional Mean and InvStdDev
// outputs), GroupNormalization (scale per group, opset 18, or per channel, opset 21), and
// Dropout, which is the identity at inference (its optional mask is all true). Statistics
// are population mean and variance computed in double.
#include <cmath>

#include "ops/ops_nn_common.h"

namespace vtc::nn {
namespace {

std::vector<Tensor> single(const Node& node, const std::vector<double>& y) {
  std::vector<Tensor> r;
  r.emplace_back(node.outputs[0]->type);
  store_f64(r[0], y);
  return r;
}

// Mean and variance of x[begin + i * step] for i in [0, count).
struct Moments {
  double mean = 0, var = 0;
};
Moments moments(const std::vector<double>& x, int64_t begin, int64_t count, int64_t step) {
  Moments m;
  if (count == 0) return m;
  for (int64_t i = 0; i < count; ++i)
    m.mean += x[size_t(begin + i * step)];
  m.mean /= double(count);
  for (int64_t i = 0; i < count; ++i) {
    double d = x[size_t(begin + i * step)] - m.mean;
    m.var += d * d;
  }
  m.var /= double(count);
  return m;
}

// ---- BatchNormalization: y = scale * (x - mean) / sqrt(var + epsilon) + B, per channel
// (dim 1); with spatial=0 (opset < 9) the parameters are shaped like one sample, X.shape[1:].

std::vector<TensorType> infer_batch_norm(const InferInputs& in) {
  const Node& node = in.node;
  check_input_count(in, 5, 5);
  check_output_count(node, 1, 5);
  if (node.attr_int("training_mode", 0) != 0)
    VTC_UNSUPPORTED() << node.describe() << ": training_mode=1 (vtc is inference only)";
  for (size_t k = 1; k < node.outputs.size(); ++k)
    VTC_CHECK(!node.output(k)) << node.describe() << ": output " << k
                               << " (running or saved statistics) exists only in training";
  const TensorType& x = in.type(0);
  check_float(node, x, "input X");
  check_rank_at_least(node, x, 2, "input X");
  Shape sample(x.shape.begin() + 1, x.shape.end());
  const char* names[] = {"", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    const TensorType& p = in.type(i);
    check_float(node, p, names[i]);
    VTC_CHECK(p.shape == Shape{x.shape[1]} || p.shape == sample)
        << node.describe() << ": " << names[i] << " " << type_str(p) << " must be [" << x.shape[1]
        << "] for input " << type_str(x);
  }
  std::vector<TensorType> types{x};
  types.resize(node.outputs.size(), x);
  return types;
}

std::vector<Tensor> eval_batch_norm(const Node& node, const std::vector<const Tensor*>& in) {
  double eps = node.attr_float("epsilon", 1e-5f);
  AxisView v = axis_view(in[0]->shape(), 1);
  std::vector<double> x = load_f64(*in[0]);
  std::vector<double> scale = load_f64(*in[1]), bias = load_f64(*in[2]);
  std::vector<double> mean = load_f64(*in[3]), var = load_f64(*in[4]);
  bool per_channel = int64_t(scale.size()) == v.len && in[1]->rank() == 1;
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t c = 0; c < v.len; ++c)
      for (int64_t i = 0; i < v.inner; ++i) {
        size_t p = per_channel ? size_t(c) : size_t(c * v.inner + i);
        size_t k = size_t(v.at(o, c, i));
        y[k] = scale[p] * (x[k] - mean[p]) / std::sqrt(var[p] + eps) + bias[p];
      }
  std::vector<Tensor> r = single(node, y);
  r.resize(node.outputs.size());
  return r;
}

// ---- InstanceNormalization: normalise each (n, c) plane, then scale[c] and B[c].

std::vector<TensorType> infer_instance_norm(const InferInputs& in) {
  const Node& node = in.node;
  check_input_count(in, 3, 3);
  check_output_count(node, 1, 1);
  const TensorType& x = in.type(0);
  check_float(node, x, "input X");
  check_rank_at_least(node, x, 3, "input X");
  for (size_t i = 1; i < 3; ++i) {
    check_float(node, in.type(i), i == 1 ? "scale" : "B");
    VTC_CHECK(in.type(i).shape == Shape{x.shape[1]})
        << node.describe() << ": " << (i == 1 ? "scale " : "B ") << type_str(in.type(i))
        << " must be [" << x.shape[1] << "] for input " << type_str(x);
  }
  return {x};
}

std::vector<Tensor> eval_instance_norm(const Node& node, const std::vector<const Tensor*>& in) {
  double eps = node.attr_float("epsilon", 1e-5f);
  const Shape& xs = in[0]->shape();
  int64_t planes = xs[0] * xs[1], plane = shape_numel(Shape(xs.begin() + 2, xs.end()));
  std::vector<double> x = load_f64(*in[0]), scale = load_f64(*in[1]), bias = load_f64(*in[2]);
  std::vector<double> y(x.size());
  for (int64_t p = 0; p < planes; ++p) {
    Moments m = moments(x, p * plane, plane, 1);
    size_t c = size_t(p % xs[1]);
    for (int64_t i = 0; i < plane; ++i) {
      size_t k = size_t(p * plane + i);
      y[k] = scale[c] * (x[k] - m.mean) / std::sqrt(m.var + eps) + bias[c];
    }
  }
  return single(node, y);
}

// ---- LayerNormalization: normalise over dims [axis, rank); Scale and B broadcast onto X.
// Mean and InvStdDev are X.shape[:axis] + [1] * (rank - axis), of type stash_type.

int64_t layer_norm_axis(const Node& node, int rank) {
  return normalize_axis(node, node.attr_int("axis", -1), rank);
}

void check_broadcasts_onto(const Node& node, const TensorType& x, const TensorType& p,
                           const char* what) {
  check_float(node, p, what);
  VTC_CHECK(broadcasts_onto(p.shape, x.shape))
      << node.describe() << ": " << what << " " << type_str(p) << " does not broadcast onto "
      << type_str(x);
}

std::vector<TensorType> infer_layer_norm(const InferInputs& in) {
  const Node& node = in.node;
  check_input_count(in, 2, 3);
  check_output_count(node, 1, 3);
  const TensorType& x = in.type(0);
  check_float(node, x, "input X");
  check_rank_at_least(node, x, 1, "input X");
  int64_t axis = layer_norm_axis(node, x.rank());
  check_broadcasts_onto(node, x, in.type(1), "Scale");
  if (in.has(2)) check_broadcasts_onto(node, x, in.type(2), "B");
  DType stash = dtype_from_onnx(node, node.attr_int("stash_type", 1), "stash_type");
  Shape stats(x.shape.begin(), x.shape.begin() + axis);
  stats.resize(x.shape.size(), 1);
  std::vector<TensorType> types{x, TensorType{stash, stats}, TensorType{stash, stats}};
  types.resize(node.outputs.size());
  return types;
}

std::vector<Tensor> eval_layer_norm(const Node& node, const std::vector<const Tensor*>& in) {
  const Shape& xs = in[0]->shape();
  int64_t axis = layer_norm_axis(node, int(xs.size()));
  double eps = node.attr_float("epsilon", 1e-5f);
  int64_t rows = shape_numel(Shape(xs.begin(), xs.begin() + axis));
  int64_t cols = shape_numel(Shape(xs.begin() + axis, xs.end()));
  std::vector<double> x = load_f64(*in[0]), scale = load_f64(*in[1]);
  std::vector<int64_t> scale_map = broadcast_index_map(xs, in[1]->shape());
  bool has_bias = in.size() > 2 && in[2];
  std::vector<double> bias = has_bias ? load_f64(*in[2]) : std::vector<double>();
  std::vector<int64_t> bias_map =
      has_bias ? broadcast_index_map(xs, in[2]->shape()) : std::vector<int64_t>();
  std::vector<double> y(x.size()), mean(static_cast<size_t>(rows)), inv_std(mean.size());
  for (int64_t r = 0; r < rows; ++r) {
    Moments m = moments(x, r * cols, cols, 1);
    mean[size_t(r)] = m.mean;
    inv_std[size_t(r)] = 1.0 / std::sqrt(m.var + eps);
    for (int64_t c = 0; c < cols; ++c) {
      size_t k = size_t(r * cols + c);
      y[k] = (x[k] - m.mean) * inv_std[size_t(r)] * scale[size_t(scale_map[k])];
      if (has_bias) y[k] += bias[size_t(bias_map[k])];
    }
  }
  std::vector<Tensor> out = single(node, y);
  for (size_t k = 1; k < node.outputs.size(); ++k) {
    out.emplace_back();
    if (!node.output(k)) continue;
    out[k] = Tensor(node.outputs[k]->type);
    store_f64(out[k], k == 1 ? mean : inv_std);
  }
  return out;
}

// ---- GroupNormalization: channels split into num_groups groups, each normalised over its
// channels and spatial dims; scale and bias per group (opset 18) or per channel (opset 21).

std::vector<TensorType> infer_group_norm(const InferInputs& in) {
  const Node& node = in.node;
  check_input_count(in, 3, 3);
  check_output_count(node, 1, 1);
  const TensorType& x = in.type(0);
  check_float(node, x, "input X");
  check_rank_at_least(node, x, 2, "input X");
  int64_t groups = node.attr_int("num_groups");
  VTC_CHECK(groups > 0 && x.shape[1] % groups == 0)
      << node.describe() << ": num_groups " << groups << " must divide the " << x.shape[1]
      << " channels of " << type_str(x);
  for (size_t i = 1; i < 3; ++i) {
    const TensorType& p = in.type(i);
    check_float(node, p, i == 1 ? "scale" : "bias");
    VTC_CHECK(p.shape == Shape{x.shape[1]} || p.shape == Shape{groups})
        << node.describe() << ": " << (i == 1 ? "scale " : "bias ") << type_str(p) << " must be ["
        << x.shape[1] << "] or [" << groups << "]";
  }
  return {x};
}

std::vector<Tensor> eval_group_norm(const Node& node, const std::vector<const Tensor*>& in) {
  const Shape& xs = in[0]->shape();
  double eps = node.attr_float("epsilon", 1e-5f);
  int64_t groups = node.attr_int("num_groups"), channels = xs[1];
  int64_t per_group = channels / groups;
  int64_t plane = shape_numel(Shape(xs.begin() + 2, xs.end()));
  std::vector<double> x = load_f64(*in[0]), scale = load_f64(*in[1]), bias = load_f64(*in[2]);
  bool per_channel = int64_t(scale.size()) == channels;
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t begin = (n * channels + g * per_group) * plane;
      Moments m = moments(x, begin, per_group * plane, 1);
      for (int64_t i = 0; i < per_group * plane; ++i) {
        size_t p = per_channel ? size_t(g * per_group + i / plane) : size_t(g);
        size_t k = size_t(begin + i);
        y[k] = scale[p] * (x[k] - m.mean) / std::sqrt(m.var + eps) + bias[p];
      }
    }
  return single(node, y);
}

// ---- Dropout: identity at inference; mask (optional output) all true. A true training_mode
// input with a non-zero ratio would need random numbers and is rejected.

std::vector<TensorType> infer_dropout(const InferInputs& in) {
  check_input_count(in, 1, 3);
  check_output_count(in.node, 1, 2);
  const TensorType& x = in.type(0);
  check_float(in.node, x, "input data");
  std::vector<TensorType> types{x, TensorType{DType::boolean, x.shape}};
  types.resize(in.node.outputs.size());
  return types;
}

std::vector<Tensor> eval_dropout(const Node& node, const std::vector<const Tensor*>& in) {
  bool training = in.size() > 2 && in[2] && in[2]->numel() > 0 && in[2]->get_i64(0) != 0;
  double ratio = in.size() > 1 && in[1] && in[1]->numel() > 0 ? in[1]->get_f64(0)
                                                              : node.attr_float("ratio", 0.5f);
  if (training && ratio != 0.0)
    VTC_UNSUPPORTED() << node.describe() << ": training_mode with ratio " << ratio
                      << " (random masks; vtc is inference only)";
  std::vector<Tensor> r;
  r.push_back(*in[0]);
  if (node.outputs.size() > 1) {
    r.emplace_back();
    if (node.output(1)) {
      r[1] = Tensor(node.outputs[1]->type);
      for (int64_t i = 0; i < r[1].numel(); ++i)
        r[1].set_i64(i, 1);
    }
  }
  return r;
}

} // namespace

void register_norm_ops(OpTable& t) {
  t.add(OpDef{"BatchNormalization", OpKind::compute, infer_batch_norm, eval_batch_norm});
  t.add(OpDef{"InstanceNormalization", OpKind::compute, infer_instance_norm, eval_instance_norm});
  t.add(OpDef{"LayerNormalization", OpKind::compute, infer_layer_norm, eval_layer_norm});
  t.add(OpDef{"GroupNormalization", OpKind::compute, infer_group_norm, eval_group_norm});
  t.add(OpDef{"Dropout", OpKind::compute, infer_dropout, eval_dropout});
}

} // namespace vtc::nn
