// Google Benchmark figures for the CPU kernel templates (kernels/cpu): GEMM 512^3 f32 against
// OpenBLAS cblas_sgemm, GEMV 1x4096x4096 in f32 and bf16 as bandwidth, f32 matrix products of
// many shapes on the template and on the OpenBLAS library kernel (the figures behind
// src/target/cpu_gemm_rule.cpp), decode attention with H=32 query heads on an Hkv=8 KV
// cache (L=4096, D=128) read through the grouped-query mapping versus through a dense
// pre-expanded copy, and convolutions (depthwise direct, 3x3 implicit GEMM).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_max_pool.h"
#include "kernels/cpu/conv_nhwc.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/pool.h"
#include "kernels/cpu/pool_nhwc.h"
#include "kernels/cpu/resample.h"
#include "kernels/cpu/resize.h"

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

// C[batch, M, N] = A[batch, M, K] . B[batch, K, N], f32, dense: vtc's template against
// OpenBLAS as the cpu target's library kernels call it (kernels/cpu/blas.h: one cblas_sgemm
// per batch, cblas_sgemv for a single row or column) on the shapes the library-or-template
// rule is about: Llama-3-8B decode projections (M = 1 and 16; K, N of 4096, 14336, 1024),
// prefill-like M = 128..512, small models (K, N of 64..512), the crossover in M, batches of
// small products, single rows and columns. Args: M, K, N, batch. Run with OMP_NUM_THREADS=1
// for per-core figures (OpenBLAS follows the OpenMP thread count).
void matmul_counters(benchmark::State& state) {
  const double flops =
      2.0 * double(state.range(0) * state.range(1) * state.range(2) * state.range(3));
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

struct MatMulOperands {
  int64_t M, K, N, batch;
  std::vector<float> a, b, c;
  explicit MatMulOperands(const benchmark::State& state)
      : M(state.range(0)), K(state.range(1)), N(state.range(2)), batch(state.range(3)),
        a(random_vector<float>(size_t(batch * M * K), 11)),
        b(random_vector<float>(size_t(batch * K * N), 12)), c(size_t(batch * M * N)) {}
};

void BM_MatMulVtc(benchmark::State& state) {
  MatMulOperands o(state);
  k::DenseAccessor<float, 3> aa(o.a.data(), {o.batch, o.M, o.K}),
      ba(o.b.data(), {o.batch, o.K, o.N}), ca(o.c.data(), {o.batch, o.M, o.N});
  for (auto _ : state) {
    k::gemm(ca, aa, ba, o.batch, o.M, o.N, o.K);
    benchmark::DoNotOptimize(o.c.data());
  }
  matmul_counters(state);
}

// B read at batch 0 whatever the batch: a weight shared by every batch, as MatMul broadcasts
// [batch, M, K] . [K, N].
struct SharedBAccessor {
  using value_type = float;
  static constexpr int rank = 3;
  static constexpr int64_t contig = 1 << 30;
  static constexpr bool has_ptr = true;
  k::DenseAccessor<float, 3> b;
  float* ptr(const k::Index<3>& i) const { return b.ptr({0, i[1], i[2]}); }
  auto load(const k::Index<3>& i) const { return b.load({0, i[1], i[2]}); }
};

// The template as generated code runs [batch, M, K] . [K, N] (decode at batch 16 is 16
// products of one row over one weight); OpenBLAS runs it as one [batch * M, K] . [K, N].
void BM_MatMulVtcSharedB(benchmark::State& state) {
  const int64_t M = state.range(0), K = state.range(1), N = state.range(2), batch = state.range(3);
  auto a = random_vector<float>(size_t(batch * M * K), 11);
  auto b = random_vector<float>(size_t(K * N), 12);
  std::vector<float> c(size_t(batch * M * N));
  k::DenseAccessor<float, 3> aa(a.data(), {batch, M, K}), ca(c.data(), {batch, M, N});
  SharedBAccessor ba{k::DenseAccessor<float, 3>(b.data(), {1, K, N})};
  for (auto _ : state) {
    k::gemm(ca, aa, ba, batch, M, N, K);
    benchmark::DoNotOptimize(c.data());
  }
  matmul_counters(state);
}

// The library kernel as generated code calls it (cblas_sgemv for M = 1 or N = 1).
void BM_MatMulOpenBlas(benchmark::State& state) {
  MatMulOperands o(state);
  std::vector<int64_t> a_off, b_off;
  for (int64_t i = 0; i < o.batch; ++i) {
    a_off.push_back(i * o.M * o.K);
    b_off.push_back(i * o.K * o.N);
  }
  for (auto _ : state) {
    k::blas_sgemm_batched(false, false, o.batch, o.M, o.N, o.K, o.a.data(), a_off.data(),
                          o.b.data(), b_off.data(), o.c.data());
    benchmark::DoNotOptimize(o.c.data());
  }
  matmul_counters(state);
}

// cblas_sgemm whatever the shape: what the library kernel would cost without its GEMV forms.
void BM_MatMulOpenBlasSgemm(benchmark::State& state) {
  MatMulOperands o(state);
  const int M = int(o.M), K = int(o.K), N = int(o.N);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, o.a.data(), K, o.b.data(),
                N, 0.0f, o.c.data(), N);
    benchmark::DoNotOptimize(o.c.data());
  }
  matmul_counters(state);
}

