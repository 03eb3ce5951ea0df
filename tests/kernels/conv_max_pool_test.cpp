// Tests of conv_max_pool.h: the fused convolution and max pooling must give the bits of
// conv2d() then max_pool2d() with the same epilogue (bias and ReLU here, as generated code
// stores a batch norm and ReLU into its row buffer), on stems the row kernel takes and on
// shapes and accessors it does not (the direct fallback), with NaN propagated and signed zeros
// chosen as max pooling does.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "conv_cases.h"
#include "kernel_test_util.h"
#include "kernels/cpu/conv_max_pool.h"

namespace vtc::kernels::test {
namespace {

// out = max(v + bias[c], 0), the conv's epilogue (NaN stays NaN, as ONNX's Relu keeps it);
// negated at odd (y + x) when `alternate`, so that windows hold both +0 and -0.
struct BiasRelu {
  const float* bias;
  bool alternate = false;
  template <typename V> V operator()(const Index<4>& i, V v) const {
    const V b = v + V(bias[i[1]]);
    const V r = b < V(0) ? V(0) : b;
    return alternate && (i[2] + i[3]) % 2 ? -r : r;
  }
};

// Stores the epilogue's result into the row buffer, as a generated epilogue accessor does.
struct BiasReluInto {
  using value_type = float;
  static constexpr int rank = 4;
  static constexpr int64_t contig = 1;
  static constexpr bool has_ptr = false;
  ConvRowBuffer rows;
  BiasRelu epi;
  float load(const Index<4>& i) const { return rows.load(i); }
  template <typename V> void store(const Index<4>& i, V v) const { rows.store(i, epi(i, v)); }
};

// A convolution and a square max pooling of its output.
struct Case {
  ConvCase conv;
  int64_t pool_k, pool_stride, pool_pad;
};

std::string describe(const Case& c) {
  return describe(c.conv) + ", pool k" + std::to_string(c.pool_k) + " s" +
         std::to_string(c.pool_stride) + " p" + std::to_string(c.pool_pad);
}

Pool2dShape pool_shape(const Case& c, const Conv2dShape& cs) {
  Pool2dShape s;
  s.n = cs.n;
  s.c = cs.c_out;
  s.h = cs.h_out;
  s.w = cs.w_out;
  s.kh = s.kw = c.pool_k;
  s.stride_h = s.stride_w = c.pool_stride;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = c.pool_pad;
  s.h_out = (s.h + 2 * c.pool_pad - c.pool_k) / c.pool_stride + 1;
  s.w_out = (s.w + 2 * c.pool_pad - c.pool_k) / c.pool_stride + 1;
  return s;
}

// The fused kernel against conv2d then max_pool2d, through dense accessors and through an
// NHWC input (whose rows are not in memory: the direct fallback) with a split output.
void check(std::mt19937& rng, const Case& c, bool with_nan = false, bool signed_zeros = false) {
  const std::string what = describe(c) + (with_nan ? ", NaNs in the input" : "") +
                           (signed_zeros ? ", zeros of both signs" : "");
  const Conv2dShape cs = conv_shape(c.conv);
  const Pool2dShape ps = pool_shape(c, cs);
  const Index<4> xs = {cs.n, cs.c_in, cs.h, cs.w}, ws = {cs.c_out, cs.c_in, cs.kh, cs.kw};
  const Index<4> cys = {cs.n, cs.c_out, cs.h_out, cs.w_out};
  const Index<4> ys = {ps.n, ps.c, ps.h_out, ps.w_out};
  auto x = random_tensor<float, 4>(rng, xs);
  if (with_nan) { // two NaNs of different payloads, two rows apart
    x.data[x.data.size() / 3] = std::nanf("1");
    x.data[x.data.size() / 3 + size_t(2 * cs.w + 1)] = -std::nanf("2");
  }
  auto w = random_tensor<float, 4>(rng, ws);
  auto bias = random_tensor<float, 1>(rng, {cs.c_out});
  const BiasRelu epi{bias.data.data(), signed_zeros};

  Tensor<float, 4> conv_out(cys), unfused(ys);
  conv2d(conv_out.acc(), x.acc(), w.acc(), cs, epi);
  max_pool2d(unfused.acc(), conv_out.acc(), ps);
  if (signed_zeros) {
    int64_t negative = 0, positive = 0;
    for (float v : unfused.data) {
      negative += v == 0.0f && std::signbit(v);
      positive += v == 0.0f && !std::signbit(v);
    }
    ASSERT_GT(negative, 0) << what << ": some windows should pool to -0";
    ASSERT_GT(positive, 0) << what << ": some windows should pool to +0";
  }
  if (with_nan) {
    int64_t nans = 0;
    for (float v : unfused.data)
      nans += std::isnan(v);
    ASSERT_GT(nans, 0) << what << ": the NaN should reach the pooled output";
  }

  const ConvRowBuffer rows{cs.c_out, cs.w_out};
  for (bool packed : {false, true}) {
    ConstantPacks packs;
    Tensor<float, 4> fused(ys);
    conv2d_max_pool(fused.acc(), BiasReluInto{rows, epi}, rows, x.acc(), w.acc(), cs, ps,
                    packed ? ConstantRef{&packs, &w} : ConstantRef{});
    expect_bitwise(fused, unfused, what + (packed ? ": fused, weights packed once" : ": fused"));
  }
  PermutedAccessor<float, 4, true> nhwc(xs, {0, 2, 3, 1});
  SplitAccessor<float, 4, 4> split(ys);
  fill_from(nhwc, x);
  conv2d_max_pool(split, BiasReluInto{rows, epi}, rows, nhwc, w.acc(), cs, ps);
  expect_bitwise(split, unfused, what + ": fused, NHWC input, split output");
}

TEST(ConvMaxPoolTest, EqualsConvThenMaxPoolBitwise) {
  std::mt19937 rng(61);
  // the convolution (n cin h w cout kh kw g sh sw dh dw pt pl pb pr), then pool k s p
  check(rng, {{1, 3, 64, 72, 24, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1}, 3, 2, 1}); // ShuffleNet's stem
  check(rng,
        {{2, 3, 40, 36, 20, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1}, 3, 2, 1}); // batch 2, 20 channels
  check(rng, {{1, 3, 33, 40, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 2, 2, 0}); // 2x2 windows
  check(rng, {{1, 2, 30, 34, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 5, 1, 2});  // 5x5 at stride 1
  check(rng, {{1, 32, 18, 40, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 3, 2, 1}); // K = 288: direct
  check(rng,
        {{1, 16, 18, 100, 8, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1}, 3, 2, 1}); // K = 144 at stride 2
  check(rng, {{1, 3, 64, 72, 24, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1}, 3, 2, 1}, true);
  check(rng, {{1, 3, 64, 72, 24, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1}, 3, 2, 1}, false, true);
  check(rng, {{1, 2, 30, 34, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 5, 1, 2}, true, true);
}

TEST(ConvMaxPoolTest, RejectsAPoolingThatDoesNotFollowTheConvolution) {
  const Case c{{1, 3, 16, 40, 8, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1}, 3, 2, 1};
  const Conv2dShape cs = conv_shape(c.conv);
  Pool2dShape ps = pool_shape(c, cs);
  ps.c = cs.c_out + 1;
  std::vector<float> x(size_t(cs.c_in * cs.h * cs.w)), w(size_t(cs.c_out * cs.c_in * 9));
  std::vector<float> y(size_t(ps.c * ps.h_out * ps.w_out));
  const ConvRowBuffer rows{cs.c_out, cs.w_out};
  EXPECT_THROW(
      conv2d_max_pool(DenseAccessor<float, 4>(y.data(), {1, ps.c, ps.h_out, ps.w_out}), rows, rows,
                      DenseAccessor<float, 4>(x.data(), {1, cs.c_in, cs.h, cs.w}),
                      DenseAccessor<float, 4>(w.data(), {cs.c_out, cs.c_in, 3, 3}), cs, ps),
      std::invalid_argument);
}

} // namespace
} // namespace vtc::kernels::test
