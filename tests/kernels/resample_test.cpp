// Tests of resample.h: bilinear resizing of the last two dimensions (half_pixel coordinates,
// tables built here) against the interpolation formula evaluated directly in double, the same bits
// after its rounding to the compute type and the storage type; the same bits through a split output
// accessor and a permuted input accessor; and coordinates marked outside taking the extrapolation
// value.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/cpu/resample.h"

namespace vtc::kernels::test {
namespace {

// Linear half_pixel taps of one dimension resized from `in` to `out`: two per coordinate.
struct LinearTaps {
  std::vector<int64_t> index;
  std::vector<double> weight;
};

double source_coordinate(int64_t o, int64_t in, int64_t out) {
  return (double(o) + 0.5) * double(in) / double(out) - 0.5;
}

LinearTaps linear_taps(int64_t in, int64_t out) {
  LinearTaps t;
  for (int64_t o = 0; o < out; ++o) {
    const double x = source_coordinate(o, in, out), f = std::floor(x);
    const int64_t lo = int64_t(f);
    auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
    t.index.insert(t.index.end(), {clamp(lo), clamp(lo + 1)});
    t.weight.insert(t.weight.end(), {1 - (x - f), x - f});
  }
  return t;
}

// out[n, c, y, x] from the formula: the four neighbours, in the kernel's order, in double.
template <typename T>
double bilinear(const Tensor<T, 4>& x, const Index<4>& in, const Index<4>& out, const Index<4>& o) {
  auto axis = [](double s, int64_t len, int64_t& lo, int64_t& hi, double& frac) {
    const double f = std::floor(s);
    frac = s - f;
    lo = std::min(std::max<int64_t>(int64_t(f), 0), len - 1);
    hi = std::min(std::max<int64_t>(int64_t(f) + 1, 0), len - 1);
  };
  int64_t y0, y1, x0, x1;
  double fy, fx;
  axis(source_coordinate(o[2], in[2], out[2]), in[2], y0, y1, fy);
  axis(source_coordinate(o[3], in[3], out[3]), in[3], x0, x1, fx);
  const double w[4] = {(1 - fy) * (1 - fx), (1 - fy) * fx, fy * (1 - fx), fy * fx};
  const int64_t ys[4] = {y0, y0, y1, y1}, xs[4] = {x0, x1, x0, x1};
  double acc = 0;
  for (int k = 0; k < 4; ++k)
    if (w[k] != 0) acc += w[k] * x.at({o[0], o[1], ys[k], xs[k]});
  return acc;
}

template <typename T> void check_bilinear(std::mt19937& rng, Index<4> in, Index<4> out) {
  auto x = random_tensor<T, 4>(rng, in);
  Tensor<T, 4> y(out);
  const LinearTaps th = linear_taps(in[2], out[2]), tw = linear_taps(in[3], out[3]);
  std::vector<int64_t> n_index(static_cast<size_t>(out[0])), c_index(static_cast<size_t>(out[1]));
  for (int64_t i = 0; i < out[0]; ++i)
    n_index[size_t(i)] = i;
  for (int64_t i = 0; i < out[1]; ++i)
    c_index[size_t(i)] = i;
  const std::vector<double> ones(size_t(std::max(out[0], out[1])), 1.0);
  const ResampleAxis axes[4] = {{1, n_index.data(), ones.data(), nullptr},
                                {1, c_index.data(), ones.data(), nullptr},
                                {2, th.index.data(), th.weight.data(), nullptr},
                                {2, tw.index.data(), tw.weight.data(), nullptr}};
  resample(y.acc(), x.acc(), out, axes, 0.0);
  for (int64_t f = 0; f < volume<4>(out); ++f) {
    const Index<4> o = unflatten<4>(out, f);
    using C = decltype(to_compute(T{}));
    ASSERT_EQ(bits_of(y.data[size_t(f)]), bits_of(from_compute<T>(C(bilinear(x, in, out, o)))))
        << type_name<T>() << " bilinear, output element " << f;
  }
  PermutedAccessor<T, 4, true> px(in, {0, 2, 3, 1});
  SplitAccessor<T, 4, 3> sy(out);
  fill_from(px, x);
  resample(sy, px, out, axes, 0.0);
  expect_bitwise(sy, y, std::string(type_name<T>()) + " bilinear through other accessors");
}

TEST(ResampleTest, BilinearMatchesTheFormula) {
  std::mt19937 rng(7);
  check_bilinear<float>(rng, {1, 3, 4, 5}, {1, 3, 8, 10});
  check_bilinear<float>(rng, {2, 2, 6, 7}, {2, 2, 3, 4}); // downsampling
  check_bilinear<half>(rng, {1, 2, 3, 3}, {1, 2, 7, 5});
  check_bilinear<bfloat16>(rng, {1, 1, 5, 8}, {1, 1, 10, 33});
  // Rows of eight outputs and more (resample.h's double lanes), rows up to 8, 16 and 40 wide.
  check_bilinear<float>(rng, {1, 2, 8, 8}, {1, 2, 64, 64});
  check_bilinear<float>(rng, {1, 1, 5, 12}, {1, 1, 9, 43});
  check_bilinear<float>(rng, {2, 1, 4, 40}, {2, 1, 6, 17});
  check_bilinear<half>(rng, {1, 2, 3, 9}, {1, 2, 7, 24});
}

// Linear taps in every dimension: rows of 2, 4 and 8 outer combinations (resample.h keeps the
// plane's combinations from row to row, and holds up to four rows in registers), each output
// against the walk of every combination of taps written out here, the same bits.
void check_every_dimension(std::mt19937& rng, Index<4> in, Index<4> out) {
  auto x = random_tensor<float, 4>(rng, in);
  Tensor<float, 4> y(out);
  LinearTaps t[4];
  ResampleAxis axes[4];
  for (int d = 0; d < 4; ++d) {
    t[d] = linear_taps(in[d], out[d]);
    axes[d] = {2, t[d].index.data(), t[d].weight.data(), nullptr};
  }
  resample(y.acc(), x.acc(), out, axes, 0.0);
  for (int64_t f = 0; f < volume<4>(out); ++f) {
    const Index<4> o = unflatten<4>(out, f);
    double acc = 0;
    for (int combo = 0; combo < 16; ++combo) { // dimension 0's tap slowest
      double w = 1;
      Index<4> i{};
      for (int d = 0; d < 4; ++d) {
        const int j = (combo >> (3 - d)) & 1;
        w *= t[d].weight[size_t(o[d] * 2 + j)];
        i[d] = t[d].index[size_t(o[d] * 2 + j)];
      }
      if (w != 0) acc += w * double(x.at(i));
    }
    ASSERT_EQ(bits_of(y.data[size_t(f)]), bits_of(float(acc))) << "output element " << f;
  }
}

TEST(ResampleTest, EveryDimensionResizedMatchesTheWalkOfAllTaps) {
  std::mt19937 rng(9);
  check_every_dimension(rng, {1, 1, 3, 5}, {1, 1, 7, 24});  // 2 outer combinations a row
  check_every_dimension(rng, {1, 3, 4, 5}, {1, 5, 6, 24});  // 4
  check_every_dimension(rng, {2, 3, 4, 5}, {3, 5, 6, 24});  // 8
  check_every_dimension(rng, {2, 3, 4, 20}, {3, 2, 5, 33}); // 8, rows longer than 16
}

TEST(ResampleTest, OutsideCoordinatesTakeTheExtrapolationValue) {
  std::mt19937 rng(8);
  auto x = random_tensor<float, 1>(rng, {4});
  const int64_t index[] = {0, 1, 2, 3, 3};
  const double weight[] = {1, 1, 1, 1, 1};
  const bool outside[] = {false, false, true, false, true};
  const ResampleAxis axes[1] = {{1, index, weight, outside}};
  Tensor<float, 1> y({5});
  resample(y.acc(), x.acc(), Index<1>{5}, axes, -2.5);
  const float expected[] = {x.data[0], x.data[1], -2.5f, x.data[3], -2.5f};
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(bits_of(y.data[size_t(i)]), bits_of(expected[i])) << "element " << i;
}

} // namespace
} // namespace vtc::kernels::test