void decode_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t m : {1, 16})
    for (auto [kk, n] :
         {std::pair<int64_t, int64_t>{4096, 4096}, {4096, 14336}, {4096, 1024}, {14336, 4096}})
      b->Args({m, kk, n, 1});
}
void prefill_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t m : {128, 512})
    b->Args({m, 4096, 4096, 1});
  b->Args({512, 512, 512, 1});
}
void small_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t m : {1, 4, 16, 64, 196})
    for (int64_t d : {64, 128, 256, 512})
      b->Args({m, d, d, 1});
  b->Args({1024, 64, 64, 1});
  b->Args({1024, 256, 256, 1});
  b->Args({32, 16, 32, 32}); // attention-like: many small batches
  b->Args({1, 128, 4096, 32});
}
// Where the template's packed path overtakes OpenBLAS as M grows on a large weight, and
// batches of small products (attention-like).
void crossover_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t m : {4, 5, 8, 12, 24, 32, 64})
    b->Args({m, 4096, 4096, 1});
  for (auto [kk, n] : {std::pair<int64_t, int64_t>{4096, 14336}, {4096, 1024}, {14336, 4096}})
    b->Args({4, kk, n, 1});
  b->Args({4, 512, 512, 1});
  b->Args({16, 64, 64, 1});
  b->Args({4, 64, 64, 1});
  for (int64_t d : {1024, 2048})
    b->Args({16, d, d, 1});
  b->Args({1, 16, 32, 4});
  b->Args({64, 64, 64, 8});
  b->Args({196, 32, 196, 8});
}
// Decode at batch 4 and 16 as the template runs it: one row per batch over a shared weight.
void shared_weight_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t batch : {4, 16})
    for (auto [kk, n] : {std::pair<int64_t, int64_t>{4096, 4096},
                         {4096, 14336},
                         {4096, 1024},
                         {14336, 4096},
                         {512, 512},
                         {64, 64}})
      b->Args({1, kk, n, batch});
}
// Single rows and single columns, for the GEMV forms.
void gemv_shapes(benchmark::internal::Benchmark* b) {
  for (auto [kk, n] : {std::pair<int64_t, int64_t>{4096, 4096},
                       {4096, 14336},
                       {4096, 1024},
                       {14336, 4096},
                       {64, 64},
                       {256, 256},
                       {512, 512}})
    b->Args({1, kk, n, 1});
  for (int64_t m : {2, 4})
    b->Args({m, 4096, 4096, 1});
  for (int64_t d : {1024, 2048})
    b->Args({1, d, d, 1});
  for (int64_t d : {64, 512, 4096})
    b->Args({d, d, 1, 1});
}

#define VTC_MATMUL_BENCHMARK(fn, shapes)                                                           \
  BENCHMARK(fn)->Apply(shapes)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(0.1)
