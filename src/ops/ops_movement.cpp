// The data-movement op family (OpKind::data_movement): ops whose outputs only rearrange,
// select or repeat input elements. This file registers the family, holds the helpers shared
// by its files (ops_movement_util.h) and defines the view-like ops: Reshape, Flatten,
// Squeeze, Unsqueeze, Identity, Transpose, DepthToSpace, SpaceToDepth, Expand and Tile.
// Every eval copies elements by bytes, so each op works for every dtype.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/ops_movement_util.h"

namespace vtc {

void register_movement_ops(OpTable& t) {
  movement::register_view_ops(t);
  movement::register_slice_ops(t);
  movement::register_index_ops(t);
}

namespace movement {

IntsOf ints_of(const InferInputs& in) {
  return [&in](size_t i) -> std::optional<std::vector<int64_t>> {
    if (!in.has(i)) return std::nullopt;
    return in.ints(i);
  };
}

IntsOf ints_of(const std::vector<const Tensor*>& inputs) {
  return [&inputs](size_t i) -> std::optional<std::vector<int64_t>> {
    if (i >= inputs.size() || !inputs[i]) return std::nullopt;
    return inputs[i]->to_i64_vector();
  };
}

std::optional<std::vector<int64_t>> attr_or_input(const Node& node, const std::string& key,
                                                  const IntsOf& ints, size_t i) {
  if (node.has_attr(key)) return node.attr_ints(key);
  return ints(i);
}

void check_arity(const InferInputs& in, size_t min_in, size_t max_in, size_t n_out) {
  const Node& node = in.node;
  VTC_CHECK(in.size() <= max_in) << node.describe() << ": takes at most " << max_in
                                 << " inputs, got " << in.size();
  for (size_t i = 0; i < min_in; ++i)
    VTC_CHECK(in.has(i)) << node.describe() << ": input " << i << " is required";
  if (n_out != 0) {
    VTC_CHECK(node.outputs.size() == n_out)
        << node.describe() << ": has " << node.outputs.size() << " outputs, expected " << n_out;
  }
}

void check_index_dtype(const InferInputs& in, size_t i) {
  DType t = in.type(i).dtype;
  VTC_CHECK(t == DType::i32 || t == DType::i64)
      << in.node.describe() << ": input " << i << " must be i32 or i64 indices, got "
      << type_str(in.type(i));
}

std::vector<int64_t> normalize_axes(const Node& node, std::vector<int64_t> axes, int64_t rank) {
  for (int64_t& a : axes)
    a = normalize_axis(node, a, rank);
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  VTC_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end())
      << node.describe() << ": repeated axis in " << shape_str(axes);
  return axes;
}

std::string index_out_of_range(const Node& node, int64_t v, int64_t dim, int64_t axis) {
  return node.describe() + ": index " + std::to_string(v) + " out of range [-" +
         std::to_string(dim) + ", " + std::to_string(dim - 1) + "] for axis " +
         std::to_string(axis) + " of size " + std::to_string(dim);
}

int64_t checked_index(const Node& node, const Tensor& indices, int64_t flat, int64_t dim,
                      int64_t axis) {
  int64_t v = indices.get_i64(flat);
  VTC_CHECK(v >= -dim && v < dim) << index_out_of_range(node, v, dim, axis);
  return v < 0 ? v + dim : v;
}

Reduction parse_reduction(const Node& node) {
  std::string r = node.attr_string("reduction", "none");
  if (r == "none") return Reduction::none;
  if (r == "add") return Reduction::add;
  if (r == "mul") return Reduction::mul;
  if (r == "max") return Reduction::max;
  if (r == "min") return Reduction::min;
  VTC_FAIL() << node.describe() << ": unsupported reduction '" << r
             << "' (expected none, add, mul, max or min)";
}

namespace {

// Integers add and multiply as their unsigned counterparts (defined wrap-around).
template <typename T, bool = std::is_integral_v<T>> struct ArithmeticType { using type = T; };
template <typename T> struct ArithmeticType<T, true> { using type = std::make_unsigned_t<T>; };

// a op b in the storage type T: 16-bit floats compute in float (exactly rounded back), integers
// wrap around like two's-complement hardware, bool add/mul are or/and.
template <typename T> T reduce_values(Reduction r, T a, T b) {
  if constexpr (std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>) {
    return T(reduce_values<float>(r, float(a), float(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    switch (r) {
    case Reduction::none:
      return b;
    case Reduction::add:
      return a || b;
    case Reduction::mul:
      return a && b;
    case Reduction::max:
      return a || b;
    case Reduction::min:
      return a && b;
    }
    return b;
  } else {
    using Wide = typename ArithmeticType<T>::type;
    switch (r) {
    case Reduction::none:
      return b;
    case Reduction::add:
      return T(Wide(a) + Wide(b));
    case Reduction::mul:
      return T(Wide(a) * Wide(b));
    case Reduction::max:
      if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
      return a < b ? b : a;
    case Reduction::min:
      if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
      return b < a ? b : a;
    }
    return b;
  }
}

} // namespace

void combine_element(Reduction r, Tensor& dst, int64_t di, const Tensor& src, int64_t si) {
  if (r == Reduction::none) {
    copy_element(dst, di, src, si);
    return;
  }
  dispatch_dtype(dst.dtype(), [&]<typename T>() {
    T* d = dst.data<T>() + di;
    *d = reduce_values<T>(r, *d, src.data<T>()[si]);
  });
}

namespace {

// ---- Reshape, Flatten, Squeeze, Unsqueeze, Identity: same bytes, new shape ----

std::vector<Tensor> eval_same_bytes(const Node& node, const std::vector<const Tensor*>& in) {
  return {in[0]->reshaped(node.outputs[0]->type.shape)};
}

std::vector<TensorType> infer_reshape(const InferInputs& in) {
  const Node& node = in.node;
  check_arity(in, 1, 2, 1);
  const TensorType& x = in.type(0);
  auto spec = attr_or_input(node, "shape", ints_of(in), 1);
  VTC_CHECK(spec) << node.describe() << ": needs a shape input";
  bool allowzero = node.attr_int("allowzero", 0) != 0;
  Shape out(spec->size());
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < spec->size(); ++i) {
    int64_t v = (*spec)[i];
    if (v == 0 && !allowzero) {
      VTC_CHECK(i < x.shape.size())
          << node.describe() << ": shape " << shape_str(*spec) << " copies dimension " << i
          << " of input " << type_str(x) << ", which has none";
      out[i] = x.shape[i];
    } else if (v == -1) {
      VTC_CHECK(inferred < 0) << node.describe() << ": shape " << shape_str(*spec)
                              << " has more than one -1";
      inferred = int64_t(i);
      continue;
    } else {
      VTC_CHECK(v >= 0) << node.describe() << ": invalid dimension " << v << " in shape "
                        << shape_str(*spec);
      out[i] = v;
    }
    VTC_CHECK(!__builtin_mul_overflow(known, out[i], &known))
        << node.describe() << ": shape " << shape_str(*spec) << " has too many elements";
  }
  if (inferred >= 0) {
    VTC_CHECK(known != 0 && x.numel() % known == 0)
        << node.describe() << ": cannot infer the -1 of shape " << shape_str(*spec) << " for input "
        << type_str(x);
    out[size_t(inferred)] = x.numel() / known;
  }
  VTC_CHECK(shape_numel(out) == x.numel())
      << node.describe() << ": cannot reshape " << type_str(x) << " to " << shape_str(out)
      << " (shape " << shape_str(*spec) << ")";
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_flatten(const InferInputs& in) {
  const Node& node = in.node;
  check_arity(in, 1, 1, 1);
  const TensorType& x = in.type(0);
  int64_t r = x.rank();
  int64_t axis = node.attr_int("axis", 1);
  VTC_CHECK(axis >= -r && axis <= r)
      << node.describe() << ": axis " << axis << " out of range for input " << type_str(x);
  if (axis < 0) axis += r;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < r; ++d)
    (d < axis ? outer : inner) *= x.shape[size_t(d)];
  return {{x.dtype, {outer, inner}}};
}

std::vector<TensorType> infer_squeeze(const InferInputs& in) {
  const Node& node = in.node;
  check_arity(in, 1, 2, 1);
  const TensorType& x = in.type(0);
  auto axes = attr_or_input(node, "axes", ints_of(in), 1);
  std::vector<bool> drop(x.shape.size(), false);
  if (!axes || axes->empty()) {
    for (size_t d = 0; d < x.shape.size(); ++d)
      drop[d] = x.shape[d] == 1;
  } else {
    for (int64_t a : normalize_axes(node, *axes, x.rank())) {
      VTC_CHECK(x.shape[size_t(a)] == 1)
          << node.describe() << ": cannot squeeze axis " << a << " of size " << x.shape[size_t(a)]
          << " in input " << type_str(x);
      drop[size_t(a)] = true;
    }
  }
  Shape out;
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (!drop[d]) out.push_back(x.shape[d]);
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_unsqueeze(const InferInputs& in) {
  const Node& node = in.node;
  check_arity(in, 1, 2, 1);
  const TensorType& x = in.type(0);
  auto axes = attr_or_input(node, "axes", ints_of(in), 1);
  VTC_CHECK(axes) << node.describe() << ": needs axes";
  int64_t out_rank = x.rank() + int64_t(axes->size());
  std::vector<bool> inserted(size_t(out_rank), false);
  for (int64_t a : normalize_axes(node, *axes, out_rank))
    inserted[size_t(a)] = true;
  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d)
    out.push_back(inserted[size_t(d)] ? 1 : x.shape[next++]);
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_identity(const InferInputs& in) {
  check_arity(in, 1, 1, 1);
  return {in.type(0)};
}

// ---- Transpose ----

std::vector<int64_t> transpose_perm(const Node& node, int64_t rank) {
  std::vector<int64_t> perm = node.attr_ints("perm");
  if (!node.has_attr("perm"))
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  VTC_CHECK(int64_t(perm.size()) == rank)
      << node.describe() << ": perm " << shape_str(perm) << " does not match rank " << rank;
  std::vector<bool> seen(size_t(rank), false);
  for (int64_t p : perm) {
    VTC_CHECK(p >= 0 && p < rank && !seen[size_t(p)])
        << node.describe() << ": perm " << shape_str(perm) << " is not a permutation of 0.."
        << rank - 1;
    seen[size_t(p)] = true;
  }
  return perm;
}

std::vector<TensorType> infer_transpose(const InferInputs& in) {
  check_arity(in, 1, 1, 1);
  const TensorType& x = in.type(0);
  Shape out;
  for (int64_t p : transpose_perm(in.node, x.rank()))
    out.push_back(x.shape[size_t(p)]);
  return {{x.dtype, out}};
}

std::vector<Tensor> eval_transpose(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  std::vector<int64_t> perm = transpose_perm(node, x.rank());
  Shape x_strides = shape_strides(x.shape());
  Shape strides(perm.size());
  for (size_t d = 0; d < perm.size(); ++d)
    strides[d] = x_strides[size_t(perm[d])];
  Tensor y(node.outputs[0]->type);
  fill_from(y, x, [&](const Shape& idx) { return offset_of(idx, strides); });
  return {std::move(y)};
}

// ---- DepthToSpace, SpaceToDepth (NCHW) ----

int64_t blocksize_of(const Node& node) {
  int64_t b = node.attr_int("blocksize");
  VTC_CHECK(b > 0) << node.describe() << ": blocksize must be positive, got " << b;
  return b;
}

bool depth_to_space_is_dcr(const Node& node) {
  std::string mode = node.attr_string("mode", "DCR");
  VTC_CHECK(mode == "DCR" || mode == "CRD")
      << node.describe() << ": unsupported mode '" << mode << "' (expected DCR or CRD)";
  return mode == "DCR";
}

std::vector<TensorType> infer_depth_to_space(const InferInputs& in) {
  const Node& node = in.node;
  check_arity(in, 1, 1, 1);
  const TensorType& x = in.type(0);
  int64_t b = blocksize_of(node);
  depth_to_space_is_dcr(node);
  VTC_CHECK(x.rank() == 4 && x.shape[1] % (b * b) == 0)
      << node.describe() << ": input " << type_str(x)
      << " must be NCHW with C divisible by blocksize^2 = " << b * b;
  return {{x.dtype, {x.shape[0], x.shape[1] / (b * b), x.shape[2] * b, x.shape[3] * b}}};
}

std::vector<Tensor> eval_depth_to_space(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  int64_t b = blocksize_of(node);
  bool dcr = depth_to_space_is_dcr(node);
  Shape xs = shape_strides(x.shape());
  Tensor y(node.outputs[0]->type);
  int64_t c_out = y.shape()[1];
  fill_from(y, x, [&](const Shape& o) {
    int64_t i = o[2] % b, j = o[3] % b;
    int64_t c = dcr ? (i * b + j) * c_out + o[1] : (o[1] * b + i) * b + j;
    return o[0] * xs[0] + c * xs[1] + (o[2] / b) * xs[2] + (o[3] / b) * xs[3];
  });
  return {std::move(y)};
}

std::vector<TensorType> infer_space_to_depth(const InferInputs& in) {
  const Node& node = in.node;
  check_arity(in, 1, 1, 1);
  const TensorType& x = in.type(0);
  int64_t b = blocksize_of(node);
  VTC_CHECK(x.rank() == 4 && x.shape[2] % b == 0 && x.shape[3] % b == 0)
      << node.describe() << ": input " << type_str(x)
      << " must be NCHW with H and W divisible by blocksize " << b;
  return {{x.dtype, {x.shape[0], x.shape[1] * b * b, x.shape[2] / b, x.shape[3] / b}}};
}

std::vector<Tensor> eval_space_to_depth(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  int64_t b = blocksize_of(node);
  int64_t c_in = x.shape()[1];
  Shape xs = shape_strides(x.shape());
  Tensor y(node.outputs[0]->type);
  fill_from(y, x, [&](const Shape& o) {
    int64_t c = o[1] % c_in, i = (o[1] / c_in) / b, j = (o[1] / c_in) % b;
    return o[0] * xs[0] + c * xs[1] + (o[2] * b + i) * xs[2] + (o[3] * b + j) * xs[3];
  });
  return {std::move(y)};
}

// ---- Expand, Tile ----

std::vector<TensorType> infer_expand(const InferInputs& in) {
  check_arity(in, 2, 2, 1);
  const TensorType& x = in.type(0);
  std::vector<int64_t> shape = in.ints(1);
  for (int64_t d : shape)
    VTC_CHECK(d >= 0) << in.node.describe() << ": invalid shape " << shape_str(shape);
  return {{x.dtype, broadcast_shapes(in.node, x.shape, shape)}};
}

std::vector<Tensor> eval_expand(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  Tensor y(node.outputs[0]->type);
  // Output dim d reads input dim d - lead, with stride 0 where the input has size 1.
  size_t lead = size_t(y.rank() - x.rank());
  Shape xs = shape_strides(x.shape());
  Shape strides(size_t(y.rank()), 0);
  for (size_t d = lead; d < strides.size(); ++d)
    strides[d] = x.shape()[d - lead] == 1 ? 0 : xs[d - lead];
  fill_from(y, x, [&](const Shape& idx) { return offset_of(idx, strides); });
  return {std::move(y)};
}

std::vector<TensorType> infer_tile(const InferInputs& in) {
  const Node& node = in.node;
  check_arity(in, 2, 2, 1);
  const TensorType& x = in.type(0);
  std::vector<int64_t> repeats = in.ints(1);
  VTC_CHECK(int64_t(repeats.size()) == x.rank())
      << node.describe() << ": repeats " << shape_str(repeats) << " do not match input "
      << type_str(x);
  Shape out = x.shape;
  for (size_t d = 0; d < out.size(); ++d) {
    VTC_CHECK(repeats[d] >= 0) << node.describe() << ": negative repeat in " << shape_str(repeats);
    out[d] *= repeats[d];
  }
  return {{x.dtype, out}};
}

std::vector<Tensor> eval_tile(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  Shape xs = shape_strides(x.shape());
  Tensor y(node.outputs[0]->type);
  fill_from(y, x, [&](const Shape& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      off += (idx[d] % x.shape()[d]) * xs[d];
    return off;
  });
  return {std::move(y)};
}

} // namespace

void register_view_ops(OpTable& t) {
  const OpKind k = OpKind::data_movement;
  t.add({"Reshape", k, infer_reshape, eval_same_bytes});
  t.add({"Flatten", k, infer_flatten, eval_same_bytes});
  t.add({"Squeeze", k, infer_squeeze, eval_same_bytes});
  t.add({"Unsqueeze", k, infer_unsqueeze, eval_same_bytes});
  t.add({"Identity", k, infer_identity, eval_same_bytes});
  t.add({"Transpose", k, infer_transpose, eval_transpose});
  t.add({"DepthToSpace", k, infer_depth_to_space, eval_depth_to_space});
  t.add({"SpaceToDepth", k, infer_space_to_depth, eval_space_to_depth});
  t.add({"Expand", k, infer_expand, eval_expand});
  t.add({"Tile", k, infer_tile, eval_tile});
}

} // namespace movement
} // namespace vtc
