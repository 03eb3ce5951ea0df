// Broadcasting elementwise ops with two or more inputs: one table of binary rules (arithmetic,
// comparison, logic, PRelu), one of variadic folds (Max, Min, Sum, Mean), and Where. Float math
// is done in double and rounded once to the output dtype; integer math in int64 with two's
// complement wrapping, so i64 results are exact and narrower ones wrap as in numpy.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/ops_elementwise.h"
#include "vtc/error.h"

namespace vtc::elementwise {
namespace {

using P = const Params&;
using FloatFn = double (*)(double a, double b, P p);
using IntFn = int64_t (*)(int64_t a, int64_t b, P p);

// How the second input's shape meets the first's.
enum class Broadcast {
  numpy, // both ways (numpy); opset < 7 `broadcast=1, axis=k` aligns input 1 at axis k of input 0
  slope, // input 1 broadcasts to input 0's shape (PRelu); before opset 7 a [C] slope is per channel
};

struct BinaryRule {
  const char* op;
  Domain domain;  // accepted dtypes of both inputs
  bool predicate; // output is bool rather than input 0's dtype
  bool mixed;     // input 1 may have another dtype than input 0 (Pow's exponent)
  Broadcast broadcast;
  std::vector<AttrSpec> attrs; // read into p[0], p[1], p[2]
  FloatFn f;                   // when either input is float
  IntFn i;                     // when both are integer or bool (nullptr where the domain has none)
};

// Two's complement arithmetic on int64 (signed overflow is undefined in C++; numpy wraps).
int64_t wrap_add(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) + uint64_t(b));
}
int64_t wrap_sub(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) - uint64_t(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) * uint64_t(b));
}