VTC_MATMUL_BENCHMARK(BM_MatMulVtc, decode_shapes);
VTC_MATMUL_BENCHMARK(BM_MatMulOpenBlas, decode_shapes);
VTC_MATMUL_BENCHMARK(BM_MatMulVtc, prefill_shapes);
VTC_MATMUL_BENCHMARK(BM_MatMulOpenBlas, prefill_shapes);
VTC_MATMUL_BENCHMARK(BM_MatMulVtc, small_shapes);
VTC_MATMUL_BENCHMARK(BM_MatMulOpenBlas, small_shapes);
VTC_MATMUL_BENCHMARK(BM_MatMulVtc, crossover_shapes);
VTC_MATMUL_BENCHMARK(BM_MatMulOpenBlas, crossover_shapes);
VTC_MATMUL_BENCHMARK(BM_MatMulVtcSharedB, shared_weight_shapes);
VTC_MATMUL_BENCHMARK(BM_MatMulVtc, gemv_shapes);
VTC_MATMUL_BENCHMARK(BM_MatMulOpenBlas, gemv_shapes);
VTC_MATMUL_BENCHMARK(BM_MatMulOpenBlasSgemm, gemv_shapes);

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

// conv(out, in, w, s, epi, wref) over random f32 data of shape `s` with a bias epilogue, the
// weights packed once as generated code packs constant weights, the output indexed [n, c, h,
// w] or, where `out_channels_last`, [n, h, w, c]; reports GFLOP/s and the bytes of input and
// output.
template <typename Conv>
void run_conv_with(benchmark::State& state, const k::Conv2dShape& s, const Conv& conv,
                   bool out_channels_last = false) {
  const int64_t cin_g = s.c_in / s.groups, taps = s.kh * s.kw;
  auto x = random_vector<float>(size_t(s.c_in * s.h * s.w), 8);
  auto w = random_vector<float>(size_t(s.c_out * cin_g * taps), 9);
  auto bias = random_vector<float>(size_t(s.c_out), 10);
  std::vector<float> y(static_cast<size_t>(s.c_out * s.h_out * s.w_out));
  k::DenseAccessor<float, 4> xa(x.data(), {1, s.c_in, s.h, s.w});
  k::DenseAccessor<float, 4> wa(w.data(), {s.c_out, cin_g, s.kh, s.kw});
  k::DenseAccessor<float, 4> ya(y.data(), out_channels_last
                                              ? k::Index<4>{1, s.h_out, s.w_out, s.c_out}
                                              : k::Index<4>{1, s.c_out, s.h_out, s.w_out});
  const auto epi = k::bias_epilogue(k::DenseAccessor<float, 1>(bias.data(), {s.c_out}));
  k::ConstantPacks packs;
  for (auto _ : state) {
    conv(ya, xa, wa, s, epi, k::ConstantRef{&packs, w.data()});
    benchmark::DoNotOptimize(y.data());
  }
  const double flops = 2.0 * double(s.c_out * s.h_out * s.w_out * cin_g * taps);
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(x.size() + y.size()) * 4);
}

// run_conv_with over conv2d by the kernel `Kernel` (by_shape: conv2d's choice).
template <k::ConvKernel Kernel = k::ConvKernel::by_shape, int64_t Positions = -1,
          int64_t Width = -1>
void run_conv(benchmark::State& state, const k::Conv2dShape& s) {
  run_conv_with(state, s,
                [](const auto&... args) { k::conv2d<Kernel, Positions, Width>(args...); });
}

