// Tests of attention.h against a double-precision softmax(QK^T)V: decode over KV lengths
// around the chunk size with masks, valid lengths and soft-capping; prefill with causal,
// sliding-window and mask visibility. The property the paper's Llama result rests on:
// reading K and V through the grouped-query Expand mapping onto a [B, Hkv, L, D] cache gives
// the same bits as reading a pre-expanded dense copy (and as computed / split accessors).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "kernel_test_util.h"
#include "kernels/cpu/attention.h"

namespace vtc::kernels::test {
namespace {

constexpr int64_t kGroup = 4; // query heads per cache head

// The dense copy of a cache [B, Hkv, L, D] expanded to [B, Hkv * kGroup, L, D].
template <typename T> Tensor<T, 4> expand_heads(const Tensor<T, 4>& cache) {
  const Index<4> s = cache.shape;
  Tensor<T, 4> out({s[0], s[1] * kGroup, s[2], s[3]});
  for (int64_t f = 0; f < volume<4>(out.shape); ++f) {
    Index<4> i = unflatten<4>(out.shape, f);
    i[1] /= kGroup;
    out.data[size_t(f)] = cache.data[size_t(cache.acc_offset(i))];
  }
  return out;
}

// Softmax-weighted sum of value rows for one query, over the keys `visible` says.
template <typename Visible, typename Logit, typename Value>
void reference_row(int64_t n_keys, int64_t dv, const Visible& visible, const Logit& logit,
                   const Value& value, double* out) {
  std::vector<double> s(static_cast<size_t>(n_keys), -std::numeric_limits<double>::infinity());
  double mx = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < n_keys; ++j)
    if (visible(j)) {
      s[size_t(j)] = logit(j);
      mx = std::max(mx, s[size_t(j)]);
    }
  for (int64_t e = 0; e < dv; ++e)
    out[e] = 0;
  if (mx == -std::numeric_limits<double>::infinity()) return;
  double sum = 0;
  for (int64_t j = 0; j < n_keys; ++j) {
    if (s[size_t(j)] == -std::numeric_limits<double>::infinity()) continue;
    const double p = std::exp(s[size_t(j)] - mx);
    sum += p;
    for (int64_t e = 0; e < dv; ++e)
      out[e] += p * value(j, e);
  }
  for (int64_t e = 0; e < dv; ++e)
    out[e] /= sum;
}

double capped(double s, double cap) {
  return cap > 0 ? cap * std::tanh(s / cap) : s;
}

template <typename T> Tensor<T, 3> random_mask(std::mt19937& rng, const Index<3>& shape) {
  Tensor<T, 3> m(shape);
  std::uniform_real_distribution<double> d(0, 1);
  for (auto& v : m.data)
    v = from_compute<T>(d(rng) < 0.2 ? -std::numeric_limits<float>::infinity()
                                     : float(d(rng) * 2 - 1));
  return m;
}

template <typename T>
void check_decode(std::mt19937& rng, int64_t B, int64_t Hkv, int64_t L, int64_t D, int64_t Dv,
                  const AttentionParams& prm, bool with_mask) {
  const int64_t H = Hkv * kGroup;
  std::ostringstream o;
  o << type_name<T>() << " decode B" << B << " H" << H << " Hkv" << Hkv << " L" << L << " D" << D
    << " Dv" << Dv << " valid " << prm.valid_length << " cap " << prm.softcap
    << (with_mask ? " mask" : "");
  const std::string what = o.str();
  auto q = random_tensor<T, 3>(rng, {B, H, D});
  auto kc = random_tensor<T, 4>(rng, {B, Hkv, L, D});
  auto vc = random_tensor<T, 4>(rng, {B, Hkv, L, Dv});
  auto mask = random_mask<T>(rng, {B, H, L});
  const int64_t valid = prm.valid_length < 0 ? L : std::min(prm.valid_length, L);
  AttentionShape sh;
  sh.batch = B;
  sh.heads = H;
  sh.kv_len = L;
  sh.d = D;
  sh.dv = Dv;

  std::vector<double> ref(static_cast<size_t>(B * H * Dv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      reference_row(
          L, Dv,
          [&](int64_t j) {
            return j < valid && (!with_mask || !std::isinf(mask.at({b, h, j})));
          },
          [&](int64_t j) {
            double s = 0;
            for (int64_t e = 0; e < D; ++e)
              s += q.at({b, h, e}) * kc.at({b, h / kGroup, j, e});
            return capped(s * prm.scale, prm.softcap) + (with_mask ? mask.at({b, h, j}) : 0.0);
          },
          [&](int64_t j, int64_t e) {
            return vc.at({b, h / kGroup, j, e});
          },
          ref.data() + (b * H + h) * Dv);

  auto kx = expand_heads(kc), vx = expand_heads(vc);
  auto run = [&](const auto& out, const auto& k, const auto& v) {
    if (with_mask)
      decode_attention(out, q.acc(), k, v, sh, prm, mask.acc());
    else
      decode_attention(out, q.acc(), k, v, sh, prm);
  };
  Tensor<T, 3> dense({B, H, Dv});
  run(dense.acc(), kx.acc(), vx.acc());
  expect_close(dense, ref, 2e-5, unit_roundoff<T>() * 2 + 1e-5, what);

  using Gqa = ExpandAccessor<DenseAccessor<T, 4>, 1, kGroup>;
  Tensor<T, 3> gqa({B, H, Dv});
  run(gqa.acc(), Gqa{kc.acc()}, Gqa{vc.acc()});
  expect_bitwise(gqa, dense, what + ": GQA mapping vs expanded copy");

  ComputedAccessor<T, 4> ck(kx.shape);
  SplitAccessor<T, 4, 8> sv(vx.shape);
  PermutedAccessor<T, 3, false> po({B, H, Dv}, {2, 0, 1});
  fill_from(ck, kx);
  fill_from(sv, vx);
  run(po, ck, sv);
  expect_bitwise(po, dense, what + ": computed K, split V, permuted O");
}

TEST(AttentionTest, DecodeMatchesReferenceAndGqaMappingIsBitwiseExact) {
  std::mt19937 rng(51);
  AttentionParams plain;
  plain.scale = 0.125;
  AttentionParams capped_valid = plain;
  capped_valid.softcap = 2.0;
  capped_valid.valid_length = 290;
  for (int64_t L : {1, 5, 256, 300, 700}) {
    check_decode<float>(rng, 2, 2, L, 64, 64, plain, false);
    check_decode<float>(rng, 1, 1, L, 17, 24, capped_valid, true);
    check_decode<half>(rng, 1, 2, L, 32, 32, plain, true);
    check_decode<bfloat16>(rng, 2, 1, L, 64, 64, capped_valid, false);
  }
}

TEST(AttentionTest, DecodeWithNothingVisibleGivesZeros) {
  std::mt19937 rng(52);
  auto q = random_tensor<float, 3>(rng, {1, 1, 8});
  auto k = random_tensor<float, 4>(rng, {1, 1, 4, 8});
  Tensor<float, 3> out({1, 1, 8});
  AttentionShape sh;
  sh.kv_len = 4;
  sh.d = sh.dv = 8;
  AttentionParams prm;
  prm.valid_length = 0;
  out.data.assign(8, 7.0f);
  decode_attention(out.acc(), q.acc(), k.acc(), k.acc(), sh, prm);
  for (float v : out.data)
    EXPECT_EQ(v, 0.0f);
}

template <typename T>
void check_prefill(std::mt19937& rng, int64_t Hkv, int64_t T_, int64_t S, int64_t D,
                   const AttentionParams& prm, bool with_mask) {
  const int64_t B = 1, H = Hkv * kGroup;
  std::ostringstream o;
  o << type_name<T>() << " prefill H" << H << " T" << T_ << " S" << S << " D" << D
    << (prm.causal ? " causal" : "") << " window " << prm.window << (with_mask ? " mask" : "");
  const std::string what = o.str();
  auto q = random_tensor<T, 4>(rng, {B, H, T_, D});
  auto kc = random_tensor<T, 4>(rng, {B, Hkv, S, D});
  auto vc = random_tensor<T, 4>(rng, {B, Hkv, S, D});
  Tensor<T, 4> mask(Index<4>{B, H, T_, S});
  {
    auto m3 = random_mask<T>(rng, {B * H, T_, S});
    mask.data = m3.data;
  }
  AttentionShape sh;
  sh.batch = B;
  sh.heads = H;
  sh.q_len = T_;
  sh.kv_len = S;
  sh.d = sh.dv = D;
  const int64_t offset = S - T_;
  std::vector<double> ref(static_cast<size_t>(B * H * T_ * D));
  for (int64_t h = 0; h < H; ++h)
    for (int64_t t = 0; t < T_; ++t)
      reference_row(
          S, D,
          [&](int64_t j) {
            if (prm.causal && j > t + offset) return false;
            if (prm.window > 0 && j <= t + offset - prm.window) return false;
            return !with_mask || !std::isinf(mask.at({0, h, t, j}));
          },
          [&](int64_t j) {
            double s = 0;
            for (int64_t e = 0; e < D; ++e)
              s += q.at({0, h, t, e}) * kc.at({0, h / kGroup, j, e});
            return capped(s * prm.scale, prm.softcap) + (with_mask ? mask.at({0, h, t, j}) : 0.0);
          },
          [&](int64_t j, int64_t e) {
            return vc.at({0, h / kGroup, j, e});
          },
          ref.data() + (h * T_ + t) * D);

  auto kx = expand_heads(kc), vx = expand_heads(vc);
  auto run = [&](const auto& out, const auto& k, const auto& v) {
    if (with_mask)
      prefill_attention(out, q.acc(), k, v, sh, prm, mask.acc());
    else
      prefill_attention(out, q.acc(), k, v, sh, prm);
  };
  Tensor<T, 4> dense({B, H, T_, D});
  run(dense.acc(), kx.acc(), vx.acc());
  expect_close(dense, ref, 2e-5, unit_roundoff<T>() * 2 + 1e-5, what);

  using Gqa = ExpandAccessor<DenseAccessor<T, 4>, 1, kGroup>;
  Tensor<T, 4> gqa({B, H, T_, D});
  run(gqa.acc(), Gqa{kc.acc()}, Gqa{vc.acc()});
  expect_bitwise(gqa, dense, what + ": GQA mapping vs expanded copy");

  SplitAccessor<T, 4, 4> sk(kx.shape);
  ComputedAccessor<T, 4> cv(vx.shape);
  SplitAccessor<T, 4, 8> so({B, H, T_, D});
  fill_from(sk, kx);
  fill_from(cv, vx);
  run(so, sk, cv);
  expect_bitwise(so, dense, what + ": split K, computed V, split O");
}

TEST(AttentionTest, PrefillMatchesReferenceAndIsAccessorInvariant) {
  std::mt19937 rng(53);
  AttentionParams causal;
  causal.scale = 0.2;
  causal.causal = true;
  AttentionParams window = causal;
  window.window = 9;
  window.softcap = 3.0;
  AttentionParams full;
  full.scale = 0.2;
  for (auto [T_, S] : {std::pair<int64_t, int64_t>{1, 1}, {7, 7}, {33, 33}, {20, 90}, {70, 70}}) {
    check_prefill<float>(rng, 1, T_, S, 32, causal, false);
    check_prefill<float>(rng, 2, T_, S, 16, window, false);
    check_prefill<half>(rng, 1, T_, S, 32, full, true);
    check_prefill<bfloat16>(rng, 1, T_, S, 24, causal, true);
  }
}

} // namespace
} // namespace vtc::kernels::test
