// Ops whose outputs come from shapes and attributes only: Shape, Size, Constant,
// ConstantOfShape, Range, EyeLike. The importer folds them into constants, which is how the
// Shape -> Gather -> Concat -> Reshape arithmetic that exporters emit becomes static.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/op_registry.h"
#include "vtc/error.h"

namespace vtc {

namespace {

// Shape's [start, end) over a rank-r shape, with ONNX's clamping of negative bounds.
std::pair<int64_t, int64_t> shape_window(const Node& n, int64_t rank) {
  auto clamp = [&](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(n.attr_int("start", 0));
  int64_t end = clamp(n.attr_int("end", rank));
  return {start, std::max(start, end)};
}

std::vector<TensorType> infer_shape_op(const InferInputs& in) {
  auto [s, e] = shape_window(in.node, in.type(0).rank());
  return {{DType::i64, {e - s}}};
}

// Shape, Size and EyeLike read only their input's type, so they evaluate (and fold) even
// when the input's values are not known.
std::vector<Tensor> eval_shape_op(const Node& n, const std::vector<const Tensor*>&) {
  const Shape& shape = n.input(0)->type.shape;
  auto [s, e] = shape_window(n, int64_t(shape.size()));
  return {Tensor::from<int64_t>({e - s}, Shape(shape.begin() + s, shape.begin() + e))};
}

// The tensor a Constant node produces, from whichever value attribute it has.
Tensor constant_value(const Node& n) {
  if (n.has_attr("value")) return n.attr_tensor("value");
  if (n.has_attr("value_float")) return Tensor::from<float>({}, {n.attr_float("value_float", 0)});
  if (n.has_attr("value_int")) return Tensor::from<int64_t>({}, {n.attr_int("value_int")});
  if (n.has_attr("value_floats")) {
    auto v = n.attr_floats("value_floats");
    return Tensor::from<float>({int64_t(v.size())}, v);
  }
  if (n.has_attr("value_ints")) {
    auto v = n.attr_ints("value_ints");
    return Tensor::from<int64_t>({int64_t(v.size())}, v);
  }
  VTC_FAIL() << n.describe() << ": no supported value attribute (value, value_float(s), "
             << "value_int(s)); sparse and string constants are not supported";
}

// ConstantOfShape's fill value: the one-element `value` attribute, default f32 zero.
Tensor fill_value(const Node& n) {
  if (!n.has_attr("value")) return Tensor::from<float>({1}, {0.0f});
  const Tensor& v = n.attr_tensor("value");
  VTC_CHECK(v.numel() == 1) << n.describe() << ": value must have one element, got "
                            << type_str(v.type());
  return v;
}

std::vector<TensorType> infer_constant_of_shape(const InferInputs& in) {
  Shape shape = in.ints(0);
  for (int64_t d : shape)
    VTC_CHECK(d >= 0) << in.node.describe() << ": negative dimension in shape " << shape_str(shape);
  return {{fill_value(in.node).dtype(), shape}};
}

std::vector<Tensor> eval_constant_of_shape(const Node& n, const std::vector<const Tensor*>&) {
  Tensor v = fill_value(n);
  Tensor out(n.outputs[0]->type);
  size_t es = dtype_size(out.dtype());
  for (int64_t i = 0; i < out.numel(); ++i)
    std::memcpy(out.raw() + i * es, v.raw(), es);
  return {out};
}

// Number of elements of Range(start, limit, delta): max(ceil((limit - start) / delta), 0).
int64_t range_count(const Node& n, double start, double limit, double delta) {
  VTC_CHECK(delta != 0) << n.describe() << ": delta is zero";
  double c = std::ceil((limit - start) / delta);
  VTC_CHECK(c < 1e10) << n.describe() << ": " << c << " elements is too many";
  return std::max<int64_t>(int64_t(c), 0);
}

std::vector<TensorType> infer_range(const InferInputs& in) {
  for (size_t i = 0; i < 3; ++i) {
    VTC_CHECK(in.type(i).numel() == 1) << in.node.describe() << ": input " << i
                                       << " must be a scalar, got " << type_str(in.type(i));
    if (!in.constant(i))
      throw NeedsConstantInput(in.node.describe() + ": Range bounds must be constants", int(i));
  }
  int64_t n = range_count(in.node, in.constant(0)->get_f64(0), in.constant(1)->get_f64(0),
                          in.constant(2)->get_f64(0));
  return {{in.type(0).dtype, {n}}};
}

std::vector<Tensor> eval_range(const Node& n, const std::vector<const Tensor*>& ins) {
  Tensor out(n.outputs[0]->type);
  if (is_float(out.dtype())) {
    double start = ins[0]->get_f64(0), delta = ins[2]->get_f64(0);
    for (int64_t i = 0; i < out.numel(); ++i)
      out.set_f64(i, start + double(i) * delta);
  } else {
    int64_t start = ins[0]->get_i64(0), delta = ins[2]->get_i64(0);
    for (int64_t i = 0; i < out.numel(); ++i)
      out.set_i64(i, start + i * delta);
  }
  return {out};
}

std::vector<TensorType> infer_eye_like(const InferInputs& in) {
  const TensorType& t = in.type(0);
  VTC_CHECK(t.rank() == 2) << in.node.describe() << ": input must be 2-D, got " << type_str(t);
  DType dt = t.dtype;
  if (in.node.has_attr("dtype")) {
    auto code = dtype_from_onnx(int(in.node.attr_int("dtype")));
    VTC_CHECK(code) << in.node.describe() << ": unsupported dtype code "
                    << in.node.attr_int("dtype");
    dt = *code;
  }
  return {{dt, t.shape}};
}

std::vector<Tensor> eval_eye_like(const Node& n, const std::vector<const Tensor*>&) {
  Tensor out(n.outputs[0]->type);
  int64_t rows = out.shape()[0], cols = out.shape()[1], k = n.attr_int("k", 0);
  for (int64_t r = 0; r < rows; ++r)
    if (r + k >= 0 && r + k < cols) out.set_i64(r * cols + r + k, 1);
  return {out};
}

} // namespace

void register_shape_ops(OpTable& t) {
  t.add({"Shape", OpKind::shape, infer_shape_op, eval_shape_op});
  t.add({"Size", OpKind::shape,
         [](const InferInputs& in) -> std::vector<TensorType> {
           in.type(0);
           return {{DType::i64, {}}};
         },
         [](const Node& n, const std::vector<const Tensor*>&) -> std::vector<Tensor> {
           return {Tensor::from<int64_t>({}, {n.input(0)->type.numel()})};
         }});
  t.add({"Constant", OpKind::shape,
         [](const InferInputs& in) -> std::vector<TensorType> {
           return {constant_value(in.node).type()};
         },
         [](const Node& n, const std::vector<const Tensor*>&) -> std::vector<Tensor> {
           return {constant_value(n)};
         }});
  t.add({"ConstantOfShape", OpKind::shape, infer_constant_of_shape, eval_constant_of_shape});
  t.add({"Range", OpKind::shape, infer_range, eval_range});
  t.add({"EyeLike", OpKind::shape, infer_eye_like, eval_eye_like});
}

} // namespace vtc
