// The channels-last convolutions (kernels/cpu/conv_nhwc.h) give the bits of the NCHW kernels
// (conv.h) on the same values: inputs and outputs held [n, h, w, c] or [n, c, h, w] as each
// template argument says, strides, padding, dilation, tiles whose rows or segments do not
// cover the plane evenly, channel counts that do not fill a vector, batches; constant weights
// packed once and weights read through their accessor.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "conv_cases.h"
#include "kernel_test_util.h"
#include "kernels/cpu/conv_nhwc.h"

namespace vtc::kernels::test {
namespace {

// conv2d_nhwc on case `cc` (its geometry at compile time, as generated code gives it) against
// conv2d, for every layout of input and output and with and without packed weights.
template <int64_t... Row> void check_conv(std::mt19937& rng) {
  constexpr ConvCase cc{Row...};
  constexpr Conv2dShape s = conv_shape(cc);
  constexpr ChannelTile tile = channel_form_tile(s.h_out, s.w_out);
  constexpr NhwcStaging g = nhwc_staging(s, tile);
  constexpr int nv = nhwc_channel_vectors(tile, s.c_out);
  auto x = random_tensor<float, 4>(rng, {s.n, s.c_in, s.h, s.w});
  auto w = random_tensor<float, 4>(rng, {s.c_out, s.c_in, s.kh, s.kw});
  Tensor<float, 4> want({s.n, s.c_out, s.h_out, s.w_out});
  conv2d(want.acc(), x.acc(), w.acc(), s);
  Tensor<float, 4> x_nhwc = to_nhwc(x);
  auto run = [&]<bool In, bool Out>(bool packed) {
    ConstantPacks packs;
    const ConstantRef wref = packed ? ConstantRef{&packs, &w} : ConstantRef{};
    Tensor<float, 4> got(Out ? Index<4>{s.n, s.h_out, s.w_out, s.c_out}
                             : Index<4>{s.n, s.c_out, s.h_out, s.w_out});
    if constexpr (In)
      conv2d_nhwc<tile.x, tile.y, nv, s.c_in, g.pitch, s.stride_h, s.stride_w, In, Out>(
          got.acc(), x_nhwc.acc(), w.acc(), s, NoEpilogue{}, wref);
    else
      conv2d_nhwc<tile.x, tile.y, nv, s.c_in, g.pitch, s.stride_h, s.stride_w, In, Out>(
          got.acc(), x.acc(), w.acc(), s, NoEpilogue{}, wref);
    expect_bitwise(Out ? to_nchw(got) : got, want,
                   describe(cc) + (In ? " in nhwc" : " in nchw") +
                       (Out ? " out nhwc" : " out nchw") + (packed ? " packed" : ""));
  };
  for (bool packed : {false, true}) {
    run.template operator()<true, true>(packed);
    run.template operator()<false, true>(packed);
    run.template operator()<true, false>(packed);
  }
}

TEST(ConvNhwcTest, SameBitsAsTheNchwKernels) {
  std::mt19937 rng(61);
  check_conv<1, 16, 4, 4, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1>(rng);  // 4x4 tile
  check_conv<1, 24, 2, 2, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>(rng);  // 1x1, 2x2, 40 of 48
  check_conv<2, 8, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1>(rng);   // rows of 7, batch 2
  check_conv<1, 12, 8, 8, 20, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1>(rng);  // stride 2
  check_conv<1, 5, 9, 40, 17, 3, 3, 1, 1, 1, 2, 2, 2, 2, 2, 2>(rng);  // dilation, wide rows
  check_conv<1, 3, 20, 19, 16, 3, 5, 1, 1, 1, 1, 1, 0, 2, 1, 1>(rng); // 19 = 10 + 9, uneven
  check_conv<1, 32, 3, 3, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1>(rng);  // 3x3 tile
  check_conv<1, 40, 7, 7, 80, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>(rng);  // 3 + 2 vectors a tile
  check_conv<1, 20, 2, 2, 100, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1>(rng); // 4 + 3 vectors, 100 of 112
  check_conv<1, 16, 3, 3, 48, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>(rng);  // 2 + 1 vectors
}

template <int64_t... Row> void check_depthwise(std::mt19937& rng) {
  constexpr ConvCase cc{Row...};
  constexpr Conv2dShape s = conv_shape(cc);
  auto x = random_tensor<float, 4>(rng, {s.n, s.c_in, s.h, s.w});
  auto w = random_tensor<float, 4>(rng, {s.c_out, 1, s.kh, s.kw});
  Tensor<float, 4> want({s.n, s.c_out, s.h_out, s.w_out});
  conv2d(want.acc(), x.acc(), w.acc(), s);
  Tensor<float, 4> x_nhwc = to_nhwc(x);
  for (bool packed : {false, true}) {
    ConstantPacks packs;
    Tensor<float, 4> got({s.n, s.h_out, s.w_out, s.c_out});
    depthwise_nhwc(got.acc(), x_nhwc.acc(), w.acc(), s, NoEpilogue{},
                   packed ? ConstantRef{&packs, &w} : ConstantRef{});
    expect_bitwise(to_nchw(got), want, describe(cc) + (packed ? " packed" : ""));
  }
}

TEST(ConvNhwcTest, DepthwiseSameBitsAsTheNchwKernels) {
  std::mt19937 rng(62);
  check_depthwise<1, 32, 4, 4, 32, 3, 3, 32, 1, 1, 1, 1, 1, 1, 1, 1>(rng);
  check_depthwise<2, 20, 9, 9, 20, 3, 3, 20, 2, 2, 1, 1, 1, 1, 1, 1>(rng);   // stride 2, 20 lanes
  check_depthwise<1, 16, 40, 70, 16, 5, 5, 16, 1, 1, 1, 1, 2, 2, 2, 2>(rng); // several bands
  check_depthwise<1, 8, 9, 9, 8, 3, 3, 8, 1, 1, 2, 2, 1, 0, 2, 1>(rng);      // dilation, uneven
}

} // namespace
} // namespace vtc::kernels::test
