// Tests of norm.h and reduce.h against double-precision references: LayerNorm (with and
// without gamma / beta, mean and inverse-std outputs), RMSNorm, softmax, log-softmax and
// every reduction kind, in f32, f16 and bf16, on row lengths around the lane width; the same
// results bit for bit through permuted, split and computed accessors; edge rows (masked
// logits, empty reductions, integers).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>

#include <cmath>
#include <limits>
#include <random>

#include "kernel_test_util.h"
#include "kernels/cpu/norm.h"

namespace vtc::kernels::test {
namespace {

const std::vector<Index<2>> kShapes = {{1, 1}, {3, 7}, {5, 16}, {4, 33}, {9, 100}, {2, 1000}};

// Runs op(y, x) on dense operands and on permuted / computed inputs with split outputs;
// returns the dense output after checking the others against it bit for bit.
template <typename T, typename Op>
Tensor<T, 2> run_variants(const Tensor<T, 2>& x, const Op& op, const std::string& what) {
  Tensor<T, 2> xd = x, dense(x.shape);
  op(dense.acc(), xd.acc());
  PermutedAccessor<T, 2, true> px(x.shape, {1, 0});
  ComputedAccessor<T, 2> cx(x.shape);
  SplitAccessor<T, 2, 4> sy(x.shape);
  PermutedAccessor<T, 2, false> py(x.shape, {1, 0});
  fill_from(px, x);
  fill_from(cx, x);
  op(sy, px);
  expect_bitwise(sy, dense, what + ": permuted input, split output");
  op(py, cx);
  expect_bitwise(py, dense, what + ": computed input, permuted output");
  return dense;
}

template <typename T> void check_norms(std::mt19937& rng, const Index<2>& shape) {
  const int64_t rows = shape[0], d = shape[1];
  const std::string what =
      std::string(type_name<T>()) + " rows " + std::to_string(rows) + " d " + std::to_string(d);
  auto x = random_tensor<T, 2>(rng, shape, -2.0, 3.0);
  auto gamma = random_tensor<T, 1>(rng, {d}, 0.5, 1.5);
  auto beta = random_tensor<T, 1>(rng, {d});
  ComputedAccessor<T, 1> cg({d});
  SplitAccessor<T, 1, 2> sb({d});
  fill_from(cg, gamma);
  fill_from(sb, beta);
  const double eps = 1e-5, tol = unit_roundoff<T>() * 4 + 1e-5;
  std::vector<double> ln(static_cast<size_t>(rows * d)), ln_plain(ln.size()), rms(ln.size()),
      sm(ln.size()), lsm(ln.size());
  std::vector<double> means(static_cast<size_t>(rows)), invs(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, sq = 0, mx = -1e300;
    for (int64_t j = 0; j < d; ++j) {
      mean += x.at({r, j}) / double(d);
      sq += x.at({r, j}) * x.at({r, j}) / double(d);
      mx = std::max(mx, x.at({r, j}));
    }
    double var = 0, se = 0;
    for (int64_t j = 0; j < d; ++j) {
      var += (x.at({r, j}) - mean) * (x.at({r, j}) - mean) / double(d);
      se += std::exp(x.at({r, j}) - mx);
    }
    means[size_t(r)] = mean;
    invs[size_t(r)] = 1 / std::sqrt(var + eps);
    for (int64_t j = 0; j < d; ++j) {
      const size_t f = size_t(r * d + j);
      ln_plain[f] = (x.at({r, j}) - mean) / std::sqrt(var + eps);
      ln[f] = ln_plain[f] * gamma.at({j}) + beta.at({j});
      rms[f] = x.at({r, j}) / std::sqrt(sq + eps) * gamma.at({j});
      sm[f] = std::exp(x.at({r, j}) - mx) / se;
      lsm[f] = x.at({r, j}) - mx - std::log(se);
    }
  }
  auto layer = run_variants(
      x, [&](const auto& y, const auto& xa) { layer_norm(y, xa, rows, d, eps, cg, sb); },
      what + " layer_norm");
  expect_close(layer, ln, tol, tol, what + " layer_norm");
  auto plain = run_variants(
      x, [&](const auto& y, const auto& xa) { layer_norm(y, xa, rows, d, eps); },
      what + " layer_norm without affine");
  expect_close(plain, ln_plain, tol, tol, what + " layer_norm without affine");
  auto rmsn = run_variants(
      x, [&](const auto& y, const auto& xa) { rms_norm(y, xa, rows, d, eps, gamma.acc()); },
      what + " rms_norm");
  expect_close(rmsn, rms, tol, tol, what + " rms_norm");
  auto soft = run_variants(
      x, [&](const auto& y, const auto& xa) { softmax(y, xa, rows, d); }, what + " softmax");
  expect_close(soft, sm, 1e-6, tol, what + " softmax");
  auto lsoft = run_variants(
      x, [&](const auto& y, const auto& xa) { log_softmax(y, xa, rows, d); },
      what + " log_softmax");
  expect_close(lsoft, lsm, tol, tol, what + " log_softmax");

  std::vector<float> mean_out(static_cast<size_t>(rows)), inv_out(static_cast<size_t>(rows));
  Tensor<T, 2> y(shape);
  layer_norm(y.acc(), x.acc(), rows, d, eps, gamma.acc(), beta.acc(),
             DenseAccessor<float, 1>(mean_out.data(), {rows}),
             DenseAccessor<float, 1>(inv_out.data(), {rows}));
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_NEAR(mean_out[size_t(r)], means[size_t(r)], 1e-5) << what;
    EXPECT_NEAR(inv_out[size_t(r)], invs[size_t(r)], 1e-4 * invs[size_t(r)]) << what;
  }
}

TEST(NormTest, MatchesReferenceAndIsAccessorInvariant) {
  std::mt19937 rng(41);
  for (const auto& s : kShapes) {
    check_norms<float>(rng, s);
    check_norms<half>(rng, s);
    check_norms<bfloat16>(rng, s);
  }
}

// LayerNorm of many short rows (normalised a group of rows at a time) gives each row the bits
// of its own chain: sum_fixed, then sum_sq_dev_fixed about the mean, 1 / sqrt(var + eps), and
// fma((x - mean) * inv, gamma, beta); with the row count not a multiple of the group.
TEST(NormTest, ShortRowsGiveTheBitsOfOneRowAtATime) {
  std::mt19937 rng(44);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  const float eps = 1e-6f;
  for (int64_t d : {1, 3, 8, 16, 17, 64, 65}) {
    const int64_t rows = 37;
    const size_t n = size_t(rows * d), w = size_t(d), h = size_t(rows);
    std::vector<float> x(n), y(n), gamma(w), beta(w), mean_out(h), inv_out(h);
    for (std::vector<float>* v : {&x, &gamma, &beta})
      for (auto& e : *v)
        e = value(rng);
    layer_norm(
        DenseAccessor<float, 2>(y.data(), {rows, d}), DenseAccessor<float, 2>(x.data(), {rows, d}),
        rows, d, eps, DenseAccessor<float, 1>(gamma.data(), {d}),
        DenseAccessor<float, 1>(beta.data(), {d}), DenseAccessor<float, 1>(mean_out.data(), {rows}),
        DenseAccessor<float, 1>(inv_out.data(), {rows}));
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = x.data() + r * d;
      const float mean = sum_fixed(row, d) / float(d);
      const float inv = 1.0f / std::sqrt(sum_sq_dev_fixed(row, d, mean) / float(d) + eps);
      EXPECT_EQ(std::bit_cast<uint32_t>(mean_out[size_t(r)]), std::bit_cast<uint32_t>(mean))
          << "d " << d << " row " << r;
      EXPECT_EQ(std::bit_cast<uint32_t>(inv_out[size_t(r)]), std::bit_cast<uint32_t>(inv))
          << "d " << d << " row " << r;
      for (int64_t j = 0; j < d; ++j) {
        const float want = std::fma((row[j] - mean) * inv, gamma[size_t(j)], beta[size_t(j)]);
        ASSERT_EQ(std::bit_cast<uint32_t>(y[size_t(r * d + j)]), std::bit_cast<uint32_t>(want))
            << "d " << d << " row " << r << " col " << j;
      }
    }
  }
}