// a / b truncated toward zero (C, and ONNX's reference); x / 0 gives 0 as numpy does.
int64_t trunc_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return int64_t(0 - uint64_t(a)); // INT64_MIN / -1 wraps
  return a / b;
}
// a - b*trunc(a/b): the sign of a (C's %, numpy.fmod).
int64_t trunc_rem(int64_t a, int64_t b) {
  return b == 0 || b == -1 ? 0 : a % b;
}
// a - b*floor(a/b): the sign of b (Python's %, numpy.mod).
int64_t floor_mod(int64_t a, int64_t b) {
  int64_t r = trunc_rem(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
double floor_mod(double a, double b) {
  double r = std::fmod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

// a^b by repeated squaring, wrapping like numpy's integer power. For b < 0 (which numpy
// refuses) the truncated 1 / a^-b: 1 for a = 1, +-1 for a = -1, else 0 (also for a = 0).
int64_t int_pow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
  uint64_t r = 1, base = uint64_t(a);
  for (; b != 0; b >>= 1) {
    if (b & 1) r *= base;
    base *= base;
  }
  return int64_t(r);
}

// a shifted left or right by b bits, on a's two's complement bits (ONNX defines BitShift for
// unsigned types, where this is the plain shift); b outside [0, 64) shifts every bit out.
int64_t bit_shift(int64_t a, int64_t b, bool right) {
  if (b < 0 || b >= 64) return 0;
  return int64_t(right ? uint64_t(a) >> b : uint64_t(a) << b);
}

// max and min that propagate NaN (numpy.maximum / numpy.minimum).
double max_nan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
double min_nan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

constexpr Domain floats = Domain::floats, numeric = Domain::numeric, boolean = Domain::boolean,
                 integers = Domain::integers, any = Domain::any;
constexpr Broadcast numpy = Broadcast::numpy, slope = Broadcast::slope;

// clang-format off
const std::vector<BinaryRule>& binary_rules() {
  static const std::vector<BinaryRule> rules = {
    // op, inputs, bool output, mixed dtypes, broadcast, attributes, float law, integer law
    // a + b
    {"Add", numeric, false, false, numpy, {}, [](double a, double b, P) { return a + b; },
     [](int64_t a, int64_t b, P) { return wrap_add(a, b); }},
    // a - b
    {"Sub", numeric, false, false, numpy, {}, [](double a, double b, P) { return a - b; },
     [](int64_t a, int64_t b, P) { return wrap_sub(a, b); }},
    // a * b
    {"Mul", numeric, false, false, numpy, {}, [](double a, double b, P) { return a * b; },
     [](int64_t a, int64_t b, P) { return wrap_mul(a, b); }},
    // a / b; integers: trunc(a / b)
    {"Div", numeric, false, false, numpy, {}, [](double a, double b, P) { return a / b; },
     [](int64_t a, int64_t b, P) { return trunc_div(a, b); }},
    // fmod = 1: a - b*trunc(a/b) (sign of a); fmod = 0: a - b*floor(a/b) (sign of b)
    {"Mod", numeric, false, false, numpy, {{"fmod", 0}},
     [](double a, double b, P p) { return p[0] != 0 ? std::fmod(a, b) : floor_mod(a, b); },
     [](int64_t a, int64_t b, P p) { return p[0] != 0 ? trunc_rem(a, b) : floor_mod(a, b); }},
    // a^b, in input 0's dtype
    {"Pow", numeric, false, true, numpy, {}, [](double a, double b, P) { return std::pow(a, b); },
     [](int64_t a, int64_t b, P) { return int_pow(a, b); }},
    // a < 0 ? slope*a : a
    {"PRelu", numeric, false, false, slope, {},
     [](double a, double b, P) { return a < 0 ? a * b : a; },
     [](int64_t a, int64_t b, P) { return a < 0 ? wrap_mul(a, b) : a; }},
    // direction LEFT: a << b; RIGHT: a >> b
    {"BitShift", integers, false, false, numpy, {{"direction", kRequired, {"LEFT", "RIGHT"}}}, nullptr,
     [](int64_t a, int64_t b, P p) { return bit_shift(a, b, p[0] != 0); }},

    // a == b
    {"Equal", any, true, false, numpy, {}, [](double a, double b, P) { return double(a == b); },
     [](int64_t a, int64_t b, P) { return int64_t(a == b); }},
    // a < b
    {"Less", numeric, true, false, numpy, {}, [](double a, double b, P) { return double(a < b); },
     [](int64_t a, int64_t b, P) { return int64_t(a < b); }},
    // a <= b
    {"LessOrEqual", numeric, true, false, numpy, {},
     [](double a, double b, P) { return double(a <= b); },
     [](int64_t a, int64_t b, P) { return int64_t(a <= b); }},
    // a > b
    {"Greater", numeric, true, false, numpy, {},
     [](double a, double b, P) { return double(a > b); },
     [](int64_t a, int64_t b, P) { return int64_t(a > b); }},
    // a >= b
    {"GreaterOrEqual", numeric, true, false, numpy, {},
     [](double a, double b, P) { return double(a >= b); },
     [](int64_t a, int64_t b, P) { return int64_t(a >= b); }},

    // a && b
    {"And", boolean, true, false, numpy, {}, nullptr,
     [](int64_t a, int64_t b, P) { return int64_t(a && b); }},
    // a || b
    {"Or", boolean, true, false, numpy, {}, nullptr,
     [](int64_t a, int64_t b, P) { return int64_t(a || b); }},
    // a != b
    {"Xor", boolean, true, false, numpy, {}, nullptr,
     [](int64_t a, int64_t b, P) { return int64_t(bool(a) != bool(b)); }},
  };
  return rules;
}
// clang-format on

// Variadic ops fold their inputs left to right with a binary law, then optionally divide by the
// number of inputs; the fold is exact in int64 or done in double and rounded once at the end.
struct VariadicRule {
  const char* op;
  Domain domain;
  FloatFn f;
  IntFn i;
  bool mean; // divide the folded value by the number of inputs
};

// clang-format off
const std::vector<VariadicRule>& variadic_rules() {
  static const std::vector<VariadicRule> rules = {
    // max(x0, x1, ...); NaN wins
    {"Max", numeric, [](double a, double b, P) { return max_nan(a, b); },
     [](int64_t a, int64_t b, P) { return std::max(a, b); }, false},
    // min(x0, x1, ...); NaN wins
    {"Min", numeric, [](double a, double b, P) { return min_nan(a, b); },
     [](int64_t a, int64_t b, P) { return std::min(a, b); }, false},
    // x0 + x1 + ...
    {"Sum", numeric, [](double a, double b, P) { return a + b; },
     [](int64_t a, int64_t b, P) { return wrap_add(a, b); }, false},
    // (x0 + x1 + ...) / n
    {"Mean", floats, [](double a, double b, P) { return a + b; }, nullptr, true},
  };
  return rules;
}
// clang-format on

// Whether `in` broadcasts (numpy) to exactly `out`.
bool broadcasts_to(const Shape& in, const Shape& out) {
  if (in.size() > out.size()) return false;
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] != 1 && in[d] != out[lead + d]) return false;
  return true;
}

