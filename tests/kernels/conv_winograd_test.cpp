// Tests of the Winograd convolution (conv_winograd.h): against a naive double-precision loop
// within the error its transforms allow, on odd and even planes, one and two images,
// symmetric, asymmetric and no padding, and every tile winograd_tile() gives; bitwise the same
// through accessors that are not dense and with its filters transformed once per program; and
// the shape rule and tile rule themselves.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "conv_cases.h"
#include "conv_reference.h"
#include "kernel_test_util.h"
#include "kernels/cpu/conv.h"

namespace vtc::kernels::test {
namespace {

// The convolution through conv2d_winograd on the tile the shape rule gives.
template <WinogradTile Tile, typename OutA, typename InA, typename WA, typename Epi>
void run_winograd(const OutA& out, const InA& in, const WA& w, const Conv2dShape& s, const Epi& epi,
                  ConstantRef wref = {}) {
  conv2d_winograd<Tile.x, Tile.rows, Tile.panels>(out, in, w, s, epi, wref);
}

template <WinogradTile Tile> void check_winograd(std::mt19937& rng, const ConvCase& cc) {
  const std::string what = describe(cc);
  const Conv2dShape s = conv_shape(cc);
  ASSERT_TRUE(winograd_conv_fits(s)) << what;
  const WinogradTile chosen = winograd_tile(s.h_out, s.w_out, s.c_out);
  ASSERT_EQ(chosen.x, Tile.x) << what;
  ASSERT_EQ(chosen.rows, Tile.rows) << what;
  ASSERT_EQ(chosen.panels, Tile.panels) << what;
  const Index<4> xs = {s.n, s.c_in, s.h, s.w}, ws = {s.c_out, s.c_in, 3, 3};
  const Index<4> ys = {s.n, s.c_out, s.h_out, s.w_out};
  auto x = random_tensor<float, 4>(rng, xs);
  auto w = random_tensor<float, 4>(rng, ws);
  auto bias = random_tensor<float, 1>(rng, {s.c_out});
  std::vector<double> ref, scale;
  reference_conv(x, w, bias, s, ref, scale);
  const auto epi = bias_epilogue(bias.acc());
  Tensor<float, 4> dense(ys);
  run_winograd<Tile>(dense.acc(), x.acc(), w.acc(), s, epi);
  // The transforms add and halve: each product's terms pass through a few more roundings
  // than the direct chain's, each of a magnitude within a small multiple of the products'.
  const double rtol = double(s.c_in * 9 + 16) * std::ldexp(1.0, -23);
  expect_close(dense, ref, 1e-6, rtol, what, &scale);
  {
    ComputedAccessor<float, 4> cx(xs);
    SplitAccessor<float, 4, 2> sw(ws);
    PermutedAccessor<float, 4, true> py(ys, {0, 2, 3, 1}); // NHWC storage
    fill_from(cx, x);
    fill_from(sw, w);
    run_winograd<Tile>(py, cx, sw, s, epi);
    expect_bitwise(py, dense, what + ": computed input, split weight, NHWC output");
  }
  ConstantPacks packs;
  for (int run = 0; run < 2; ++run) {
    PermutedAccessor<float, 4, true> px(xs, {0, 2, 3, 1});
    SplitAccessor<float, 4, 4> sy(ys);
    fill_from(px, x);
    run_winograd<Tile>(sy, px, w.acc(), s, epi, ConstantRef{&packs, &w});
    expect_bitwise(sy, dense,
                   what + ": filters transformed once, NHWC input, split output, run " +
                       std::to_string(run));
  }
}

// {n, c_in, h, w, c_out, kh, kw, groups, sh, sw, dh, dw, pt, pl, pb, pr}
constexpr ConvCase kSqueezeFire{1, 32, 14, 14, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
constexpr ConvCase kSevenWide{1, 48, 7, 7, 192, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
constexpr ConvCase kSevenDeep{2, 64, 7, 7, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
constexpr ConvCase kSix{1, 64, 6, 6, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
constexpr ConvCase kUnpadded{1, 16, 12, 11, 64, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0};
constexpr ConvCase kAsymmetric{2, 24, 9, 20, 48, 3, 3, 1, 1, 1, 1, 1, 2, 0, 1, 1};
constexpr ConvCase kWide{1, 16, 8, 40, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
// Output channels short of a whole last block (a detection head's 30 classes; 120 of 128).
constexpr ConvCase kHeadClasses{1, 16, 16, 16, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
constexpr ConvCase kHeadBoxes{1, 16, 16, 16, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
constexpr ConvCase kShortBlock{1, 24, 14, 14, 120, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};

TEST(WinogradTest, MatchesReferenceAndIsAccessorInvariant) {
  std::mt19937 rng(11);
  check_winograd<winograd_tile(14, 14, 128)>(rng, kSqueezeFire);
  check_winograd<winograd_tile(7, 7, 192)>(rng, kSevenWide);
  check_winograd<winograd_tile(7, 7, 256)>(rng, kSevenDeep);
  check_winograd<winograd_tile(6, 6, 256)>(rng, kSix);
  check_winograd<winograd_tile(10, 9, 64)>(rng, kUnpadded);
  check_winograd<winograd_tile(10, 19, 48)>(rng, kAsymmetric);
  check_winograd<winograd_tile(8, 40, 16)>(rng, kWide);
  check_winograd<winograd_tile(16, 16, 30)>(rng, kHeadClasses);
  check_winograd<winograd_tile(16, 16, 12)>(rng, kHeadBoxes);
  check_winograd<winograd_tile(14, 14, 120)>(rng, kShortBlock);
}

TEST(WinogradTest, TileFillsRegistersAndDividesThePlane) {
  // 14 x 14: rows of 7 tiles (7 is prime), two panels of the output's four.
  EXPECT_EQ(winograd_tile(14, 14, 64).x, 7);
  EXPECT_EQ(winograd_tile(14, 14, 64).panels, 2);
  // 7 x 7 (4 x 4 tiles): all 16 tiles by 1 panel where 16 x 1, 8 x 2 and 4 x 4 tie, 8 by 3
  // for 12 panels.
  EXPECT_EQ(winograd_tile(7, 7, 256).x, 16);
  EXPECT_EQ(winograd_tile(7, 7, 256).panels, 1);
  EXPECT_EQ(winograd_tile(7, 7, 192).x, 8);
  EXPECT_EQ(winograd_tile(7, 7, 192).rows, 2);
  EXPECT_EQ(winograd_tile(7, 7, 192).panels, 3);
  for (int64_t h = 2; h <= 32; ++h)
    for (int64_t w = 2; w <= 48; ++w)
      for (int64_t c : {16, 32, 48, 64, 96, 128, 192, 256}) {
        const WinogradTile t = winograd_tile(h, w, c);
        const int64_t tw = (w + 1) / 2, th = (h + 1) / 2;
        EXPECT_LE(t.x * t.panels, kWinogradAccumulators) << h << "x" << w << " c" << c;
        EXPECT_EQ(t.x, t.rows * tw) << h << "x" << w;
        EXPECT_EQ(th % t.rows, 0) << h << "x" << w;
        EXPECT_EQ(c / 16 % t.panels, 0) << c;
      }
}

TEST(WinogradTest, ShapeRuleTakesOnlyStrideOneThreeByThree) {
  EXPECT_TRUE(winograd_conv_fits(conv_shape(kSqueezeFire)));
  ConvCase c = kSqueezeFire;
  c.sh = c.sw = 2;
  EXPECT_FALSE(winograd_conv_fits(conv_shape(c))) << "stride 2";
  c = kSqueezeFire;
  c.dh = c.dw = 2;
  EXPECT_FALSE(winograd_conv_fits(conv_shape(c))) << "dilation";
  c = kSqueezeFire;
  c.groups = 2;
  EXPECT_FALSE(winograd_conv_fits(conv_shape(c))) << "groups";
  c = kSqueezeFire;
  c.c_out = 120;
  EXPECT_TRUE(winograd_conv_fits(conv_shape(c))) << "120 channels: blocks of 128";
  c.c_out = 20;
  EXPECT_FALSE(winograd_conv_fits(conv_shape(c))) << "20 channels: blocks of 32";
  c.c_out = 8;
  EXPECT_FALSE(winograd_conv_fits(conv_shape(c))) << "8 channels: a block of 16";
  c = kSqueezeFire;
  c.h = c.w = 3;
  EXPECT_FALSE(winograd_conv_fits(conv_shape(c))) << "3 x 3 plane";
  c = kSqueezeFire;
  c.h = c.w = 8;
  c.c_out = 16;
  EXPECT_FALSE(winograd_conv_fits(conv_shape(c))) << "16 channels of 8 x 8";
  c = kSqueezeFire;
  c.kh = c.kw = 5;
  c.pt = c.pl = c.pb = c.pr = 2;
  EXPECT_FALSE(winograd_conv_fits(conv_shape(c))) << "5x5";
}

} // namespace
} // namespace vtc::kernels::test