TEST(NormTest, SoftmaxOfMaskedLogits) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.0f, -inf, 0.0f, -inf, -inf, -inf}, y(6);
  softmax(DenseAccessor<float, 2>(y.data(), {2, 3}), DenseAccessor<float, 2>(x.data(), {2, 3}), 2,
          3);
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 0.5f);
  EXPECT_TRUE(std::isnan(y[3])); // a row of -inf has no softmax (as numpy / ONNX)
  std::vector<float> big = {1000.0f, 999.0f}, yb(2);
  softmax(DenseAccessor<float, 2>(yb.data(), {1, 2}), DenseAccessor<float, 2>(big.data(), {1, 2}),
          1, 2);
  EXPECT_NEAR(yb[0], 1 / (1 + std::exp(-1.0)), 1e-6);
}

template <ReduceKind K, typename T>
void check_reduce(const Tensor<T, 2>& x, double (*ref)(const std::vector<double>&),
                  const std::string& name) {
  const int64_t outer = x.shape[0], n = x.shape[1];
  const std::string what = std::string(type_name<T>()) + " " + name + " n " + std::to_string(n);
  std::vector<float> dense(static_cast<size_t>(outer)), other(static_cast<size_t>(outer));
  reduce<K>(DenseAccessor<float, 1>(dense.data(), {outer}), const_cast<Tensor<T, 2>&>(x).acc(),
            outer, n);
  for (int64_t r = 0; r < outer; ++r) {
    std::vector<double> row(static_cast<size_t>(n));
    double mag = 0;
    for (int64_t j = 0; j < n; ++j) {
      row[size_t(j)] = x.at({r, j});
      mag += std::abs(row[size_t(j)]);
    }
    const double want = ref(row);
    EXPECT_NEAR(dense[size_t(r)], want, 1e-5 * (std::abs(want) + mag) + 1e-6) << what;
  }
  PermutedAccessor<T, 2, false> px(x.shape, {1, 0});
  fill_from(px, x);
  reduce<K>(DenseAccessor<float, 1>(other.data(), {outer}), px, outer, n);
  for (int64_t r = 0; r < outer; ++r)
    EXPECT_EQ(bits_of(dense[size_t(r)]), bits_of(other[size_t(r)])) << what << " permuted";
}

