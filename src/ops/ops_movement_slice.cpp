// Data-movement ops that cut tensors into boxes or join boxes into tensors: Slice, Split,
// Concat and Pad. Slice and Pad read their parameters from inputs (opset >= 10 / >= 11) or
// from attributes (older opsets) through one function used by both shape inference and
// evaluation, so the two can never disagree.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "ops/ops_movement_util.h"

namespace vtc::movement {
namespace {

// ---- Slice ----

// Output dim d reads input index start + i * step for i in [0, len).
struct SliceDim {
  int64_t start = 0, step = 1, len = 0;
};

std::vector<SliceDim> slice_dims(const Node& node, const Shape& shape, const IntsOf& ints) {
  bool attr_form = node.has_attr("starts");
  auto starts = attr_form ? std::optional(node.attr_ints("starts")) : ints(1);
  auto ends = attr_form ? std::optional(node.attr_ints("ends")) : ints(2);
  auto axes = attr_form
                  ? (node.has_attr("axes") ? std::optional(node.attr_ints("axes")) : std::nullopt)
                  : ints(3);
  auto steps = attr_form ? std::nullopt : ints(4);
  VTC_CHECK(starts && ends) << node.describe() << ": needs starts and ends";
  size_t n = starts->size();
  if (!axes) {
    axes.emplace();
    for (size_t k = 0; k < n; ++k)
      axes->push_back(int64_t(k));
  }
  if (!steps) steps = std::vector<int64_t>(n, 1);
  VTC_CHECK(ends->size() == n && axes->size() == n && steps->size() == n)
      << node.describe() << ": starts " << shape_str(*starts) << ", ends " << shape_str(*ends)
      << ", axes " << shape_str(*axes) << " and steps " << shape_str(*steps)
      << " must have the same length";
  std::vector<int64_t> ax = normalize_axes(node, *axes, int64_t(shape.size()));

  std::vector<SliceDim> dims(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    dims[d].len = shape[d];
  for (size_t k = 0; k < n; ++k) {
    int64_t dim = shape[size_t(ax[k])];
    int64_t step = (*steps)[k];
    SliceAxis sa = slice_axis(node, dim, (*starts)[k], (*ends)[k], step);
    dims[size_t(ax[k])] = {sa.start, step, sa.len};
  }
  return dims;
}

std::vector<TensorType> infer_slice(const InferInputs& in) {
  check_arity(in, 1, 5, 1);
  const TensorType& x = in.type(0);
  Shape out;
  for (const SliceDim& d : slice_dims(in.node, x.shape, ints_of(in)))
    out.push_back(d.len);
  return {{x.dtype, out}};
}

std::vector<Tensor> eval_slice(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  std::vector<SliceDim> dims = slice_dims(node, x.shape(), ints_of(in));
  Shape xs = shape_strides(x.shape());
  int64_t base = 0;
  Shape strides(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    base += dims[d].start * xs[d];
    strides[d] = dims[d].step * xs[d];
  }
  Tensor y(node.outputs[0]->type);
  fill_from(y, x, [&](const Shape& idx) { return base + offset_of(idx, strides); });
  return {std::move(y)};
}

// ---- Split ----

int64_t split_axis(const Node& node, const Shape& shape) {
  VTC_CHECK(!shape.empty()) << node.describe() << ": cannot split a scalar";
  return normalize_axis(node, node.attr_int("axis", 0), int64_t(shape.size()));
}

// Sizes of the outputs along the split axis: the `split` list (input or attribute), or
// num_outputs (or the number of outputs) chunks of ceil(dim / n), the last one smaller.
std::vector<int64_t> split_sizes(const Node& node, const Shape& shape, const IntsOf& ints) {
  int64_t dim = shape[size_t(split_axis(node, shape))];
  int64_t n_out = int64_t(node.outputs.size());
  VTC_CHECK(n_out >= 1) << node.describe() << ": has no outputs";
  auto split = attr_or_input(node, "split", ints, 1);
  if (split && !split->empty()) {
    VTC_CHECK(node.attr_int("num_outputs", n_out) == n_out && int64_t(split->size()) == n_out)
        << node.describe() << ": split " << shape_str(*split) << " does not match its " << n_out
        << " outputs";
    int64_t sum = 0;
    for (int64_t s : *split) {
      VTC_CHECK(s >= 0) << node.describe() << ": negative size in split " << shape_str(*split);
      sum += s;
    }
    VTC_CHECK(sum == dim) << node.describe() << ": split " << shape_str(*split)
                          << " does not sum to the axis size " << dim << " of " << shape_str(shape);
    return *split;
  }
  int64_t n = node.attr_int("num_outputs", n_out);
  VTC_CHECK(n == n_out) << node.describe() << ": num_outputs " << n << " but the node has " << n_out
                        << " outputs";
  int64_t chunk = (dim + n - 1) / n;
  int64_t last = dim - chunk * (n - 1);
  VTC_CHECK(last >= 0) << node.describe() << ": cannot split axis size " << dim << " of "
                       << shape_str(shape) << " into " << n << " chunks";
  std::vector<int64_t> sizes(size_t(n), chunk);
  sizes.back() = last;
  return sizes;
}

std::vector<TensorType> infer_split(const InferInputs& in) {
  check_arity(in, 1, 2, 0);
  const TensorType& x = in.type(0);
  int64_t axis = split_axis(in.node, x.shape);
  std::vector<TensorType> outs;
  for (int64_t s : split_sizes(in.node, x.shape, ints_of(in))) {
    outs.push_back(x);
    outs.back().shape[size_t(axis)] = s;
  }
  return outs;
}

std::vector<Tensor> eval_split(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  size_t axis = size_t(split_axis(node, x.shape()));
  std::vector<int64_t> sizes = split_sizes(node, x.shape(), ints_of(in));
  Shape xs = shape_strides(x.shape());
  std::vector<Tensor> outs;
  int64_t begin = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (!node.outputs[k]) {
      outs.emplace_back();
    } else {
      Tensor y(node.outputs[k]->type);
      int64_t base = begin * xs[axis];
      fill_from(y, x, [&](const Shape& idx) { return base + offset_of(idx, xs); });
      outs.push_back(std::move(y));
    }
    begin += sizes[k];
  }
  return outs;
}

// ---- Concat ----

std::vector<TensorType> infer_concat(const InferInputs& in) {
  const Node& node = in.node;
  check_arity(in, 1, in.size(), 1);
  VTC_CHECK(in.size() >= 1) << node.describe() << ": needs at least one input";
  VTC_CHECK(node.has_attr("axis")) << node.describe() << ": missing required attribute 'axis'";
  TensorType out = in.type(0);
  VTC_CHECK(out.rank() >= 1) << node.describe() << ": cannot concatenate scalars";
  size_t axis = size_t(normalize_axis(node, node.attr_int("axis"), out.rank()));
  out.shape[axis] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const TensorType& t = in.type(i);
    bool same = t.dtype == out.dtype && t.rank() == out.rank();
    for (size_t d = 0; same && d < t.shape.size(); ++d)
      same = d == axis || t.shape[d] == out.shape[d];
    VTC_CHECK(same) << node.describe() << ": input " << i << " " << type_str(t)
                    << " does not match input 0 " << type_str(in.type(0)) << " on axis " << axis;
    out.shape[axis] += t.shape[axis];
  }
  return {out};
}

std::vector<Tensor> eval_concat(const Node& node, const std::vector<const Tensor*>& in) {
  Tensor y(node.outputs[0]->type);
  size_t axis = size_t(normalize_axis(node, node.attr_int("axis"), y.rank()));
  Shape ys = shape_strides(y.shape());
  int64_t begin = 0;
  for (const Tensor* x : in) {
    int64_t base = begin * ys[axis];
    // Scatter form: each input element goes to its place in the output slab.
    for_each_index(x->shape(), [&](const Shape& idx, int64_t flat) {
      copy_element(y, base + offset_of(idx, ys), *x, flat);
    });
    begin += x->shape()[axis];
  }
  return {std::move(y)};
}

// ---- Pad ----

enum class PadMode { constant, reflect, edge, wrap };

PadMode pad_mode(const Node& node) {
  std::string m = node.attr_string("mode", "constant");
  if (m == "constant") return PadMode::constant;
  if (m == "reflect") return PadMode::reflect;
  if (m == "edge") return PadMode::edge;
  if (m == "wrap") return PadMode::wrap;
  VTC_FAIL() << node.describe() << ": unsupported mode '" << m
             << "' (expected constant, reflect, edge or wrap)";
}

// Per-dimension pads (negative ones crop). The non-constant modes pad the cropped input.
struct PadDims {
  Shape begin, end;
};

PadDims pad_dims(const Node& node, const Shape& shape, const IntsOf& ints) {
  auto pads = attr_or_input(node, "pads", ints, 1);
  VTC_CHECK(pads) << node.describe() << ": needs pads";
  int64_t rank = int64_t(shape.size());
  std::vector<int64_t> axes;
  auto given_axes = node.has_attr("pads") ? std::nullopt : ints(3);
  if (given_axes)
    axes = normalize_axes(node, *given_axes, rank);
  else
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  VTC_CHECK(pads->size() == 2 * axes.size())
      << node.describe() << ": pads " << shape_str(*pads) << " need 2 values for each of the "
      << axes.size() << " padded axes of " << shape_str(shape);
  PadDims p{Shape(shape.size(), 0), Shape(shape.size(), 0)};
  for (size_t k = 0; k < axes.size(); ++k) {
    p.begin[size_t(axes[k])] = (*pads)[k];
    p.end[size_t(axes[k])] = (*pads)[k + axes.size()];
  }
  PadMode mode = pad_mode(node);
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t kept = shape[d] + std::min<int64_t>(p.begin[d], 0) + std::min<int64_t>(p.end[d], 0);
    VTC_CHECK(kept >= 0) << node.describe() << ": pads " << shape_str(*pads)
                         << " crop more than axis " << d << " of " << shape_str(shape);
    VTC_CHECK(mode == PadMode::constant || kept > 0 || (p.begin[d] <= 0 && p.end[d] <= 0))
        << node.describe() << ": cannot pad the empty axis " << d << " of " << shape_str(shape)
        << " in mode " << node.attr_string("mode", "constant");
  }
  return p;
}

