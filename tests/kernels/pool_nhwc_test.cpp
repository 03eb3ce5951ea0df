// The channels-last max pooling (kernels/cpu/pool_nhwc.h) gives the bits of the NCHW kernels
// (pool.h) on the same values: input and output held [n, h, w, c] or [n, c, h, w] as each
// template argument says, padding, strides, dilation, ceil-mode sizes, channel counts that do
// not fill a vector, batches, inputs read through accessors without pointers, and NaNs of
// different payloads and signed zeros among the values (the same one of equal values kept).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "kernel_test_util.h"
#include "kernels/cpu/pool.h"
#include "kernels/cpu/pool_nhwc.h"
#include "pool_cases.h"

namespace vtc::kernels::test {
namespace {

// Some values of t replaced by zeros of either sign and NaNs of two payloads.
void sprinkle_specials(std::mt19937& rng, Tensor<float, 4>& t) {
  uint32_t nan_a = 0x7fc00001, nan_b = 0xffc00002;
  float specials[4] = {0.0f, -0.0f, 0, 0};
  std::memcpy(&specials[2], &nan_a, 4);
  std::memcpy(&specials[3], &nan_b, 4);
  std::uniform_int_distribution<int> pick(0, 15);
  for (float& v : t.data) {
    const int k = pick(rng);
    if (k < 4) v = specials[k];
  }
}

void check_pool_nhwc(std::mt19937& rng, const PoolCase& pc, bool specials) {
  const Pool2dShape s = pool_shape(pc);
  const std::string what = "pool c" + std::to_string(s.c) + " " + std::to_string(s.h) + "x" +
                           std::to_string(s.w) + " k" + std::to_string(s.kh) + "x" +
                           std::to_string(s.kw) + " s" + std::to_string(s.stride_h) +
                           (specials ? " with NaNs and signed zeros" : "");
  auto x = random_tensor<float, 4>(rng, {s.n, s.c, s.h, s.w});
  if (specials) sprinkle_specials(rng, x);
  Tensor<float, 4> want({s.n, s.c, s.h_out, s.w_out});
  max_pool2d(want.acc(), x.acc(), s);
  Tensor<float, 4> x_nhwc = to_nhwc(x);
  auto run = [&]<bool In, bool Out>(bool computed) {
    Tensor<float, 4> got(Out ? Index<4>{s.n, s.h_out, s.w_out, s.c}
                             : Index<4>{s.n, s.c, s.h_out, s.w_out});
    Tensor<float, 4>& src = In ? x_nhwc : x;
    if (computed) { // an input without pointers: every value loaded through the accessor
      ComputedAccessor<float, 4> cx(src.shape);
      fill_from(cx, src);
      max_pool2d_nhwc<In, Out>(got.acc(), cx, s);
    } else {
      max_pool2d_nhwc<In, Out>(got.acc(), src.acc(), s);
    }
    expect_bitwise(Out ? to_nchw(got) : got, want,
                   what + (In ? " in nhwc" : " in nchw") + (Out ? " out nhwc" : " out nchw") +
                       (computed ? " computed" : ""));
  };
  for (bool computed : {false, true}) {
    run.template operator()<true, true>(computed);
    run.template operator()<true, false>(computed);
    run.template operator()<false, true>(computed);
  }
}

TEST(PoolNhwcTest, SameBitsAsTheNchwKernels) {
  std::mt19937 rng(67);
  // n c h w kh kw sh sw dh dw pt pl pb pr ceil
  const std::vector<PoolCase> cases = {
      {1, 96, 29, 29, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true},  // SqueezeNet's first pooling
      {2, 20, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false},  // padding, 16 + 4 channels
      {1, 33, 10, 7, 3, 2, 2, 2, 1, 1, 1, 0, 1, 1, true},   // ceil mode, uneven pads
      {1, 16, 13, 13, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, false}, // dilation
      {1, 8, 4, 4, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, false},    // 5x5 stride 1 (SPPF), 8 channels
      {1, 64, 16, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false}, // a ResNet stem's pooling
  };
  for (const PoolCase& c : cases)
    for (bool specials : {false, true})
      check_pool_nhwc(rng, c, specials);
}

} // namespace
} // namespace vtc::kernels::test
