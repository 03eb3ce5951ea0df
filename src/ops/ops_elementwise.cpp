// The elementwise op family: the helpers its rule tables share (broadcast indexing, stores that
// round once, attribute parameters, dtype domains) and the ops that are neither a plain unary nor
// a plain binary rule: Cast, CastLike and Clip. The unary table lives in
// ops_elementwise_unary.cpp, the binary, variadic and select ops in ops_elementwise_binary.cpp.
#include "ops/ops_elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "vtc/error.h"

namespace vtc {
namespace elementwise {

std::vector<int64_t> broadcast_index(const Shape& out, const Shape& in) {
  // Stride of each output dimension in the input: 0 where the input is broadcast along it.
  size_t r = out.size(), lead = r - in.size();
  Shape in_strides = shape_strides(in);
  Shape stride(r, 0);
  for (size_t d = lead; d < r; ++d)
    stride[d] = in[d - lead] == 1 ? 0 : in_strides[d - lead];
  std::vector<int64_t> index(size_t(shape_numel(out)));
  Shape coord(r, 0);
  int64_t at = 0;
  for (int64_t& slot : index) {
    slot = at;
    for (size_t d = r; d-- > 0;) { // odometer step over the output coordinates
      at += stride[d];
      if (++coord[d] < out[d]) break;
      at -= stride[d] * coord[d];
      coord[d] = 0;
    }
  }
  return index;
}

namespace {

// `v` rounded to float by round-to-odd (truncate toward zero, then set the last bit when the
// result is inexact). Rounding that float to nearest in a format at least two bits narrower
// (f16, bf16) gives the same result as rounding `v` directly: the value is rounded once.
float to_float_odd(double v) {
  float f = float(v);
  if (std::isnan(v) || double(f) == v) return f;
  if (std::fabs(double(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits |= 1;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round-to-odd float of an int64 (see to_float_odd).
float int_to_float_odd(int64_t v) {
  float f = float(v);
  constexpr float two63 = 9223372036854775808.0f;
  bool above = f >= two63 || int64_t(f) > v; // f is integral and |f| <= 2^63
  bool exact = f < two63 && int64_t(f) == v;
  if (exact) return f;
  if (above == (f > 0)) f = std::nextafter(f, 0.0f); // away from zero: step back toward it
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits |= 1;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Cast's float-to-integer conversion before wrapping: truncation toward zero, NaN to 0, the
// int64 range saturating (ONNX leaves out-of-range casts undefined; this keeps them defined).
int64_t truncate_to_i64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (v < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

} // namespace

void store_f64(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
  case DType::f32:
    t.data<float>()[i] = float(v);
    return;
  case DType::f16:
    t.data<f16_t>()[i] = f16_t(to_float_odd(v));
    return;
  case DType::bf16:
    t.data<bf16_t>()[i] = bf16_t(to_float_odd(v));
    return;
  case DType::f64:
    t.data<double>()[i] = v;
    return;
  case DType::boolean:
    t.data<bool>()[i] = v != 0;
    return;
  case DType::i64:
  case DType::i32:
  case DType::i8:
  case DType::u8:
    store_i64(t, i, truncate_to_i64(v));
    return;
  }
}

void store_i64(Tensor& t, int64_t i, int64_t v) {
  switch (t.dtype()) {
  case DType::f32:
    t.data<float>()[i] = float(v);
    return;
  case DType::f16:
    t.data<f16_t>()[i] = f16_t(int_to_float_odd(v));
    return;
  case DType::bf16:
    t.data<bf16_t>()[i] = bf16_t(int_to_float_odd(v));
    return;
  case DType::f64:
    t.data<double>()[i] = double(v);
    return;
  case DType::boolean:
    t.data<bool>()[i] = v != 0;
    return;
  // Conversions to narrower integers are modular (two's complement) in C++20.
  case DType::i64:
    t.data<int64_t>()[i] = v;
    return;
  case DType::i32:
    t.data<int32_t>()[i] = int32_t(v);
    return;
  case DType::i8:
    t.data<int8_t>()[i] = int8_t(v);
    return;
  case DType::u8:
    t.data<uint8_t>()[i] = uint8_t(v);
    return;
  }
}

Params read_params(const Node& node, const std::vector<AttrSpec>& specs) {
  Params p{};
  VTC_CHECK(specs.size() <= p.size()) << node.describe() << ": too many attribute parameters";
  for (size_t k = 0; k < specs.size(); ++k) {
    const AttrSpec& s = specs[k];
    VTC_CHECK(node.has_attr(s.name) || !std::isnan(s.fallback))
        << node.describe() << ": missing required attribute '" << s.name << "'";
    if (s.choices.empty()) {
      p[k] = node.attr_float(s.name, float(s.fallback));
      continue;
    }
    p[k] = s.fallback;
    if (!node.has_attr(s.name)) continue;
    std::string value = node.attr_string(s.name, "");
    std::string allowed;
    bool found = false;
    for (size_t c = 0; c < s.choices.size(); ++c) {
      if (value == s.choices[c]) {
        p[k] = double(c);
        found = true;
      }
      allowed += std::string(c ? ", " : "") + s.choices[c];
    }
    if (!found)
      VTC_UNSUPPORTED() << node.describe() << ": attribute '" << s.name << "' = '" << value
                        << "' is not supported (expected one of " << allowed << ")";
  }
  return p;
}

bool in_domain(DType t, Domain d) {
  switch (d) {
  case Domain::floats:
    return is_float(t);
  case Domain::numeric:
    return is_float(t) || is_integer(t);
  case Domain::integers:
    return is_integer(t);
  case Domain::boolean:
    return t == DType::boolean;
  case Domain::any:
    return true;
  }
  return false;
}

const char* domain_name(Domain d) {
  switch (d) {
  case Domain::floats:
    return "a float dtype";
  case Domain::numeric:
    return "a float or integer dtype";
  case Domain::integers:
    return "an integer dtype";
  case Domain::boolean:
    return "bool";
  case Domain::any:
    return "any dtype";
  }
  return "?";
}

void check_domain(const InferInputs& in, size_t i, Domain d) {
  DType t = in.type(i).dtype;
  VTC_CHECK(in_domain(t, d)) << in.node.describe() << ": input " << i << " is "
                             << type_str(in.type(i)) << ", expected " << domain_name(d);
}

void check_arity(const InferInputs& in, size_t lo, size_t hi) {
  const Node& n = in.node;
  std::string expected = hi == lo ? std::to_string(lo)
                         : hi == std::numeric_limits<size_t>::max()
                             ? "at least " + std::to_string(lo)
                             : std::to_string(lo) + " to " + std::to_string(hi);
  VTC_CHECK(n.num_inputs() >= lo && n.num_inputs() <= hi)
      << n.describe() << ": expected " << expected << " inputs, got " << n.num_inputs();
  for (size_t i = 0; i < lo; ++i)
    VTC_CHECK(n.input(i)) << n.describe() << ": required input " << i << " is missing";
  VTC_CHECK(n.outputs.size() == 1 && n.outputs[0])
      << n.describe() << ": expected one output, got " << n.outputs.size();
}

namespace {

// Cast and CastLike: every element converted with one rounding (floats), truncation toward zero
// then wrapping (float to integer), wrapping (integer to integer), v != 0 (to bool).
Tensor cast(const Tensor& x, DType to) {
  Tensor y(to, x.shape());
  bool from_float = is_float(x.dtype());
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (from_float)
      store_f64(y, i, x.get_f64(i));
    else
      store_i64(y, i, x.get_i64(i));
  }
  return y;
}

DType cast_target(const Node& node) {
  int64_t code = node.attr_int("to");
  std::optional<DType> to = dtype_from_onnx(int(code));
  if (!to)
    VTC_UNSUPPORTED() << node.describe() << ": attribute 'to' = " << code
                      << " names an ONNX dtype vtc does not support";
  return *to;
}

std::vector<TensorType> infer_cast(const InferInputs& in) {
  check_arity(in, 1, 1);
  return {{cast_target(in.node), in.type(0).shape}};
}

std::vector<TensorType> infer_cast_like(const InferInputs& in) {
  check_arity(in, 2, 2);
  return {{in.type(1).dtype, in.type(0).shape}};
}

// Clip's bounds are inputs 1 (min) and 2 (max) since opset 11, attributes 'min' and 'max'
// before; either may be omitted.
std::vector<TensorType> infer_clip(const InferInputs& in) {
  check_arity(in, 1, 3);
  check_domain(in, 0, Domain::numeric);
  const TensorType& x = in.type(0);
  for (size_t slot = 1; slot <= 2; ++slot) {
    if (!in.has(slot)) continue;
    const TensorType& b = in.type(slot);
    VTC_CHECK(b.dtype == x.dtype && b.numel() == 1 && b.rank() <= 1)
        << in.node.describe() << ": " << (slot == 1 ? "min" : "max") << " must be a scalar of "
        << dtype_name(x.dtype) << ", got " << type_str(b) << " for input " << type_str(x);
  }
  return {x};
}

// y = min(max(x, lo), hi), as numpy.clip: NaN stays NaN; lo > hi gives hi.
std::vector<Tensor> eval_clip(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  Tensor y(node.outputs[0]->type);
  const Tensor* lo = in.size() > 1 ? in[1] : nullptr;
  const Tensor* hi = in.size() > 2 ? in[2] : nullptr;
  if (is_float(x.dtype())) {
    double l = lo ? lo->get_f64(0) : double(node.attr_float("min", -INFINITY));
    double h = hi ? hi->get_f64(0) : double(node.attr_float("max", INFINITY));
    for (int64_t i = 0; i < x.numel(); ++i) {
      double v = x.get_f64(i);
      if (v < l) v = l;
      if (v > h) v = h;
      store_f64(y, i, v);
    }
    return {std::move(y)};
  }
  int64_t l = lo ? lo->get_i64(0) : std::numeric_limits<int64_t>::min();
  int64_t h = hi ? hi->get_i64(0) : std::numeric_limits<int64_t>::max();
  for (int64_t i = 0; i < x.numel(); ++i)
    store_i64(y, i, std::min(std::max(x.get_i64(i), l), h));
  return {std::move(y)};
}

} // namespace
} // namespace elementwise

void register_elementwise_ops(OpTable& t) {
  using namespace elementwise;
  register_unary_ops(t);
  register_binary_ops(t);
  t.add(OpDef{"Cast", OpKind::compute, infer_cast,
              [](const Node& n, const std::vector<const Tensor*>& in) {
                return std::vector<Tensor>{cast(*in[0], n.outputs[0]->type.dtype)};
              }});
  t.add(OpDef{"CastLike", OpKind::compute, infer_cast_like,
              [](const Node& n, const std::vector<const Tensor*>& in) {
                return std::vector<Tensor>{cast(*in[0], n.outputs[0]->type.dtype)};
              }});
  t.add(OpDef{"Clip", OpKind::compute, infer_clip, eval_clip});
}

} // namespace vtc