// Convolution, f32. Arg: 0 = depthwise 3x3 stride 1 over 144 channels (56x56), 1 = depthwise
// 3x3 stride 2, 2 = dense 3x3 64 -> 64 (56x56, implicit GEMM), 3 = dense 3x3 64 -> 32 and
// 4 = dense 3x3 32 -> 64 on 160x160 planes (the C3k2 block's bottleneck), 5 = dense 1x1
// 128 -> 128 on 160x160, 6 = dense 1x1 464 -> 1024 and 7 = 232 -> 232 on 7x7 planes
// (ShuffleNet's conv5 and stage-4 units), 8 = depthwise 3x3 over 116 channels of 14x14 and
// 9 = the same at stride 2 over 232 channels (ShuffleNet's stage 3 and 4); pointwise planes are
// flattened to one row, as generated code runs them. Weights are constants packed once, as in
// generated code.
void BM_Conv(benchmark::State& state) {
  const int mode = int(state.range(0));
  k::Conv2dShape s;
  const bool pointwise = mode >= 5 && mode <= 7, small_dw = mode >= 8;
  s.h = s.w = small_dw ? 14 : mode >= 6 ? 7 : mode >= 3 ? 160 : 56;
  s.kh = s.kw = pointwise ? 1 : 3;
  s.pad_top = s.pad_left = pointwise ? 0 : 1;
  const int64_t cin[] = {144, 144, 64, 64, 32, 128, 464, 232, 116, 232},
                cout[] = {144, 144, 64, 32, 64, 128, 1024, 232, 116, 232};
  s.c_in = cin[mode];
  s.c_out = cout[mode];
  s.groups = mode <= 1 || small_dw ? s.c_in : 1;
  s.stride_h = s.stride_w = mode == 1 || mode == 9 ? 2 : 1;
  if (pointwise) { // a pointwise convolution runs over its plane flattened to one row
    s.w = s.h * s.w;
    s.h = 1;
  }
  s.h_out = (s.h + 2 * s.pad_top - s.kh) / s.stride_h + 1;
  s.w_out = (s.w + 2 * s.pad_left - s.kw) / s.stride_w + 1;
  run_conv(state, s);
  const char* labels[] = {"depthwise 3x3 s1, 144ch",
                          "depthwise 3x3 s2, 144ch",
                          "dense 3x3 64->64",
                          "dense 3x3 64->32, 160x160",
                          "dense 3x3 32->64, 160x160",
                          "dense 1x1 128->128, 160x160",
                          "dense 1x1 464->1024, 7x7",
                          "dense 1x1 232->232, 7x7",
                          "depthwise 3x3 s1, 116ch, 14x14",
                          "depthwise 3x3 s2, 232ch, 14x14"};
  state.SetLabel(labels[mode]);
}
BENCHMARK(BM_Conv)->DenseRange(0, 9)->Unit(benchmark::kMicrosecond)->UseRealTime();

// run_conv_with over conv2d_winograd on the tile winograd_tile() gives the shape, among those
// of BM_ConvSmall's shapes (false, the run skipped, where none or the shape does not fit).
bool run_winograd(benchmark::State& state, const k::Conv2dShape& s) {
  const k::WinogradTile t = k::winograd_tile(s.h_out, s.w_out, s.c_out);
  auto run = [&]<int X, int Rows, int Panels>() {
    if (t.x != X || t.rows != Rows || t.panels != Panels) return false;
    run_conv_with(state, s,
                  [](const auto&... args) { k::conv2d_winograd<X, Rows, Panels>(args...); });
    return true;
  };
  if (!k::winograd_conv_fits(s)) {
    state.SkipWithError("not a Winograd shape");
    return false;
  }
  if (run.template operator()<16, 4, 1>() || run.template operator()<4, 2, 2>() ||
      run.template operator()<7, 1, 2>() || run.template operator()<4, 1, 4>() ||
      run.template operator()<8, 2, 3>() || run.template operator()<4, 2, 4>() ||
      run.template operator()<16, 2, 1>() || run.template operator()<8, 1, 2>() ||
      run.template operator()<16, 1, 1>())
    return true;
  state.SkipWithError("no Winograd tile instantiated for the shape");
  return false;
}

