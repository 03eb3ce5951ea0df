// Reference semantics and shape inference of the elementwise ops: every unary rule against
// values from ONNX's own reference implementation (onnx.reference, run in float64), integer
// rules on hand-checked values including wrap-around and exact int64, numpy broadcasting against
// a coordinate-by-coordinate oracle on random shapes, the single rounding of float results and
// casts, and the errors bad nodes raise (each naming the node).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/op_registry.h"
#include "ref/interpreter.h"
#include "vtc/error.h"

namespace vtc {
namespace {

using Attrs = std::map<std::string, Attribute>;

// A node `op` named "n" with one input value per entry of `types` (nullopt: omitted input).
Node* build_node(Graph& g, const std::string& op,
                 const std::vector<std::optional<TensorType>>& types, const Attrs& attrs) {
  std::vector<Value*> ins;
  for (size_t k = 0; k < types.size(); ++k) {
    if (!types[k]) {
      ins.push_back(nullptr);
      continue;
    }
    Value* v = g.add_value("x" + std::to_string(k));
    v->type = *types[k];
    v->has_type = true;
    ins.push_back(v);
  }
  Node* n = g.add_node(op, "n", ins, {g.add_value("y")});
  n->attrs = attrs;
  return n;
}

const OpDef& op_def(const std::string& op) {
  const OpDef* d = find_op(op);
  if (!d) throw Error("op " + op + " is not registered");
  return *d;
}

std::vector<TensorType> infer_op(const std::string& op,
                                 const std::vector<std::optional<TensorType>>& types,
                                 const Attrs& attrs = {}) {
  Graph g;
  Node* n = build_node(g, op, types, attrs);
  return op_def(op).infer(InferInputs{*n});
}

// Shape inference, then the reference evaluation, of `op` on `inputs` (nullptr: omitted).
Tensor run_op(const std::string& op, const std::vector<const Tensor*>& inputs,
              const Attrs& attrs = {}) {
  std::vector<std::optional<TensorType>> types;
  for (const Tensor* t : inputs)
    types.push_back(t ? std::optional<TensorType>(t->type()) : std::nullopt);
  Graph g;
  Node* n = build_node(g, op, types, attrs);
  std::vector<TensorType> out = op_def(op).infer(InferInputs{*n});
  if (out.size() != 1) throw Error(op + ": expected one inferred output");
  n->outputs[0]->type = out[0];
  n->outputs[0]->has_type = true;
  return eval_node(*n, inputs).at(0);
}

Tensor run_op(const std::string& op, std::initializer_list<Tensor> inputs,
              const Attrs& attrs = {}) {
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : inputs)
    ptrs.push_back(&t);
  return run_op(op, ptrs, attrs);
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i)
    v.push_back(t.get_f64(i));
  return v;
}

std::vector<int64_t> ints(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i)
    v.push_back(t.get_i64(i));
  return v;
}

// A tensor of `dtype` holding `v` (each rounded to the dtype).
Tensor make(DType dtype, Shape shape, const std::vector<double>& v) {
  Tensor t(dtype, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i)
    t.set_f64(int64_t(i), v[i]);
  return t;
}

// Expects `fn` to throw vtc::Error whose message names node "n" and contains `part`.
template <typename Fn> void expect_error(Fn&& fn, const std::string& part) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one containing '" << part << "'";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("'n'"), std::string::npos) << what;
    EXPECT_NE(what.find(part), std::string::npos) << what;
  }
}

uint16_t bits16(const Tensor& t, int64_t i) {
  uint16_t b;
  std::memcpy(&b, t.raw() + i * 2, 2);
  return b;
}

struct UnaryCase {
  const char* op;
  Attrs attrs;
  std::vector<double> x;
  std::vector<double> y; // onnx.reference on float64 inputs
};

// The usual sample points; ops defined on part of the line use their own.
const std::vector<double> kX = {-3, -1, -0.5, 0, 0.25, 1, 2.5};

