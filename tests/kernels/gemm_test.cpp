// Tests of gemm.h: batched GEMM and the GEMV path against a double-precision triple loop on
// seeded shapes (odd sizes, M = 1..4, K over several cache blocks, K = 0, broadcast
// batches), in f32, f16 and bf16; and the property vtc is built on — the same product
// through permuted, split, computed and broadcast accessors is bitwise identical to the
// dense one, and so is the product with B given transposed (gemm_bt) or written through a
// fused epilogue into a transposed C, and GEMV rows equal the engine's rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "kernel_test_util.h"
#include "kernels/cpu/gemm.h"

namespace vtc::kernels::test {
namespace {

struct GemmCase {
  int64_t batch, m, n, k;
  bool broadcast_b;
};

std::string describe(const GemmCase& c) {
  std::ostringstream s;
  s << "batch " << c.batch << " M " << c.m << " N " << c.n << " K " << c.k
    << (c.broadcast_b ? " (B broadcast)" : "");
  return s.str();
}

// B read at batch 0 for every batch.
template <typename A> using BroadcastBatch = ExpandAccessor<A, 0, int64_t(1) << 40>;

// The writer generated code hands gemm() for a Linear whose output is permuted back to
// channels first: a fused epilogue, relu(v + bias[n]) (the arithmetic of check_gemm's `epi`),
// with value(), a run form, and a target with ptr() whose rows are not runs (C stored with its
// last two dimensions swapped, runs along m).
template <typename T> struct TransposedBiasRelu {
  using value_type = T;
  static constexpr int rank = 3;
  static constexpr int64_t contig = 1;
  static constexpr bool has_ptr = false;
  static constexpr bool is_epilogue = true;
  PermutedAccessor<T, 3, true> out;
  DenseAccessor<T, 1> bias;

  float value(const Index<3>& i, float v) const {
    return std::max(v + bias.load(Index<1>{i[2]}), 0.0f);
  }
  PermutedAccessor<T, 3, true> target() const { return out; }
  template <typename V> void store(const Index<3>& i, V v) const { out.store(i, value(i, v)); }
  template <typename V> void run_store(const Index<3>& i, int64_t n, const V* src) const {
    for (int64_t j = 0; j < n; ++j) {
      const Index<3> k{i[0], i[1], i[2] + j};
      out.store(k, value(k, float(src[j])));
    }
  }
};

template <typename T> void check_gemm(std::mt19937& rng, const GemmCase& c) {
  const std::string what = std::string(type_name<T>()) + " " + describe(c);
  const int64_t bb = c.broadcast_b ? 1 : c.batch;
  auto a = random_tensor<T, 3>(rng, {c.batch, c.m, c.k});
  auto b = random_tensor<T, 3>(rng, {bb, c.k, c.n});
  auto bias = random_tensor<T, 1>(rng, {c.n});
  DenseAccessor<T, 1> bias_acc = bias.acc();
  // Epilogue: relu(v + bias[n]).
  auto epi = [bias_acc](const Index<3>& i, float v) {
    return std::max(v + bias_acc.load(Index<1>{i[2]}), 0.0f);
  };

  std::vector<double> ref(static_cast<size_t>(c.batch * c.m * c.n)), scale(ref.size());
  for (int64_t x = 0; x < c.batch; ++x)
    for (int64_t m = 0; m < c.m; ++m)
      for (int64_t n = 0; n < c.n; ++n) {
        double s = 0, mag = 0;
        for (int64_t k = 0; k < c.k; ++k) {
          const double p = a.at({x, m, k}) * b.at({c.broadcast_b ? 0 : x, k, n});
          s += p;
          mag += std::abs(p);
        }
        const size_t f = size_t((x * c.m + m) * c.n + n);
        ref[f] = std::max(s + bias.at({n}), 0.0);
        scale[f] = mag + std::abs(bias.at({n}));
      }

  Tensor<T, 3> dense({c.batch, c.m, c.n});
  if (c.broadcast_b)
    gemm(dense.acc(), a.acc(), BroadcastBatch<DenseAccessor<T, 3>>{b.acc()}, c.batch, c.m, c.n, c.k,
         epi);
  else
    gemm(dense.acc(), a.acc(), b.acc(), c.batch, c.m, c.n, c.k, epi);
  const double rtol = unit_roundoff<T>() + double(c.k + 2) * std::ldexp(1.0, -23);
  expect_close(dense, ref, 1e-6, rtol, what, &scale);

  // A stored k-major (ptr, contig 1), B split in blocks of 4, C computed (no ptr).
  {
    PermutedAccessor<T, 3, true> pa({c.batch, c.m, c.k}, {0, 2, 1});
    SplitAccessor<T, 3, 4> pb({bb, c.k, c.n});
    ComputedAccessor<T, 3> pc({c.batch, c.m, c.n});
    fill_from(pa, a);
    fill_from(pb, b);
    if (c.broadcast_b)
      gemm(pc, pa, BroadcastBatch<SplitAccessor<T, 3, 4>>{pb}, c.batch, c.m, c.n, c.k, epi);
    else
      gemm(pc, pa, pb, c.batch, c.m, c.n, c.k, epi);
    expect_bitwise(pc, dense, what + ": permuted A, split B, computed C");
  }
  // A split in blocks of 8, B stored n-major without ptr, C stored reversed-dims with ptr.
  {
    SplitAccessor<T, 3, 8> pa({c.batch, c.m, c.k});
    PermutedAccessor<T, 3, false> pb({bb, c.k, c.n}, {0, 2, 1});
    PermutedAccessor<T, 3, true> pc({c.batch, c.m, c.n}, {2, 1, 0});
    fill_from(pa, a);
    fill_from(pb, b);
    if (c.broadcast_b)
      gemm(pc, pa, BroadcastBatch<PermutedAccessor<T, 3, false>>{pb}, c.batch, c.m, c.n, c.k, epi);
    else
      gemm(pc, pa, pb, c.batch, c.m, c.n, c.k, epi);
    expect_bitwise(pc, dense, what + ": split A, permuted B, permuted C");
  }
  // C written through a fused epilogue whose target is stored transposed (a column a step).
  {
    TransposedBiasRelu<T> pc{PermutedAccessor<T, 3, true>({c.batch, c.m, c.n}, {0, 2, 1}),
                             bias_acc};
    if (c.broadcast_b)
      gemm(pc, a.acc(), BroadcastBatch<DenseAccessor<T, 3>>{b.acc()}, c.batch, c.m, c.n, c.k);
    else
      gemm(pc, a.acc(), b.acc(), c.batch, c.m, c.n, c.k);
    expect_bitwise(pc.out, dense, what + ": epilogue into a transposed C");
  }
  // B given transposed (bt[b, n, k]): dense, and split in blocks of 4 along k.
  {
    Tensor<T, 3> bt({bb, c.n, c.k});
    SplitAccessor<T, 3, 4> sbt({bb, c.n, c.k});
    for (int64_t x = 0; x < bb; ++x)
      for (int64_t n = 0; n < c.n; ++n)
        for (int64_t k = 0; k < c.k; ++k) {
          bt.acc().store(Index<3>{x, n, k}, b.at({x, k, n}));
          sbt.store(Index<3>{x, n, k}, b.at({x, k, n}));
        }
    Tensor<T, 3> out({c.batch, c.m, c.n}), split_out({c.batch, c.m, c.n});
    if (c.broadcast_b) {
      gemm_bt(out.acc(), a.acc(), BroadcastBatch<DenseAccessor<T, 3>>{bt.acc()}, c.batch, c.m, c.n,
              c.k, epi);
      gemm_bt(split_out.acc(), a.acc(), BroadcastBatch<SplitAccessor<T, 3, 4>>{sbt}, c.batch, c.m,
              c.n, c.k, epi);
    } else {
      gemm_bt(out.acc(), a.acc(), bt.acc(), c.batch, c.m, c.n, c.k, epi);
      gemm_bt(split_out.acc(), a.acc(), sbt, c.batch, c.m, c.n, c.k, epi);
    }
    expect_bitwise(out, dense, what + ": B given transposed");
    expect_bitwise(split_out, dense, what + ": B given transposed, split");
  }
}

std::vector<GemmCase> gemm_cases() {
  std::vector<GemmCase> cases = {
      {1, 1, 1, 1, false},      {1, 1, 37, 19, false},   {1, 2, 64, 300, false},
      {1, 3, 5, 7, false},      {1, 4, 1000, 33, false}, {2, 1, 70, 40, true},
      {1, 5, 5, 5, false},      {1, 13, 35, 17, false},  {1, 64, 64, 64, false},
      {2, 37, 45, 300, false},  {3, 100, 70, 20, true},  {1, 130, 260, 520, false},
      {1, 7, 1, 9, false},      {1, 9, 33, 0, false},    {2, 3, 10, 0, false},
      {4, 17, 16, 1024, false}, // B read through its transpose: packed whole by 16 x 16 blocks
  };
  std::mt19937 rng(1234);
  for (int t = 0; t < 8; ++t) {
    std::uniform_int_distribution<int64_t> bd(1, 3), md(1, 80), nd(1, 150), kd(1, 300);
    cases.push_back({bd(rng), md(rng), nd(rng), kd(rng), t % 3 == 0});
  }
  return cases;
}

TEST(GemmTest, F32MatchesReferenceAndIsAccessorInvariant) {
  std::mt19937 rng(1);
  for (const auto& c : gemm_cases())
    check_gemm<float>(rng, c);
}

TEST(GemmTest, F16MatchesReferenceAndIsAccessorInvariant) {
  std::mt19937 rng(2);
  for (const auto& c : gemm_cases())
    check_gemm<half>(rng, c);
}

TEST(GemmTest, Bf16MatchesReferenceAndIsAccessorInvariant) {
  std::mt19937 rng(3);
  for (const auto& c : gemm_cases())
    check_gemm<bfloat16>(rng, c);
}

TEST(GemmTest, F64AccumulatesInDouble) {
  std::mt19937 rng(4);
  const int64_t M = 19, N = 23, K = 517;
  auto a = random_tensor<double, 3>(rng, {1, M, K});
  auto b = random_tensor<double, 3>(rng, {1, K, N});
  Tensor<double, 3> c({1, M, N});
  gemm(c.acc(), a.acc(), b.acc(), 1, M, N, K);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      long double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += (long double)a.at({0, m, k}) * b.at({0, k, n});
      EXPECT_NEAR(c.at({0, m, n}), double(s), 1e-12) << m << "," << n;
    }
}

// The GEMV path (M <= 4) and the packed engine compute the same chain over k: the first
// rows of a tall product equal the product of those rows alone, bit for bit.
template <typename T> void check_gemv_equals_engine(std::mt19937& rng, int64_t N, int64_t K) {
  auto a = random_tensor<T, 3>(rng, {1, 11, K});
  auto b = random_tensor<T, 3>(rng, {1, K, N});
  Tensor<T, 3> tall({1, 11, N});
  gemm(tall.acc(), a.acc(), b.acc(), 1, 11, N, K);
  for (int64_t m = 1; m <= 4; ++m) {
    Tensor<T, 3> top({1, m, N});
    gemm(top.acc(), DenseAccessor<T, 3>(a.data.data(), {1, 11, K}), b.acc(), 1, m, N, K);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t n = 0; n < N; ++n)
        ASSERT_EQ(bits_of(top.data[size_t(r * N + n)]), bits_of(tall.data[size_t(r * N + n)]))
            << type_name<T>() << " M " << m << " row " << r << " col " << n;
  }
}

