// Data-movement ops driven by index tensors: Gather, GatherElements, GatherND (reads at
// indices) and ScatterND, ScatterElements and its opset-9 name Scatter (writes at indices,
// with an optional reduction). Indices may be i32 or i64 and negative (counting from the back);
// an index out of range is reported with the node, the value and the axis, never read.
#include <algorithm>

#include "ops/ops_movement_util.h"

namespace vtc::movement {
namespace {

// Shape of dims [begin, end) of `s`.
Shape dims_of(const Shape& s, size_t begin, size_t end) {
  return Shape(s.begin() + std::ptrdiff_t(begin), s.begin() + std::ptrdiff_t(end));
}

// ---- Gather ----

int64_t gather_axis(const Node& node, const Shape& data) {
  VTC_CHECK(!data.empty()) << node.describe() << ": data must have rank >= 1";
  return normalize_axis(node, node.attr_int("axis", 0), int64_t(data.size()));
}

std::vector<TensorType> infer_gather(const InferInputs& in) {
  check_arity(in, 2, 2, 1);
  const TensorType& data = in.type(0);
  check_index_dtype(in, 1);
  size_t axis = size_t(gather_axis(in.node, data.shape));
  Shape out = dims_of(data.shape, 0, axis);
  for (int64_t d : in.type(1).shape)
    out.push_back(d);
  for (size_t d = axis + 1; d < data.shape.size(); ++d)
    out.push_back(data.shape[d]);
  return {{data.dtype, out}};
}

std::vector<Tensor> eval_gather(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& data = *in[0];
  const Tensor& indices = *in[1];
  size_t axis = size_t(gather_axis(node, data.shape()));
  size_t q = indices.shape().size();
  Shape ds = shape_strides(data.shape());
  Shape is = shape_strides(indices.shape());
  int64_t dim = data.shape()[axis];
  Tensor y(node.outputs[0]->type);
  // Output index = (data dims before axis, indices dims, data dims after axis).
  fill_from(y, data, [&](const Shape& o) {
    int64_t at = 0;
    for (size_t k = 0; k < q; ++k)
      at += o[axis + k] * is[k];
    int64_t off = checked_index(node, indices, at, dim, int64_t(axis)) * ds[axis];
    for (size_t d = 0; d < axis; ++d)
      off += o[d] * ds[d];
    for (size_t d = axis + 1; d < ds.size(); ++d)
      off += o[d + q - 1] * ds[d];
    return off;
  });
  return {std::move(y)};
}

// ---- GatherElements, ScatterElements, Scatter: indices of the data's rank ----

// Axis of an elements op; checks that `indices` has the data's rank and fits inside the data
// on every other axis.
int64_t elements_axis(const Node& node, const TensorType& data, const TensorType& indices) {
  VTC_CHECK(data.rank() >= 1 && indices.rank() == data.rank())
      << node.describe() << ": indices " << type_str(indices) << " must have the rank of data "
      << type_str(data) << " (>= 1)";
  int64_t axis = normalize_axis(node, node.attr_int("axis", 0), data.rank());
  for (size_t d = 0; d < data.shape.size(); ++d)
    VTC_CHECK(int64_t(d) == axis || indices.shape[d] <= data.shape[d])
        << node.describe() << ": indices " << type_str(indices) << " exceed data " << type_str(data)
        << " on axis " << d;
  return axis;
}

std::vector<TensorType> infer_gather_elements(const InferInputs& in) {
  check_arity(in, 2, 2, 1);
  check_index_dtype(in, 1);
  elements_axis(in.node, in.type(0), in.type(1));
  return {{in.type(0).dtype, in.type(1).shape}};
}

std::vector<Tensor> eval_gather_elements(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& data = *in[0];
  const Tensor& indices = *in[1];
  size_t axis = size_t(elements_axis(node, data.type(), indices.type()));
  Shape ds = shape_strides(data.shape());
  int64_t dim = data.shape()[axis];
  Tensor y(node.outputs[0]->type);
  for_each_index(y.shape(), [&](const Shape& o, int64_t flat) {
    int64_t j = checked_index(node, indices, flat, dim, int64_t(axis));
    copy_element(y, flat, data, offset_of(o, ds) + (j - o[axis]) * ds[axis]);
  });
  return {std::move(y)};
}

std::vector<TensorType> infer_scatter_elements(const InferInputs& in) {
  const Node& node = in.node;
  check_arity(in, 3, 3, 1);
  check_index_dtype(in, 1);
  parse_reduction(node);
  const TensorType& data = in.type(0);
  elements_axis(node, data, in.type(1));
  const TensorType& updates = in.type(2);
  VTC_CHECK(updates.dtype == data.dtype && updates.shape == in.type(1).shape)
      << node.describe() << ": updates " << type_str(updates) << " must have the shape of indices "
      << type_str(in.type(1)) << " and the dtype of data " << type_str(data);
  return {data};
}

std::vector<Tensor> eval_scatter_elements(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& indices = *in[1];
  const Tensor& updates = *in[2];
  Tensor y = *in[0];
  size_t axis = size_t(elements_axis(node, y.type(), indices.type()));
  Reduction r = parse_reduction(node);
  Shape ys = shape_strides(y.shape());
  int64_t dim = y.shape()[axis];
  for_each_index(indices.shape(), [&](const Shape& u, int64_t flat) {
    int64_t j = checked_index(node, indices, flat, dim, int64_t(axis));
    combine_element(r, y, offset_of(u, ys) + (j - u[axis]) * ys[axis], updates, flat);
  });
  return {std::move(y)};
}

// ---- GatherND, ScatterND: the last indices dim holds a tuple of leading data indices ----

// Flat data offset of the index tuple at indices[tuple * k .. tuple * k + k), for data axes
// first_axis .. first_axis + k.
int64_t tuple_offset(const Node& node, const Tensor& indices, int64_t tuple, int64_t k,
                     const Shape& data, const Shape& strides, size_t first_axis) {
  int64_t off = 0;
  for (int64_t t = 0; t < k; ++t) {
    size_t axis = first_axis + size_t(t);
    off += checked_index(node, indices, tuple * k + t, data[axis], int64_t(axis)) * strides[axis];
  }
  return off;
}

std::vector<TensorType> infer_gather_nd(const InferInputs& in) {
  const Node& node = in.node;
  check_arity(in, 2, 2, 1);
  check_index_dtype(in, 1);
  const TensorType& data = in.type(0);
  const TensorType& indices = in.type(1);
  int64_t b = node.attr_int("batch_dims", 0);
  int64_t r = data.rank(), q = indices.rank();
  VTC_CHECK(r >= 1 && q >= 1 && b >= 0 && b < std::min(r, q))
      << node.describe() << ": batch_dims " << b << " invalid for data " << type_str(data)
      << " and indices " << type_str(indices);
  int64_t k = indices.shape.back();
  VTC_CHECK(k >= 1 && k <= r - b) << node.describe() << ": indices " << type_str(indices)
                                  << " index " << k << " dims of data " << type_str(data)
                                  << " with batch_dims " << b;
  for (size_t d = 0; d < size_t(b); ++d)
    VTC_CHECK(indices.shape[d] == data.shape[d])
        << node.describe() << ": batch dim " << d << " differs between data " << type_str(data)
        << " and indices " << type_str(indices);
  Shape out = dims_of(indices.shape, 0, size_t(q - 1));
  for (size_t d = size_t(b + k); d < size_t(r); ++d)
    out.push_back(data.shape[d]);
  return {{data.dtype, out}};
}

std::vector<Tensor> eval_gather_nd(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& data = *in[0];
  const Tensor& indices = *in[1];
  size_t b = size_t(node.attr_int("batch_dims", 0));
  size_t q = indices.shape().size();
  int64_t k = indices.shape().back();
  Shape ds = shape_strides(data.shape());
  Shape tuples = dims_of(indices.shape(), 0, q - 1);
  Shape ts = shape_strides(tuples);
  Tensor y(node.outputs[0]->type);
  // Output index = (batch dims, other indices dims, data dims after the tuple).
  fill_from(y, data, [&](const Shape& o) {
    int64_t tuple = 0;
    for (size_t d = 0; d + 1 < q; ++d)
      tuple += o[d] * ts[d];
    int64_t off = tuple_offset(node, indices, tuple, k, data.shape(), ds, b);
    for (size_t d = 0; d < b; ++d)
      off += o[d] * ds[d];
    for (size_t d = b + size_t(k); d < ds.size(); ++d)
      off += o[d - b - size_t(k) + q - 1] * ds[d];
    return off;
  });
  return {std::move(y)};
}

std::vector<TensorType> infer_scatter_nd(const InferInputs& in) {
  const Node& node = in.node;
  check_arity(in, 3, 3, 1);
  check_index_dtype(in, 1);
  parse_reduction(node);
  const TensorType& data = in.type(0);
  const TensorType& indices = in.type(1);
  const TensorType& updates = in.type(2);
  VTC_CHECK(data.rank() >= 1 && indices.rank() >= 1 && indices.shape.back() <= data.rank())
      << node.describe() << ": indices " << type_str(indices) << " do not fit data "
      << type_str(data);
  Shape expected = dims_of(indices.shape, 0, indices.shape.size() - 1);
  for (size_t d = size_t(indices.shape.back()); d < data.shape.size(); ++d)
    expected.push_back(data.shape[d]);
  VTC_CHECK(updates.dtype == data.dtype && updates.shape == expected)
      << node.describe() << ": updates " << type_str(updates) << " must be "
      << dtype_name(data.dtype) << shape_str(expected) << " for data " << type_str(data)
      << " and indices " << type_str(indices);
  return {data};
}

std::vector<Tensor> eval_scatter_nd(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& indices = *in[1];
  const Tensor& updates = *in[2];
  Tensor y = *in[0];
  Reduction r = parse_reduction(node);
  int64_t k = indices.shape().back();
  int64_t n_tuples = indices.numel() / std::max<int64_t>(k, 1);
  if (k == 0) n_tuples = shape_numel(dims_of(indices.shape(), 0, indices.shape().size() - 1));
  int64_t slab = shape_numel(dims_of(y.shape(), size_t(k), y.shape().size()));
  Shape ys = shape_strides(y.shape());
  // Updates are applied in row-major order of their tuples: with reduction none the last
  // write to a repeated index wins.
  for (int64_t t = 0; t < n_tuples; ++t) {
    int64_t base = tuple_offset(node, indices, t, k, y.shape(), ys, 0);
    for (int64_t e = 0; e < slab; ++e)
      combine_element(r, y, base + e, updates, t * slab + e);
  }
  return {std::move(y)};
}

} // namespace

void register_index_ops(OpTable& t) {
  const OpKind k = OpKind::data_movement;
  t.add({"Gather", k, infer_gather, eval_gather});
  t.add({"GatherElements", k, infer_gather_elements, eval_gather_elements});
  t.add({"GatherND", k, infer_gather_nd, eval_gather_nd});
  t.add({"ScatterElements", k, infer_scatter_elements, eval_scatter_elements});
  t.add({"Scatter", k, infer_scatter_elements, eval_scatter_elements});
  t.add({"ScatterND", k, infer_scatter_nd, eval_scatter_nd});
}

} // namespace vtc::movement
