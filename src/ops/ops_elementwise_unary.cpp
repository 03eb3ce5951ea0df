// Unary elementwise ops as one table: op name, accepted dtypes, attributes, the formula on
// doubles (float inputs; the result is rounded once to the output dtype) and, for ops defined on
// integers, the formula on int64 (exact; wrapped to the output width). Each row names its law.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "ops/ops_elementwise.h"
#include "vtc/error.h"

namespace vtc::elementwise {
namespace {

using P = const Params&;
using FloatFn = double (*)(double x, P p);
using IntFn = int64_t (*)(int64_t x);

struct UnaryRule {
  const char* op;
  Domain domain;               // accepted input dtypes
  bool predicate;              // output is bool (IsNaN, IsInf) rather than the input dtype
  std::vector<AttrSpec> attrs; // read into p[0], p[1], p[2]
  FloatFn f;                   // on float inputs
  IntFn i;                     // on integer and bool inputs (nullptr where the domain has none)
};

// log(1 + e^x) without overflow for large x.
double softplus(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// -x in two's complement (wraps at INT64_MIN, as numpy does).
int64_t negate(int64_t x) {
  return int64_t(0 - uint64_t(x));
}

constexpr Domain floats = Domain::floats, numeric = Domain::numeric, boolean = Domain::boolean;
// ONNX's Selu defaults, the float32 values of the SELU paper's constants.
constexpr double kSeluAlpha = 1.67326319217681884765625, kSeluGamma = 1.05070102214813232421875;

// clang-format off
const std::vector<UnaryRule>& unary_rules() {
  static const std::vector<UnaryRule> rules = {
    // Activations.
    // max(x, 0)
    {"Relu", numeric, false, {}, [](double x, P) { return x < 0 ? 0.0 : x; },
     [](int64_t x) { return std::max<int64_t>(x, 0); }},
    // x < 0 ? alpha*x : x
    {"LeakyRelu", floats, false, {{"alpha", 0.01}},
     [](double x, P p) { return x < 0 ? p[0] * x : x; }, nullptr},
    // x > alpha ? x : 0
    {"ThresholdedRelu", floats, false, {{"alpha", 1.0}},
     [](double x, P p) { return x > p[0] ? x : 0.0; }, nullptr},
    // x < 0 ? alpha*(e^x - 1) : x
    {"Elu", floats, false, {{"alpha", 1.0}},
     [](double x, P p) { return x < 0 ? p[0] * std::expm1(x) : x; }, nullptr},
    // gamma * (x <= 0 ? alpha*(e^x - 1) : x)
    {"Selu", floats, false, {{"alpha", kSeluAlpha}, {"gamma", kSeluGamma}},
     [](double x, P p) { return p[1] * (x <= 0 ? p[0] * std::expm1(x) : x); }, nullptr},
    // max(0, x) + min(0, alpha*(e^(x/alpha) - 1))
    {"Celu", floats, false, {{"alpha", 1.0}},
     [](double x, P p) { return std::max(0.0, x) + std::min(0.0, p[0] * std::expm1(x / p[0])); },
     nullptr},
    // 1 / (1 + e^-x)
    {"Sigmoid", floats, false, {}, [](double x, P) { return 1 / (1 + std::exp(-x)); }, nullptr},
    // max(0, min(1, alpha*x + beta))
    {"HardSigmoid", floats, false, {{"alpha", 0.2}, {"beta", 0.5}},
     [](double x, P p) { return std::clamp(p[0] * x + p[1], 0.0, 1.0); }, nullptr},
    // x * max(0, min(1, x/6 + 1/2))
    {"HardSwish", floats, false, {},
     [](double x, P) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }, nullptr},
    // log(1 + e^x)
    {"Softplus", floats, false, {}, [](double x, P) { return softplus(x); }, nullptr},
    // x / (1 + |x|)
    {"Softsign", floats, false, {}, [](double x, P) { return x / (1 + std::fabs(x)); }, nullptr},
    // x * tanh(log(1 + e^x))
    {"Mish", floats, false, {}, [](double x, P) { return x * std::tanh(softplus(x)); }, nullptr},
    // none: x/2 * (1 + erf(x / sqrt 2)); tanh: x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    {"Gelu", floats, false, {{"approximate", 0, {"none", "tanh"}}},
     [](double x, P p) {
       double inner = p[0] == 0 ? std::erf(x / std::numbers::sqrt2)
                                : std::tanh(std::sqrt(2 / std::numbers::pi) *
                                            (x + 0.044715 * x * x * x));
       return 0.5 * x * (1 + inner);
     }, nullptr},
    // x < -lambd ? x + bias : x > lambd ? x - bias : 0
    {"Shrink", floats, false, {{"bias", 0.0}, {"lambd", 0.5}},
     [](double x, P p) { return x < -p[1] ? x + p[0] : x > p[1] ? x - p[0] : 0.0; }, nullptr},

    // Arithmetic.
    // -x
    {"Neg", numeric, false, {}, [](double x, P) { return -x; }, negate},
    // |x|
    {"Abs", numeric, false, {}, [](double x, P) { return std::fabs(x); },
     [](int64_t x) { return x < 0 ? negate(x) : x; }},
    // -1, 0 or 1 by the sign of x (NaN stays NaN)
    {"Sign", numeric, false, {},
     [](double x, P) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x; },
     [](int64_t x) { return int64_t(x > 0) - int64_t(x < 0); }},
    // 1 / x
    {"Reciprocal", floats, false, {}, [](double x, P) { return 1 / x; }, nullptr},
    // sqrt(x)
    {"Sqrt", floats, false, {}, [](double x, P) { return std::sqrt(x); }, nullptr},
    // e^x
    {"Exp", floats, false, {}, [](double x, P) { return std::exp(x); }, nullptr},
    // ln(x)
    {"Log", floats, false, {}, [](double x, P) { return std::log(x); }, nullptr},
    // 2/sqrt(pi) * integral from 0 to x of e^(-t^2) dt
    {"Erf", floats, false, {}, [](double x, P) { return std::erf(x); }, nullptr},
    // the largest integer <= x
    {"Floor", floats, false, {}, [](double x, P) { return std::floor(x); }, nullptr},
    // the smallest integer >= x
    {"Ceil", floats, false, {}, [](double x, P) { return std::ceil(x); }, nullptr},
    // the nearest integer, halves to even
    {"Round", floats, false, {}, [](double x, P) { return std::nearbyint(x); }, nullptr},