const std::vector<UnaryCase> kUnaryCases = {
    {"Relu", {}, kX, {0, 0, 0, 0, 0.25, 1, 2.5}},
    {"Sigmoid",
     {},
     kX,
     {0.04742587318, 0.2689414214, 0.3775406688, 0.5, 0.5621765009, 0.7310585786, 0.92414182}},
    {"HardSigmoid",
     {{"alpha", 0.5f}, {"beta", 0.6f}},
     kX,
     {0, 0.1000000238, 0.3500000238, 0.6000000238, 0.7250000238, 1, 1}},
    {"HardSigmoid", {}, kX, {0, 0.299999997, 0.3999999985, 0.5, 0.5500000007, 0.700000003, 1}},
    {"HardSwish",
     {},
     kX,
     {-0, -0.3333333284, -0.2083333321, 0, 0.135416667, 0.6666666716, 2.291666698}},
    {"Tanh",
     {},
     kX,
     {-0.9950547537, -0.761594156, -0.4621171573, 0, 0.2449186624, 0.761594156, 0.9866142982}},
    {"Erf",
     {},
     kX,
     {-0.9999778867, -0.8427007794, -0.5204998851, 0, 0.2763263881, 0.8427007794, 0.9995930195}},
    {"Gelu",
     {},
     kX,
     {-0.004049688578, -0.158655256, -0.1542687714, 0, 0.1496765818, 0.841344744, 2.484475821}},
    {"Gelu",
     {{"approximate", std::string("tanh")}},
     kX,
     {-0.003637392816, -0.1588080142, -0.1542859919, 0, 0.1496753502, 0.8411919858, 2.484915732}},
    {"Exp",
     {},
     kX,
     {0.04978706837, 0.3678794412, 0.6065306597, 1, 1.284025417, 2.718281828, 12.18249396}},
    {"Log", {}, {0.25, 0.5, 1, 2, 10}, {-1.386294361, -0.6931471806, 0, 0.6931471806, 2.302585093}},
    {"Sqrt", {}, {0.25, 0.5, 1, 2, 10}, {0.5, 0.7071067812, 1, 1.414213562, 3.16227766}},
    {"Reciprocal", {}, {0.25, 0.5, 1, 2, 10}, {4, 2, 1, 0.5, 0.1}},
    {"Neg", {}, kX, {3, 1, 0.5, -0, -0.25, -1, -2.5}},
    {"Abs", {}, kX, {3, 1, 0.5, 0, 0.25, 1, 2.5}},
    {"Sin",
     {},
     kX,
     {-0.1411200081, -0.8414709848, -0.4794255386, 0, 0.2474039593, 0.8414709848, 0.5984721441}},
    {"Cos",
     {},
     kX,
     {-0.9899924966, 0.5403023059, 0.8775825619, 1, 0.9689124217, 0.5403023059, -0.8011436155}},
    {"Tan",
     {},
     kX,
     {0.1425465431, -1.557407725, -0.5463024898, 0, 0.2553419212, 1.557407725, -0.7470222972}},
    {"Asin",
     {},
     {-0.9, -0.5, 0, 0.3, 0.8},
     {-1.119769515, -0.5235987756, 0, 0.304692654, 0.927295218}},
    {"Acos",
     {},
     {-0.9, -0.5, 0, 0.3, 0.8},
     {2.690565842, 2.094395102, 1.570796327, 1.266103673, 0.6435011088}},
    {"Atan",
     {},
     kX,
     {-1.249045772, -0.7853981634, -0.463647609, 0, 0.2449786631, 0.7853981634, 1.19028995}},
    {"Sinh",
     {},
     kX,
     {-10.01787493, -1.175201194, -0.5210953055, 0, 0.2526123168, 1.175201194, 6.050204481}},
    {"Cosh", {}, kX, {10.067662, 1.543080635, 1.127625965, 1, 1.0314131, 1.543080635, 6.13228948}},
    {"Asinh",
     {},
     kX,
     {-1.818446459, -0.881373587, -0.4812118251, 0, 0.2474664615, 0.881373587, 1.647231146}},
    {"Acosh", {}, {1, 1.5, 2, 5, 10}, {0, 0.9624236501, 1.316957897, 2.29243167, 2.993222846}},
    {"Atanh",
     {},
     {-0.9, -0.5, 0, 0.3, 0.8},
     {-1.47221949, -0.5493061443, 0, 0.3095196042, 1.098612289}},
    {"Floor", {}, kX, {-3, -1, -1, 0, 0, 1, 2}},
    {"Ceil", {}, kX, {-3, -1, -0, 0, 1, 1, 3}},
    {"Round", {}, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6}, {-2, -2, -0, 0, 2, 2, 3}},
    {"Sign", {}, kX, {-1, -1, -1, 0, 1, 1, 1}},
    {"Softplus",
     {},
     kX,
     {0.04858735157, 0.3132616875, 0.4740769842, 0.6931471806, 0.8259394199, 1.313261688,
      2.578889734}},
    {"Softsign", {}, kX, {-0.75, -0.5, -0.3333333333, 0, 0.2, 0.5, 0.7142857143}},
    {"LeakyRelu",
     {{"alpha", 0.1f}},
     kX,
     {-0.3000000045, -0.1000000015, -0.05000000075, 0, 0.25, 1, 2.5}},
    {"LeakyRelu", {}, kX, {-0.02999999933, -0.009999999776, -0.004999999888, 0, 0.25, 1, 2.5}},
    {"ThresholdedRelu", {{"alpha", 0.5f}}, kX, {0, 0, 0, 0, 0, 1, 2.5}},
    {"Elu", {{"alpha", 2.0f}}, kX, {-1.900425863, -1.264241118, -0.7869386806, 0, 0.25, 1, 2.5}},
    {"Selu",
     {},
     kX,
     {-1.670568734, -1.111330741, -0.69175819, 0, 0.2626752555, 1.050701022, 2.626752555}},
    {"Selu",
     {{"alpha", 2.0f}, {"gamma", 3.0f}},
     kX,
     {-5.70127759, -3.792723353, -2.360816042, 0, 0.75, 3, 7.5}},
    {"Celu", {{"alpha", 2.0f}}, kX, {-1.55373968, -0.7869386806, -0.4423984339, 0, 0.25, 1, 2.5}},
    {"Mish",
     {},
     kX,
     {-0.1456474613, -0.3034014614, -0.2207437747, 0, 0.1695724097, 0.8650983883, 2.471392305}},
    {"Shrink", {{"bias", 1.5f}, {"lambd", 0.4f}}, kX, {-1.5, 0.5, 1, 0, 0, -0.5, 1}},
};