TEST(GemmTest, GemvRowsEqualEngineRows) {
  std::mt19937 rng(5);
  check_gemv_equals_engine<float>(rng, 77, 301);
  check_gemv_equals_engine<float>(rng, 1500, 40);
  check_gemv_equals_engine<half>(rng, 130, 600);
  check_gemv_equals_engine<bfloat16>(rng, 64, 1023);
}

// Sums whose order matters: a chain of k that a different order would round differently.
TEST(GemmTest, SumsInIncreasingK) {
  const int64_t K = 3;
  std::vector<float> a = {1.0f, 1.0f, 1.0f}, b = {1e8f, 1.0f, -1e8f}, c(1);
  gemm(DenseAccessor<float, 3>(c.data(), {1, 1, 1}), DenseAccessor<float, 3>(a.data(), {1, 1, K}),
       DenseAccessor<float, 3>(b.data(), {1, K, 1}), 1, 1, 1, K);
  EXPECT_EQ(c[0], 0.0f); // (1e8 + 1) rounds to 1e8, then - 1e8
  std::vector<float> a5(5 * K, 1.0f), c5(5);
  gemm(DenseAccessor<float, 3>(c5.data(), {1, 5, 1}), DenseAccessor<float, 3>(a5.data(), {1, 5, K}),
       DenseAccessor<float, 3>(b.data(), {1, K, 1}), 1, 5, 1, K);
  for (float v : c5)
    EXPECT_EQ(v, 0.0f);
}

