// Pooling (MaxPool with Indices, AveragePool, global pools, LRN), the normalisations
// (BatchNormalization, InstanceNormalization, LayerNormalization with its statistics outputs,
// GroupNormalization in both opset forms) and Dropout: results against ONNX's reference
// implementation (onnx.reference 1.23, float64 inputs from the harness pattern), identities
// that must hold, shape inference and the errors bad nodes raise.
#include "nn_test_util.h"

namespace vtc::nn_test {
namespace {

// kMaxPoolCeil: shape [1, 2, 3, 3]
const std::vector<double> kMaxPoolCeil = {1.96, 1.96, 0.88, 1.96, 1.96, 1.68, 1.4,  0.32, -0.76,
                                          1.92, 1.92, 0.84, 1.92, 1.92, 1.64, 1.36, 0.28, -0.8};
// kMaxPoolCeilIndices: shape [1, 2, 3, 3]
const std::vector<double> kMaxPoolCeilIndices = {8,  8,  10, 8,  8,  16, 24, 26, 28,
                                                 38, 38, 40, 38, 38, 46, 54, 56, 58};
// kMaxPoolColumnIndices: shape [1, 2, 2, 3]
const std::vector<double> kMaxPoolColumnIndices = {6, 11, 25, 7, 18, 22, 36, 41, 55, 37, 48, 52};
// kAvgPoolExcludePad: shape [1, 1, 3, 3]
const std::vector<double> kAvgPoolExcludePad = {
    -0.72, 0.153333333333, -0.32, -0.393333333333, 0.0311111111111, 0.00666666666667,
    0.27,  0.133333333333, -0.34};
// kAvgPoolIncludePad: shape [1, 1, 3, 3]
const std::vector<double> kAvgPoolIncludePad = {
    -0.32, 0.102222222222,  -0.142222222222, -0.262222222222, 0.0311111111111, 0.00444444444444,
    0.12,  0.0888888888889, -0.151111111111};
// kAvgPoolDilated: shape [1, 1, 4, 4]
const std::vector<double> kAvgPoolDilated = {0.69, 0.15, 0.62,  0.62, 0.01, -0.53, -0.06, -0.06,
                                             0.34, 0.81, -0.74, 1.28, 0.34, -0.2,  -0.74, 1.28};
// kLrn: shape [3, 3, 1, 2] (N = C: the reference loops channels over the batch dim)
const std::vector<double> kLrn = {
    -0.314463531499, 0.782005588269,  -1.01575252246, -0.0287519032055, 0.968047000619,
    -0.836777131959, 0.275186543645,  1.25334559874,  -0.491610222064,  0.516016155101,
    -1.23411327057,  -0.244310615862, 0.863605613746, -0.940877249999,  0.0574751690546,
    1.04100321156,   -0.754091065805, 0.341183324978};
// kBatchNorm: shape [2, 3, 2, 2]
const std::vector<double> kBatchNorm = {
    3.05921491782,  4.13903395701,  2.2712388622,   3.35105790139,  1.85946689719,   -0.68493005881,
    -3.22932701481, 1.17179204422,  0.648334291513, 0.495161104868, 0.760109319605,  0.60693613296,
    4.22658685208,  2.35879175727,  3.43861079646,  1.57081570164,  -0.891232514703, -3.43562947071,
    0.965489588327, -1.57890736768, 0.482741657303, 0.747689872039, 0.594516685395,  0.44134349875};
// kInstanceNorm: shape [2, 3, 4]
const std::vector<double> kInstanceNorm = {
    0.899585540704,  1.34665253949,   0.573347460506,  1.0204144593,    -0.365656454298,
    -4.26679161108,  -2.01144784857,  0.24389591395,   0.0526127408457, -1.22472154141,
    0.984721541413,  -0.292612740846, 1.15637283682,   0.535737698237,  0.894542387728,
    1.25334707722,   -3.44389591395,  -1.18855215143,  1.06679161108,   -2.8343435457,
    -0.681065248046, 1.09217800504,   0.0670217493488, -0.958134506341};
// kLayerNorm: shape [2, 3, 4]
const std::vector<double> kLayerNorm = {
    -2.30251007092,  -1.13244984221, 0.499535261355,   -1.32596956416, -2.41067857353,
    -1.16552122766,  0.662146189126, -1.52236822509,   -2.54403863691, -1.10319897781,
    0.799565556133,  -1.75601696639, -0.372567049196,  1.0410126359,   1.1770390765,
    -3.65508919587,  -1.17583773258, -0.0158314371962, -1.18157398091, -1.23593678895,
    -0.931950638785, 1.72147492453,  1.14071546678,    0.308681471729};
// kLayerNormMean: shape [2, 1, 1]
const std::vector<double> kLayerNormMean = {-0.00333333333333, 0.25};
// kLayerNormInvStd: shape [2, 1, 1]
const std::vector<double> kLayerNormInvStd = {0.895434624289, 0.864847850323};
// kGroupNormPerChannel: shape [2, 4, 3]
const std::vector<double> kGroupNormPerChannel = {
    0.614453635216,  0.181548286676,  -0.251357040405, 1.24792654991,  2.59474315643,
    0.265114269257,  -0.312622470856, -2.29897874832,  1.1368810463,   0.722485431582,
    0.777661995888,  0.682221450806,  -0.020006942749, 0.838958005905, 0.342368886918,
    3.27535179138,   0.603016395569,  2.14796026707,   -2.120027771,   1.31583202362,
    -0.670524452329, 0.772691135406,  0.677250585556,  0.732427153587};
// kGroupNormPerGroup: shape [2, 4, 3]
const std::vector<double> kGroupNormPerGroup = {
    0.862073251128,  2.06458807397,   3.26710289682,  1.1870772573,   2.38959208015,
    0.309566440631,  -0.395340938734, -2.54722717075, 1.17495441977,  -0.976931812253,
    -3.12881804427,  0.593363546248,  2.6244638117,   0.23844997162,  1.61786422291,
    2.99727847421,   0.611264634132,  1.99067888543,  -2.35336354625, 1.36881804427,
    -0.783068187747, -2.93495441977,  0.787227170754, -1.36465906127};

TEST(NnMaxPool, CeilModePadsDilationsAndIndices) {
  std::vector<Tensor> r = run("MaxPool", {in(pattern(DType::f64, {1, 2, 5, 6}, 30))},
                              {{"kernel_shape", std::vector<int64_t>{3, 2}},
                               {"strides", std::vector<int64_t>{2, 2}},
                               {"pads", std::vector<int64_t>{1, 0, 1, 1}},
                               {"dilations", std::vector<int64_t>{1, 2}},
                               {"ceil_mode", int64_t(1)}},
                              {true, true});
  expect_values(r.at(0), {1, 2, 3, 3}, kMaxPoolCeil);
  EXPECT_EQ(r.at(1).dtype(), DType::i64);
  expect_values(r.at(1), {1, 2, 3, 3}, kMaxPoolCeilIndices);
}

TEST(NnMaxPool, ColumnMajorIndices) {
  std::vector<Tensor> r = run("MaxPool", {in(pattern(DType::f64, {1, 2, 5, 6}, 30))},
                              {{"kernel_shape", std::vector<int64_t>{2, 2}},
                               {"strides", std::vector<int64_t>{2, 2}},
                               {"storage_order", int64_t(1)}},
                              {true, true});
  expect_values(r.at(1), {1, 2, 2, 3}, kMaxPoolColumnIndices);
}

TEST(NnMaxPool, OmittedIndicesAndInt8) {
  std::vector<Tensor> r = run("MaxPool", {in(pattern(DType::f32, {1, 1, 4, 4}, 3))},
                              {{"kernel_shape", std::vector<int64_t>{2, 2}}}, {true, false});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].nbytes(), 0u);
  Tensor x(DType::u8, {1, 1, 2, 3});
  for (int i = 0; i < 6; ++i)
    x.set_i64(i, (i * 97) % 256);
  Tensor y =
      run1("MaxPool", {in(x)},
           {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}});
  EXPECT_EQ(y.dtype(), DType::u8);
  // x = [[0, 97, 194], [35, 132, 229]]
  expect_values(y, {1, 1, 2, 3}, {132, 229, 229, 132, 229, 229});
}