// Convolutions on small planes (YOLO11n at 64 x 64, rows 0-8; SqueezeNet's 3x3 expand
// convolutions at 64 x 64 in, rows 9-14; the RetinaNet head's and DeepLabV3's 3x3 ones, rows
// 15-17; wider planes and a stride of 2 at few channels, rows 18-20; the 7x7 stride-2 stem of
// a ResNet at 64 x 64, row 21; SqueezeNet's 1x1 squeeze and expand convolutions at 64 x 64 in,
// rows 22-27): a few microseconds each, where the split of the work
// over the threads and the fixed costs of a call decide the time. Args: the row of `shapes`
// (c_in, c_out, input size, filter size, stride); 0 for the kernel conv2d picks by shape, 1 for
// the direct kernel (conv_direct.h), 2 for its channel-vector form, 3 for the Winograd kernel
// (conv_winograd.h; 3x3 stride-1 shapes only); weights packed once.
void BM_ConvSmall(benchmark::State& state) {
  struct Shape {
    int64_t cin, cout, hw, k, stride;
  };
  const Shape shapes[] = {
      {64, 64, 2, 3, 1},   {384, 256, 2, 1, 1}, {128, 128, 8, 3, 2}, {64, 64, 16, 3, 2},
      {32, 16, 8, 3, 1},   {32, 32, 4, 3, 1},   {128, 256, 4, 3, 2}, {384, 128, 4, 1, 1},
      {64, 64, 8, 1, 1},   {16, 64, 14, 3, 1},  {32, 128, 14, 3, 1}, {32, 128, 7, 3, 1},
      {48, 192, 7, 3, 1},  {64, 256, 7, 3, 1},  {64, 256, 3, 3, 1},  {16, 16, 16, 3, 1},
      {16, 16, 8, 3, 1},   {8, 8, 16, 3, 1},    {16, 32, 16, 3, 2},  {32, 64, 16, 3, 1},
      {16, 16, 32, 3, 1},  {3, 8, 64, 7, 2},    {96, 16, 14, 1, 1},  {128, 32, 14, 1, 1},
      {16, 64, 14, 1, 1},  {32, 128, 14, 1, 1}, {384, 64, 7, 1, 1},  {48, 192, 7, 1, 1},
      {24, 144, 28, 1, 1}, {144, 24, 28, 1, 1}, {32, 192, 32, 1, 1}, {192, 32, 32, 1, 1},
      {96, 576, 14, 1, 1}, {576, 96, 14, 1, 1}, {64, 64, 16, 1, 1},  {160, 960, 7, 1, 1},
      {16, 96, 56, 1, 1},  {96, 24, 56, 1, 1},  {64, 256, 56, 1, 1}, {256, 64, 56, 1, 1}};
  const Shape& sh = shapes[state.range(0)];
  k::Conv2dShape s;
  s.c_in = sh.cin;
  s.c_out = sh.cout;
  s.h = s.w = sh.hw;
  s.kh = s.kw = sh.k;
  s.pad_top = s.pad_left = sh.k / 2;
  s.stride_h = s.stride_w = sh.stride;
  s.h_out = (s.h + 2 * s.pad_top - s.kh) / s.stride_h + 1;
  s.w_out = (s.w + 2 * s.pad_left - s.kw) / s.stride_w + 1;
  if (sh.k == 1) { // a pointwise convolution runs over its plane flattened to one row
    s.w = s.w_out = s.h * s.w;
    s.h = s.h_out = 1;
  }
  if (state.range(1) == 3) {
    if (!run_winograd(state, s)) return;
  } else if (state.range(1) == 0 && sh.k == 1)
    run_conv<k::ConvKernel::pointwise>(state, s); // as generated code runs 1x1 convolutions
  else if (state.range(1) == 0)
    run_conv(state, s);
  else if (state.range(1) == 1)
    run_conv<k::ConvKernel::direct>(state, s);
  else
    run_conv<k::ConvKernel::direct_channels>(state, s);
  const char* kernel[] = {"", "direct ", "channels ", "winograd "};
  state.SetLabel(std::string(kernel[state.range(1)]) + std::to_string(sh.cin) + "->" +
                 std::to_string(sh.cout) + " " + std::to_string(sh.k) + "x" + std::to_string(sh.k) +
                 " s" + std::to_string(sh.stride) + " on " + std::to_string(sh.hw) + "x" +
                 std::to_string(sh.hw));
}
BENCHMARK(BM_ConvSmall)
    ->ArgsProduct({benchmark::CreateDenseRange(0, 39, 1), {0, 1, 2, 3}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// The stem convolution of ShuffleNet: 3 -> 24 channels, 3x3, stride 2, 224x224 in.
k::Conv2dShape shufflenet_stem() {
  k::Conv2dShape s;
  s.c_in = 3;
  s.c_out = 24;
  s.h = s.w = 224;
  s.kh = s.kw = 3;
  s.pad_top = s.pad_left = 1;
  s.stride_h = s.stride_w = 2;
  s.h_out = s.w_out = 112;
  return s;
}

// A stem convolution, f32, by the kernel of the arg: 0 = output rows over B copied from the
// input rows (conv_rows.h; where the host lacks AVX-512, the kernel it falls back to), 1 = the
// implicit GEMM over padded planes split into stride phases.
void run_stem(benchmark::State& state, const k::Conv2dShape& s) {
  if (state.range(0) == 0) {
    run_conv<k::ConvKernel::rows>(state, s);
    state.SetLabel("rows");
  } else {
    run_conv<k::ConvKernel::padded_plane>(state, s);
    state.SetLabel("padded planes");
  }
}

// ShuffleNet's stem, by the kernel of the arg as run_stem.
void BM_ConvStem(benchmark::State& state) {
  run_stem(state, shufflenet_stem());
}
BENCHMARK(BM_ConvStem)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond)->UseRealTime();

// SqueezeNet 1.1's stem at 64 x 64: 3 -> 64 channels, 3x3, stride 2, no padding (31 x 31 out),
// by the kernel of the arg as run_stem.
void BM_ConvStemSqueeze(benchmark::State& state) {
  k::Conv2dShape s;
  s.n = 1, s.c_in = 3, s.h = s.w = 64, s.c_out = 64, s.groups = 1;
  s.kh = s.kw = 3;
  s.stride_h = s.stride_w = 2;
  s.h_out = s.w_out = 31;
  run_stem(state, s);
}
BENCHMARK(BM_ConvStemSqueeze)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond)->UseRealTime();

