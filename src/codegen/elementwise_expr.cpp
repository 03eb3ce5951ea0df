// One table entry per elementwise op: its expression over the operand expressions a, b, c.
#include "codegen/elementwise_expr.h"

#include <cmath>
#include <map>
#include <sstream>

namespace vtc {

const char* cpp_storage_type(DType t) {
  switch (t) {
  case DType::f32:
    return "float";
  case DType::f16:
    return "vtc::kernels::half";
  case DType::bf16:
    return "vtc::kernels::bfloat16";
  case DType::f64:
    return "double";
  case DType::i64:
    return "int64_t";
  case DType::i32:
    return "int32_t";
  case DType::i8:
    return "int8_t";
  case DType::u8:
    return "uint8_t";
  case DType::boolean:
    return "bool";
  }
  return "float";
}

namespace {

std::string num(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  if (s == "inf") return "INFINITY";
  if (s == "-inf") return "-INFINITY";
  return "(" + s + ")";
}

// The value of a constant scalar input, when it is one.
std::optional<double> constant_scalar(const Node& n, size_t i) {
  const Value* v = n.input(i);
  if (!v || !v->constant || v->constant->numel() != 1) return std::nullopt;
  return v->constant->get_f64(0);
}

using Args = std::vector<std::string>;
using Rule = std::optional<std::string> (*)(const Node&, const Args&);

// Whether the node's result is rounded to a 16-bit float (f16 or bf16) right after it is
// computed: its function may then take a dialect's faster form, whose error lies far inside
// the 16-bit rounding (vtc_sigmoid16, vtc_exp16, vtc_tanh16, vtc_erf16).
bool rounded_to_16_bits(const Node& n) {
  const Value* out = n.outputs.empty() ? nullptr : n.outputs[0];
  return out && (out->type.dtype == DType::f16 || out->type.dtype == DType::bf16);
}

std::string un(const char* f, const Args& a) {
  return std::string(f) + "(" + a[0] + ")";
}
std::string bin(const Args& a, const char* op) {
  return "(" + a[0] + " " + op + " " + a[1] + ")";
}

// Pow: by a constant 1, 2, 3 or 4 of a float base as products (the exponents exporters write
// for squares and GELU's cube; vectorised, where pow is a library call), else pow.
std::optional<std::string> power(const Node& n, const Args& a) {
  const std::optional<double> e = constant_scalar(n, 1);
  const DType t = n.inputs[0]->type.dtype;
  const bool floating = t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64;
  if (floating && e) {
    if (*e == 1) return a[0];
    if (*e == 2) return "(" + a[0] + " * " + a[0] + ")";
    if (*e == 3) return "(" + a[0] + " * " + a[0] + " * " + a[0] + ")";
    if (*e == 4) return "((" + a[0] + " * " + a[0] + ") * (" + a[0] + " * " + a[0] + "))";
  }
  return "vtc_math::pow(" + a[0] + ", " + a[1] + ")";
}

std::optional<std::string> variadic(const Args& a, const char* f) {
  std::string e = a[0];
  for (size_t i = 1; i < a.size(); ++i)
    e = std::string(f) + "(" + e + ", " + a[i] + ")";
  return e;
}

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> table = {
      // clang-format off
      {"Add",        [](const Node&, const Args& a) -> std::optional<std::string> { return bin(a, "+"); }},
      {"Sub",        [](const Node&, const Args& a) -> std::optional<std::string> { return bin(a, "-"); }},
      {"Mul",        [](const Node&, const Args& a) -> std::optional<std::string> { return bin(a, "*"); }},
      {"Div",        [](const Node&, const Args& a) -> std::optional<std::string> { return "vtc_div(" + a[0] + ", " + a[1] + ")"; }},
      {"Pow",        [](const Node& n, const Args& a) -> std::optional<std::string> { return power(n, a); }},
      {"Max",        [](const Node&, const Args& a) { return variadic(a, "vtc_max"); }},
      {"Min",        [](const Node&, const Args& a) { return variadic(a, "vtc_min"); }},
      {"Sum",        [](const Node&, const Args& a) { return variadic(a, "vtc_math::plus<>{}"); }},
      {"Relu",       [](const Node&, const Args& a) -> std::optional<std::string> { return "(" + a[0] + " > 0 ? " + a[0] + " : decltype(" + a[0] + ")(0))"; }},
      {"Sigmoid",    [](const Node& n, const Args& a) -> std::optional<std::string> { return un(rounded_to_16_bits(n) ? "vtc_sigmoid16" : "vtc_sigmoid", a); }},
      {"Tanh",       [](const Node& n, const Args& a) -> std::optional<std::string> { return un(rounded_to_16_bits(n) ? "vtc_tanh16" : "vtc_tanh", a); }},
      {"Erf",        [](const Node& n, const Args& a) -> std::optional<std::string> { return un(rounded_to_16_bits(n) ? "vtc_erf16" : "vtc_erf", a); }},
      {"Exp",        [](const Node& n, const Args& a) -> std::optional<std::string> { return un(rounded_to_16_bits(n) ? "vtc_exp16" : "vtc_exp", a); }},
      {"Log",        [](const Node&, const Args& a) -> std::optional<std::string> { return un("vtc_log", a); }},
      {"Sqrt",       [](const Node&, const Args& a) -> std::optional<std::string> { return un("vtc_math::sqrt", a); }},
      {"Abs",        [](const Node&, const Args& a) -> std::optional<std::string> { return un("vtc_math::abs", a); }},
      {"Floor",      [](const Node&, const Args& a) -> std::optional<std::string> { return un("vtc_math::floor", a); }},
      {"Ceil",       [](const Node&, const Args& a) -> std::optional<std::string> { return un("vtc_math::ceil", a); }},
      {"Sin",        [](const Node&, const Args& a) -> std::optional<std::string> { return un("vtc_math::sin", a); }},
      {"Cos",        [](const Node&, const Args& a) -> std::optional<std::string> { return un("vtc_math::cos", a); }},
      {"Neg",        [](const Node&, const Args& a) -> std::optional<std::string> { return "(-" + a[0] + ")"; }},
      {"Reciprocal", [](const Node&, const Args& a) -> std::optional<std::string> { return "(1 / " + a[0] + ")"; }},
      {"Not",        [](const Node&, const Args& a) -> std::optional<std::string> { return "(!" + a[0] + ")"; }},
      {"Equal",      [](const Node&, const Args& a) -> std::optional<std::string> { return bin(a, "=="); }},
      {"Less",       [](const Node&, const Args& a) -> std::optional<std::string> { return bin(a, "<"); }},
      {"LessOrEqual",[](const Node&, const Args& a) -> std::optional<std::string> { return bin(a, "<="); }},
      {"Greater",    [](const Node&, const Args& a) -> std::optional<std::string> { return bin(a, ">"); }},
      {"GreaterOrEqual", [](const Node&, const Args& a) -> std::optional<std::string> { return bin(a, ">="); }},
      {"And",        [](const Node&, const Args& a) -> std::optional<std::string> { return bin(a, "&&"); }},
      {"Or",         [](const Node&, const Args& a) -> std::optional<std::string> { return bin(a, "||"); }},
      {"Where",      [](const Node&, const Args& a) -> std::optional<std::string> { return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")"; }},
      // IsNaN(x) = x != x; IsInf(x) = x == +inf (detect_positive) or x == -inf (detect_negative)
      {"IsNaN",      [](const Node&, const Args& a) -> std::optional<std::string> { return "(" + a[0] + " != " + a[0] + ")"; }},
      {"IsInf",      [](const Node& n, const Args& a) -> std::optional<std::string> {
         const bool pos = n.attr_int("detect_positive", 1) != 0, neg = n.attr_int("detect_negative", 1) != 0;
         if (!pos && !neg) return "false";
         std::string p = "(" + a[0] + " == INFINITY)", m = "(" + a[0] + " == -INFINITY)";
         return pos && neg ? "(" + p + " || " + m + ")" : pos ? p : m; }},
      // Sign(x) = (x > 0) - (x < 0), in x's type
      {"Sign",       [](const Node&, const Args& a) -> std::optional<std::string> { return "decltype(" + a[0] + ")((" + a[0] + " > 0) - (" + a[0] + " < 0))"; }},
      // Elu(x) = x > 0 ? x : alpha (e^x - 1); Selu(x) = gamma (x > 0 ? x : alpha (e^x - 1))
      {"Elu",        [](const Node& n, const Args& a) -> std::optional<std::string> { return "(" + a[0] + " > 0 ? " + a[0] + " : decltype(" + a[0] + ")" + num(n.attr_float("alpha", 1.0f)) + " * (vtc_math::exp(" + a[0] + ") - 1))"; }},
      {"Selu",       [](const Node& n, const Args& a) -> std::optional<std::string> { return "(decltype(" + a[0] + ")" + num(n.attr_float("gamma", 1.05070102214813232421875f)) + " * (" + a[0] + " > 0 ? " + a[0] + " : decltype(" + a[0] + ")" + num(n.attr_float("alpha", 1.67326319217681884765625f)) + " * (vtc_math::exp(" + a[0] + ") - 1)))"; }},
      // Mish(x) = x tanh(softplus(x)); Softsign(x) = x / (1 + |x|)
      {"Mish",       [](const Node&, const Args& a) -> std::optional<std::string> { return "(" + a[0] + " * vtc_tanh(vtc_log(1 + vtc_exp(" + a[0] + "))))"; }},
      {"Softsign",   [](const Node&, const Args& a) -> std::optional<std::string> { return "(" + a[0] + " / (1 + vtc_math::abs(" + a[0] + ")))"; }},
      {"Softplus",   [](const Node&, const Args& a) -> std::optional<std::string> { return "vtc_log(1 + vtc_exp(" + a[0] + "))"; }},
      // x * sigmoid-like clamp: HardSwish(x) = x * max(0, min(1, x / 6 + 1 / 2))
      {"HardSwish",  [](const Node&, const Args& a) -> std::optional<std::string> { return "(" + a[0] + " * vtc_max(decltype(" + a[0] + ")(0), vtc_min(decltype(" + a[0] + ")(1), " + a[0] + " / 6 + decltype(" + a[0] + ")(0.5))))"; }},
      // HardSigmoid(x) = max(0, min(1, alpha * x + beta))
      {"HardSigmoid", [](const Node& n, const Args& a) -> std::optional<std::string> { std::string t = "decltype(" + a[0] + ")"; return "vtc_max(" + t + "(0), vtc_min(" + t + "(1), " + t + num(n.attr_float("alpha", 0.2f)) + " * " + a[0] + " + " + t + num(n.attr_float("beta", 0.5f)) + "))"; }},
      // LeakyRelu(x) = x >= 0 ? x : alpha * x
      {"LeakyRelu",  [](const Node& n, const Args& a) -> std::optional<std::string> { return "(" + a[0] + " >= 0 ? " + a[0] + " : decltype(" + a[0] + ")" + num(n.attr_float("alpha", 0.01f)) + " * " + a[0] + ")"; }},
      {"PRelu",      [](const Node&, const Args& a) -> std::optional<std::string> { return "(" + a[0] + " < 0 ? " + a[1] + " * " + a[0] + " : " + a[0] + ")"; }},
      // Gelu(x) = x/2 (1 + erf(x / sqrt 2)), or with tanh(sqrt(2/pi) (x + 0.044715 x^3))
      {"Gelu",       [](const Node& n, const Args& a) -> std::optional<std::string> {
         const std::string h = rounded_to_16_bits(n) ? "16" : "";
         if (n.attr_string("approximate", "none") == "tanh")
           return "(0.5f * " + a[0] + " * (1 + vtc_tanh" + h + "(0.7978845608028654f * (" + a[0] + " + 0.044715f * " + a[0] + " * " + a[0] + " * " + a[0] + "))))";
         return "(0.5f * " + a[0] + " * (1 + vtc_erf" + h + "(" + a[0] + " * 0.7071067811865476f)))"; }},
      // Clip(x, lo, hi) with constant bounds (inputs, or opset < 11 attributes)
      {"Clip",       [](const Node& n, const Args& a) -> std::optional<std::string> {
         std::optional<double> lo = n.has_attr("min") ? std::optional<double>(n.attr_float("min", 0)) : constant_scalar(n, 1);
         std::optional<double> hi = n.has_attr("max") ? std::optional<double>(n.attr_float("max", 0)) : constant_scalar(n, 2);
         if ((n.input(1) && !lo) || (n.input(2) && !hi)) return std::nullopt;
         std::string e = a[0];
         if (lo) e = "vtc_max(" + e + ", decltype(" + a[0] + ")" + num(*lo) + ")";
         if (hi) e = "vtc_min(" + e + ", decltype(" + a[0] + ")" + num(*hi) + ")";
         return e; }},
      {"Cast",       [](const Node& n, const Args& a) -> std::optional<std::string> {
         auto to = dtype_from_onnx(int(n.attr_int("to", 1)));
         if (!to) return std::nullopt;
         return "vtc_round<" + std::string(cpp_storage_type(*to)) + ">(" + a[0] + ")"; }},
      // BatchNormalization(x, scale, bias, mean, var) = (x - mean) / sqrt(var + eps) * scale + bias
      {"BatchNormalization", [](const Node& n, const Args& a) -> std::optional<std::string> {
         return "((" + a[0] + " - " + a[3] + ") / vtc_math::sqrt(" + a[4] + " + " + num(n.attr_float("epsilon", 1e-5f)) + ") * " + a[1] + " + " + a[2] + ")"; }},
      // clang-format on
  };
  return table;
}

} // namespace

std::optional<std::string> elementwise_expr(const Node& node,
                                            const std::vector<std::string>& args) {
  auto it = rules().find(node.op);
  if (it == rules().end()) return std::nullopt;
  return it->second(node, args);
}

bool has_elementwise_expr(const Node& node) {
  std::vector<std::string> probe(node.inputs.size(), "x");
  return elementwise_expr(node, probe).has_value();
}

} // namespace vtc