struct BinaryShapes {
  Shape rhs; // input 1's shape as numpy broadcasting reads it (same element count)
  Shape out;
};

BinaryShapes binary_shapes(const BinaryRule& r, const Node& node, const Shape& a, const Shape& b) {
  switch (r.broadcast) {
  case Broadcast::numpy: {
    Shape rhs = b;
    if (node.attr_int("broadcast", 0) != 0 && node.has_attr("axis")) {
      int64_t axis = normalize_axis(node, node.attr_int("axis"), int64_t(a.size()));
      VTC_CHECK(axis + int64_t(b.size()) <= int64_t(a.size()))
          << node.describe() << ": cannot align " << shape_str(b) << " with " << shape_str(a)
          << " at axis " << axis;
      rhs.resize(a.size() - size_t(axis), 1); // trailing ones put b's dims at `axis`
    }
    return {rhs, broadcast_shapes(node, a, rhs)};
  }
  case Broadcast::slope: {
    if (broadcasts_to(b, a)) return {b, a};
    // Before opset 7 a one-dimensional slope holds one value per channel (axis 1).
    bool per_channel = b.size() == 1 && a.size() >= 2 && b[0] == a[1];
    VTC_CHECK(per_channel) << node.describe() << ": slope " << shape_str(b)
                           << " does not broadcast to input " << shape_str(a);
    Shape rhs(a.size() - 1, 1);
    rhs[0] = b[0];
    return {rhs, a};
  }
  }
  return {b, a};
}

std::vector<TensorType> infer_binary(const BinaryRule& r, const InferInputs& in) {
  check_arity(in, 2, 2);
  check_domain(in, 0, r.domain);
  check_domain(in, 1, r.domain);
  const TensorType &a = in.type(0), &b = in.type(1);
  VTC_CHECK(r.mixed || a.dtype == b.dtype) << in.node.describe() << ": inputs " << type_str(a)
                                           << " and " << type_str(b) << " differ in dtype";
  read_params(in.node, r.attrs);
  Shape out = binary_shapes(r, in.node, a.shape, b.shape).out;
  return {{r.predicate ? DType::boolean : a.dtype, out}};
}

std::vector<Tensor> eval_binary(const BinaryRule& r, const Node& node,
                                const std::vector<const Tensor*>& in) {
  const Tensor &a = *in[0], &b = *in[1];
  Tensor y(node.outputs[0]->type);
  BinaryShapes s = binary_shapes(r, node, a.shape(), b.shape());
  std::vector<int64_t> ia = broadcast_index(s.out, a.shape());
  std::vector<int64_t> ib = broadcast_index(s.out, s.rhs);
  Params p = read_params(node, r.attrs);
  bool on_floats = is_float(a.dtype()) || is_float(b.dtype());
  VTC_CHECK(on_floats ? r.f != nullptr : r.i != nullptr)
      << node.describe() << ": no " << r.op << " rule for " << type_str(a.type()) << " and "
      << type_str(b.type());
  for (int64_t k = 0; k < y.numel(); ++k) {
    if (on_floats)
      store_f64(y, k, r.f(a.get_f64(ia[size_t(k)]), b.get_f64(ib[size_t(k)]), p));
    else
      store_i64(y, k, r.i(a.get_i64(ia[size_t(k)]), b.get_i64(ib[size_t(k)]), p));
  }
  return {std::move(y)};
}