// SqueezeNet 1.0's stem at 64 x 64: 3 -> 96 channels, 7x7, stride 2, no padding (29 x 29
// out). Arg: 0 = the channel form over whole output rows, 1 = the implicit GEMM over padded
// planes split into stride phases, 2 = output rows over B copied from the input rows, 3 = the
// direct kernel's position form, 4-6 = conv2d_nhwc writing channels-last (what generated code
// runs where the stem's output is held for its max pooling) on tiles of X positions by NV
// vectors of channels.
void BM_ConvStemSqueeze10(benchmark::State& state) {
  k::Conv2dShape s;
  s.n = 1, s.c_in = 3, s.h = s.w = 64, s.c_out = 96, s.groups = 1;
  s.kh = s.kw = 7;
  s.stride_h = s.stride_w = 2;
  s.h_out = s.w_out = 29;
  const char* labels[] = {"channels",         "padded planes",    "rows",           "direct",
                          "nhwc out, 15 x 1", "nhwc out, 10 x 2", "nhwc out, 8 x 3"};
  switch (state.range(0)) {
  case 0:
    run_conv<k::ConvKernel::direct_channels, 841, 29>(state, s);
    break;
  case 1:
    run_conv<k::ConvKernel::padded_plane>(state, s);
    break;
  case 2:
    run_conv<k::ConvKernel::rows>(state, s);
    break;
  case 3:
    run_conv<k::ConvKernel::direct>(state, s);
    break;
  default: {
    // conv2d_nhwc writing channels-last (the stem's output held for its max pooling), tiles
    // of X positions by NV vectors of channels: 4 = 15 x 1, 5 = 10 x 2, 6 = 8 x 3; without
    // the bias (its epilogue indexes channels NCHW).
    auto nhwc = [&]<int X, int NV>() {
      run_conv_with(
          state, s,
          [](const auto& y, const auto& x, const auto& w, const auto& shape, const auto&,
             k::ConstantRef wref) {
            k::conv2d_nhwc<X, 1, NV, 3, 189, 2, 2, false, true>(y, x, w, shape, k::NoEpilogue{},
                                                                wref);
          },
          true);
    };
    if (state.range(0) == 4)
      nhwc.template operator()<15, 1>();
    else if (state.range(0) == 5)
      nhwc.template operator()<10, 2>();
    else
      nhwc.template operator()<8, 3>();
    break;
  }
  }
  state.SetLabel(labels[state.range(0)]);
}
BENCHMARK(BM_ConvStemSqueeze10)->DenseRange(0, 6)->Unit(benchmark::kMicrosecond)->UseRealTime();

// A bias stored into conv2d_max_pool's row buffer, as generated code's epilogue does.
struct BiasIntoRows {
  using value_type = float;
  static constexpr int rank = 4;
  static constexpr int64_t contig = 1;
  static constexpr bool has_ptr = false;
  k::ConvRowBuffer rows;
  const float* bias;
  float load(const k::Index<4>& i) const { return rows.load(i); }
  void store(const k::Index<4>& i, float v) const { rows.store(i, v + bias[i[1]]); }
  void run_store(const k::Index<4>& i, int64_t n, const float* src) const {
    float* dst = rows.ptr(i);
    for (int64_t j = 0; j < n; ++j)
      dst[j] = src[j] + bias[i[1]];
  }
};