std::vector<TensorType> infer_pad(const InferInputs& in) {
  const Node& node = in.node;
  check_arity(in, 1, 4, 1);
  const TensorType& x = in.type(0);
  if (in.has(2)) {
    const TensorType& v = in.type(2);
    VTC_CHECK(v.dtype == x.dtype && v.numel() == 1)
        << node.describe() << ": constant_value " << type_str(v)
        << " must be one element of the data type " << dtype_name(x.dtype);
  }
  PadDims p = pad_dims(node, x.shape, ints_of(in));
  TensorType out = x;
  for (size_t d = 0; d < out.shape.size(); ++d)
    out.shape[d] += p.begin[d] + p.end[d];
  return {out};
}

// Index into an axis of `n` kept elements for position j (which may lie outside [0, n)).
int64_t pad_source(PadMode mode, int64_t j, int64_t n) {
  auto mod = [](int64_t a, int64_t m) { return ((a % m) + m) % m; };
  switch (mode) {
  case PadMode::constant:
    return -1;
  case PadMode::edge:
    return std::clamp<int64_t>(j, 0, n - 1);
  case PadMode::wrap:
    return mod(j, n);
  case PadMode::reflect: {
    if (n == 1) return 0;
    int64_t m = mod(j, 2 * (n - 1)); // reflection without repeating the edge has period 2n-2
    return m < n ? m : 2 * (n - 1) - m;
  }
  }
  return -1;
}

