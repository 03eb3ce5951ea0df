// MatMul, Gemm, Conv and ConvTranspose: results against ONNX's reference implementation
// (onnx.reference 1.23 on float64 inputs from the harness pattern), hand-checked integer and
// rounding cases, the adjoint identity <Conv(x), y> = <x, ConvTranspose(y)> for grouped,
// strided, dilated, padded windows, shape inference, and the errors bad nodes raise.
#include "nn_test_util.h"

namespace vtc::nn_test {
namespace {

// kMatMulBroadcast: shape [2, 2, 2, 2]
const std::vector<double> kMatMulBroadcast = {2.6032, -3.312,  -2.8544, 1.7328, -3.6384, -2.928,
                                              3.3376, -0.1552, -3.3024, 1.4448, -3.7504, 1.1568,
                                              2.2336, 0.5168,  1.1296,  1.1888};
// kMatMulVecLeft: shape [2, 4]
const std::vector<double> kMatMulVecLeft = {-2.6176, -2.0096, 2.9616,  -2.4096,
                                            2.2544,  3.024,   -2.3472, 2.4624};
// kMatMulVecRight: shape [2, 2]
const std::vector<double> kMatMulVecRight = {-1.8672, -2.4432, 4.8992, 4.3232};
// kGemmTransposed: shape [2, 4]
const std::vector<double> kGemmTransposed = {0.4592, -2.3008, 3.0192, -3.1344,
                                             1.0392, -2.4488, 2.1432, 0.4328};
// kConvGrouped: shape [1, 4, 2, 6]
const std::vector<double> kConvGrouped = {
    -0.8464, 0.9856,   -4.7776,  0.6096,  -3.7136, -2.4112,  -9.1184, -6.7184, 4.408,   -8.3824,
    -2.0176, 1.3376,   2.9808,   -9.6944, 2.6784,  3.0928,   -2.944,  1.8512,  -0.3888, 7.3184,
    -8.8912, -0.0528,  2.968,    -4.3552, -3.4496, 7.9904,   -4.4864, -3.0656, 2.872,   -0.7984,
    9.808,   -12.4064, -0.0384,  7.1584,  -2.512,  6.1504,   2.5856,  -10.824, 0.8144,  3.2416,
    -6.728,  -0.9264,  -14.8336, 4.296,   2.256,   -14.4896, 1.544,   -0.472};
// kConv1dSameLower: shape [2, 2, 4]
const std::vector<double> kConv1dSameLower = {0.6784,  8.6416,  -4.2704, -4.9104, 4.5152,  -7.4656,
                                              -4.2688, 11.7472, 3.7296,  -4.6032, -2.9712, 10.544,
                                              -2.7216, 1.376,   9.2592,  -5.1984};
// kConv3dDepthwise: shape [1, 2, 2, 3, 4]
const std::vector<double> kConv3dDepthwise = {
    5.4448,  -3.5584, 3.76,    -3.2176, -8.0944, 8.5728,  -7.4032, 3.4224, 8.3168,  -7.6592,
    5.1296,  1.6192,  -3.3712, 3.9472,  -5.056,  0.0256,  8.496,   -7.48,  5.3088,  1.4064,
    -7.736,  5.0528,  4.752,   -3.6288, -3.9984, -1.0848, 4.576,   -2.248, -1.24,   3.3856,
    -3.3008, 4.0112,  -5.2,    -0.5744, 4.6976,  -4.0992, -1.032,  4.6288, -3.7696, 1.2304,
    3.5248,  -3.1616, 4.3728,  -3.9984, -0.4352, 4.8368,  -3.9504, 4.2128};
// kConvTransposeStrided: shape [1, 2, 6, 7]
const std::vector<double> kConvTransposeStrided = {
    -3.6016, -1.2,    -4.016,  0.3648,  2.68,    -1.648, -1.2,    -2.288, -1.2,    0.08,    -4.3536,
    -2.4,    -3.584,  -1.2,    -1.648,  -1.2,    0.72,   -4.1456, -1.76,  -3.376,  -1.2,    0.0448,
    -1.2,    -0.784,  -3.152,  -2.0976, 0.4,     -1.2,   -0.1792, -1.2,   -1.008,  -2.192,  -2.3216,
    1.36,    -1.2,    -1.2,    -1.2,    -1.2,    -1.2,   -1.2,    -1.2,   -1.2,    -2.3456, 0.28,
    4.3504,  0.7568,  -2.0432, -0.1248, 0.28,    0.472,  0.28,    2.84,   -2.4576, 0.36,    -1.688,
    0.28,    1.112,   0.28,    -1.368,  -2.2496, -0.616, 4.0144,  0.28,   1.0768,  0.28,    0.248,
    0.248,   -1.0656, 3.8,     0.28,    0.8528,  0.28,   -0.4608, 1.208,  1.4576,  -1.704,  0.28,
    0.28,    0.28,    0.28,    0.28,    0.28,    0.28,   0.28};
// kConvTransposeSameUpper: shape [1, 2, 6]
const std::vector<double> kConvTransposeSameUpper = {
    -0.0832, -0.8528, 0.632, 1.5744, -1.1392, -2.624, -0.2912, 1.04, 0.808, -1.92, -1.3952, 3.2};

TEST(NnMatMul, BroadcastsBatchDimsLikeOnnxReference) {
  Tensor y = run1(
      "MatMul", {in(pattern(DType::f64, {2, 1, 2, 3}, 1)), in(pattern(DType::f64, {2, 3, 2}, 2))});
  expect_values(y, {2, 2, 2, 2}, kMatMulBroadcast);
}

TEST(NnMatMul, OneDimensionalOperandsAreDropped) {
  expect_values(
      run1("MatMul", {in(pattern(DType::f64, {3}, 3)), in(pattern(DType::f64, {2, 3, 4}, 4))}),
      {2, 4}, kMatMulVecLeft);
  expect_values(
      run1("MatMul", {in(pattern(DType::f64, {2, 2, 3}, 5)), in(pattern(DType::f64, {3}, 6))}),
      {2, 2}, kMatMulVecRight);
  // vector . vector is a scalar.
  expect_values(run1("MatMul", {in(f64({3}, {1, 2, 3})), in(f64({3}, {4, 5, 6}))}), {}, {32});
}

TEST(NnMatMul, IntegersAreExact) {
  expect_values(run1("MatMul", {in(i32({2, 2}, {1, 2, 3, 4})), in(i32({2, 2}, {5, 6, 7, 8}))}),
                {2, 2}, {19, 22, 43, 50});
  // (2^53 + 1) * 1 + 1 * 1 is not representable in double; int64 keeps it exact.
  Tensor y =
      run1("MatMul", {in(i64({1, 2}, {(int64_t(1) << 53) + 1, 1})), in(i64({2, 1}, {1, 1}))});
  EXPECT_EQ(y.dtype(), DType::i64);
  EXPECT_EQ(y.get_i64(0), (int64_t(1) << 53) + 2);
}

TEST(NnMatMul, HalfAccumulatesInDoubleAndRoundsOnce) {
  // In f16, 2048 + 1 rounds back to 2048 (spacing 2), so an f16 accumulator would give 2048.
  Tensor a(DType::f16, {1, 3}), b(DType::f16, {3, 1});
  for (int i = 0; i < 3; ++i) {
    a.set_f64(i, i == 0 ? 2048 : 1);
    b.set_f64(i, 1);
  }
  Tensor y = run1("MatMul", {in(a), in(b)});
  EXPECT_EQ(y.dtype(), DType::f16);
  EXPECT_EQ(y.get_f64(0), 2050);
}

TEST(NnMatMul, RejectsBadOperands) {
  Tensor a = pattern(DType::f32, {2, 3}, 0);
  EXPECT_NODE_ERROR(run1("MatMul", {in(a), in(pattern(DType::f32, {4, 2}, 0))}), "[2,3]");
  EXPECT_NODE_ERROR(run1("MatMul", {in(pattern(DType::f32, {2, 2, 3}, 0)),
                                    in(pattern(DType::f32, {3, 3, 2}, 0))}),
                    "do not broadcast");
  EXPECT_NODE_ERROR(run1("MatMul", {in(a), in(pattern(DType::f64, {3, 2}, 0))}), "f64");
  EXPECT_NODE_ERROR(run1("MatMul", {in(Tensor(DType::f32, {})), in(a)}), "rank");
  EXPECT_NODE_ERROR(
      run1("MatMul", {in(Tensor(DType::boolean, {2, 2})), in(Tensor(DType::boolean, {2, 2}))}),
      "numeric");
}

TEST(NnGemm, TransposesScalesAndBroadcastsC) {
  Tensor y =
      run1("Gemm",
           {in(pattern(DType::f64, {3, 2}, 7)), in(pattern(DType::f64, {4, 3}, 8)),
            in(pattern(DType::f64, {4}, 9))},
           {{"transA", int64_t(1)}, {"transB", int64_t(1)}, {"alpha", 0.5f}, {"beta", -2.0f}});
  expect_values(y, {2, 4}, kGemmTransposed);
}

TEST(NnGemm, OptionalAndBroadcastBias) {
  Tensor a = f64({2, 2}, {1, 2, 3, 4}), b = f64({2, 2}, {1, 0, 0, 1});
  expect_values(run1("Gemm", {in(a), in(b)}), {2, 2}, {1, 2, 3, 4});
  expect_values(run1("Gemm", {in(a), in(b), in(f64({}, {10}))}), {2, 2}, {11, 12, 13, 14});
  expect_values(run1("Gemm", {in(a), in(b), in(f64({2, 1}, {10, 20}))}, {{"beta", 0.5f}}), {2, 2},
                {6, 7, 13, 14});
  expect_values(run1("Gemm", {in(i32({2, 2}, {1, 2, 3, 4})), in(i32({2, 2}, {1, 0, 0, 1})),
                              in(i32({2}, {5, 6}))}),
                {2, 2}, {6, 8, 8, 10});
}

TEST(NnGemm, RejectsBadOperands) {
  Tensor a = pattern(DType::f32, {2, 3}, 0), b = pattern(DType::f32, {3, 4}, 0);
  EXPECT_NODE_ERROR(run1("Gemm", {in(a), in(b), in(pattern(DType::f32, {3}, 0))}), "broadcast");
  EXPECT_NODE_ERROR(run1("Gemm", {in(a), in(b)}, {{"transB", int64_t(1)}}), "inner");
  EXPECT_NODE_ERROR(run1("Gemm", {in(pattern(DType::f32, {1, 2, 3}, 0)), in(b)}), "2-D");
}

TEST(NnConv, GroupedStridedDilatedAsymmetricPadsWithBias) {
  Tensor y = run1("Conv",
                  {in(pattern(DType::f64, {1, 4, 5, 6}, 10)),
                   in(pattern(DType::f64, {4, 2, 3, 2}, 11)), in(pattern(DType::f64, {4}, 12))},
                  {{"group", int64_t(2)},
                   {"strides", std::vector<int64_t>{2, 1}},
                   {"dilations", std::vector<int64_t>{1, 2}},
                   {"pads", std::vector<int64_t>{1, 0, 0, 2}}});
  expect_values(y, {1, 4, 2, 6}, kConvGrouped);
}

TEST(NnConv, OneDimensionalSameLower) {
  Tensor y =
      run1("Conv", {in(pattern(DType::f64, {2, 3, 7}, 13)), in(pattern(DType::f64, {2, 3, 4}, 14))},
           {{"auto_pad", std::string("SAME_LOWER")}, {"strides", std::vector<int64_t>{2}}});
  expect_values(y, {2, 2, 4}, kConv1dSameLower);
}

TEST(NnConv, ThreeDimensionalDepthwise) {
  Tensor y = run1(
      "Conv",
      {in(pattern(DType::f64, {1, 2, 3, 3, 4}, 15)), in(pattern(DType::f64, {2, 1, 2, 2, 2}, 16))},
      {{"group", int64_t(2)}, {"pads", std::vector<int64_t>{0, 1, 0, 0, 0, 1}}});
  expect_values(y, {1, 2, 2, 3, 4}, kConv3dDepthwise);
}

TEST(NnConv, InfersOutputShapes) {
  auto conv_shape = [](Shape x, Shape w, Attrs attrs) {
    return infer("Conv", {in(Tensor(DType::f32, x)), in(Tensor(DType::f32, w))}, attrs).at(0).shape;
  };
  EXPECT_EQ(conv_shape({1, 3, 7, 7}, {8, 3, 3, 3}, {{"auto_pad", std::string("VALID")}}),
            (Shape{1, 8, 5, 5}));
  EXPECT_EQ(conv_shape(
                {1, 3, 7, 8}, {8, 3, 3, 3},
                {{"auto_pad", std::string("SAME_UPPER")}, {"strides", std::vector<int64_t>{2, 3}}}),
            (Shape{1, 8, 4, 3}));
  EXPECT_EQ(conv_shape({2, 4, 9}, {8, 1, 3},
                       {{"group", int64_t(4)}, {"dilations", std::vector<int64_t>{4}}}),
            (Shape{2, 8, 1}));
}

TEST(NnConv, RejectsBadOperands) {
  Tensor x = pattern(DType::f32, {1, 4, 5, 5}, 0);
  Tensor w = pattern(DType::f32, {6, 2, 3, 3}, 0);
  EXPECT_NODE_ERROR(run1("Conv", {in(x), in(w)}), "channels");
  EXPECT_NODE_ERROR(run1("Conv", {in(x), in(w)}, {{"group", int64_t(4)}}), "group 4");
  EXPECT_NODE_ERROR(
      run1("Conv", {in(x), in(w), in(pattern(DType::f32, {4}, 0))}, {{"group", int64_t(2)}}),
      "bias");
  EXPECT_NODE_ERROR(run1("Conv", {in(x), in(w)},
                         {{"group", int64_t(2)}, {"kernel_shape", std::vector<int64_t>{2, 2}}}),
                    "kernel_shape");
  EXPECT_NODE_ERROR(
      run1("Conv", {in(pattern(DType::f32, {1, 4, 2, 2}, 0)), in(w)}, {{"group", int64_t(2)}}),
      "does not fit");
  EXPECT_NODE_ERROR(
      run1("Conv", {in(x), in(w)}, {{"group", int64_t(2)}, {"auto_pad", std::string("SAME")}}),
      "auto_pad");
  EXPECT_NODE_ERROR(
      run1("Conv", {in(x), in(w)}, {{"group", int64_t(2)}, {"strides", std::vector<int64_t>{1}}}),
      "spatial dims");
  EXPECT_NODE_ERROR(
      run1("Conv",
           {in(pattern(DType::i32, {1, 4, 5, 5}, 0)), in(pattern(DType::i32, {6, 2, 3, 3}, 0))},
           {{"group", int64_t(2)}}),
      "float");
}

TEST(NnConvTranspose, StridedPaddedDilatedWithOutputPadding) {
  Tensor y = run1("ConvTranspose",
                  {in(pattern(DType::f64, {1, 2, 3, 2}, 17)),
                   in(pattern(DType::f64, {2, 2, 2, 3}, 18)), in(pattern(DType::f64, {2}, 19))},
                  {{"strides", std::vector<int64_t>{2, 3}},
                   {"pads", std::vector<int64_t>{1, 0, 0, 1}},
                   {"output_padding", std::vector<int64_t>{1, 0}},
                   {"dilations", std::vector<int64_t>{1, 2}}});
  expect_values(y, {1, 2, 6, 7}, kConvTransposeStrided);
}

TEST(NnConvTranspose, SameUpperAndOutputShape) {
  expect_values(
      run1("ConvTranspose",
           {in(pattern(DType::f64, {1, 1, 3}, 20)), in(pattern(DType::f64, {1, 2, 3}, 21))},
           {{"auto_pad", std::string("SAME_UPPER")}, {"strides", std::vector<int64_t>{2}}}),
      {1, 2, 6}, kConvTransposeSameUpper);
  // The ONNX test_convtranspose_output_shape case: output_shape fixes the size.
  auto types = infer(
      "ConvTranspose", {in(Tensor(DType::f32, {1, 1, 3, 3})), in(Tensor(DType::f32, {1, 2, 3, 3}))},
      {{"strides", std::vector<int64_t>{3, 2}}, {"output_shape", std::vector<int64_t>{10, 8}}});
  EXPECT_EQ(types.at(0).shape, (Shape{1, 2, 10, 8}));
}

// <Conv(x, W), y> == <x, ConvTranspose(y, W)>: the same W is [M, C/group, k...] for Conv and
// [C_in = M, C_out/group, k...] for ConvTranspose, so the two are adjoint linear maps.
TEST(NnConvTranspose, IsTheAdjointOfConv) {
  Attrs attrs{{"group", int64_t(2)},
              {"strides", std::vector<int64_t>{2, 1}},
              {"pads", std::vector<int64_t>{1, 0, 1, 1}},
              {"dilations", std::vector<int64_t>{1, 2}}};
  Tensor x = pattern(DType::f64, {1, 4, 5, 6}, 22), w = pattern(DType::f64, {6, 2, 3, 2}, 23);
  Tensor conv = run1("Conv", {in(x), in(w)}, attrs);
  ASSERT_EQ(conv.shape(), (Shape{1, 6, 3, 5}));
  Tensor y = pattern(DType::f64, conv.shape(), 24);
  Tensor back = run1("ConvTranspose", {in(y), in(w)}, attrs);
  ASSERT_EQ(back.shape(), x.shape());
  double lhs = 0, rhs = 0;
  for (int64_t i = 0; i < y.numel(); ++i)
    lhs += conv.get_f64(i) * y.get_f64(i);
  for (int64_t i = 0; i < x.numel(); ++i)
    rhs += x.get_f64(i) * back.get_f64(i);
  EXPECT_NEAR(lhs, rhs, 1e-9 * std::abs(lhs));
  EXPECT_GT(std::abs(lhs), 1.0);
}

TEST(NnConvTranspose, RejectsBadOperands) {
  Tensor x = pattern(DType::f32, {1, 4, 3, 3}, 0);
  EXPECT_NODE_ERROR(run1("ConvTranspose", {in(x), in(pattern(DType::f32, {3, 2, 3, 3}, 0))}),
                    "input channels");
  EXPECT_NODE_ERROR(run1("ConvTranspose", {in(x), in(pattern(DType::f32, {4, 2, 3, 3}, 0)),
                                           in(pattern(DType::f32, {3}, 0))}),
                    "bias");
  EXPECT_NODE_ERROR(run1("ConvTranspose", {in(x), in(pattern(DType::f32, {4, 2, 3, 3}, 0))},
                         {{"pads", std::vector<int64_t>{3, 3, 3, 3}}}),
                    "would be");
}

} // namespace
} // namespace vtc::nn_test
