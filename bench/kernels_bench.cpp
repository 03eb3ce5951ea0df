// Google Benchmark figures for the CPU kernel templates (kernels/cpu): GEMM 512^3 f32 against
// OpenBLAS cblas_sgemm (the reference point only; the kernels never call BLAS), GEMV
// 1x4096x4096 in f32 and bf16 as bandwidth, decode attention with H=32 query heads on an
// Hkv=8 KV cache (L=4096, D=128) read through the grouped-query mapping versus through a
// dense pre-expanded copy, and convolutions (depthwise direct, 3x3 implicit GEMM).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/gemm.h"

namespace {

namespace k = vtc::kernels;

template <typename T> std::vector<T> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<T> v(n);
  for (auto& x : v)
    x = k::from_compute<T>(d(rng));
  return v;
}

void BM_GemmVtc(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto a = random_vector<float>(size_t(n * n), 1), b = random_vector<float>(size_t(n * n), 2);
  std::vector<float> c(static_cast<size_t>(n * n));
  k::DenseAccessor<float, 3> aa(a.data(), {1, n, n}), ba(b.data(), {1, n, n}),
      ca(c.data(), {1, n, n});
  for (auto _ : state) {
    k::gemm(ca, aa, ba, 1, n, n, n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * double(n * n * n), benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}
BENCHMARK(BM_GemmVtc)->Arg(512)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_GemmOpenBlas(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto a = random_vector<float>(size_t(n * n), 1), b = random_vector<float>(size_t(n * n), 2);
  std::vector<float> c(static_cast<size_t>(n * n));
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(n), int(n), 1.0f, a.data(),
                int(n), b.data(), int(n), 0.0f, c.data(), int(n));
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * double(n * n * n), benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}
BENCHMARK(BM_GemmOpenBlas)->Arg(512)->Unit(benchmark::kMicrosecond)->UseRealTime();

// y[1, N] = x[1, K] . W[K, N], W physical: bytes of W per second.
template <typename T> void BM_Gemv(benchmark::State& state) {
  const int64_t K = 4096, N = 4096;
  auto x = random_vector<float>(size_t(K), 3);
  auto w = random_vector<T>(size_t(K * N), 4);
  std::vector<float> y(static_cast<size_t>(N));
  k::DenseAccessor<float, 3> xa(x.data(), {1, 1, K}), ya(y.data(), {1, 1, N});
  k::DenseAccessor<T, 3> wa(w.data(), {1, K, N});
  for (auto _ : state) {
    k::gemm(ya, xa, wa, 1, 1, N, K);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * K * N * int64_t(sizeof(T)));
}
BENCHMARK_TEMPLATE(BM_Gemv, float)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_Gemv, k::bfloat16)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_GemvOpenBlas(benchmark::State& state) {
  const int64_t K = 4096, N = 4096;
  auto x = random_vector<float>(size_t(K), 3), w = random_vector<float>(size_t(K * N), 4);
  std::vector<float> y(static_cast<size_t>(N));
  for (auto _ : state) {
    cblas_sgemv(CblasRowMajor, CblasTrans, int(K), int(N), 1.0f, w.data(), int(N), x.data(), 1,
                0.0f, y.data(), 1);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * K * N * int64_t(sizeof(float)));
}
BENCHMARK(BM_GemvOpenBlas)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Query head h of [B, H, L, D] reads cache head h / Group of a dense [B, Hkv, L, D] cache.
template <typename T, int64_t Group> struct GqaAccessor {
  using value_type = T;
  static constexpr int rank = 4;
  static constexpr int64_t contig = 1 << 30;
  static constexpr bool has_ptr = true;
  k::DenseAccessor<T, 4> cache;
  k::Index<4> map(k::Index<4> i) const {
    i[1] /= Group;
    return i;
  }
  T* ptr(const k::Index<4>& i) const { return cache.ptr(map(i)); }
  auto load(const k::Index<4>& i) const { return cache.load(map(i)); }
};

