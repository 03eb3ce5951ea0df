// Tests of blas.h: the OpenBLAS kernel against a double-precision triple loop for every
// transposition of A and B, for single rows and single columns (its sgemv forms) and for
// batches at given offsets (a broadcast A, per-batch B); and bitwise repeatability on the
// same thread count.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <sstream>
#include <vector>

#include "kernels/cpu/blas.h"

namespace vtc::kernels::test {
namespace {

std::vector<float> random_values(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(size_t(n > 0 ? n : 0));
  for (float& x : v)
    x = d(rng);
  return v;
}

// C[M, N] = op(A) . op(B) in double, with A stored [K, M] when trans_a, B [N, K] when trans_b.
std::vector<double> reference(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* a,
                              const float* b) {
  std::vector<double> c(size_t(M * N), 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += double(ta ? a[k * M + m] : a[m * K + k]) * double(tb ? b[n * K + k] : b[k * N + n]);
      c[size_t(m * N + n)] = s;
    }
  return c;
}

void expect_close(const std::vector<double>& expected, const float* actual, int64_t K,
                  const std::string& what) {
  for (size_t i = 0; i < expected.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], 1e-5 * double(K) + 1e-6) << what << " element " << i;
}

TEST(Blas, EveryTranspositionRowAndColumn) {
  std::mt19937 rng(7);
  const int64_t shapes[][3] = {{1, 37, 53}, {29, 1, 41},  {1, 1, 77},
                               {5, 33, 70}, {17, 9, 300}, {64, 65, 66}};
  for (const auto& s : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const int64_t M = s[0], N = s[1], K = s[2];
        std::ostringstream what;
        what << "M " << M << " N " << N << " K " << K << " transA " << ta << " transB " << tb;
        auto a = random_values(rng, M * K), b = random_values(rng, K * N);
        std::vector<float> c(size_t(M * N), 1e30f);
        blas_sgemm_batched(ta, tb, 1, M, N, K, a.data(), nullptr, b.data(), nullptr, c.data());
        expect_close(reference(ta, tb, M, N, K, a.data(), b.data()), c.data(), K, what.str());
      }
}

TEST(Blas, BatchesAtOffsets) {
  std::mt19937 rng(8);
  const int64_t batch = 3, M = 4, N = 6, K = 5;
  auto a = random_values(rng, M * K);         // one A for every batch (broadcast)
  auto b = random_values(rng, batch * K * N); // a B per batch, in reverse order
  const int64_t b_offsets[] = {2 * K * N, K * N, 0};
  std::vector<float> c(size_t(batch * M * N));
  blas_sgemm_batched(false, false, batch, M, N, K, a.data(), nullptr, b.data(), b_offsets,
                     c.data());
  for (int64_t i = 0; i < batch; ++i)
    expect_close(reference(false, false, M, N, K, a.data(), b.data() + b_offsets[i]),
                 c.data() + i * M * N, K, "batch " + std::to_string(i));
}

TEST(Blas, RepeatsBitForBit) {
  std::mt19937 rng(9);
  const int64_t M = 16, N = 300, K = 700;
  auto a = random_values(rng, M * K), b = random_values(rng, K * N);
  std::vector<float> first(size_t(M * N)), again(size_t(M * N));
  blas_sgemm_batched(false, false, 1, M, N, K, a.data(), nullptr, b.data(), nullptr, first.data());
  for (int r = 0; r < 3; ++r) {
    blas_sgemm_batched(false, false, 1, M, N, K, a.data(), nullptr, b.data(), nullptr,
                       again.data());
    EXPECT_EQ(0, std::memcmp(first.data(), again.data(), first.size() * sizeof(float)));
  }
}

} // namespace
} // namespace vtc::kernels::test