TEST(Unary, MatchesOnnxReferenceInF32AndF64) {
  for (const UnaryCase& c : kUnaryCases) {
    for (DType dt : {DType::f32, DType::f64}) {
      Tensor x = make(dt, {int64_t(c.x.size())}, c.x);
      Tensor y = run_op(c.op, {x}, c.attrs);
      ASSERT_EQ(y.type(), x.type()) << c.op;
      for (size_t i = 0; i < c.y.size(); ++i)
        EXPECT_NEAR(y.get_f64(int64_t(i)), c.y[i], 1e-7 + 1e-5 * std::fabs(c.y[i]))
            << c.op << "(" << c.x[i] << ") in " << dtype_name(dt);
    }
  }
}

TEST(Unary, HalfPrecisionRoundsOnce) {
  Tensor x = make(DType::f16, {3}, {-1, 0.5, 1});
  Tensor y = run_op("Gelu", {x});
  EXPECT_EQ(y.dtype(), DType::f16);
  // onnx.reference: [-0.1587, 0.3457, 0.8413] in float16.
  EXPECT_EQ(values(y), values(make(DType::f16, {3}, {-0.15865525, 0.34573123, 0.84134475})));
  Tensor b = run_op("Exp", {make(DType::bf16, {2}, {0, 1})});
  EXPECT_EQ(values(b), (std::vector<double>{1, 2.71875})); // e rounded to 8 significant bits
}

TEST(Unary, IntegerRulesAreExactAndWrap) {
  Tensor i8 = Tensor::from<int8_t>({5}, {-128, -5, 0, 7, 127});
  EXPECT_EQ(ints(run_op("Relu", {i8})), (std::vector<int64_t>{0, 0, 0, 7, 127}));
  EXPECT_EQ(ints(run_op("Abs", {i8})), (std::vector<int64_t>{-128, 5, 0, 7, 127}));
  EXPECT_EQ(ints(run_op("Neg", {i8})), (std::vector<int64_t>{-128, 5, 0, -7, -127}));
  EXPECT_EQ(ints(run_op("Sign", {i8})), (std::vector<int64_t>{-1, -1, 0, 1, 1}));
  Tensor big = Tensor::from<int64_t>({2}, {9007199254740993, -9223372036854775807});
  EXPECT_EQ(ints(run_op("Neg", {big})),
            (std::vector<int64_t>{-9007199254740993, 9223372036854775807}));
  Tensor u8 = Tensor::from<uint8_t>({2}, {0, 5});
  EXPECT_EQ(ints(run_op("Neg", {u8})), (std::vector<int64_t>{0, 251}));
}

TEST(Unary, LogicAndClassification) {
  Tensor b = Tensor::from<bool>({3}, {true, false, true});
  EXPECT_EQ(ints(run_op("Not", {b})), (std::vector<int64_t>{0, 1, 0}));
  Tensor x = make(DType::f32, {5}, {-INFINITY, -1, 0, INFINITY, NAN});
  Tensor nan = run_op("IsNaN", {x});
  EXPECT_EQ(nan.dtype(), DType::boolean);
  EXPECT_EQ(ints(nan), (std::vector<int64_t>{0, 0, 0, 0, 1}));
  EXPECT_EQ(ints(run_op("IsInf", {x})), (std::vector<int64_t>{1, 0, 0, 1, 0}));
  EXPECT_EQ(ints(run_op("IsInf", {x}, {{"detect_positive", int64_t(0)}})),
            (std::vector<int64_t>{1, 0, 0, 0, 0}));
  EXPECT_EQ(ints(run_op("IsInf", {x}, {{"detect_negative", int64_t(0)}})),
            (std::vector<int64_t>{0, 0, 0, 1, 0}));
  std::vector<double> sign = values(run_op("Sign", {x}));
  EXPECT_EQ(sign[0], -1);
  EXPECT_TRUE(std::isnan(sign[4]));
}