template <typename T> void check_reductions(std::mt19937& rng, int64_t n) {
  auto x = random_tensor<T, 2>(rng, {6, n}, 0.5, 1.5);
  using V = const std::vector<double>&;
  check_reduce<ReduceKind::Sum>(
      x,
      +[](V v) {
        double s = 0;
        for (double e : v)
          s += e;
        return s;
      },
      "sum");
  check_reduce<ReduceKind::Mean>(
      x,
      +[](V v) {
        double s = 0;
        for (double e : v)
          s += e;
        return s / double(v.size());
      },
      "mean");
  check_reduce<ReduceKind::Max>(
      x,
      +[](V v) {
        double m = -1e300;
        for (double e : v)
          m = std::max(m, e);
        return m;
      },
      "max");
  check_reduce<ReduceKind::Min>(
      x,
      +[](V v) {
        double m = 1e300;
        for (double e : v)
          m = std::min(m, e);
        return m;
      },
      "min");
  check_reduce<ReduceKind::Prod>(
      x,
      +[](V v) {
        double p = 1;
        for (double e : v)
          p *= e;
        return p;
      },
      "prod");
  check_reduce<ReduceKind::SumSquare>(
      x,
      +[](V v) {
        double s = 0;
        for (double e : v)
          s += e * e;
        return s;
      },
      "sum_square");
  check_reduce<ReduceKind::L1>(
      x,
      +[](V v) {
        double s = 0;
        for (double e : v)
          s += std::abs(e);
        return s;
      },
      "l1");
  check_reduce<ReduceKind::L2>(
      x,
      +[](V v) {
        double s = 0;
        for (double e : v)
          s += e * e;
        return std::sqrt(s);
      },
      "l2");
  check_reduce<ReduceKind::LogSum>(
      x,
      +[](V v) {
        double s = 0;
        for (double e : v)
          s += e;
        return std::log(s);
      },
      "log_sum");
  check_reduce<ReduceKind::LogSumExp>(
      x,
      +[](V v) {
        double s = 0;
        for (double e : v)
          s += std::exp(e);
        return std::log(s);
      },
      "log_sum_exp");
}