TEST(NnMaxPool, KernelOneIsTheIdentity) {
  Tensor x = pattern(DType::f32, {2, 3, 4, 5}, 5);
  Tensor y = run1("MaxPool", {in(x)}, {{"kernel_shape", std::vector<int64_t>{1, 1}}});
  EXPECT_TRUE(y.bitwise_equal(x));
}

TEST(NnAveragePool, CountIncludePadAndCeilMode) {
  Tensor x = pattern(DType::f64, {1, 1, 5, 5}, 31);
  Attrs attrs{{"kernel_shape", std::vector<int64_t>{3, 3}},
              {"strides", std::vector<int64_t>{2, 2}},
              {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  Attrs ceil = attrs, include = attrs;
  ceil["ceil_mode"] = int64_t(1);
  include["count_include_pad"] = int64_t(1);
  expect_values(run1("AveragePool", {in(x)}, ceil), {1, 1, 3, 3}, kAvgPoolExcludePad);
  expect_values(run1("AveragePool", {in(x)}, include), {1, 1, 3, 3}, kAvgPoolIncludePad);
  expect_values(run1("AveragePool", {in(x)},
                     {{"kernel_shape", std::vector<int64_t>{2, 2}},
                      {"dilations", std::vector<int64_t>{2, 2}},
                      {"pads", std::vector<int64_t>{0, 0, 1, 1}}}),
                {1, 1, 4, 4}, kAvgPoolDilated);
}

TEST(NnAveragePool, CeilModeDropsAWindowStartingInThePadding) {
  // in 5, kernel 2, stride 2, pads 1/1, ceil: windows start at -1, 1, 3; a fourth would start
  // at 5 >= 5 + 1 - 1, inside the end padding, and is dropped (as PyTorch does).
  Attrs attrs{{"kernel_shape", std::vector<int64_t>{2}},
              {"strides", std::vector<int64_t>{2}},
              {"pads", std::vector<int64_t>{1, 1}},
              {"ceil_mode", int64_t(1)}};
  EXPECT_EQ(infer("AveragePool", {in(Tensor(DType::f32, {1, 1, 5}))}, attrs).at(0).shape,
            (Shape{1, 1, 3}));
  Tensor y = run1("AveragePool", {in(f32({1, 1, 5}, {1, 2, 3, 4, 5}))}, attrs);
  expect_values(y, {1, 1, 3}, {1, 2.5, 4.5});
  // Without ceil_mode the last window is the one ending at 5.
  attrs["ceil_mode"] = int64_t(0);
  attrs["pads"] = std::vector<int64_t>{0, 1};
  expect_values(run1("AveragePool", {in(f32({1, 1, 5}, {1, 2, 3, 4, 5}))}, attrs), {1, 1, 3},
                {1.5, 3.5, 5});
}

TEST(NnGlobalPool, AverageAndMaxOverSpatialDims) {
  Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 6, -1, -2, -3, -4});
  expect_values(run1("GlobalAveragePool", {in(x)}), {1, 2, 1, 1}, {3, -2.5});
  expect_values(run1("GlobalMaxPool", {in(x)}), {1, 2, 1, 1}, {6, -1});
  Tensor x3 = pattern(DType::f64, {2, 3, 2, 3, 4}, 6);
  Tensor mean = run1("ReduceMean", {in(x3)}, {{"axes", std::vector<int64_t>{2, 3, 4}}});
  expect_values(run1("GlobalAveragePool", {in(x3)}), {2, 3, 1, 1, 1}, values(mean));
}