TEST(Unary, RejectsBadInput) {
  expect_error([] { infer_op("Sqrt", {TensorType{DType::i32, {2}}}); }, "i32[2]");
  expect_error([] { infer_op("Not", {TensorType{DType::f32, {2}}}); }, "bool");
  expect_error([] { infer_op("IsNaN", {TensorType{DType::boolean, {2}}}); }, "float");
  expect_error(
      [] {
        infer_op("Relu", {TensorType{DType::f32, {2}}, TensorType{DType::f32, {2}}});
      },
      "inputs");
  expect_error(
      [] {
        infer_op("Gelu", {TensorType{DType::f32, {2}}}, {{"approximate", std::string("erf")}});
      },
      "approximate");
}

TEST(Binary, ArithmeticBroadcastsAndRoundsOnce) {
  Tensor a = make(DType::f32, {2, 3, 1}, {1, 2, 3, 4, 5, 6});
  Tensor b = make(DType::f32, {4}, {0, 10, 20, 30});
  Tensor y = run_op("Add", {a, b});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(y.get_f64(0), 1);
  EXPECT_EQ(y.get_f64(7), 32);  // a[0,1,0] + b[3]
  EXPECT_EQ(y.get_f64(23), 36); // a[1,2,0] + b[3]
  Tensor s = run_op("Mul", {make(DType::f64, {}, {3}), make(DType::f64, {}, {-2})});
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.get_f64(0), -6);
  // f16: 1 + (2^-11 + 2^-21) lies just above the tie between 1 and 1 + 2^-10.
  Tensor h = run_op("Add", {make(DType::f16, {1}, {1}),
                            make(DType::f16, {1}, {std::ldexp(1.0, -11) + std::ldexp(1.0, -21)})});
  EXPECT_EQ(bits16(h, 0), 0x3C01);
}

TEST(Binary, BroadcastMatchesCoordinateOracle) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    int rank = int(rng() % 5);
    Shape out(size_t(rank), 0), sa, sb;
    for (int64_t& d : out)
      d = 1 + int64_t(rng() % 4);
    int ra = int(rng() % (rank + 1)), rb = int(rng() % (rank + 1));
    for (int d = rank - ra; d < rank; ++d)
      sa.push_back(rng() % 3 == 0 ? 1 : out[size_t(d)]);
    for (int d = rank - rb; d < rank; ++d)
      sb.push_back(rng() % 3 == 0 ? 1 : out[size_t(d)]);
    Tensor a(DType::i64, sa), b(DType::i64, sb);
    for (int64_t i = 0; i < a.numel(); ++i)
      a.set_i64(i, int64_t(rng() % 1000));
    for (int64_t i = 0; i < b.numel(); ++i)
      b.set_i64(i, int64_t(rng() % 1000) * 1000);
    Tensor y = run_op("Add", {a, b});
    // Oracle: walk output coordinates, read each input at the coordinate clamped to its extent.
    Shape expect_shape; // rank max(ra, rb): the trailing dims of `out` either input has
    for (int d = rank - std::max(ra, rb); d < rank; ++d) {
      int64_t ea = d >= rank - ra ? sa[size_t(d - (rank - ra))] : 1;
      int64_t eb = d >= rank - rb ? sb[size_t(d - (rank - rb))] : 1;
      expect_shape.push_back(std::max(ea, eb));
    }
    ASSERT_EQ(y.shape(), expect_shape);
    auto at = [](const Tensor& t, const Shape& coord) {
      int64_t flat = 0;
      size_t lead = coord.size() - t.shape().size();
      for (size_t d = 0; d < t.shape().size(); ++d)
        flat = flat * t.shape()[d] + (t.shape()[d] == 1 ? 0 : coord[lead + d]);
      return t.get_i64(flat);
    };
    Shape coord(expect_shape.size(), 0);
    for (int64_t i = 0; i < y.numel(); ++i) {
      int64_t rest = i;
      for (size_t d = coord.size(); d-- > 0;) {
        coord[d] = rest % expect_shape[d];
        rest /= expect_shape[d];
      }
      ASSERT_EQ(y.get_i64(i), at(a, coord) + at(b, coord)) << "trial " << trial << " element " << i;
    }
  }
}