TEST(ReduceTest, EveryKindMatchesReferenceAndIsAccessorInvariant) {
  std::mt19937 rng(42);
  for (int64_t n : {1, 5, 16, 17, 64, 250}) {
    check_reductions<float>(rng, n);
    check_reductions<half>(rng, n);
    check_reductions<bfloat16>(rng, n);
  }
}

// Sums and means of many rows (reduced 16 rows at a time where the vectors allow) give the
// bits of reducing each row alone, with signed zeros kept; every row length from 1 to 40.
TEST(ReduceTest, ManyRowsGiveTheBitsOfOneRowAtATime) {
  std::mt19937 rng(43);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  for (int64_t len = 1; len <= 40; ++len) {
    const int64_t rows = 37;
    std::vector<float> x(static_cast<size_t>(rows * len)), sum(static_cast<size_t>(rows)),
        mean(static_cast<size_t>(rows));
    for (auto& v : x)
      v = value(rng);
    x[3] = -0.0f; // zeros of both signs, and a row of negative zeros
    for (int64_t j = 0; j < len; ++j)
      x[size_t(len + j)] = -0.0f;
    DenseAccessor<float, 2> in(x.data(), {rows, len});
    reduce<ReduceKind::Sum>(DenseAccessor<float, 1>(sum.data(), {rows}), in, rows, len);
    reduce<ReduceKind::Mean>(DenseAccessor<float, 1>(mean.data(), {rows}), in, rows, len);
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = x.data() + r * len;
      const float one_sum = reduce_buffer<ReduceKind::Sum>(row, len);
      const float one_mean = reduce_buffer<ReduceKind::Mean>(row, len);
      EXPECT_EQ(std::bit_cast<uint32_t>(sum[size_t(r)]), std::bit_cast<uint32_t>(one_sum))
          << "sum, row " << r << " of length " << len;
      EXPECT_EQ(std::bit_cast<uint32_t>(mean[size_t(r)]), std::bit_cast<uint32_t>(one_mean))
          << "mean, row " << r << " of length " << len;
    }
  }
}

// A dense [rows, len] view that counts the runs staged through it (run_load), so that a test
// can tell a row reduced where it lies from one copied out first.
struct CountingRows {
  using value_type = float;
  static constexpr int rank = 2;
  static constexpr int64_t contig = int64_t(1) << 40; // every row one block
  static constexpr bool has_ptr = true;
  float* p;
  int64_t len;
  int* staged;
  float* ptr(const Index<2>& i) const { return p + i[0] * len + i[1]; }
  float load(const Index<2>& i) const { return *ptr(i); }
  void run_load(const Index<2>& i, int64_t n, float* dst) const {
    ++*staged;
    std::copy_n(ptr(i), n, dst);
  }
};