std::vector<Tensor> eval_pad(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  PadDims p = pad_dims(node, x.shape(), ints_of(in));
  PadMode mode = pad_mode(node);
  Tensor value(x.dtype(), {});
  if (in.size() > 2 && in[2])
    copy_element(value, 0, *in[2], 0);
  else if (node.has_attr("value"))
    value.set_f64(0, node.attr_float("value", 0.f));
  Shape xs = shape_strides(x.shape());
  Tensor y(node.outputs[0]->type);
  for_each_index(y.shape(), [&](const Shape& idx, int64_t flat) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t crop = std::max<int64_t>(-p.begin[d], 0);
      int64_t n = x.shape()[d] - crop - std::max<int64_t>(-p.end[d], 0);
      int64_t j = idx[d] - std::max<int64_t>(p.begin[d], 0);
      if (j < 0 || j >= n) j = pad_source(mode, j, n);
      if (j < 0) {
        copy_element(y, flat, value, 0);
        return;
      }
      off += (j + crop) * xs[d];
    }
    copy_element(y, flat, x, off);
  });
  return {std::move(y)};
}

} // namespace

void register_slice_ops(OpTable& t) {
  const OpKind k = OpKind::data_movement;
  t.add({"Slice", k, infer_slice, eval_slice});
  t.add({"Split", k, infer_split, eval_split});
  t.add({"Concat", k, infer_concat, eval_concat});
  t.add({"Pad", k, infer_pad, eval_pad});
}

} // namespace vtc::movement