TEST(NnLrn, MatchesOnnxReference) {
  expect_values(run1("LRN", {in(pattern(DType::f64, {3, 3, 1, 2}, 32))},
                     {{"size", int64_t(3)}, {"alpha", 0.3f}, {"beta", 0.6f}, {"bias", 1.5f}}),
                {3, 3, 1, 2}, kLrn, 1e-7);
  // Even size 2: the window is channels c and c + 1 (floor((size-1)/2) before, ceil after).
  Tensor x = f64({1, 3, 1, 1}, {1, 2, 4});
  Tensor y =
      run1("LRN", {in(x)}, {{"size", int64_t(2)}, {"alpha", 2.0f}, {"beta", 1.0f}, {"bias", 1.0f}});
  expect_values(y, {1, 3, 1, 1}, {1.0 / (1 + 5), 2.0 / (1 + 20), 4.0 / (1 + 16)});
}

TEST(NnPool, RejectsBadNodes) {
  Tensor x = pattern(DType::f32, {1, 1, 4, 4}, 0);
  EXPECT_NODE_ERROR(run1("MaxPool", {in(x)}), "kernel_shape");
  EXPECT_NODE_ERROR(run1("MaxPool", {in(x)}, {{"kernel_shape", std::vector<int64_t>{2}}}),
                    "kernel");
  EXPECT_NODE_ERROR(
      run1("AveragePool", {in(x)},
           {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1}}}),
      "spatial dims");
  EXPECT_NODE_ERROR(run1("AveragePool", {in(pattern(DType::f32, {4, 4}, 0))},
                         {{"kernel_shape", std::vector<int64_t>{2, 2}}}),
                    "rank");
  EXPECT_NODE_ERROR(run1("AveragePool", {in(pattern(DType::i8, {1, 1, 4, 4}, 0))},
                         {{"kernel_shape", std::vector<int64_t>{2, 2}}}),
                    "float");
  EXPECT_NODE_ERROR(
      run1("MaxPool", {in(x)},
           {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{0, 1}}}),
      "positive");
  EXPECT_NODE_ERROR(run1("LRN", {in(x)}), "size");
}

