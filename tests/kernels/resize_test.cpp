// Tests of resize.h: nearest-neighbour upsampling by integer factors against a naive loop
// (out[i] = in[i / factor]), exact for every storage type, and bitwise the same through a
// split output accessor and a permuted input accessor.
#include <gtest/gtest.h>

#include <random>

#include "kernel_test_util.h"
#include "kernels/cpu/resize.h"

namespace vtc::kernels::test {
namespace {

template <typename T> void check_upsample(std::mt19937& rng, Index<4> in_shape, Index<4> factor) {
  Index<4> out_shape;
  for (int d = 0; d < 4; ++d)
    out_shape[size_t(d)] = in_shape[size_t(d)] * factor[size_t(d)];
  auto x = random_tensor<T, 4>(rng, in_shape);
  Tensor<T, 4> y(out_shape);
  upsample_nearest(y.acc(), x.acc(), out_shape, factor);
  for (int64_t f = 0; f < volume<4>(out_shape); ++f) {
    const Index<4> o = unflatten<4>(out_shape, f);
    Index<4> i;
    for (int d = 0; d < 4; ++d)
      i[size_t(d)] = o[size_t(d)] / factor[size_t(d)];
    ASSERT_EQ(bits_of(y.data[size_t(f)]), bits_of(x.data[size_t(x.acc_offset(i))]))
        << type_name<T>() << " upsample, output element " << f;
  }
  PermutedAccessor<T, 4, true> px(in_shape, {0, 2, 3, 1});
  SplitAccessor<T, 4, 3> sy(out_shape);
  fill_from(px, x);
  upsample_nearest(sy, px, out_shape, factor);
  expect_bitwise(sy, y, std::string(type_name<T>()) + " upsample through other accessors");
}

TEST(UpsampleNearestTest, RepeatsEveryValueByItsFactors) {
  std::mt19937 rng(31);
  check_upsample<float>(rng, {1, 3, 4, 5}, {1, 1, 2, 2});
  check_upsample<float>(rng, {2, 2, 3, 7}, {1, 2, 3, 1});
  check_upsample<half>(rng, {1, 4, 2, 2}, {1, 1, 2, 3});
  check_upsample<bfloat16>(rng, {1, 1, 5, 40}, {2, 1, 1, 4});
}

} // namespace
} // namespace vtc::kernels::test