// ShuffleNet's stem: conv 3 -> 24, 3x3 stride 2 over 224 x 224 with a bias, then 3x3 max
// pooling at stride 2. Arg: 0 = conv2d_max_pool (the convolution's rows pooled as they come),
// 1 = conv2d then max_pool2d through the 1.2 MB plane between them.
void BM_ConvMaxPool(benchmark::State& state) {
  const k::Conv2dShape s = shufflenet_stem();
  k::Pool2dShape ps;
  ps.c = 24;
  ps.h = ps.w = 112;
  ps.kh = ps.kw = 3;
  ps.stride_h = ps.stride_w = 2;
  ps.pad_top = ps.pad_left = ps.pad_bottom = ps.pad_right = 1;
  ps.h_out = ps.w_out = 56;
  auto x = random_vector<float>(size_t(s.c_in * s.h * s.w), 8);
  auto w = random_vector<float>(size_t(s.c_out * s.c_in * 9), 9);
  auto bias = random_vector<float>(size_t(s.c_out), 10);
  std::vector<float> plane(size_t(s.c_out * s.h_out * s.w_out)), y(size_t(24 * 56 * 56));
  k::DenseAccessor<float, 4> xa(x.data(), {1, s.c_in, s.h, s.w});
  k::DenseAccessor<float, 4> wa(w.data(), {s.c_out, s.c_in, s.kh, s.kw});
  k::DenseAccessor<float, 4> pa(plane.data(), {1, s.c_out, s.h_out, s.w_out});
  k::DenseAccessor<float, 4> ya(y.data(), {1, 24, 56, 56});
  const auto epi = k::bias_epilogue(k::DenseAccessor<float, 1>(bias.data(), {s.c_out}));
  const k::ConvRowBuffer rows{s.c_out, s.w_out};
  k::ConstantPacks packs;
  for (auto _ : state) {
    if (state.range(0) == 0) {
      k::conv2d_max_pool(ya, BiasIntoRows{rows, bias.data()}, rows, xa, wa, s, ps,
                         k::ConstantRef{&packs, w.data()});
    } else {
      k::conv2d<k::ConvKernel::rows>(pa, xa, wa, s, epi, k::ConstantRef{&packs, w.data()});
      k::max_pool2d(ya, pa, ps);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel(state.range(0) == 0 ? "fused" : "conv then pool");
}
BENCHMARK(BM_ConvMaxPool)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Max pooling, f32. Arg: 0 = YOLO11n's SPPF pooling at 64 x 64 (5x5, stride 1, 128 channels
// of 2x2), 1 = the same at 640 x 640 (256 channels of 20x20), 2 = ShuffleNet's stem pooling
// (3x3, stride 2, 24 channels of 112x112), 3 = SqueezeNet's first pooling at 64 x 64 (3x3,
// stride 2, no padding, 96 channels of 29x29), 4 and 5 = its later poolings' planes (256
// channels of 14x14, 512 of 7x7; without ceil mode).
void BM_MaxPool(benchmark::State& state) {
  struct Shape {
    int64_t c, hw, k, stride, pad;
  };
  const Shape shapes[] = {{128, 2, 5, 1, 2}, {256, 20, 5, 1, 2}, {24, 112, 3, 2, 1},
                          {96, 29, 3, 2, 0}, {256, 14, 3, 2, 0}, {512, 7, 3, 2, 0}};
  const Shape& sh = shapes[state.range(0)];
  k::Pool2dShape s;
  s.c = sh.c;
  s.h = s.w = sh.hw;
  s.kh = s.kw = sh.k;
  s.stride_h = s.stride_w = sh.stride;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = sh.pad;
  s.h_out = s.w_out = (sh.hw + 2 * sh.pad - sh.k) / sh.stride + 1;
  auto x = random_vector<float>(size_t(s.c * s.h * s.w), 11);
  std::vector<float> y(static_cast<size_t>(s.c * s.h_out * s.w_out));
  k::DenseAccessor<float, 4> xa(x.data(), {1, s.c, s.h, s.w});
  k::DenseAccessor<float, 4> ya(y.data(), {1, s.c, s.h_out, s.w_out});
  for (auto _ : state) {
    k::max_pool2d(ya, xa, s);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(x.size() + y.size()) * 4);
}
BENCHMARK(BM_MaxPool)->DenseRange(0, 5)->Unit(benchmark::kMicrosecond)->UseRealTime();

// SqueezeNet's first pooling (3x3, stride 2, 96 channels of 29 x 29) with channels-last
// operands (pool_nhwc.h). Arg: 0 = input and output channels-last, 1 = input channels-last,
// output NCHW, 2 = input NCHW, output channels-last.
void BM_MaxPoolNhwc(benchmark::State& state) {
  k::Pool2dShape s;
  s.c = 96;
  s.h = s.w = 29;
  s.kh = s.kw = 3;
  s.stride_h = s.stride_w = 2;
  s.h_out = s.w_out = 14;
  auto x = random_vector<float>(size_t(s.c * s.h * s.w), 11);
  std::vector<float> y(static_cast<size_t>(s.c * s.h_out * s.w_out));
  k::DenseAccessor<float, 4> x_cl(x.data(), {1, s.h, s.w, s.c}),
      x_nchw(x.data(), {1, s.c, s.h, s.w});
  k::DenseAccessor<float, 4> y_cl(y.data(), {1, s.h_out, s.w_out, s.c}),
      y_nchw(y.data(), {1, s.c, s.h_out, s.w_out});
  for (auto _ : state) {
    if (state.range(0) == 0)
      k::max_pool2d_nhwc<true, true>(y_cl, x_cl, s);
    else if (state.range(0) == 1)
      k::max_pool2d_nhwc<true, false>(y_nchw, x_cl, s);
    else
      k::max_pool2d_nhwc<false, true>(y_cl, x_nchw, s);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(x.size() + y.size()) * 4);
}
BENCHMARK(BM_MaxPoolNhwc)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Nearest upsampling by 2 x 2, f32, NCHW. Arg: 0 = YOLO11n's neck at 64 x 64 (256 channels of
// 2x2), 1 = at 640 x 640 (256 channels of 20x20).
void BM_Upsample(benchmark::State& state) {
  const int64_t c = 256, hw = state.range(0) == 0 ? 2 : 20;
  auto x = random_vector<float>(size_t(c * hw * hw), 12);
  std::vector<float> y(size_t(c * hw * hw * 4));
  k::DenseAccessor<float, 4> xa(x.data(), {1, c, hw, hw});
  k::DenseAccessor<float, 4> ya(y.data(), {1, c, 2 * hw, 2 * hw});
  for (auto _ : state) {
    k::upsample_nearest(ya, xa, k::Index<4>{1, c, 2 * hw, 2 * hw}, k::Index<4>{1, 1, 2, 2});
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(x.size() + y.size()) * 4);
}
BENCHMARK(BM_Upsample)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Linear (bilinear) Resize, half_pixel, f32, NCHW, through resample.h's tap tables. Arg: 0 =
// DeepLabV3's last Resize (10 channels of 2 x 2 to 64 x 64), 1 = LRASPP's (10 of 8 x 8 to 64 x 64).
void BM_ResizeLinear(benchmark::State& state) {
  const int64_t c = 10, in = state.range(0) == 0 ? 2 : 8, out = 64;
  std::vector<int64_t> index, channel(static_cast<size_t>(c));
  std::vector<double> weight, ones(static_cast<size_t>(c), 1.0);
  for (int64_t o = 0; o < out; ++o) { // half_pixel taps, clamped at the edges
    const double x = (double(o) + 0.5) * double(in) / double(out) - 0.5, f = std::floor(x);
    auto clamp = [&](int64_t i) { return std::min<int64_t>(std::max<int64_t>(i, 0), in - 1); };
    index.insert(index.end(), {clamp(int64_t(f)), clamp(int64_t(f) + 1)});
    weight.insert(weight.end(), {1 - (x - f), x - f});
  }
  for (int64_t i = 0; i < c; ++i)
    channel[size_t(i)] = i;
  const k::ResampleAxis axes[4] = {{1, channel.data(), ones.data(), nullptr},
                                   {1, channel.data(), ones.data(), nullptr},
                                   {2, index.data(), weight.data(), nullptr},
                                   {2, index.data(), weight.data(), nullptr}};
  auto x = random_vector<float>(size_t(c * in * in), 13);
  std::vector<float> y(size_t(c * out * out));
  k::DenseAccessor<float, 4> xa(x.data(), {1, c, in, in});
  k::DenseAccessor<float, 4> ya(y.data(), {1, c, out, out});
  for (auto _ : state) {
    k::resample(ya, xa, k::Index<4>{1, c, out, out}, axes, 0.0);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(x.size() + y.size()) * 4);
}
BENCHMARK(BM_ResizeLinear)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond)->UseRealTime();

} // namespace