TEST(NnBatchNorm, MatchesOnnxReference) {
  Tensor var = pattern(DType::f64, {3}, 37);
  for (int64_t i = 0; i < 3; ++i)
    var.set_f64(i, std::abs(var.get_f64(i)) + 0.5);
  Tensor y = run1("BatchNormalization",
                  {in(pattern(DType::f64, {2, 3, 2, 2}, 33)), in(pattern(DType::f64, {3}, 34)),
                   in(pattern(DType::f64, {3}, 35)), in(pattern(DType::f64, {3}, 36)), in(var)},
                  {{"epsilon", 0.01f}});
  expect_values(y, {2, 3, 2, 2}, kBatchNorm, 1e-7);
}

TEST(NnBatchNorm, SpatialZeroParametersAndTrainingModeRejected) {
  // Opset < 9 spatial=0: parameters shaped like one sample, [C, H].
  Tensor x = f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor scale = f32({2, 2}, {1, 2, 3, 4}), zero = f32({2, 2}, {0, 0, 0, 0});
  Tensor one = f32({2, 2}, {1, 1, 1, 1});
  Tensor y = run1("BatchNormalization", {in(x), in(scale), in(zero), in(zero), in(one)},
                  {{"epsilon", 0.0f}, {"spatial", int64_t(0)}});
  expect_values(y, {2, 2, 2}, {1, 4, 9, 16, 5, 12, 21, 32});
  Tensor c = f32({2}, {1, 1});
  EXPECT_THROW(run("BatchNormalization", {in(x), in(c), in(c), in(c), in(c)},
                   {{"training_mode", int64_t(1)}}, {true, true, true}),
               Unsupported);
  EXPECT_NODE_ERROR(
      run1("BatchNormalization", {in(x), in(f32({3}, {1, 1, 1})), in(c), in(c), in(c)}), "scale");
}

TEST(NnInstanceNorm, MatchesOnnxReference) {
  expect_values(run1("InstanceNormalization",
                     {in(pattern(DType::f64, {2, 3, 4}, 38)), in(pattern(DType::f64, {3}, 39)),
                      in(pattern(DType::f64, {3}, 40))},
                     {{"epsilon", 0.02f}}),
                {2, 3, 4}, kInstanceNorm, 1e-7);
  EXPECT_NODE_ERROR(run1("InstanceNormalization",
                         {in(pattern(DType::f32, {2, 3, 4}, 0)), in(pattern(DType::f32, {2}, 0)),
                          in(pattern(DType::f32, {3}, 0))}),
                    "scale");
}

