// Golden bit patterns: each kernel's output on fixed inputs, hashed. The summation orders are
// fixed functions of the shapes, written with exactly rounded operations (fma, add, the
// polynomial exp), so these hashes must not change with the instruction set (AVX-512, AVX2,
// scalar), -ffp-contract, the optimisation level or the thread count. A deliberate change of
// an order changes them, and then they are updated here together with that change.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/norm.h"

namespace vtc::kernels::test {
namespace {

// Values in [-1, 1) from a fixed xorshift generator (independent of the standard library).
std::vector<float> fixed_values(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (auto& f : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    f = float(int64_t(x >> 40) - (int64_t(1) << 23)) / float(1 << 23);
  }
  return v;
}

uint64_t fnv_hash(const std::vector<float>& v) {
  uint64_t h = 1469598103934665603ull;
  for (float f : v) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    h = (h ^ b) * 1099511628211ull;
  }
  return h;
}

TEST(DeterminismTest, GemmAndGemv) {
  auto a = fixed_values(37 * 300, 1), b = fixed_values(300 * 45, 2);
  std::vector<float> c(37 * 45), c3(3 * 45);
  gemm(DenseAccessor<float, 3>(c.data(), {1, 37, 45}),
       DenseAccessor<float, 3>(a.data(), {1, 37, 300}),
       DenseAccessor<float, 3>(b.data(), {1, 300, 45}), 1, 37, 45, 300);
  gemm(DenseAccessor<float, 3>(c3.data(), {1, 3, 45}),
       DenseAccessor<float, 3>(a.data(), {1, 3, 300}),
       DenseAccessor<float, 3>(b.data(), {1, 300, 45}), 1, 3, 45, 300);
  EXPECT_EQ(fnv_hash(c), 0xc0f7ee0f25b3e62ull);
  EXPECT_EQ(fnv_hash(c3), 0x15bea32af60c5dd1ull);
}

TEST(DeterminismTest, Conv) {
  Conv2dShape s;
  s.c_in = 8;
  s.c_out = 12;
  s.h = s.w = s.h_out = s.w_out = 13;
  s.kh = s.kw = 3;
  s.groups = 4;
  s.pad_top = s.pad_left = 1;
  auto x = fixed_values(8 * 13 * 13, 3), w = fixed_values(12 * 2 * 9, 4);
  std::vector<float> y(12 * 13 * 13);
  conv2d(DenseAccessor<float, 4>(y.data(), {1, 12, 13, 13}),
         DenseAccessor<float, 4>(x.data(), {1, 8, 13, 13}),
         DenseAccessor<float, 4>(w.data(), {12, 2, 3, 3}), s);
  EXPECT_EQ(fnv_hash(y), 0x977d5f0c1228f25cull);
}

TEST(DeterminismTest, LayerNormAndSoftmax) {
  auto x = fixed_values(5 * 333, 5);
  std::vector<float> y(x.size()), z(x.size());
  layer_norm(DenseAccessor<float, 2>(y.data(), {5, 333}),
             DenseAccessor<float, 2>(x.data(), {5, 333}), 5, 333, 1e-5);
  softmax(DenseAccessor<float, 2>(z.data(), {5, 333}), DenseAccessor<float, 2>(x.data(), {5, 333}),
          5, 333);
  EXPECT_EQ(fnv_hash(y), 0xc21577f38695e538ull);
  EXPECT_EQ(fnv_hash(z), 0xa313d113d87e567ull);
}

TEST(DeterminismTest, Attention) {
  auto q = fixed_values(4 * 64, 6), k = fixed_values(4 * 700 * 64, 7);
  auto v = fixed_values(4 * 700 * 64, 8);
  std::vector<float> o(4 * 64), op(4 * 9 * 64);
  AttentionShape sh;
  sh.heads = 4;
  sh.kv_len = 700;
  sh.d = sh.dv = 64;
  AttentionParams p;
  p.scale = 0.125;
  decode_attention(DenseAccessor<float, 3>(o.data(), {1, 4, 64}),
                   DenseAccessor<float, 3>(q.data(), {1, 4, 64}),
                   DenseAccessor<float, 4>(k.data(), {1, 4, 700, 64}),
                   DenseAccessor<float, 4>(v.data(), {1, 4, 700, 64}), sh, p);
  EXPECT_EQ(fnv_hash(o), 0x22ee008ea7146908ull);
  sh.q_len = 9;
  p.causal = true;
  auto qp = fixed_values(4 * 9 * 64, 9);
  prefill_attention(DenseAccessor<float, 4>(op.data(), {1, 4, 9, 64}),
                    DenseAccessor<float, 4>(qp.data(), {1, 4, 9, 64}),
                    DenseAccessor<float, 4>(k.data(), {1, 4, 700, 64}),
                    DenseAccessor<float, 4>(v.data(), {1, 4, 700, 64}), sh, p);
  EXPECT_EQ(fnv_hash(op), 0xedfe8e08d847a651ull);
}

} // namespace
} // namespace vtc::kernels::test