// A C whose rows reach memory element by element (a transposed output, behind a fused
// epilogue or not) is stored by the engine a block at a time (store_c_block), not row by row
// through runs of a few elements; a C with runs along its rows keeps the row stores.
TEST(GemmTest, TransposedOutputsStoreWholeBlocks) {
  using A = DenseAccessor<float, 3>;
  auto ref_of = [](const auto& c, const A& a, const A& b) {
    const detail::GemmProblem<float, std::remove_cvref_t<decltype(c)>, A, A, NoEpilogue> p{
        c, a, b, NoEpilogue{}};
    return gemm_problem_ref<float, 32>(p).store_c_block != nullptr;
  };
  std::vector<float> x(64), bias(4);
  const A a(x.data(), {1, 4, 4}), b(x.data(), {1, 4, 4});
  const TransposedBiasRelu<float> epilogue{PermutedAccessor<float, 3, true>({1, 4, 4}, {0, 2, 1}),
                                           DenseAccessor<float, 1>(bias.data(), {4})};
  EXPECT_TRUE(ref_of(epilogue, a, b));
  EXPECT_TRUE(ref_of(PermutedAccessor<float, 3, true>({1, 4, 4}, {0, 2, 1}), a, b));
  EXPECT_FALSE(ref_of(A(x.data(), {1, 4, 4}), a, b));
  EXPECT_FALSE(ref_of(ComputedAccessor<float, 3>({1, 4, 4}), a, b));
}