// Rows in memory (the [n*c, h*w] view of a ReduceMean over the spatial axes) are reduced where
// they lie, as global pooling reduces its planes, with the bits of staging them; a row count
// that is not a multiple of 16 takes both the 16-row and the one-row paths.
TEST(ReduceTest, RowsInMemoryAreReducedWhereTheyLie) {
  std::mt19937 rng(44);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  for (int64_t len : {1, 4, 49, 256}) {
    const int64_t rows = 37;
    std::vector<float> x(static_cast<size_t>(rows * len)), mean(static_cast<size_t>(rows)),
        sum(static_cast<size_t>(rows)), max(static_cast<size_t>(rows));
    for (auto& v : x)
      v = value(rng);
    int staged = 0;
    const CountingRows in{x.data(), len, &staged};
    reduce<ReduceKind::Mean>(DenseAccessor<float, 1>(mean.data(), {rows}), in, rows, len);
    reduce<ReduceKind::Sum>(DenseAccessor<float, 1>(sum.data(), {rows}), in, rows, len);
    reduce<ReduceKind::Max>(DenseAccessor<float, 1>(max.data(), {rows}), in, rows, len);
    EXPECT_EQ(staged, 0) << "rows of length " << len << " were copied before being reduced";
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = x.data() + r * len;
      EXPECT_EQ(std::bit_cast<uint32_t>(mean[size_t(r)]),
                std::bit_cast<uint32_t>(reduce_buffer<ReduceKind::Mean>(row, len)))
          << "mean, row " << r << " of length " << len;
      EXPECT_EQ(std::bit_cast<uint32_t>(sum[size_t(r)]),
                std::bit_cast<uint32_t>(reduce_buffer<ReduceKind::Sum>(row, len)))
          << "sum, row " << r << " of length " << len;
      EXPECT_EQ(std::bit_cast<uint32_t>(max[size_t(r)]),
                std::bit_cast<uint32_t>(reduce_buffer<ReduceKind::Max>(row, len)))
          << "max, row " << r << " of length " << len;
    }
  }
}

TEST(ReduceTest, EmptyRowsAndIntegers) {
  std::vector<float> none, out(2);
  DenseAccessor<float, 2> empty(none.data(), {2, 0});
  DenseAccessor<float, 1> o(out.data(), {2});
  reduce<ReduceKind::Sum>(o, empty, 2, 0);
  EXPECT_EQ(out[0], 0.0f);
  reduce<ReduceKind::Prod>(o, empty, 2, 0);
  EXPECT_EQ(out[0], 1.0f);
  reduce<ReduceKind::Max>(o, empty, 2, 0);
  EXPECT_EQ(out[0], -std::numeric_limits<float>::infinity());
  reduce<ReduceKind::Min>(o, empty, 2, 0);
  EXPECT_EQ(out[1], std::numeric_limits<float>::infinity());
  std::vector<int64_t> xi = {3, -7, 5, 1, 2, 3}, yi(2);
  DenseAccessor<int64_t, 2> ai(xi.data(), {2, 3});
  DenseAccessor<int64_t, 1> oi(yi.data(), {2});
  reduce<ReduceKind::Sum>(oi, ai, 2, 3);
  EXPECT_EQ(yi, (std::vector<int64_t>{1, 6}));
  reduce<ReduceKind::Max>(oi, ai, 2, 3);
  EXPECT_EQ(yi, (std::vector<int64_t>{5, 3}));
  reduce<ReduceKind::Min>(oi, ai, 2, 3);
  EXPECT_EQ(yi, (std::vector<int64_t>{-7, 1}));
  reduce<ReduceKind::Prod>(oi, ai, 2, 3);
  EXPECT_EQ(yi, (std::vector<int64_t>{-105, 6}));
  reduce<ReduceKind::L2>(oi, ai, 2, 3); // sqrt(83) = 9.11, sqrt(14) = 3.74, truncated
  EXPECT_EQ(yi, (std::vector<int64_t>{9, 3}));
  reduce<ReduceKind::LogSumExp>(oi, ai, 2, 3); // 5.135..., 3.407...
  EXPECT_EQ(yi, (std::vector<int64_t>{5, 3}));
  std::vector<int64_t> none_i;
  reduce<ReduceKind::Mean>(oi, DenseAccessor<int64_t, 2>(none_i.data(), {2, 0}), 2, 0);
  EXPECT_EQ(yi, (std::vector<int64_t>{0, 0}));
  std::vector<float> nan_row = {1.0f, std::nanf(""), 2.0f};
  reduce<ReduceKind::Max>(DenseAccessor<float, 1>(out.data(), {1}),
                          DenseAccessor<float, 2>(nan_row.data(), {1, 3}), 1, 3);
  EXPECT_TRUE(std::isnan(out[0]));
}

} // namespace
} // namespace vtc::kernels::test