    // Trigonometric and hyperbolic functions.
    {"Sin", floats, false, {}, [](double x, P) { return std::sin(x); }, nullptr},
    {"Cos", floats, false, {}, [](double x, P) { return std::cos(x); }, nullptr},
    {"Tan", floats, false, {}, [](double x, P) { return std::tan(x); }, nullptr},
    {"Asin", floats, false, {}, [](double x, P) { return std::asin(x); }, nullptr},
    {"Acos", floats, false, {}, [](double x, P) { return std::acos(x); }, nullptr},
    {"Atan", floats, false, {}, [](double x, P) { return std::atan(x); }, nullptr},
    {"Sinh", floats, false, {}, [](double x, P) { return std::sinh(x); }, nullptr},
    {"Cosh", floats, false, {}, [](double x, P) { return std::cosh(x); }, nullptr},
    {"Tanh", floats, false, {}, [](double x, P) { return std::tanh(x); }, nullptr},
    {"Asinh", floats, false, {}, [](double x, P) { return std::asinh(x); }, nullptr},
    {"Acosh", floats, false, {}, [](double x, P) { return std::acosh(x); }, nullptr},
    {"Atanh", floats, false, {}, [](double x, P) { return std::atanh(x); }, nullptr},

    // Logic and classification.
    // !x
    {"Not", boolean, false, {}, nullptr, [](int64_t x) { return int64_t(!x); }},
    // x != x
    {"IsNaN", floats, true, {}, [](double x, P) { return double(std::isnan(x)); }, nullptr},
    // x == -inf && detect_negative || x == +inf && detect_positive
    {"IsInf", floats, true, {{"detect_negative", 1}, {"detect_positive", 1}},
     [](double x, P p) { return double(std::isinf(x) && (x < 0 ? p[0] != 0 : p[1] != 0)); },
     nullptr},
  };
  return rules;
}
// clang-format on

std::vector<TensorType> infer_unary(const UnaryRule& r, const InferInputs& in) {
  check_arity(in, 1, 1);
  check_domain(in, 0, r.domain);
  read_params(in.node, r.attrs); // rejects unsupported attribute values before evaluation
  const TensorType& x = in.type(0);
  return {{r.predicate ? DType::boolean : x.dtype, x.shape}};
}

std::vector<Tensor> eval_unary(const UnaryRule& r, const Node& node,
                               const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  Tensor y(node.outputs[0]->type);
  Params p = read_params(node, r.attrs);
  bool on_floats = is_float(x.dtype());
  VTC_CHECK(on_floats ? r.f != nullptr : r.i != nullptr)
      << node.describe() << ": no " << r.op << " rule for " << type_str(x.type());
  for (int64_t k = 0; k < x.numel(); ++k) {
    if (on_floats)
      store_f64(y, k, r.f(x.get_f64(k), p));
    else
      store_i64(y, k, r.i(x.get_i64(k)));
  }
  return {std::move(y)};
}

} // namespace

void register_unary_ops(OpTable& t) {
  for (const UnaryRule& r : unary_rules())
    t.add(OpDef{r.op, OpKind::compute, [&r](const InferInputs& in) { return infer_unary(r, in); },
                [&r](const Node& n, const std::vector<const Tensor*>& in) {
                  return eval_unary(r, n, in);
                }});
}

} // namespace vtc::elementwise