// The split search's memo (per thread, a fixed number of slots): shapes far more than its slots,
// asked for in one order and then in the reverse, get the same blocks both times, whichever
// were remembered and whichever evicted.
TEST(GemmTest, BlockSplitsRememberedPerShape) {
  struct Shape {
    int64_t batch, m, n, k;
  };
  std::vector<Shape> shapes;
  for (int64_t m : {10, 16, 32, 48, 64, 128, 192, 256})
    for (int64_t n : {9, 17, 49, 196, 300})
      for (int64_t k : {16, 96, 288, 576})
        for (int64_t batch : {1, 3})
          shapes.push_back({batch, m, n, k});
  auto blocks_of = [](const Shape& s) {
    const GemmBlocks b = gemm_blocks<float, 12, 32>(s.batch, s.m, s.n, s.k, 2);
    return std::vector<int64_t>{b.mc, b.nc, b.kc, b.tm, b.tn};
  };
  std::vector<std::vector<int64_t>> first;
  for (const Shape& s : shapes)
    first.push_back(blocks_of(s));
  for (size_t i = shapes.size(); i-- > 0;) {
    const Shape& s = shapes[i];
    EXPECT_EQ(blocks_of(s), first[i])
        << "batch " << s.batch << " M " << s.m << " N " << s.n << " K " << s.k;
  }
}

} // namespace
} // namespace vtc::kernels::test
