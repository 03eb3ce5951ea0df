// Tests of conv.h and pool.h against naive double-precision loops: grouped, depthwise and
// dense convolutions with strides, dilations and asymmetric pads, bias as an epilogue;
// max / average pooling with and without count_include_pad, ceil-mode output sizes, global
// pooling. Every kernel also runs on permuted (NHWC storage), split and computed accessors
// and must give the dense result bit for bit; so must constant weights packed once; the
// direct depthwise kernel must equal the implicit GEMM bit for bit, and so must its form
// over padded planes.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

#include "conv_cases.h"
#include "conv_reference.h"
#include "kernel_test_util.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/pool.h"
#include "pool_cases.h"

namespace vtc::kernels::test {
namespace {

template <typename T> void check_conv(std::mt19937& rng, const ConvCase& cc) {
  const std::string what = std::string(type_name<T>()) + " " + describe(cc);
  const Conv2dShape s = conv_shape(cc);
  const int64_t cin_g = s.c_in / s.groups;
  const Index<4> xs = {s.n, s.c_in, s.h, s.w}, ws = {s.c_out, cin_g, s.kh, s.kw};
  const Index<4> ys = {s.n, s.c_out, s.h_out, s.w_out};
  auto x = random_tensor<T, 4>(rng, xs);
  auto w = random_tensor<T, 4>(rng, ws);
  auto bias = random_tensor<T, 1>(rng, {s.c_out});
  std::vector<double> ref, scale;
  reference_conv(x, w, bias, s, ref, scale);
  const auto epi = bias_epilogue(bias.acc());
  Tensor<T, 4> dense(ys);
  conv2d(dense.acc(), x.acc(), w.acc(), s, epi);
  const double rtol = unit_roundoff<T>() + double(cin_g * s.kh * s.kw + 2) * std::ldexp(1.0, -23);
  expect_close(dense, ref, 1e-6, rtol, what, &scale);
  {
    ComputedAccessor<T, 4> cx(xs);
    SplitAccessor<T, 4, 2> sw(ws);
    PermutedAccessor<T, 4, true> py(ys, {0, 2, 3, 1}); // NHWC storage
    fill_from(cx, x);
    fill_from(sw, w);
    conv2d(py, cx, sw, s, epi);
    expect_bitwise(py, dense, what + ": computed input, split weight, NHWC output");
  }
  {
    PermutedAccessor<T, 4, true> px(xs, {0, 2, 3, 1});
    PermutedAccessor<T, 4, false> pw(ws, {3, 2, 1, 0});
    SplitAccessor<T, 4, 4> sy(ys);
    fill_from(px, x);
    fill_from(pw, w);
    conv2d(sy, px, pw, s, epi);
    expect_bitwise(sy, dense, what + ": NHWC input, permuted weight, split output");
  }
  {
    // Weights packed once per program, used twice: the same bits as packing on every call.
    ConstantPacks packs;
    for (int run = 0; run < 2; ++run) {
      Tensor<T, 4> packed(ys);
      conv2d(packed.acc(), x.acc(), w.acc(), s, epi, ConstantRef{&packs, &w});
      expect_bitwise(packed, dense,
                     what + ": constant weights packed once, run " + std::to_string(run));
    }
    // Packed once, through accessors that are not dense (the transposed kernel of small
    // planes reads and writes through them differently).
    ConstantPacks other_packs;
    PermutedAccessor<T, 4, true> px(xs, {0, 2, 3, 1});
    PermutedAccessor<T, 4, false> pw(ws, {3, 2, 1, 0});
    SplitAccessor<T, 4, 4> sy(ys);
    fill_from(px, x);
    fill_from(pw, w);
    conv2d(sy, px, pw, s, epi, ConstantRef{&other_packs, &pw});
    expect_bitwise(sy, dense, what + ": packed once, NHWC input, permuted weight, split output");
  }
  // The direct kernel of small planes (conv_direct.h) and its channel-vector form take any
  // shape: the same bits, with weights packed on the call and once per program, through
  // accessors that are not dense.
  auto check_direct = [&]<ConvKernel Kernel>(const std::string& name) {
    Tensor<T, 4> direct(ys);
    conv2d<Kernel>(direct.acc(), x.acc(), w.acc(), s, epi);
    expect_bitwise(direct, dense, what + ": " + name);
    ConstantPacks packs;
    PermutedAccessor<T, 4, true> px(xs, {0, 2, 3, 1});
    SplitAccessor<T, 4, 4> sy(ys);
    fill_from(px, x);
    conv2d<Kernel>(sy, px, w.acc(), s, epi, ConstantRef{&packs, &w});
    expect_bitwise(sy, dense, what + ": " + name + ", packed, NHWC input, split output");
  };
  check_direct.template operator()<ConvKernel::direct>("direct kernel");
  check_direct.template operator()<ConvKernel::direct_channels>("direct kernel by channels");
  if (padded_plane_fits(s)) {
    Tensor<T, 4> general(ys);
    conv2d<ConvKernel::implicit_gemm>(general.acc(), x.acc(), w.acc(), s, epi);
    expect_bitwise(general, dense, what + ": padded planes vs general implicit GEMM");
  }
  if (cin_g == 1) {
    Tensor<T, 4> direct(ys), gemm(ys);
    depthwise_conv2d(direct.acc(), x.acc(), w.acc(), s, epi);
    conv2d_implicit_gemm(gemm.acc(), x.acc(), w.acc(), s, epi);
    expect_bitwise(direct, gemm, what + ": direct depthwise vs implicit GEMM");
  }
  if (s.kh == 1 && s.kw == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_top == 0 &&
      s.pad_left == 0 && s.h_out == s.h && s.w_out == s.w) {
    // The pointwise kernel, dense and through an input without rows in memory.
    Tensor<T, 4> chosen(ys);
    conv2d<ConvKernel::pointwise>(chosen.acc(), x.acc(), w.acc(), s, epi);
    expect_bitwise(chosen, dense, what + ": pointwise kernel");
    PermutedAccessor<T, 4, true> px(xs, {0, 2, 3, 1});
    SplitAccessor<T, 4, 4> sy(ys);
    fill_from(px, x);
    conv2d<ConvKernel::pointwise>(sy, px, w.acc(), s, epi);
    expect_bitwise(sy, dense, what + ": pointwise kernel, NHWC input, split output");
  }
}

std::vector<ConvCase> conv_cases() {
  // n cin h w cout kh kw g sh sw dh dw pt pl pb pr
  return {
      {1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},     // dense 3x3 same
      {2, 5, 11, 9, 7, 3, 2, 1, 2, 1, 1, 1, 0, 1, 2, 0},    // odd, asymmetric pads
      {1, 8, 13, 13, 12, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1, 1},  // grouped, stride 2
      {1, 6, 10, 12, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1},   // depthwise
      {2, 4, 15, 14, 8, 5, 3, 4, 2, 3, 2, 1, 2, 1, 0, 3},   // depthwise x2, dilation
      {1, 16, 7, 7, 33, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},   // pointwise
      {1, 3, 20, 23, 5, 7, 7, 1, 2, 2, 1, 1, 3, 3, 3, 3},   // stem
      {1, 2, 6, 6, 4, 3, 3, 2, 1, 1, 2, 2, 2, 2, 2, 2},     // grouped dilated
      {1, 32, 9, 9, 32, 3, 3, 32, 2, 2, 1, 1, 1, 1, 1, 1},  // depthwise stride 2
      {1, 40, 12, 12, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, // K = 360 > one block
      {1, 3, 9, 70, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    // depthwise, wide rows
      {1, 2, 7, 150, 2, 3, 3, 2, 1, 2, 1, 2, 1, 1, 1, 1},   // depthwise, wide, stride 2
      {1, 24, 4, 4, 64, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1},   // 2x2 plane
      {1, 40, 2, 2, 72, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},   // 1x1 on 2x2: across channels
      {2, 16, 3, 3, 96, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1},   // 3x3 plane, groups, batch 2
      {1, 40, 4, 3, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},   // 12 positions
      {1, 300, 1, 1, 48, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},  // one position, K = 300
      {2, 16, 1, 4, 24, 1, 1, 2, 1, 1, 1, 1, 0, 0, 0, 0},   // one row of 4, groups, batch 2
      {2, 16, 1, 20, 24, 1, 1, 2, 1, 1, 1, 1, 0, 0, 0, 0},  // one row of 20, groups, batch 2
      {2, 8, 1, 6, 12, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1},    // 3x3 over one row of 6, groups
      {1, 5, 20, 24, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   // padded planes
      {2, 6, 18, 70, 10, 3, 5, 2, 1, 1, 1, 2, 1, 3, 0, 5},  // padded planes, groups, dilation
      {1, 40, 16, 16, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, // padded planes, K = 360
      {1, 3, 40, 44, 8, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1},   // padded planes, stride 2
      {1, 4, 36, 70, 6, 3, 5, 2, 2, 2, 2, 2, 2, 4, 2, 4},   // stride phases, dilation, groups
      {1, 64, 16, 16, 64, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1}, // 8x8 out: 16 B columns, 2 rows
      {1, 12, 9, 9, 20, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1},   // 5x5 out: zeros past column 25
      {1, 4, 12, 30, 8, 3, 3, 1, 1, 1, 1, 9, 1, 9, 1, 9},   // 16 columns span 32+ phase values
      {1, 5, 14, 14, 5, 3, 3, 5, 1, 1, 1, 1, 1, 1, 1, 1},   // depthwise rows: 8 + 6 of them
      {1, 4, 28, 28, 4, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1, 1},   // depthwise rows of 28, stride 2
      {1, 3, 35, 32, 3, 5, 5, 3, 1, 2, 1, 1, 2, 2, 0, 1},   // depthwise 5x5, rows of 32 -> 16
      {1, 3, 5, 7, 3, 3, 3, 3, 1, 1, 1, 1, 3, 1, 2, 6},     // depthwise, pads wider than taps
      {1, 2, 6, 10, 2, 1, 9, 2, 1, 1, 1, 1, 0, 4, 0, 4},    // depthwise, 9 filter columns
      {1, 9, 2, 2, 9, 3, 3, 9, 1, 1, 1, 1, 1, 1, 1, 1},     // depthwise by channels, 2 x 2
      {2, 7, 4, 4, 7, 3, 3, 7, 1, 1, 1, 1, 1, 1, 1, 1},     // by channels, 4 x 4, batch 2
      {1, 17, 8, 8, 17, 3, 3, 17, 2, 2, 1, 1, 1, 1, 1, 1},  // by channels, stride 2, 17 lanes
      {1, 6, 7, 7, 12, 5, 5, 6, 1, 1, 1, 1, 2, 2, 2, 2},    // by channels, 5x5, multiplier 2
      {1, 4, 9, 9, 4, 3, 3, 4, 2, 2, 2, 2, 1, 0, 2, 1},     // by channels, dilation, uneven pads
      {1, 3, 34, 50, 24, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1},  // stem by rows: 2 vectors a row
      {1, 96, 1, 196, 16, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, // pointwise rows: 4 tiles, 1 vector
      {2, 20, 1, 49, 33, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},  // batch 2, a partial panel, 48 + 1
      {1, 24, 1, 100, 16, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, // pointwise: 2 tiles + 4 by channels
      {1, 8, 1, 51, 12, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},   // pointwise: 48 + 3 by channels
      {1, 64, 1, 9, 10, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},   // pointwise: 9 positions, 10 channels
      {1, 7, 1, 40, 9, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},    // 40 = 2 vectors and 8 lanes
      {1, 3, 9, 100, 20, 3, 3, 1, 1, 2, 1, 1, 1, 1, 1, 1},  // stem by rows: 3 + 1 vectors
      {2, 2, 6, 40, 5, 2, 3, 1, 1, 1, 1, 1, 0, 2, 1, 0},    // by rows, batch 2, stride 1
      {1, 16, 9, 100, 20, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1}, // by rows at stride 2, K = 144
      {1, 48, 5, 98, 12, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1},  // by rows, stride 2, groups, K = 216
      {1, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, // direct: 6 blocks of 3 vectors
      {2, 12, 8, 8, 20, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1},   // direct, groups, batch, 10 of 16
      {1, 20, 7, 7, 13, 3, 3, 1, 1, 1, 2, 2, 2, 2, 2, 2},   // direct, dilation, one panel
      {1, 9, 9, 11, 24, 2, 3, 1, 1, 1, 1, 1, 0, 1, 1, 0},   // direct, 2x3, uneven pads
      {1, 16, 16, 16, 32, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1}, // by channels, groups of 16
      {2, 8, 5, 7, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    // by channels, rows of 7, batch 2
      {1, 12, 3, 3, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   // by channels, 3 x 3, 30 of 32 lanes
      {1, 6, 20, 19, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  // by channels, 19 = 16 + 3 a row
  };
}

// The kernel chosen at compile time (as generated code does, with the number of output
// positions) gives the bits of the kernel chosen by the shape at run time.
template <ConvKernel Kernel, int64_t Positions, int64_t Width = -1>
void check_static_choice(std::mt19937& rng, const ConvCase& cc) {
  const Conv2dShape s = conv_shape(cc);
  ASSERT_EQ(s.h_out * s.w_out, Positions) << describe(cc);
  const Index<4> xs = {s.n, s.c_in, s.h, s.w}, ws = {s.c_out, s.c_in / s.groups, s.kh, s.kw};
  const Index<4> ys = {s.n, s.c_out, s.h_out, s.w_out};
  auto x = random_tensor<float, 4>(rng, xs);
  auto w = random_tensor<float, 4>(rng, ws);
  for (bool packed : {false, true}) {
    ConstantPacks packs_a, packs_b;
    Tensor<float, 4> by_shape(ys), chosen(ys);
    conv2d(by_shape.acc(), x.acc(), w.acc(), s, NoEpilogue{},
           packed ? ConstantRef{&packs_a, &w} : ConstantRef{});
    conv2d<Kernel, Positions, Width>(chosen.acc(), x.acc(), w.acc(), s, NoEpilogue{},
                                     packed ? ConstantRef{&packs_b, &w} : ConstantRef{});
    expect_bitwise(chosen, by_shape,
                   describe(cc) + ": kernel chosen at compile time" + (packed ? ", packed" : ""));
  }
}

// The channel form's tile covers whole rows (or even segments of wide ones) and divides the
// rows of the plane; at stride 2 the form takes planes whose tile holds 8 positions or more.
TEST(ConvTest, ChannelFormTileFitsThePlane) {
  auto tile = [](int64_t h, int64_t w) {
    const ChannelTile t = channel_form_tile(h, w);
    return std::to_string(t.x) + "x" + std::to_string(t.y);
  };
  EXPECT_EQ(tile(14, 14), "14x1");
  EXPECT_EQ(tile(7, 7), "7x1");
  EXPECT_EQ(tile(8, 8), "8x2");
  EXPECT_EQ(tile(4, 4), "4x4");
  EXPECT_EQ(tile(3, 3), "3x3");
  EXPECT_EQ(tile(28, 28), "14x1");
  EXPECT_EQ(tile(29, 29), "15x1");
  EXPECT_EQ(tile(20, 19), "10x1");
  EXPECT_TRUE(
      direct_conv_channels_fit(conv_shape({1, 32, 16, 16, 64, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1})));
  EXPECT_FALSE(
      direct_conv_channels_fit(conv_shape({1, 128, 4, 4, 256, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1})));
  EXPECT_FALSE(
      direct_conv_channels_fit(conv_shape({1, 32, 16, 16, 64, 3, 3, 1, 3, 3, 1, 1, 1, 1, 1, 1})));
  EXPECT_FALSE(direct_conv_fits(conv_shape({1, 32, 16, 16, 64, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1})));
}

TEST(ConvTest, KernelChosenAtCompileTimeGivesTheSameBits) {
  std::mt19937 rng(24);
  check_static_choice<ConvKernel::implicit_gemm, 4>(
      rng, {1, 24, 4, 4, 64, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::implicit_gemm, 1>(
      rng, {2, 30, 1, 1, 20, 1, 1, 2, 1, 1, 1, 1, 0, 0, 0, 0});
  check_static_choice<ConvKernel::implicit_gemm, 16>(
      rng, {1, 8, 8, 8, 12, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::implicit_gemm, 49>(
      rng, {1, 16, 7, 7, 33, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0});
  // 49 columns end in a panel of one vector and one column (the column-tail tile), with K
  // over several k blocks, and from a 3x3 filter's phases.
  check_static_choice<ConvKernel::implicit_gemm, 49>(
      rng, {1, 400, 7, 7, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0});
  check_static_choice<ConvKernel::implicit_gemm, 49>(
      rng, {1, 20, 7, 7, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::implicit_gemm, 36>(
      rng, {1, 8, 6, 6, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::pointwise, 49>(
      rng, {1, 400, 7, 7, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0});
  check_static_choice<ConvKernel::pointwise, 1>(rng,
                                                {2, 30, 1, 1, 20, 1, 1, 2, 1, 1, 1, 1, 0, 0, 0, 0});
  check_static_choice<ConvKernel::pointwise, 200>(
      rng, {2, 12, 1, 200, 24, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0});
  check_static_choice<ConvKernel::padded_plane, 480>(
      rng, {1, 5, 20, 24, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::direct, 256>(
      rng, {1, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::direct, 49>(rng,
                                              {1, 20, 7, 7, 13, 3, 3, 1, 1, 1, 2, 2, 2, 2, 2, 2});
  check_static_choice<ConvKernel::direct_channels, 64>(
      rng, {2, 12, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::direct_channels, 9>(
      rng, {1, 24, 3, 3, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  // With the output width, the channel form's tile is fixed at compile time: 8 x 2, 3 x 3,
  // 6 x 2, 5 x 1 and rows of 19 in two segments of 10 (the second computing one past the row).
  check_static_choice<ConvKernel::direct_channels, 64, 8>(
      rng, {2, 12, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::direct_channels, 9, 3>(
      rng, {1, 24, 3, 3, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::direct_channels, 36, 6>(
      rng, {1, 8, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::direct_channels, 25, 5>(
      rng, {2, 16, 5, 5, 32, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::direct_channels, 20 * 19, 19>(
      rng, {1, 6, 20, 19, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  // A tile fixed for another plane (a 49-position plane read as rows of 5: 5 x 3 tiles over 7
  // rows): the last tile of each column computes two rows past the plane and stores one.
  check_static_choice<ConvKernel::direct_channels, 49, 5>(
      rng, {1, 16, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::rows, 13 * 25>(
      rng, {1, 3, 26, 50, 16, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::rows, 13 * 25, 50>(
      rng, {1, 3, 26, 50, 16, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::depthwise, 49>(rng,
                                                 {1, 6, 7, 7, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::depthwise_rows, 49, 7>(
      rng, {1, 6, 7, 7, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::depthwise_rows, 14 * 14, 28>(
      rng, {1, 4, 28, 28, 4, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::depthwise_rows, 49, 7>(
      rng, {1, 3, 7, 7, 6, 5, 5, 3, 1, 1, 1, 1, 2, 2, 2, 2});
  check_static_choice<ConvKernel::depthwise_planes, 49>(
      rng, {1, 6, 7, 7, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1});
  check_static_choice<ConvKernel::depthwise_planes, 28 * 28>(
      rng, {1, 3, 28, 28, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1});
}

// The writer generated code hands a convolution with a fused epilogue (bias, residual add,
// clip to [0, 6]): value() reads an operand at every index, so a store that computes several
// outputs at once must give each its own index. The target is dense, split into runs of 4
// (rows of more are not one run) or NHWC (no runs at all).
template <typename Target> struct BiasAddClipWriter {
  using value_type = float;
  static constexpr int rank = 4;
  static constexpr int64_t contig = 1;
  static constexpr bool has_ptr = false;
  static constexpr bool is_epilogue = true;
  Target out;
  DenseAccessor<float, 1> bias;
  DenseAccessor<float, 4> residual;

  template <typename V> auto value(const Index<4>& i, V v) const {
    const V x = v + bias.load(Index<1>{i[1]}) + residual.load(i);
    const V lo = x > V(0) ? x : V(0);
    return lo < V(6) ? lo : V(6);
  }
  Target target() const { return out; }
  template <typename V> void store(const Index<4>& i, V v) const { out.store(i, value(i, v)); }
  template <typename V> void run_store(const Index<4>& i, int64_t n, const V* src) const {
    for (int64_t j = 0; j < n; ++j) {
      const Index<4> k{i[0], i[1], i[2], i[3] + j};
      out.store(k, value(k, float(src[j])));
    }
  }
};

// Depthwise convolutions of the small planes of MobileNet's later stages (rows, channel
// vectors, staged planes) through a fused-epilogue writer give the bits of the same epilogue
// applied by the kernel to a dense output.
TEST(ConvTest, DepthwiseThroughEpilogueWriterGivesTheSameBits) {
  std::mt19937 rng(31);
  // n cin h w cout kh kw g sh sw dh dw pt pl pb pr
  const std::vector<ConvCase> cases = {
      {1, 5, 16, 16, 5, 3, 3, 5, 1, 1, 1, 1, 1, 1, 1, 1},  // rows of 16
      {1, 5, 32, 32, 5, 3, 3, 5, 2, 2, 1, 1, 1, 1, 1, 1},  // rows of 32 -> 16
      {1, 6, 8, 8, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1},    // rows of 8
      {1, 20, 4, 4, 20, 3, 3, 20, 1, 1, 1, 1, 1, 1, 1, 1}, // channels, 16 + 4 lanes
      {2, 18, 4, 4, 18, 3, 3, 18, 2, 2, 1, 1, 1, 1, 1, 1}, // channels, 4 x 4 -> 2 x 2
      {1, 33, 2, 2, 33, 3, 3, 33, 1, 1, 1, 1, 1, 1, 1, 1}, // channels, 2 x 2
      {1, 17, 3, 3, 17, 3, 3, 17, 1, 1, 1, 1, 1, 1, 1, 1}, // channels, 3 x 3
      {1, 7, 4, 4, 14, 3, 3, 7, 1, 1, 1, 1, 0, 2, 2, 0},   // channels, multiplier 2, pads
      {1, 17, 8, 8, 17, 3, 3, 17, 2, 2, 1, 1, 1, 1, 1, 1}, // channels, planes of 64
      {1, 3, 20, 40, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},  // staged planes, rows of 40
  };
  for (const auto& cc : cases) {
    const Conv2dShape s = conv_shape(cc);
    const Index<4> xs = {s.n, s.c_in, s.h, s.w}, ws = {s.c_out, 1, s.kh, s.kw};
    const Index<4> ys = {s.n, s.c_out, s.h_out, s.w_out};
    auto x = random_tensor<float, 4>(rng, xs);
    auto w = random_tensor<float, 4>(rng, ws, -3.0, 3.0);
    auto bias = random_tensor<float, 1>(rng, {s.c_out});
    auto residual = random_tensor<float, 4>(rng, ys, -2.0, 2.0);
    const BiasAddClipWriter<DenseAccessor<float, 4>> same{{}, bias.acc(), residual.acc()};
    auto epi = [&](const Index<4>& i, float v) { return same.value(i, v); };
    Tensor<float, 4> expected(ys);
    conv2d(expected.acc(), x.acc(), w.acc(), s, epi);
    for (bool packed : {false, true}) {
      ConstantPacks packs_a, packs_b, packs_c;
      auto ref = [&](ConstantPacks& p) { return packed ? ConstantRef{&p, &w} : ConstantRef{}; };
      const std::string what = describe(cc) + (packed ? ", packed" : "");
      Tensor<float, 4> dense(ys);
      conv2d(BiasAddClipWriter<DenseAccessor<float, 4>>{dense.acc(), bias.acc(), residual.acc()},
             x.acc(), w.acc(), s, NoEpilogue{}, ref(packs_a));
      expect_bitwise(dense, expected, what + ": epilogue writer, dense target");
      SplitAccessor<float, 4, 4> split(ys);
      conv2d(BiasAddClipWriter<SplitAccessor<float, 4, 4>>{split, bias.acc(), residual.acc()},
             x.acc(), w.acc(), s, NoEpilogue{}, ref(packs_b));
      expect_bitwise(split, expected, what + ": epilogue writer, target in runs of 4");
      PermutedAccessor<float, 4, true> nhwc(ys, {0, 2, 3, 1});
      conv2d(BiasAddClipWriter<PermutedAccessor<float, 4, true>>{nhwc, bias.acc(), residual.acc()},
             x.acc(), w.acc(), s, NoEpilogue{}, ref(packs_c));
      expect_bitwise(nhwc, expected, what + ": epilogue writer, NHWC target");
    }
  }
}

TEST(ConvTest, F32MatchesReferenceAndIsAccessorInvariant) {
  std::mt19937 rng(21);
  for (const auto& c : conv_cases())
    check_conv<float>(rng, c);
}
TEST(ConvTest, F16MatchesReferenceAndIsAccessorInvariant) {
  std::mt19937 rng(22);
  for (const auto& c : conv_cases())
    check_conv<half>(rng, c);
}
TEST(ConvTest, Bf16MatchesReferenceAndIsAccessorInvariant) {
  std::mt19937 rng(23);
  for (const auto& c : conv_cases())
    check_conv<bfloat16>(rng, c);
}

template <typename T> void check_pool(std::mt19937& rng, const PoolCase& pc) {
  const Pool2dShape s = pool_shape(pc);
  std::ostringstream o;
  o << type_name<T>() << " pool " << s.h << "x" << s.w << " k" << s.kh << "x" << s.kw << " s"
    << s.stride_h << "," << s.stride_w << " d" << s.dil_h << "," << s.dil_w << " out " << s.h_out
    << "x" << s.w_out << (pc.ceil_mode ? " ceil" : "");
  const std::string what = o.str();
  const Index<4> xs = {s.n, s.c, s.h, s.w}, ys = {s.n, s.c, s.h_out, s.w_out};
  auto x = random_tensor<T, 4>(rng, xs);
  for (int mode = 0; mode < 3; ++mode) { // max, avg, avg with count_include_pad
    std::vector<double> ref(static_cast<size_t>(volume<4>(ys)));
    for (int64_t f = 0; f < volume<4>(ys); ++f) {
      const Index<4> i = unflatten<4>(ys, f);
      double best = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t inside = 0, padded = 0;
      for (int64_t r = 0; r < s.kh; ++r)
        for (int64_t q = 0; q < s.kw; ++q) {
          const int64_t hy = i[2] * s.stride_h - s.pad_top + r * s.dil_h;
          const int64_t wx = i[3] * s.stride_w - s.pad_left + q * s.dil_w;
          padded += hy >= -s.pad_top && hy < s.h + s.pad_bottom && wx >= -s.pad_left &&
                    wx < s.w + s.pad_right;
          if (hy < 0 || hy >= s.h || wx < 0 || wx >= s.w) continue;
          const double v = x.at({i[0], i[1], hy, wx});
          best = std::max(best, v);
          sum += v;
          ++inside;
        }
      ref[size_t(f)] = mode == 0 ? best : sum / double(mode == 1 ? inside : padded);
    }
    auto run = [&](const auto& out, const auto& in) {
      if (mode == 0)
        max_pool2d(out, in, s);
      else
        avg_pool2d(out, in, s, mode == 2);
    };
    const std::string m = what + (mode == 0 ? " max" : mode == 1 ? " avg" : " avg+pad");
    Tensor<T, 4> dense(ys);
    run(dense.acc(), x.acc());
    expect_close(dense, ref, 1e-6, unit_roundoff<T>() + 1e-6, m);
    ComputedAccessor<T, 4> cx(xs);
    SplitAccessor<T, 4, 2> sy(ys);
    fill_from(cx, x);
    run(sy, cx);
    expect_bitwise(sy, dense, m + ": computed input, split output");
  }
}

TEST(PoolTest, MatchesReferenceAndIsAccessorInvariant) {
  std::mt19937 rng(31);
  // n c h w kh kw sh sw dh dw pt pl pb pr ceil
  const std::vector<PoolCase> cases = {
      {1, 2, 8, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, false},
      {2, 3, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false},
      {1, 2, 10, 7, 3, 2, 2, 2, 1, 1, 1, 0, 1, 1, true},
      {1, 1, 13, 13, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, false},
      {1, 4, 7, 9, 5, 4, 3, 2, 1, 1, 2, 1, 0, 2, true},
      {1, 3, 6, 6, 6, 6, 1, 1, 1, 1, 0, 0, 0, 0, false},
      // Narrow planes max-pooled from rows in registers (pool.h), and one just too wide.
      {1, 5, 29, 29, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true},
      {1, 4, 7, 7, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, false},
      {2, 3, 12, 32, 3, 5, 1, 2, 2, 1, 1, 2, 1, 2, false},
      {1, 2, 9, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false},
      // More channels than the row kernel interleaves at once: two images, ceil mode,
      // padding and dilation.
      {2, 20, 7, 7, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true},
      {1, 33, 14, 14, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true},
      {1, 17, 9, 6, 3, 2, 1, 2, 2, 1, 2, 1, 1, 1, false},
  };
  for (const auto& c : cases) {
    check_pool<float>(rng, c);
    check_pool<half>(rng, c);
    check_pool<bfloat16>(rng, c);
  }
}

TEST(PoolTest, MaxPoolPropagatesNaN) {
  std::vector<float> x = {1, std::nanf(""), 3, 4}, y(1);
  Pool2dShape s;
  s.h = s.w = 2;
  s.kh = s.kw = 2;
  max_pool2d(DenseAccessor<float, 4>(y.data(), {1, 1, 1, 1}),
             DenseAccessor<float, 4>(x.data(), {1, 1, 2, 2}), s);
  EXPECT_TRUE(std::isnan(y[0]));
}

// Signed zeros and NaNs of different payloads: the row kernel for narrow f32 planes (dense
// input) and the staged kernel (computed input) keep the same one of equal values and the same
// NaN.
TEST(PoolTest, MaxPoolPathsAgreeOnSignedZerosAndNaNs) {
  Pool2dShape s;
  s.c = 2;
  s.h = s.w = 5;
  s.kh = s.kw = 3;
  s.stride_h = s.stride_w = 2;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  s.h_out = s.w_out = 3;
  const Index<4> xs = {1, 2, 5, 5}, ys = {1, 2, 3, 3};
  Tensor<float, 4> x(xs);
  const float quiet = std::bit_cast<float>(0x7fc00001u), other = std::bit_cast<float>(0xffc00002u);
  for (int64_t f = 0; f < volume<4>(xs); ++f)
    x.data[size_t(f)] = f % 3 == 0 ? 0.0f : f % 3 == 1 ? -0.0f : -1.0f;
  x.data[7] = quiet;
  x.data[9] = other;
  x.data[33] = other;
  x.data[34] = quiet;
  Tensor<float, 4> dense(ys);
  max_pool2d(dense.acc(), x.acc(), s);
  ComputedAccessor<float, 4> cx(xs);
  Tensor<float, 4> staged(ys);
  fill_from(cx, x);
  max_pool2d(staged.acc(), cx, s);
  expect_bitwise(staged, dense, "max pool of signed zeros and NaNs, row and staged kernels");
}

TEST(PoolTest, GlobalPooling) {
  std::mt19937 rng(32);
  const Index<4> xs = {2, 3, 5, 7};
  auto x = random_tensor<float, 4>(rng, xs);
  Tensor<float, 4> avg({2, 3, 1, 1}), mx({2, 3, 1, 1});
  global_avg_pool2d(avg.acc(), x.acc(), 2, 3, 5, 7);
  global_max_pool2d(mx.acc(), x.acc(), 2, 3, 5, 7);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c) {
      double s = 0, m = -1e30;
      for (int64_t h = 0; h < 5; ++h)
        for (int64_t w = 0; w < 7; ++w) {
          s += x.at({n, c, h, w});
          m = std::max(m, x.at({n, c, h, w}));
        }
      EXPECT_NEAR(avg.at({n, c, 0, 0}), s / 35, 1e-6);
      EXPECT_EQ(mx.at({n, c, 0, 0}), m);
    }
  ComputedAccessor<float, 4> cx(xs);
  fill_from(cx, x);
  Tensor<float, 4> avg2({2, 3, 1, 1});
  global_avg_pool2d(avg2.acc(), cx, 2, 3, 5, 7);
  expect_bitwise(avg2, avg, "global average pool through a computed accessor");
}

// Many small planes (reduce.h sums sixteen at a time, where they lie when they lie one after
// another): the bits of the staged planes of a computed accessor, and the plain mean.
TEST(PoolTest, GlobalAveragePoolOfManySmallPlanes) {
  std::mt19937 rng(33);
  const Index<4> xs = {1, 70, 2, 3};
  auto x = random_tensor<float, 4>(rng, xs);
  Tensor<float, 4> avg({1, 70, 1, 1}), staged({1, 70, 1, 1});
  global_avg_pool2d(avg.acc(), x.acc(), 1, 70, 2, 3);
  ComputedAccessor<float, 4> cx(xs);
  fill_from(cx, x);
  global_avg_pool2d(staged.acc(), cx, 1, 70, 2, 3);
  expect_bitwise(staged, avg, "global average pool of 70 planes 2x3");
  for (int64_t c = 0; c < 70; ++c) {
    double s = 0;
    for (int64_t f = 0; f < 6; ++f)
      s += x.at({0, c, f / 3, f % 3});
    EXPECT_NEAR(avg.at({0, c, 0, 0}), s / 6, 1e-6) << "channel " << c;
  }
}

// The mean of a plane in the fixed lane order of vmath.h, written out: lane l sums elements
// l, l + 16, ... in turn from +0, the lanes meet in the tree (l, l + w) for w = 8, 4, 2, 1.
float fixed_order_mean(const std::vector<float>& v) {
  float acc[16] = {};
  for (size_t j = 0; j < v.size(); ++j)
    acc[j % 16] = acc[j % 16] + v[j];
  for (int w = 8; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l)
      acc[l] = acc[l] + acc[l + w];
  return acc[0] / float(v.size());
}

TEST(PoolTest, GlobalAveragePoolKeepsTheLaneOrderForEveryPlaneSize) {
  std::mt19937 rng(33);
  // Images and channels: planes one at a time, and in blocks of 16 (one image or two).
  for (const auto& [nn, cc] : std::vector<std::pair<int64_t, int64_t>>{{2, 5}, {1, 21}, {2, 21}})
    for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {2, 2}, {1, 7}, {3, 5}, {4, 4}, {7, 7}, {5, 7}, {16, 16}, {9, 13}}) {
      const Index<4> xs = {nn, cc, h, w};
      auto x = random_tensor<float, 4>(rng, xs);
      x.data[size_t(x.acc_offset({0, 1, 0, 0}))] = -0.0f; // a lone -0 sums to +0
      x.data[size_t(x.acc_offset({nn - 1, 2, h - 1, w - 1}))] =
          std::numeric_limits<float>::infinity();
      Tensor<float, 4> dense({nn, cc, 1, 1}), computed({nn, cc, 1, 1});
      global_avg_pool2d(dense.acc(), x.acc(), nn, cc, h, w);
      ComputedAccessor<float, 4> cx(xs);
      fill_from(cx, x);
      global_avg_pool2d(computed.acc(), cx, nn, cc, h, w);
      const std::string what = std::to_string(nn) + " x " + std::to_string(cc) + " planes " +
                               std::to_string(h) + " x " + std::to_string(w);
      expect_bitwise(computed, dense, what + ": staged planes vs planes in memory");
      for (int64_t n = 0; n < nn; ++n)
        for (int64_t c = 0; c < cc; ++c) {
          std::vector<float> plane;
          for (int64_t y = 0; y < h; ++y)
            for (int64_t xx = 0; xx < w; ++xx)
              plane.push_back(x.data[size_t(x.acc_offset({n, c, y, xx}))]);
          const float want = fixed_order_mean(plane), got = dense.data[size_t(n * cc + c)];
          EXPECT_EQ(std::memcmp(&want, &got, sizeof(float)), 0)
              << what << " plane (" << n << ", " << c << "): " << got << " against " << want;
        }
    }
}

} // namespace
} // namespace vtc::kernels::test