// Decode attention, H=32 over Hkv=8, L=4096, D=128. Arg 0: through the GQA mapping onto the
// cache; arg 1: through a dense copy expanded to 32 heads. Bytes: K and V as read.
template <typename T> void BM_DecodeAttention(benchmark::State& state) {
  constexpr int64_t B = 1, H = 32, Hkv = 8, L = 4096, D = 128, G = H / Hkv;
  const bool expanded = state.range(0) == 1;
  auto q = random_vector<T>(size_t(B * H * D), 5);
  auto kc = random_vector<T>(size_t(B * Hkv * L * D), 6);
  auto vc = random_vector<T>(size_t(B * Hkv * L * D), 7);
  std::vector<T> o(static_cast<size_t>(B * H * D)), kx, vx;
  k::AttentionShape sh;
  sh.batch = B;
  sh.heads = H;
  sh.kv_len = L;
  sh.d = sh.dv = D;
  k::AttentionParams prm;
  prm.scale = 1.0 / std::sqrt(double(D));
  k::DenseAccessor<T, 3> qa(q.data(), {B, H, D}), oa(o.data(), {B, H, D});
  if (expanded) {
    kx.resize(size_t(B * H * L * D));
    vx.resize(kx.size());
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L * D; ++i) {
        kx[size_t(h * L * D + i)] = kc[size_t(h / G * L * D + i)];
        vx[size_t(h * L * D + i)] = vc[size_t(h / G * L * D + i)];
      }
    k::DenseAccessor<T, 4> ka(kx.data(), {B, H, L, D}), va(vx.data(), {B, H, L, D});
    for (auto _ : state) {
      k::decode_attention(oa, qa, ka, va, sh, prm);
      benchmark::DoNotOptimize(o.data());
    }
  } else {
    GqaAccessor<T, G> ka{k::DenseAccessor<T, 4>(kc.data(), {B, Hkv, L, D})};
    GqaAccessor<T, G> va{k::DenseAccessor<T, 4>(vc.data(), {B, Hkv, L, D})};
    for (auto _ : state) {
      k::decode_attention(oa, qa, ka, va, sh, prm);
      benchmark::DoNotOptimize(o.data());
    }
  }
  const int64_t heads_read = expanded ? H : Hkv;
  state.SetBytesProcessed(int64_t(state.iterations()) * 2 * B * heads_read * L * D *
                          int64_t(sizeof(T)));
  state.SetLabel(expanded ? "dense expanded copy" : "GQA mapping onto the cache");
}
BENCHMARK_TEMPLATE(BM_DecodeAttention, float)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_DecodeAttention, k::bfloat16)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// Convolution, f32, 56x56 planes. Arg: 0 = depthwise 3x3 stride 1 over 144 channels,
// 1 = depthwise 3x3 stride 2, 2 = dense 3x3 64 -> 64 (implicit GEMM).
void BM_Conv(benchmark::State& state) {
  const int mode = int(state.range(0));
  k::Conv2dShape s;
  s.h = s.w = 56;
  s.kh = s.kw = 3;
  s.pad_top = s.pad_left = 1;
  s.c_in = s.c_out = mode == 2 ? 64 : 144;
  s.groups = mode == 2 ? 1 : s.c_in;
  s.stride_h = s.stride_w = mode == 1 ? 2 : 1;
  s.h_out = (s.h + 2 - 3) / s.stride_h + 1;
  s.w_out = (s.w + 2 - 3) / s.stride_w + 1;
  auto x = random_vector<float>(size_t(s.c_in * s.h * s.w), 8);
  auto w = random_vector<float>(size_t(s.c_out * (s.c_in / s.groups) * 9), 9);
  auto bias = random_vector<float>(size_t(s.c_out), 10);
  std::vector<float> y(static_cast<size_t>(s.c_out * s.h_out * s.w_out));
  k::DenseAccessor<float, 4> xa(x.data(), {1, s.c_in, s.h, s.w});
  k::DenseAccessor<float, 4> wa(w.data(), {s.c_out, s.c_in / s.groups, 3, 3});
  k::DenseAccessor<float, 4> ya(y.data(), {1, s.c_out, s.h_out, s.w_out});
  const auto epi = k::bias_epilogue(k::DenseAccessor<float, 1>(bias.data(), {s.c_out}));
  for (auto _ : state) {
    k::conv2d(ya, xa, wa, s, epi);
    benchmark::DoNotOptimize(y.data());
  }
  const double flops = 2.0 * double(s.c_out * s.h_out * s.w_out * (s.c_in / s.groups) * 9);
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(x.size() + y.size()) * 4);
  state.SetLabel(mode == 0   ? "depthwise 3x3 s1, 144ch"
                 : mode == 1 ? "depthwise 3x3 s2, 144ch"
                             : "dense 3x3 64->64");
}
BENCHMARK(BM_Conv)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

} // namespace