TEST(Binary, LegacyAxisBroadcast) {
  // Opset 6: Add(a, b) {broadcast=1, axis=0} aligns b = [2] with a's dimension 0.
  Tensor a = make(DType::f64, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = make(DType::f64, {2}, {10, 20});
  Tensor y = run_op("Add", {a, b}, {{"broadcast", int64_t(1)}, {"axis", int64_t(0)}});
  EXPECT_EQ(values(y), (std::vector<double>{11, 12, 13, 24, 25, 26}));
  expect_error([&] { run_op("Add", {a, b}); }, "[2,3] and [2]");
}

TEST(Binary, IntegerArithmeticIsExactInInt64) {
  Tensor a = Tensor::from<int64_t>({2}, {9007199254740993, 4611686018427387904});
  Tensor b = Tensor::from<int64_t>({2}, {1, 2});
  EXPECT_EQ(ints(run_op("Add", {a, b})),
            (std::vector<int64_t>{9007199254740994, 4611686018427387906}));
  EXPECT_EQ(ints(run_op("Mul", {a, b})),
            (std::vector<int64_t>{9007199254740993, std::numeric_limits<int64_t>::min()}));
  // Division truncates toward zero; division by zero gives 0 (numpy).
  Tensor n = Tensor::from<int32_t>({6}, {-7, 7, -7, 7, 9, 5});
  Tensor d = Tensor::from<int32_t>({6}, {2, 2, -2, -2, 3, 0});
  EXPECT_EQ(ints(run_op("Div", {n, d})), (std::vector<int64_t>{-3, 3, 3, -3, 3, 0}));
  Tensor u =
      run_op("Sub", {Tensor::from<uint8_t>({2}, {3, 200}), Tensor::from<uint8_t>({2}, {5, 100})});
  EXPECT_EQ(ints(u), (std::vector<int64_t>{254, 100}));
  EXPECT_EQ(
      ints(run_op("Div", {Tensor::from<uint8_t>({1}, {200}), Tensor::from<uint8_t>({1}, {3})})),
      (std::vector<int64_t>{66}));
}

TEST(Binary, ModFollowsNumpyAndC) {
  Tensor a = Tensor::from<int64_t>({6}, {-4, 7, 5, 4, -7, 8});
  Tensor b = Tensor::from<int64_t>({6}, {2, -3, 8, -2, 3, 5});
  EXPECT_EQ(ints(run_op("Mod", {a, b})), (std::vector<int64_t>{0, -2, 5, 0, 2, 3}));
  EXPECT_EQ(ints(run_op("Mod", {a, b}, {{"fmod", int64_t(1)}})),
            (std::vector<int64_t>{0, 1, 5, 0, -1, 3}));
  Tensor x = make(DType::f64, {6}, {-4.3, 7.2, 5.0, 4.3, -7.2, 8.0});
  Tensor y = make(DType::f64, {6}, {2.1, -3.4, 8.0, -2.1, 3.4, 5.0});
  std::vector<double> f1 = values(run_op("Mod", {x, y}, {{"fmod", int64_t(1)}}));
  std::vector<double> f0 = values(run_op("Mod", {x, y}));
  std::vector<double> e1 = {-0.1, 0.4, 5, 0.1, -0.4, 3}, e0 = {2, -3, 5, -2, 3, 3};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(f1[i], e1[i], 1e-12) << i;
    EXPECT_NEAR(f0[i], e0[i], 1e-12) << i;
  }
}

TEST(Binary, PowMixesDtypes) {
  // Output dtype is the base's; onnx.reference values.
  Tensor r = run_op("Pow", {Tensor::from<int64_t>({4}, {1, 2, 3, 4}),
                            make(DType::f32, {4}, {0.5, 2.5, -1, 0.5})});
  EXPECT_EQ(r.dtype(), DType::i64);
  EXPECT_EQ(ints(r), (std::vector<int64_t>{1, 5, 0, 2}));
  Tensor f = run_op(
      "Pow", {make(DType::f32, {4}, {1.5, 2, -3, 4}), Tensor::from<int64_t>({4}, {2, 3, 3, -1})});
  EXPECT_EQ(f.dtype(), DType::f32);
  EXPECT_EQ(values(f), (std::vector<double>{2.25, 8, -27, 0.25}));
  Tensor w = run_op("Pow", {Tensor::from<int32_t>({4}, {3, 2, -3, 10}),
                            Tensor::from<int32_t>({4}, {4, 31, 3, 10})});
  EXPECT_EQ(ints(w), (std::vector<int64_t>{81, -2147483648, -27, 1410065408}));
}

TEST(Binary, BitShift) {
  Tensor a = Tensor::from<uint8_t>({4}, {16, 4, 1, 200});
  Tensor b = Tensor::from<uint8_t>({4}, {1, 2, 3, 1});
  EXPECT_EQ(ints(run_op("BitShift", {a, b}, {{"direction", std::string("LEFT")}})),
            (std::vector<int64_t>{32, 16, 8, 144})); // 400 wraps to 144 in u8
  EXPECT_EQ(ints(run_op("BitShift", {a, b}, {{"direction", std::string("RIGHT")}})),
            (std::vector<int64_t>{8, 1, 0, 100}));
  expect_error([&] { run_op("BitShift", {a, b}); }, "missing required attribute 'direction'");
  expect_error([&] { run_op("BitShift", {a, b}, {{"direction", std::string("UP")}}); }, "UP");
  Tensor f = make(DType::f32, {1}, {1});
  expect_error(
      [&] {
        run_op("BitShift", {f, f}, {{"direction", std::string("LEFT")}});
      },
      "integer");
}