std::vector<TensorType> infer_variadic(const VariadicRule& r, const InferInputs& in) {
  check_arity(in, 1, std::numeric_limits<size_t>::max());
  Shape out = in.type(0).shape;
  for (size_t k = 0; k < in.size(); ++k) {
    VTC_CHECK(in.has(k)) << in.node.describe() << ": input " << k << " is missing";
    check_domain(in, k, r.domain);
    VTC_CHECK(in.type(k).dtype == in.type(0).dtype)
        << in.node.describe() << ": input " << k << " is " << type_str(in.type(k))
        << " but input 0 is " << type_str(in.type(0));
    out = broadcast_shapes(in.node, out, in.type(k).shape);
  }
  return {{in.type(0).dtype, out}};
}

std::vector<Tensor> eval_variadic(const VariadicRule& r, const Node& node,
                                  const std::vector<const Tensor*>& in) {
  Tensor y(node.outputs[0]->type);
  std::vector<std::vector<int64_t>> index;
  for (const Tensor* x : in)
    index.push_back(broadcast_index(y.shape(), x->shape()));
  bool on_floats = is_float(y.dtype());
  VTC_CHECK(on_floats ? r.f != nullptr : r.i != nullptr)
      << node.describe() << ": no " << r.op << " rule for " << type_str(in[0]->type());
  Params none{};
  for (int64_t k = 0; k < y.numel(); ++k) {
    if (on_floats) {
      double acc = in[0]->get_f64(index[0][size_t(k)]);
      for (size_t j = 1; j < in.size(); ++j)
        acc = r.f(acc, in[j]->get_f64(index[j][size_t(k)]), none);
      store_f64(y, k, r.mean ? acc / double(in.size()) : acc);
    } else {
      int64_t acc = in[0]->get_i64(index[0][size_t(k)]);
      for (size_t j = 1; j < in.size(); ++j)
        acc = r.i(acc, in[j]->get_i64(index[j][size_t(k)]), none);
      store_i64(y, k, r.mean ? acc / int64_t(in.size()) : acc);
    }
  }
  return {std::move(y)};
}

// Where(c, x, y) = c ? x : y, the three shapes broadcast together; elements are copied bit for bit.
std::vector<TensorType> infer_where(const InferInputs& in) {
  check_arity(in, 3, 3);
  check_domain(in, 0, Domain::boolean);
  const TensorType &x = in.type(1), &y = in.type(2);
  VTC_CHECK(x.dtype == y.dtype) << in.node.describe() << ": inputs " << type_str(x) << " and "
                                << type_str(y) << " differ in dtype";
  Shape out =
      broadcast_shapes(in.node, broadcast_shapes(in.node, in.type(0).shape, x.shape), y.shape);
  return {{x.dtype, out}};
}

std::vector<Tensor> eval_where(const Node& node, const std::vector<const Tensor*>& in) {
  const Tensor &c = *in[0], &x = *in[1], &y = *in[2];
  Tensor out(node.outputs[0]->type);
  std::vector<int64_t> ic = broadcast_index(out.shape(), c.shape());
  std::vector<int64_t> ix = broadcast_index(out.shape(), x.shape());
  std::vector<int64_t> iy = broadcast_index(out.shape(), y.shape());
  size_t width = dtype_size(out.dtype());
  for (int64_t k = 0; k < out.numel(); ++k) {
    size_t j = size_t(k);
    bool take_x = c.data<bool>()[ic[j]];
    const std::byte* src =
        take_x ? x.raw() + size_t(ix[j]) * width : y.raw() + size_t(iy[j]) * width;
    std::memcpy(out.raw() + j * width, src, width);
  }
  return {std::move(out)};
}

} // namespace

void register_binary_ops(OpTable& t) {
  for (const BinaryRule& r : binary_rules())
    t.add(OpDef{r.op, OpKind::compute, [&r](const InferInputs& in) { return infer_binary(r, in); },
                [&r](const Node& n, const std::vector<const Tensor*>& in) {
                  return eval_binary(r, n, in);
                }});
  for (const VariadicRule& r : variadic_rules())
    t.add(OpDef{r.op, OpKind::compute,
                [&r](const InferInputs& in) { return infer_variadic(r, in); },
                [&r](const Node& n, const std::vector<const Tensor*>& in) {
                  return eval_variadic(r, n, in);
                }});
  t.add(OpDef{"Where", OpKind::compute, infer_where, eval_where});
}

} // namespace vtc::elementwise
