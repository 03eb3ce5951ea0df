// Softmax, LogSoftmax, Hardmax, the Reduce* family, ArgMax / ArgMin, CumSum, TopK and Trilu:
// results against ONNX's reference implementation (onnx.reference 1.23, float64 inputs from
// the harness pattern) and hand-checked cases for the attribute forms, integer exactness, tie
// breaking and numerically extreme inputs, shape inference and the errors bad nodes raise.
#include "nn_test_util.h"

namespace vtc::nn_test {
namespace {

// kSoftmaxAxis1: shape [2, 3, 4]
const std::vector<double> kSoftmaxAxis1 = {
    0.12034724604,   0.534442447495,  0.12034724604,  0.12034724604,   0.788696262074,
    0.0616346399452, 0.788696262074,  0.788696262074, 0.090956491886,  0.40392291256,
    0.090956491886,  0.090956491886,  0.534442447495, 0.12034724604,   0.534442447495,
    0.534442447495,  0.0616346399452, 0.788696262074, 0.0616346399452, 0.0616346399452,
    0.40392291256,   0.090956491886,  0.40392291256,  0.40392291256};
// kLogSoftmaxAxis1: shape [2, 3, 4]
const std::vector<double> kLogSoftmaxAxis1 = {
    -2.11737399794,  -0.626531229722, -2.11737399794,  -2.11737399794, -0.23737399794,
    -2.78653122972,  -0.23737399794,  -0.23737399794,  -2.39737399794, -0.906531229722,
    -2.39737399794,  -2.39737399794,  -0.626531229722, -2.11737399794, -0.626531229722,
    -0.626531229722, -2.78653122972,  -0.23737399794,  -2.78653122972, -2.78653122972,
    -0.906531229722, -2.39737399794,  -0.906531229722, -0.906531229722};
// kHardmaxAxis1: shape [2, 3, 4]
const std::vector<double> kHardmaxAxis1 = {0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0,
                                           1, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0};
// kReduceSum: shape [3]
const std::vector<double> kReduceSum = {2.8, -2.36, 0.56};
// kReduceMean: shape [3]
const std::vector<double> kReduceMean = {0.35, -0.295, 0.07};
// kReduceMax: shape [3]
const std::vector<double> kReduceMax = {1.96, 1.28, 1.68};
// kReduceMin: shape [3]
const std::vector<double> kReduceMin = {-1.68, -1.8, -1.96};
// kReduceProd: shape [3]
const std::vector<double> kReduceProd = {-0.630181555864, -0.061303947264, -0.104148998554};
// kReduceL1: shape [3]
const std::vector<double> kReduceL1 = {8.8, 7.64, 8.24};
// kReduceL2: shape [3]
const std::vector<double> kReduceL2 = {3.52272621701, 3.16303651576, 3.38656167816};
// kReduceLogSum: shape [3]
const std::vector<double> kReduceLogSum = {2.26176309847, 2.13298230861, 2.2016591744};
// kReduceLogSumExp: shape [3]
const std::vector<double> kReduceLogSumExp = {3.02530605315, 2.32657391677, 2.74530605315};
// kReduceSumSquare: shape [3]
const std::vector<double> kReduceSumSquare = {12.4096, 10.0048, 11.4688};

TEST(NnSoftmax, AlongOneAxisLikeOnnxReference) {
  Tensor x = pattern(DType::f64, {2, 3, 4}, 50);
  Attrs axis1{{"axis", int64_t(1)}};
  expect_values(run1("Softmax", {in(x)}, axis1), {2, 3, 4}, kSoftmaxAxis1);
  expect_values(run1("LogSoftmax", {in(x)}, axis1), {2, 3, 4}, kLogSoftmaxAxis1);
  expect_values(run1("Hardmax", {in(x)}, axis1), {2, 3, 4}, kHardmaxAxis1);
  // Negative axis -2 is axis 1.
  expect_values(run1("Softmax", {in(x)}, {{"axis", int64_t(-2)}}), {2, 3, 4}, kSoftmaxAxis1);
}

TEST(NnSoftmax, DefaultAxisIsLastAndLargeInputsAreStable) {
  Tensor x = f32({2, 2}, {1000, 1001, -1000, -1000});
  double e = 1 / (1 + std::exp(1.0));
  expect_values(run1("Softmax", {in(x)}), {2, 2}, {e, 1 - e, 0.5, 0.5}, 1e-6);
  expect_values(run1("LogSoftmax", {in(x)}), {2, 2},
                {std::log(e), std::log(1 - e), std::log(0.5), std::log(0.5)}, 1e-6);
  // Hardmax picks the first of equal maxima.
  expect_values(run1("Hardmax", {in(x)}), {2, 2}, {0, 1, 1, 0});
}

TEST(NnSoftmax, RowsOfHalfSumToOne) {
  Tensor y = run1("Softmax", {in(pattern(DType::f16, {3, 7}, 9))});
  EXPECT_EQ(y.dtype(), DType::f16);
  for (int r = 0; r < 3; ++r) {
    double sum = 0;
    for (int c = 0; c < 7; ++c)
      sum += y.get_f64(r * 7 + c);
    EXPECT_NEAR(sum, 1.0, 4e-3);
  }
}

TEST(NnSoftmax, RejectsBadNodes) {
  EXPECT_NODE_ERROR(run1("Softmax", {in(pattern(DType::f32, {2, 3}, 0))}, {{"axis", int64_t(2)}}),
                    "axis");
  EXPECT_NODE_ERROR(run1("LogSoftmax", {in(i64({2}, {1, 2}))}), "float");
}

TEST(NnReduce, EveryKindMatchesOnnxReference) {
  Tensor x = pattern(DType::f64, {2, 3, 4}, 51);
  Tensor pos = x;
  for (int64_t i = 0; i < pos.numel(); ++i)
    pos.set_f64(i, std::abs(x.get_f64(i)) + 0.1);
  std::vector<std::pair<const char*, const std::vector<double>*>> cases = {
      {"ReduceSum", &kReduceSum},
      {"ReduceMean", &kReduceMean},
      {"ReduceMax", &kReduceMax},
      {"ReduceMin", &kReduceMin},
      {"ReduceProd", &kReduceProd},
      {"ReduceL1", &kReduceL1},
      {"ReduceL2", &kReduceL2},
      {"ReduceLogSum", &kReduceLogSum},
      {"ReduceLogSumExp", &kReduceLogSumExp},
      {"ReduceSumSquare", &kReduceSumSquare}};
  for (const auto& [op, expected] : cases) {
    SCOPED_TRACE(op);
    const Tensor& data = std::string(op) == "ReduceLogSum" ? pos : x;
    // Axes as a constant input (opset >= 18) and as an attribute (older opsets) agree.
    expect_values(run1(op, {in(data), cst(i64({2}, {0, 2}))}, {{"keepdims", int64_t(0)}}), {3},
                  *expected);
    expect_values(
        run1(op, {in(data)}, {{"axes", std::vector<int64_t>{0, -1}}, {"keepdims", int64_t(1)}}),
        {1, 3, 1}, *expected);
  }
}

TEST(NnReduce, EmptyAxesReduceAllOrNothing) {
  Tensor x = f32({2, 2}, {1, -2, 3, 4});
  expect_values(run1("ReduceSum", {in(x)}), {1, 1}, {6});
  expect_values(run1("ReduceSum", {in(x), cst(i64({0}, {}))}, {{"keepdims", int64_t(0)}}), {}, {6});
  // noop_with_empty_axes reduces over no axis: the identity, but the elementwise part of the
  // reduction (square, abs, ...) still applies, as in the ONNX reference.
  Attrs noop{{"noop_with_empty_axes", int64_t(1)}};
  expect_values(run1("ReduceSum", {in(x), cst(i64({0}, {}))}, noop), {2, 2}, {1, -2, 3, 4});
  expect_values(run1("ReduceSumSquare", {in(x)}, noop), {2, 2}, {1, 4, 9, 16});
  expect_values(run1("ReduceL1", {in(x)}, noop), {2, 2}, {1, 2, 3, 4});
}

TEST(NnReduce, IntegersAndExtremes) {
  int64_t big = (int64_t(1) << 53) + 1;
  Tensor sum = run1("ReduceSum", {in(i64({2}, {big, 1}))}, {{"keepdims", int64_t(0)}});
  EXPECT_EQ(sum.shape(), Shape{});
  EXPECT_EQ(sum.get_i64(0), big + 1); // not representable in double
  EXPECT_EQ(run1("ReduceProd", {in(i32({3}, {-3, 5, 7}))}).get_i64(0), -105);
  EXPECT_EQ(run1("ReduceMean", {in(i32({2}, {2, 5}))}).get_i64(0), 3); // 3.5 truncated
  Tensor x8(DType::i8, {3});
  for (int i = 0; i < 3; ++i)
    x8.set_i64(i, i == 1 ? -128 : 100);
  EXPECT_EQ(run1("ReduceMin", {in(x8)}).get_i64(0), -128);
  EXPECT_EQ(run1("ReduceMax", {in(x8)}).get_i64(0), 100);
  // LogSumExp of large values does not overflow.
  EXPECT_NEAR(run1("ReduceLogSumExp", {in(f64({2}, {1000, 1000}))}).get_f64(0),
              1000 + std::log(2.0), 1e-9);
}

TEST(NnReduce, RejectsBadNodes) {
  Tensor x = pattern(DType::f32, {2, 3}, 0);
  EXPECT_NODE_ERROR(run1("ReduceSum", {in(x), cst(i64({2}, {1, -1}))}), "twice");
  EXPECT_NODE_ERROR(run1("ReduceMean", {in(x)}, {{"axes", std::vector<int64_t>{2}}}), "axis");
  EXPECT_NODE_ERROR(
      run1("ReduceMax", {in(x), cst(i64({1}, {0}))}, {{"axes", std::vector<int64_t>{0}}}), "both");
  EXPECT_THROW(run1("ReduceSum", {in(x), in(i64({1}, {0}))}), NeedsConstantInput);
  EXPECT_NODE_ERROR(run1("ReduceSum", {in(f32({}, {1})), cst(i64({1}, {0}))}), "scalar");
  EXPECT_NODE_ERROR(run1("ReduceSum", {in(Tensor(DType::boolean, {2}))}), "numeric");
}

TEST(NnArg, KeepdimsNegativeAxisAndLastIndex) {
  Tensor x = f32({2, 3}, {1, 5, 5, 7, 0, 7});
  expect_values(run1("ArgMax", {in(x)}, {{"axis", int64_t(1)}}), {2, 1}, {1, 0});
  expect_values(
      run1("ArgMax", {in(x)},
           {{"axis", int64_t(-1)}, {"keepdims", int64_t(0)}, {"select_last_index", int64_t(1)}}),
      {2}, {2, 2});
  expect_values(run1("ArgMin", {in(x)}), {1, 3}, {0, 1, 0});
  expect_values(run1("ArgMin", {in(i64({3}, {4, -1, -1}))}, {{"select_last_index", int64_t(1)}}),
                {1}, {2});
  EXPECT_EQ(run1("ArgMax", {in(x)}).dtype(), DType::i64);
  EXPECT_NODE_ERROR(run1("ArgMax", {in(x)}, {{"axis", int64_t(2)}}), "axis");
}

TEST(NnCumSum, ExclusiveReverseAndAxes) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_values(run1("CumSum", {in(x), in(scalar_i64(1))}), {2, 3}, {1, 3, 6, 4, 9, 15});
  expect_values(run1("CumSum", {in(x), in(i32({1}, {-2}))}), {2, 3}, {1, 2, 3, 5, 7, 9});
  expect_values(run1("CumSum", {in(x), in(scalar_i64(1))},
                     {{"exclusive", int64_t(1)}, {"reverse", int64_t(1)}}),
                {2, 3}, {5, 3, 0, 11, 6, 0});
  Tensor big = i64({2}, {(int64_t(1) << 53) + 1, 2});
  EXPECT_EQ(run1("CumSum", {in(big), in(scalar_i64(0))}).get_i64(1), (int64_t(1) << 53) + 3);
  EXPECT_NODE_ERROR(run1("CumSum", {in(x), cst(scalar_i64(2))}), "axis");
  EXPECT_NODE_ERROR(run1("CumSum", {in(x), in(i64({2}, {0, 1}))}), "scalar");
}

TEST(NnTopK, LargestSmallestAndTies) {
  Tensor x = f32({2, 4}, {3, 1, 3, 2, 0, -1, 5, 5});
  std::vector<Tensor> r = run("TopK", {in(x), cst(i64({1}, {2}))}, {}, {true, true});
  expect_values(r.at(0), {2, 2}, {3, 3, 5, 5});
  expect_values(r.at(1), {2, 2}, {0, 2, 2, 3}); // ties: lower index first
  r = run("TopK", {in(x), cst(i64({1}, {3}))}, {{"largest", int64_t(0)}, {"axis", int64_t(1)}},
          {true, true});
  expect_values(r.at(0), {2, 3}, {1, 2, 3, -1, 0, 5});
  expect_values(r.at(1), {2, 3}, {1, 3, 0, 1, 0, 2});
  r = run("TopK", {in(x), cst(i64({1}, {1}))}, {{"axis", int64_t(0)}}, {true, true});
  expect_values(r.at(0), {1, 4}, {3, 1, 5, 5});
  expect_values(r.at(1), {1, 4}, {0, 0, 1, 1});
  // Opset 1: k as an attribute.
  expect_values(run1("TopK", {in(x)}, {{"k", int64_t(1)}}), {2, 1}, {3, 5});
}

TEST(NnTopK, RejectsBadNodes) {
  Tensor x = pattern(DType::f32, {2, 4}, 0);
  EXPECT_NODE_ERROR(run1("TopK", {in(x), cst(i64({1}, {5}))}), "k 5");
  EXPECT_NODE_ERROR(run1("TopK", {in(x), cst(i64({1}, {1}))}, {{"axis", int64_t(-3)}}), "axis");
  EXPECT_THROW(run1("TopK", {in(x), in(i64({1}, {1}))}), NeedsConstantInput);
}

TEST(NnTrilu, UpperLowerDiagonalsAndBatches) {
  Tensor x = f32({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  expect_values(run1("Trilu", {in(x)}), {3, 4}, {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  expect_values(run1("Trilu", {in(x), in(scalar_i64(-1))}, {{"upper", int64_t(0)}}), {3, 4},
                {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  expect_values(run1("Trilu", {in(x), in(scalar_i64(2))}), {3, 4},
                {0, 0, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0});
  expect_values(run1("Trilu", {in(x), in(scalar_i64(-5))}), {3, 4}, values(x));
  Tensor b = Tensor::from<bool>({2, 2, 2}, {true, true, true, true, true, true, true, true});
  Tensor y = run1("Trilu", {in(b)}, {{"upper", int64_t(0)}});
  EXPECT_EQ(y.dtype(), DType::boolean);
  expect_values(y, {2, 2, 2}, {1, 0, 1, 1, 1, 0, 1, 1});
  EXPECT_NODE_ERROR(run1("Trilu", {in(f32({3}, {1, 2, 3}))}), "rank");
  EXPECT_NODE_ERROR(run1("Trilu", {in(x), in(f32({}, {1}))}), "k");
}

} // namespace
} // namespace vtc::nn_test