TEST(Binary, ComparisonAndLogic) {
  Tensor a = make(DType::f32, {2, 2}, {1, 2, 3, NAN});
  Tensor b = make(DType::f32, {2}, {2, 2});
  auto cmp = [&](const char* op) { return ints(run_op(op, {a, b})); };
  EXPECT_EQ(cmp("Equal"), (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(cmp("Less"), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(cmp("LessOrEqual"), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(cmp("Greater"), (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_EQ(cmp("GreaterOrEqual"), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(run_op("Equal", {a, b}).dtype(), DType::boolean);
  // Exact on int64 values that double cannot tell apart.
  EXPECT_EQ(ints(run_op("Equal", {Tensor::from<int64_t>({1}, {9007199254740993}),
                                  Tensor::from<int64_t>({1}, {9007199254740992})})),
            (std::vector<int64_t>{0}));
  Tensor p = Tensor::from<bool>({2, 2}, {false, false, true, true});
  Tensor q = Tensor::from<bool>({2}, {false, true});
  EXPECT_EQ(ints(run_op("And", {p, q})), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(ints(run_op("Or", {p, q})), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(ints(run_op("Xor", {p, q})), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(ints(run_op("Equal", {p, q})), (std::vector<int64_t>{1, 0, 0, 1}));
}

TEST(Binary, RejectsBadInput) {
  TensorType f23{DType::f32, {2, 3}}, f4{DType::f32, {4}}, i3{DType::i32, {3}};
  expect_error([&] { infer_op("Add", {f23, f4}); }, "do not broadcast");
  expect_error([&] { infer_op("Mul", {f23, TensorType{DType::f64, {3}}}); }, "differ in dtype");
  expect_error([&] { infer_op("And", {i3, i3}); }, "bool");
  expect_error(
      [&] {
        infer_op("Less", {TensorType{DType::boolean, {1}}, TensorType{DType::boolean, {1}}});
      },
      "bool[1]");
  expect_error([&] { infer_op("Sub", {f23}); }, "inputs");
  expect_error(
      [&] {
        infer_op("Add", {f23, f4}, {{"broadcast", int64_t(1)}, {"axis", int64_t(5)}});
      },
      "axis");
}

TEST(Variadic, FoldsWithBroadcast) {
  Tensor a = make(DType::f32, {2, 1}, {1, 6});
  Tensor b = make(DType::f32, {3}, {3, 4, 8});
  Tensor c = make(DType::f32, {}, {5});
  Tensor mx = run_op("Max", {a, b, c});
  EXPECT_EQ(mx.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(mx), (std::vector<double>{5, 5, 8, 6, 6, 8}));
  EXPECT_EQ(values(run_op("Min", {a, b, c})), (std::vector<double>{1, 1, 1, 3, 4, 5}));
  EXPECT_EQ(values(run_op("Sum", {a, b, c})), (std::vector<double>{9, 10, 14, 14, 15, 19}));
  EXPECT_EQ(values(run_op("Mean", {a, b, c})),
            (std::vector<double>{3, 10.0f / 3, 14.0f / 3, 14.0f / 3, 5, 19.0f / 3}));
  EXPECT_EQ(values(run_op("Sum", {b})), values(b));
  EXPECT_TRUE(std::isnan(
      run_op("Max", {make(DType::f32, {1}, {NAN}), make(DType::f32, {1}, {1})}).get_f64(0)));
  EXPECT_TRUE(std::isnan(
      run_op("Min", {make(DType::f32, {1}, {1}), make(DType::f32, {1}, {NAN})}).get_f64(0)));
  Tensor big = Tensor::from<int64_t>({1}, {9007199254740993});
  EXPECT_EQ(ints(run_op("Sum", {big, big, Tensor::from<int64_t>({1}, {1})})),
            (std::vector<int64_t>{18014398509481987}));
  EXPECT_EQ(
      ints(run_op("Max", {Tensor::from<int8_t>({2}, {-3, 4}), Tensor::from<int8_t>({2}, {-5, 9})})),
      (std::vector<int64_t>{-3, 9}));
}

TEST(Variadic, RejectsBadInput) {
  TensorType f2{DType::f32, {2}};
  expect_error([&] { infer_op("Sum", {f2, TensorType{DType::f32, {3}}}); }, "do not broadcast");
  expect_error([&] { infer_op("Max", {f2, TensorType{DType::i64, {2}}}); }, "input 1");
  expect_error([&] { infer_op("Mean", {TensorType{DType::i64, {2}}}); }, "float");
  expect_error([&] { infer_op("Min", {}); }, "inputs");
}

TEST(Where, SelectsWithThreeWayBroadcast) {
  Tensor c = Tensor::from<bool>({2, 1}, {true, false});
  Tensor x = Tensor::from<int64_t>({3}, {1, 2, 9007199254740993});
  Tensor y = Tensor::from<int64_t>({}, {-1});
  Tensor r = run_op("Where", {c, x, y});
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(ints(r), (std::vector<int64_t>{1, 2, 9007199254740993, -1, -1, -1}));
  Tensor xb = make(DType::bf16, {1}, {1.5});
  Tensor yb = make(DType::bf16, {2}, {-2, 3});
  EXPECT_EQ(values(run_op("Where", {Tensor::from<bool>({2}, {false, true}), xb, yb})),
            (std::vector<double>{-2, 1.5}));
  expect_error([&] { run_op("Where", {x, x, x}); }, "bool");
  expect_error([&] { run_op("Where", {c, x, xb}); }, "differ in dtype");
}

TEST(Clip, InputAndAttributeForms) {
  Tensor x = make(DType::f32, {5}, {-3, -0.5, 0, 0.7, NAN});
  Tensor lo = make(DType::f32, {}, {-1}), hi = make(DType::f32, {}, {0.5});
  EXPECT_EQ(values(run_op("Clip", {&x, &lo, &hi})).at(0), -1);
  std::vector<double> v = values(run_op("Clip", {&x, &lo, &hi}));
  EXPECT_EQ(std::vector<double>(v.begin(), v.begin() + 4), (std::vector<double>{-1, -0.5, 0, 0.5}));
  EXPECT_TRUE(std::isnan(v[4]));
  std::vector<double> only_max = values(run_op("Clip", {&x, nullptr, &hi}));
  EXPECT_EQ(only_max[0], -3);
  EXPECT_EQ(only_max[3], 0.5);
  // Opset 6: bounds are attributes.
  std::vector<double> attr = values(run_op("Clip", {&x}, {{"min", -0.25f}, {"max", 0.25f}}));
  EXPECT_EQ(std::vector<double>(attr.begin(), attr.begin() + 4),
            (std::vector<double>{-0.25, -0.25, 0, 0.25}));
  Tensor i8 = Tensor::from<int8_t>({4}, {-128, -3, 5, 127});
  Tensor imax = Tensor::from<int8_t>({}, {4});
  EXPECT_EQ(ints(run_op("Clip", {&i8, nullptr, &imax})), (std::vector<int64_t>{-128, -3, 4, 4}));
  EXPECT_EQ(ints(run_op("Clip", {&i8})), ints(i8));
  Tensor big = Tensor::from<int64_t>({1}, {9007199254740993});
  Tensor bmin = Tensor::from<int64_t>({}, {9007199254740992});
  EXPECT_EQ(ints(run_op("Clip", {&big, &bmin})), (std::vector<int64_t>{9007199254740993}));
  Tensor vec = make(DType::f32, {2}, {0, 1});
  expect_error([&] { run_op("Clip", {&x, &vec}); }, "scalar");
  expect_error([&] { run_op("Clip", {&x, &imax}); }, "min");
}

TEST(Cast, ConvertsBetweenAllDtypes) {
  const std::vector<double> src = {0, 1, -1, 2.5, -2.5, 100, 300};
  // Float to integer truncates toward zero, then wraps to the width (300 -> 44 in 8 bits).
  const std::map<DType, std::vector<double>> expect = {
      {DType::f32, {0, 1, -1, 2.5, -2.5, 100, 300}}, {DType::f64, {0, 1, -1, 2.5, -2.5, 100, 300}},
      {DType::f16, {0, 1, -1, 2.5, -2.5, 100, 300}}, {DType::bf16, {0, 1, -1, 2.5, -2.5, 100, 300}},
      {DType::i64, {0, 1, -1, 2, -2, 100, 300}},     {DType::i32, {0, 1, -1, 2, -2, 100, 300}},
      {DType::i8, {0, 1, -1, 2, -2, 100, 44}},       {DType::u8, {0, 1, 255, 2, 254, 100, 44}},
      {DType::boolean, {0, 1, 1, 1, 1, 1, 1}},
  };
  for (DType from : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    Tensor x = make(from, {7}, src);
    for (const auto& [to, want] : expect) {
      Tensor y = run_op("Cast", {x}, {{"to", int64_t(onnx_code(to))}});
      EXPECT_EQ(y.dtype(), to);
      EXPECT_EQ(values(y), want) << dtype_name(from) << " -> " << dtype_name(to);
    }
  }
  // Integers and bool to every dtype: exact where representable, wrapping to narrower integers.
  Tensor i = Tensor::from<int64_t>({4}, {0, -1, 300, 70000});
  const std::map<DType, std::vector<double>> from_int = {
      {DType::f32, {0, -1, 300, 70000}},    {DType::f64, {0, -1, 300, 70000}},
      {DType::f16, {0, -1, 300, INFINITY}}, {DType::bf16, {0, -1, 300, 70144}},
      {DType::i64, {0, -1, 300, 70000}},    {DType::i32, {0, -1, 300, 70000}},
      {DType::i8, {0, -1, 44, 112}},        {DType::u8, {0, 255, 44, 112}},
      {DType::boolean, {0, 1, 1, 1}},
  };
  for (const auto& [to, want] : from_int)
    EXPECT_EQ(values(run_op("Cast", {i}, {{"to", int64_t(onnx_code(to))}})), want)
        << dtype_name(to);
  Tensor b = Tensor::from<bool>({2}, {true, false});
  for (DType to : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i64, DType::i32,
                   DType::i8, DType::u8, DType::boolean})
    EXPECT_EQ(values(run_op("Cast", {b}, {{"to", int64_t(onnx_code(to))}})),
              (std::vector<double>{1, 0}));
}

TEST(Cast, RoundsOnce) {
  // f64 -> f16: 1 + 2^-11 + 2^-30 is above the tie between 1 and 1 + 2^-10 (rounds up); through
  // float it would become the tie itself and round to even (1).
  Tensor d = make(DType::f64, {1}, {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)});
  EXPECT_EQ(bits16(run_op("Cast", {d}, {{"to", int64_t(10)}}), 0), 0x3C01);
  // i64 -> bf16: 2^25 + 2^17 + 1 is above the tie between 2^25 and 2^25 + 2^18.
  Tensor i = Tensor::from<int64_t>({1}, {(int64_t(1) << 25) + (1 << 17) + 1});
  EXPECT_EQ(run_op("Cast", {i}, {{"to", int64_t(16)}}).get_f64(0), double((1 << 25) + (1 << 18)));
  // f32 -> bf16 ties to even; NaN stays NaN and saturating casts to integers are defined.
  Tensor f = make(DType::f32, {3}, {1 + std::ldexp(1.0, -8), NAN, 1e30});
  Tensor bf = run_op("Cast", {f}, {{"to", int64_t(16)}});
  EXPECT_EQ(bf.get_f64(0), 1);
  EXPECT_TRUE(std::isnan(bf.get_f64(1)));
  EXPECT_EQ(ints(run_op("Cast", {f}, {{"to", int64_t(7)}})),
            (std::vector<int64_t>{1, 0, std::numeric_limits<int64_t>::max()}));
}

TEST(Cast, CastLikeAndErrors) {
  Tensor x = make(DType::f64, {2, 2}, {1.9, -1.9, 3, 4});
  Tensor like = Tensor::from<int32_t>({1}, {0});
  Tensor y = run_op("CastLike", {x, like});
  EXPECT_EQ(y.type(), (TensorType{DType::i32, {2, 2}}));
  EXPECT_EQ(ints(y), (std::vector<int64_t>{1, -1, 3, 4}));
  expect_error([&] { run_op("Cast", {x}, {{"to", int64_t(8)}}); }, "'to' = 8");
  expect_error([&] { run_op("Cast", {x}); }, "'to'");
  expect_error([&] { run_op("CastLike", {x}); }, "inputs");
}

TEST(PRelu, SlopeBroadcastsToInput) {
  Tensor x = make(DType::f32, {2, 3}, {-1, 2, -3, 4, -5, -6});
  Tensor s = make(DType::f32, {3}, {0.5, 1, 2});
  EXPECT_EQ(values(run_op("PRelu", {x, s})), (std::vector<double>{-0.5, 2, -6, 4, -5, -12}));
  // Opset 6: a [C] slope is per channel (axis 1) when it does not broadcast from the right.
  Tensor x3 = make(DType::f32, {1, 3, 2}, {-1, -1, -1, -1, 1, -2});
  EXPECT_EQ(values(run_op("PRelu", {x3, s})), (std::vector<double>{-0.5, -0.5, -1, -1, 1, -4}));
  Tensor xi = Tensor::from<int32_t>({3}, {-3, 0, 3});
  EXPECT_EQ(ints(run_op("PRelu", {xi, Tensor::from<int32_t>({1}, {2})})),
            (std::vector<int64_t>{-6, 0, 3}));
  expect_error(
      [&] {
        run_op("PRelu", {x, make(DType::f32, {2, 2, 3}, std::vector<double>(12, 1))});
      },
      "slope");
}

TEST(Registry, EveryElementwiseOpIsAComputeOp) {
  for (const char* op : {"Relu",
                         "Sigmoid",
                         "HardSigmoid",
                         "HardSwish",
                         "Tanh",
                         "Erf",
                         "Gelu",
                         "Exp",
                         "Log",
                         "Sqrt",
                         "Reciprocal",
                         "Neg",
                         "Abs",
                         "Not",
                         "Sin",
                         "Cos",
                         "Floor",
                         "Ceil",
                         "Sign",
                         "Softplus",
                         "LeakyRelu",
                         "Elu",
                         "Selu",
                         "Celu",
                         "Mish",
                         "IsNaN",
                         "IsInf",
                         "Add",
                         "Sub",
                         "Mul",
                         "Div",
                         "Pow",
                         "Max",
                         "Min",
                         "Mean",
                         "Sum",
                         "Equal",
                         "Less",
                         "LessOrEqual",
                         "Greater",
                         "GreaterOrEqual",
                         "And",
                         "Or",
                         "Xor",
                         "Mod",
                         "Where",
                         "Clip",
                         "Cast",
                         "CastLike",
                         "PRelu"}) {
    const OpDef* d = find_op(op);
    ASSERT_NE(d, nullptr) << op;
    EXPECT_EQ(d->kind, OpKind::compute) << op;
  }
}

} // namespace
} // namespace vtc