TEST(NnLayerNorm, OutputsAndStatisticsMatchOnnxReference) {
  std::vector<Tensor> r = run(
      "LayerNormalization",
      {in(pattern(DType::f64, {2, 3, 4}, 38)), in(pattern(DType::f64, {3, 4}, 41)),
       in(pattern(DType::f64, {4}, 42))},
      {{"axis", int64_t(1)}, {"epsilon", 0.01f}, {"stash_type", int64_t(11)}}, {true, true, true});
  expect_values(r.at(0), {2, 3, 4}, kLayerNorm, 1e-7);
  expect_values(r.at(1), {2, 1, 1}, kLayerNormMean, 1e-7);
  expect_values(r.at(2), {2, 1, 1}, kLayerNormInvStd, 1e-7);
  EXPECT_EQ(r.at(1).dtype(), DType::f64);
}

TEST(NnLayerNorm, DefaultsNoBiasAndStashType) {
  // Last axis, epsilon 1e-5, no bias: rows [1, 3] -> [-1, 1] (up to epsilon).
  std::vector<Tensor> r =
      run("LayerNormalization", {in(f32({2, 2}, {1, 3, 10, 10})), in(f32({2}, {1, 2}))}, {},
          {true, false, true});
  expect_values(r.at(0), {2, 2}, {-1, 2, 0, 0}, 1e-4);
  EXPECT_EQ(r.at(1).nbytes(), 0u);
  EXPECT_EQ(r.at(2).dtype(), DType::f32);
  EXPECT_NEAR(r.at(2).get_f64(0), 1.0, 1e-4);
  EXPECT_NEAR(r.at(2).get_f64(1), 1 / std::sqrt(1e-5), 1e-1);
  EXPECT_NODE_ERROR(
      run1("LayerNormalization", {in(f32({2, 2}, {1, 2, 3, 4})), in(f32({3}, {1, 1, 1}))}),
      "Scale");
  EXPECT_NODE_ERROR(run1("LayerNormalization",
                         {in(f32({2, 2}, {1, 2, 3, 4})), in(f32({2}, {1, 1}))},
                         {{"axis", int64_t(2)}}),
                    "axis");
}

TEST(NnGroupNorm, PerChannelAndPerGroupScale) {
  Tensor x = pattern(DType::f64, {2, 4, 3}, 43);
  // The ONNX reference computes opset 21's per-channel form in float32: hence the tolerance.
  expect_values(run1("GroupNormalization",
                     {in(x), in(pattern(DType::f64, {4}, 44)), in(pattern(DType::f64, {4}, 45))},
                     {{"num_groups", int64_t(2)}, {"epsilon", 0.01f}}),
                {2, 4, 3}, kGroupNormPerChannel, 1e-6);
  expect_values(run1("GroupNormalization",
                     {in(x), in(pattern(DType::f64, {2}, 46)), in(pattern(DType::f64, {2}, 47))},
                     {{"num_groups", int64_t(2)}, {"epsilon", 0.01f}}),
                {2, 4, 3}, kGroupNormPerGroup, 1e-7);
  EXPECT_NODE_ERROR(run1("GroupNormalization",
                         {in(x), in(pattern(DType::f64, {4}, 0)), in(pattern(DType::f64, {4}, 0))},
                         {{"num_groups", int64_t(3)}}),
                    "num_groups");
}

TEST(NnDropout, IsTheIdentityWithAnAllTrueMask) {
  Tensor x = pattern(DType::f32, {3, 4}, 8);
  std::vector<Tensor> r = run("Dropout", {in(x), in(f32({}, {0.3f}))}, {}, {true, true});
  EXPECT_TRUE(r.at(0).bitwise_equal(x));
  EXPECT_EQ(r.at(1).dtype(), DType::boolean);
  expect_values(r.at(1), {3, 4}, std::vector<double>(12, 1.0));
  // Training with ratio 0 is still the identity; with a non-zero ratio it needs randomness.
  Tensor yes = Tensor::from<bool>({}, {true});
  EXPECT_TRUE(run1("Dropout", {in(x), in(f32({}, {0.0f})), in(yes)}).bitwise_equal(x));
  EXPECT_THROW(run1("Dropout", {in(x), in(f32({}, {0.5f})), in(yes)}), Unsupported);
}

} // namespace
} // namespace vtc::nn_test
