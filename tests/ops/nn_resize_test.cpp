// Resize: every mode (nearest with each nearest_mode, linear, cubic with its coefficient and
// exclude_outside), every coordinate transformation, scales and sizes inputs, axes and
// keep_aspect_ratio_policy, against ONNX's reference implementation (onnx.reference 1.23,
// opset 19, float64 input from the harness pattern; where the reference works in float32 the
// tolerance says so), plus integer rounding, the opset-10 form, shape inference and errors.
#include "nn_test_util.h"

namespace vtc::nn_test {
namespace {

// kNearestAsym_floor: shape [1, 1, 4, 10]
const std::vector<double> kNearestAsym_floor = {
    -1.6,  -1.6, -1.6,  -0.12, -0.12, 1.36, 1.36, 1.36, -1.2, -1.2, -1.6,  -1.6, -1.6, -0.12,
    -0.12, 1.36, 1.36,  1.36,  -1.2,  -1.2, 0.28, 0.28, 0.28, 1.76, 1.76,  -0.8, -0.8, -0.8,
    0.68,  0.68, -1.88, -1.88, -1.88, -0.4, -0.4, 1.08, 1.08, 1.08, -1.48, -1.48};
// kNearestAsym_ceil: shape [1, 1, 4, 10]
const std::vector<double> kNearestAsym_ceil = {
    -1.6,  -0.12, -0.12, 1.36, 1.36, 1.36, -1.2,  -1.2, -1.2,  -1.2,  0.28,  1.76, 1.76,  -0.8,
    -0.8,  -0.8,  0.68,  0.68, 0.68, 0.68, -1.88, -0.4, -0.4,  1.08,  1.08,  1.08, -1.48, -1.48,
    -1.48, -1.48, -1.88, -0.4, -0.4, 1.08, 1.08,  1.08, -1.48, -1.48, -1.48, -1.48};
// kNearestAsym_round_prefer_floor: shape [1, 1, 4, 10]
const std::vector<double> kNearestAsym_round_prefer_floor = {
    -1.6, -1.6, -0.12, -0.12, 1.36, 1.36, 1.36, -1.2, -1.2, -1.2,  0.28,  0.28, 1.76, 1.76,
    -0.8, -0.8, -0.8,  0.68,  0.68, 0.68, 0.28, 0.28, 1.76, 1.76,  -0.8,  -0.8, -0.8, 0.68,
    0.68, 0.68, -1.88, -1.88, -0.4, -0.4, 1.08, 1.08, 1.08, -1.48, -1.48, -1.48};
// kNearestAsym_round_prefer_ceil: shape [1, 1, 4, 10]
const std::vector<double> kNearestAsym_round_prefer_ceil = {
    -1.6, -1.6, -0.12, -0.12, 1.36, 1.36, 1.36, -1.2, -1.2, -1.2,  0.28,  0.28, 1.76, 1.76,
    -0.8, -0.8, -0.8,  0.68,  0.68, 0.68, 0.28, 0.28, 1.76, 1.76,  -0.8,  -0.8, -0.8, 0.68,
    0.68, 0.68, -1.88, -1.88, -0.4, -0.4, 1.08, 1.08, 1.08, -1.48, -1.48, -1.48};
// kNearestHalfPixelDown: shape [1, 1, 1, 2]
const std::vector<double> kNearestHalfPixelDown = {-1.6, 1.36};
// kNearestAlignCornersSizes: shape [1, 1, 5, 7]
const std::vector<double> kNearestAlignCornersSizes = {
    -1.6, -0.12, -0.12, 1.36,  1.36,  -1.2, -1.2, 0.28, 1.76, 1.76,  -0.8, -0.8,
    0.68, 0.68,  0.28,  1.76,  1.76,  -0.8, -0.8, 0.68, 0.68, -1.88, -0.4, -0.4,
    1.08, 1.08,  -1.48, -1.48, -1.88, -0.4, -0.4, 1.08, 1.08, -1.48, -1.48};
// kLinearHalfPixelUp: shape [1, 1, 6, 6]
const std::vector<double> kLinearHalfPixelUp = {
    -1.6,  -0.86, 0.126666666667,  1.11333333333,     0.08,   -1.2,
    -1.13, -0.39, 0.428333333333,  0.741666666667,    0.045,  -0.73,
    -0.19, 0.55,  1.03166666667,   -0.00166666666667, -0.025, 0.21,
    -0.26, 0.48,  0.961666666667,  -0.0716666666667,  -0.095, 0.14,
    -1.34, -0.6,  0.218333333333,  0.531666666667,    -0.165, -0.94,
    -1.88, -1.14, -0.153333333333, 0.833333333333,    -0.2,   -1.48};
// kLinearPytorchHalfPixel: shape [1, 1, 1, 3]
const std::vector<double> kLinearPytorchHalfPixel = {-1.35333333333, 0.62, -0.773333333333};
// kLinearAlignCornersDown: shape [1, 1, 1, 2]
const std::vector<double> kLinearAlignCornersDown = {-1.6, 0.99428608797};
// kCubicHalfPixelUp: shape [1, 1, 6, 8]
const std::vector<double> kCubicHalfPixelUp = {
    -1.954375,        -1.5299798584,   -0.854627075195, 0.374641723633,  1.52293395996,
    1.11230895996,    -0.654733276367, -1.7132208252,   -1.25421875,     -0.777671508789,
    0.00198547363281, 0.68655456543,   0.919287719727,  0.508662719727,  -0.34282043457,
    -0.856608276367,  -0.07421875,     0.48998840332,   1.44496520996,   1.21397521973,
    -0.0922100830078, -0.502835083008, 0.184600219727,  0.586371459961,  -0.1671875,
    0.39701965332,    1.35199645996,   1.12100646973,   -0.185178833008, -0.595803833008,
    0.0916314697266,  0.493402709961,  -1.480625,       -1.00407775879,  -0.224420776367,
    0.46014831543,    0.692881469727,  0.282256469727,  -0.56922668457,  -1.08301452637,
    -2.26390625,      -1.8395111084,   -1.1641583252,   0.0651104736328, 1.21340270996,
    0.802777709961,   -0.964264526367, -2.0227520752};
// kCubicExcludeOutside: shape [1, 1, 4, 3]
const std::vector<double> kCubicExcludeOutside = {
    -1.54830842655,   0.893003731343, -0.964402555923, -0.0871444440978,
    0.618606173994,   0.086153393834, -0.211297858504, 0.494452759588,
    -0.0380000205719, -1.84293529223, 0.598376865672,  -1.25902942159};
// kCubicAsymmetric: shape [1, 1, 4, 5]
const std::vector<double> kCubicAsymmetric = {-1.6,           -0.522560417652, 1.16880051374,
                                              0.526560387611, -1.44576031685,  -0.0718513560295,
                                              1.31442386701,  0.380681111996,  -0.261558822734,
                                              0.391224242947, -0.191110560894, 1.19516461949,
                                              0.261421942674, -0.380817992057, 0.271964995432,
                                              -1.88,          -0.802560517788, 0.888800597191,
                                              0.246560471058, -1.72576041698};
// kTfCropAndResize: shape [1, 1, 4, 5]
const std::vector<double> kTfCropAndResize = {
    -0.403999971151,  0.615000004143, 0.502799981844,  -0.235600056106,  7,
    0.473333347241,   1.25666660369,  -0.410933425828, 0.217533393123,   7,
    0.00400003910065, 0.888333313614, -0.112666741192, -0.0699999788304, 7,
    -1.00399994373,   0.116000049621, 0.670400002038,  -0.6538000925,    7};
// kHalfPixelSymmetric: shape [1, 1, 5, 2]
const std::vector<double> kHalfPixelSymmetric = {
    -0.437142875146, 0.811428540288, 0.336974802932, 0.278487362698,  1.44285712485,
    -0.482857124854, 0.172268925199, 0.113781484965, -0.717142875146, 0.531428540288};
// kAxesScales: shape [1, 1, 6, 2]
const std::vector<double> kAxesScales = {-0.86, 0.08,   -0.39, 0.045,  0.55,  -0.025,
                                         0.48,  -0.095, -0.6,  -0.165, -1.14, -0.2};
// kNotLargerSizes: shape [1, 1, 4, 5]
const std::vector<double> kNotLargerSizes = {-1.6, -0.12, -0.12, 1.36, -1.2, 0.28, 1.76,
                                             1.76, -0.8,  0.68,  0.28, 1.76, 1.76, -0.8,
                                             0.68, -1.88, -0.4,  -0.4, 1.08, -1.48};
// kNotSmallerSizes: shape [1, 1, 5, 7]
const std::vector<double> kNotSmallerSizes = {
    -1.6, -1.6, -0.12, 1.36,  1.36,  -1.2,  -1.2, -1.6, -1.6, -0.12, 1.36,  1.36,
    -1.2, -1.2, 0.28,  0.28,  1.76,  -0.8,  -0.8, 0.68, 0.68, -1.88, -1.88, -0.4,
    1.08, 1.08, -1.48, -1.48, -1.88, -1.88, -0.4, 1.08, 1.08, -1.48, -1.48};

Tensor input() {
  return pattern(DType::f64, {1, 1, 3, 4}, 60);
}
Tensor scales(std::vector<float> s) {
  return f32({int64_t(s.size())}, s);
}
Tensor sizes(std::vector<int64_t> s) {
  return i64({int64_t(s.size())}, s);
}

// Resize with scales (input 2) or sizes (input 3) and an empty roi.
Tensor resize_scales(std::vector<float> s, Attrs attrs) {
  return run1("Resize", {in(input()), none(), cst(scales(std::move(s)))}, attrs);
}
Tensor resize_sizes(std::vector<int64_t> s, Attrs attrs) {
  return run1("Resize", {in(input()), none(), none(), cst(sizes(std::move(s)))}, attrs);
}

TEST(NnResize, NearestModes) {
  Attrs attrs{{"mode", std::string("nearest")},
              {"coordinate_transformation_mode", std::string("asymmetric")}};
  std::vector<std::pair<const char*, const std::vector<double>*>> modes = {
      {"floor", &kNearestAsym_floor},
      {"ceil", &kNearestAsym_ceil},
      {"round_prefer_floor", &kNearestAsym_round_prefer_floor},
      {"round_prefer_ceil", &kNearestAsym_round_prefer_ceil}};
  for (const auto& [mode, expected] : modes) {
    SCOPED_TRACE(mode);
    attrs["nearest_mode"] = std::string(mode);
    expect_values(resize_scales({1, 1, 1.5f, 2.5f}, attrs), {1, 1, 4, 10}, *expected);
  }
  expect_values(resize_scales({1, 1, 0.6f, 0.5f}, {{"mode", std::string("nearest")}}), {1, 1, 1, 2},
                kNearestHalfPixelDown);
  expect_values(
      resize_sizes({1, 1, 5, 7}, {{"mode", std::string("nearest")},
                                  {"coordinate_transformation_mode", std::string("align_corners")},
                                  {"nearest_mode", std::string("round_prefer_ceil")}}),
      {1, 1, 5, 7}, kNearestAlignCornersSizes);
}

TEST(NnResize, LinearTransforms) {
  expect_values(resize_scales({1, 1, 2, 1.5f}, {{"mode", std::string("linear")}}), {1, 1, 6, 6},
                kLinearHalfPixelUp);
  expect_values(resize_sizes({1, 1, 1, 3}, {{"mode", std::string("linear")},
                                            {"coordinate_transformation_mode",
                                             std::string("pytorch_half_pixel")}}),
                {1, 1, 1, 3}, kLinearPytorchHalfPixel);
  // align_corners divides by (scale * length - 1), not (output length - 1); 0.6f is not 0.6.
  expect_values(resize_scales({1, 1, 0.6f, 0.6f},
                              {{"mode", std::string("linear")},
                               {"coordinate_transformation_mode", std::string("align_corners")}}),
                {1, 1, 1, 2}, kLinearAlignCornersDown, 1e-7);
  expect_values(resize_scales({1, 1, 1.7f, 0.7f}, {{"mode", std::string("linear")},
                                                   {"coordinate_transformation_mode",
                                                    std::string("half_pixel_symmetric")}}),
                {1, 1, 5, 2}, kHalfPixelSymmetric, 1e-6);
}

// The reference computes cubic coefficients partly in float32: hence the 1e-6 tolerance.
TEST(NnResize, Cubic) {
  expect_values(resize_scales({1, 1, 2, 2}, {{"mode", std::string("cubic")}}), {1, 1, 6, 8},
                kCubicHalfPixelUp, 1e-6);
  expect_values(resize_sizes({1, 1, 4, 3}, {{"mode", std::string("cubic")},
                                            {"cubic_coeff_a", -0.5f},
                                            {"exclude_outside", int64_t(1)}}),
                {1, 1, 4, 3}, kCubicExcludeOutside, 1e-6);
  expect_values(resize_scales({1, 1, 1.5f, 1.25f},
                              {{"mode", std::string("cubic")},
                               {"coordinate_transformation_mode", std::string("asymmetric")}}),
                {1, 1, 4, 5}, kCubicAsymmetric, 1e-6);
}

TEST(NnResize, TfCropAndResizeExtrapolates) {
  Tensor y = run1("Resize",
                  {in(input()), in(f32({8}, {0, 0, 0.2f, 0.1f, 1, 1, 0.9f, 1.2f})), none(),
                   cst(sizes({1, 1, 4, 5}))},
                  {{"mode", std::string("linear")},
                   {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                   {"extrapolation_value", 7.0f}});
  expect_values(y, {1, 1, 4, 5}, kTfCropAndResize, 1e-6);
}

TEST(NnResize, AxesAndAspectRatioPolicies) {
  expect_values(run1("Resize", {in(input()), none(), cst(scales({2, 0.5f}))},
                     {{"mode", std::string("linear")}, {"axes", std::vector<int64_t>{2, 3}}}),
                {1, 1, 6, 2}, kAxesScales);
  Attrs attrs{{"mode", std::string("nearest")},
              {"axes", std::vector<int64_t>{2, 3}},
              {"keep_aspect_ratio_policy", std::string("not_larger")}};
  expect_values(run1("Resize", {in(input()), none(), none(), cst(sizes({5, 5}))}, attrs),
                {1, 1, 4, 5}, kNotLargerSizes);
  attrs["keep_aspect_ratio_policy"] = std::string("not_smaller");
  attrs["axes"] = std::vector<int64_t>{-2, -1};
  expect_values(run1("Resize", {in(input()), none(), none(), cst(sizes({5, 5}))}, attrs),
                {1, 1, 5, 7}, kNotSmallerSizes);
}

TEST(NnResize, IntegersRoundHalfToEvenAndSaturate) {
  Tensor x(DType::u8, {1, 1, 2, 2});
  for (int i = 0; i < 4; ++i)
    x.set_i64(i, std::vector<int64_t>{0, 255, 10, 101}[size_t(i)]);
  Tensor y =
      run1("Resize", {in(x), none(), cst(scales({1, 1, 2, 2}))}, {{"mode", std::string("linear")}});
  EXPECT_EQ(y.dtype(), DType::u8);
  // From onnx.reference: 255 / 4 = 63.75 -> 64, and 10 / 4 = 2.5 -> 2 (half to even).
  expect_values(y, {1, 1, 4, 4},
                {0, 64, 191, 255, 2, 56, 163, 216, 8, 40, 106, 140, 10, 33, 78, 101});
}

TEST(NnResize, Opset10FormAndHalfPixelForNearestNeighbour) {
  // Two inputs (X, scales): asymmetric coordinates, floor rounding.
  Tensor x = f32({1, 3}, {1, 2, 3});
  expect_values(run1("Resize", {in(x), cst(scales({1, 2.5f}))}), {1, 7}, {1, 1, 1, 2, 2, 3, 3});
  // tf_half_pixel_for_nn: x_original = (x + 0.5) / scale = 0.75, 2.25 -> 1, 2.
  expect_values(run1("Resize", {in(x), none(), none(), cst(sizes({1, 2}))},
                     {{"coordinate_transformation_mode", std::string("tf_half_pixel_for_nn")}}),
                {1, 2}, {2, 3});
}

TEST(NnResize, IdentityScaleKeepsValues) {
  Tensor x = pattern(DType::f32, {2, 3, 4}, 61);
  for (const char* mode : {"nearest", "linear", "cubic"})
    EXPECT_TRUE(
        run1("Resize", {in(x), none(), cst(scales({1, 1, 1}))}, {{"mode", std::string(mode)}})
            .bitwise_equal(x))
        << mode;
}

TEST(NnResize, RejectsBadNodes) {
  Tensor x = input();
  EXPECT_NODE_ERROR(run1("Resize", {in(x), none(), cst(scales({1, 2}))}), "scales has 2");
  EXPECT_NODE_ERROR(
      run1("Resize", {in(x), none(), cst(scales({1, 1, 2, 2})), cst(sizes({1, 1, 6, 8}))}),
      "only one");
  EXPECT_NODE_ERROR(run1("Resize", {in(x), none(), cst(scales({1, 1, 0, 2}))}), "positive");
  EXPECT_NODE_ERROR(run1("Resize", {in(x), none(), cst(scales({1, 1, 2, 2}))},
                         {{"mode", std::string("bilinear")}}),
                    "mode");
  EXPECT_NODE_ERROR(run1("Resize", {in(x), none(), cst(scales({1, 1, 2, 2}))},
                         {{"nearest_mode", std::string("round")}}),
                    "nearest_mode");
  EXPECT_NODE_ERROR(run1("Resize", {in(x), none(), none(), cst(sizes({1, 1, 6, 8}))},
                         {{"keep_aspect_ratio_policy", std::string("fit")}}),
                    "keep_aspect_ratio_policy");
  EXPECT_THROW(run1("Resize", {in(x), none(), in(scales({1, 1, 2, 2}))}), NeedsConstantInput);
  EXPECT_THROW(run1("Resize", {in(x), none(), cst(scales({1, 1, 2, 2}))},
                    {{"mode", std::string("linear")}, {"antialias", int64_t(1)}}),
               Unsupported);
  EXPECT_NODE_ERROR(run1("Resize", {in(x), none(), none()}), "scales and sizes");
  EXPECT_NODE_ERROR(
      run1("Resize", {in(x), none(), cst(scales({2, 2}))}, {{"axes", std::vector<int64_t>{3, -1}}}),
      "twice");
  EXPECT_NODE_ERROR(
      run1("Resize", {in(Tensor(DType::f32, {1, 0})), none(), none(), cst(sizes({1, 2}))}),
      "empty dim 1");
}

} // namespace
} // namespace vtc::nn_test
