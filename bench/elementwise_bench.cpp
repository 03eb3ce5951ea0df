// Google Benchmark figures for the elementwise math of the cpu target, on the path generated
// code takes: an elementwise kernel is copy() (kernels/cpu/elementwise.h) of a computed
// accessor whose run_load() reads its operand's run into a buffer and evaluates the expression
// over it (codegen's prologue accessors), the functions those expressions call being vmath.h's
// and the products codegen writes for each op. Each over a long tensor — 16 M elements, far past
// the caches — in f32, f16 and bf16, beside the copy of the same tensor; bytes are the input
// read and the output written, and the copy's rate is the ceiling each function is judged
// against (at least half of it).
//
//   build/bench/elementwise_bench [--benchmark_filter=Tanh]
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/accessor.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/stage.h"
#include "kernels/cpu/vmath.h"

namespace {

namespace k = vtc::kernels;

constexpr int64_t kElements = int64_t(1) << 24;

// The functions, as codegen spells them (src/codegen/elementwise_expr.cpp), forced inline as
// the generated code's vtc_* functions are (cpu_dialect.cpp): without it GCC stops inlining
// the larger ones (erf) into the loop once the translation unit is this big, and the loop runs
// scalar, ten times slower than the code vtc generates.
struct Copy {
  [[gnu::always_inline]] float operator()(float x) const { return x; }
};
struct Exp {
  [[gnu::always_inline]] float operator()(float x) const { return k::exp_fast(x); }
};
struct Tanh {
  [[gnu::always_inline]] float operator()(float x) const { return k::tanh_fast(x); }
};
struct Erf {
  [[gnu::always_inline]] float operator()(float x) const { return k::erf_fast(x); }
};
struct Log {
  [[gnu::always_inline]] float operator()(float x) const { return k::log_fast(x); }
};
// The library's functions, what the expressions called before vmath.h had these.
struct TanhLibm {
  [[gnu::always_inline]] float operator()(float x) const { return std::tanh(x); }
};
struct ErfLibm {
  [[gnu::always_inline]] float operator()(float x) const { return std::erf(x); }
};
struct LogLibm {
  [[gnu::always_inline]] float operator()(float x) const { return std::log(x); }
};
struct PowCubeLibm {
  [[gnu::always_inline]] float operator()(float x) const { return std::pow(x, 3.0f); }
};
struct Sigmoid {
  [[gnu::always_inline]] float operator()(float x) const { return 1.0f / (1.0f + k::exp_fast(-x)); }
};
struct Silu {
  [[gnu::always_inline]] float operator()(float x) const {
    return x * (1.0f / (1.0f + k::exp_fast(-x)));
  }
};
struct PowCube {
  [[gnu::always_inline]] float operator()(float x) const { return x * x * x; }
};
struct PowSqrt { // Pow by 0.5 stays the library's pow; Sqrt is the op exporters write
  [[gnu::always_inline]] float operator()(float x) const { return std::sqrt(x); }
};
struct GeluErf {
  [[gnu::always_inline]] float operator()(float x) const {
    return 0.5f * x * (1 + k::erf_fast(x * 0.7071067811865476f));
  }
};
struct GeluTanh {
  [[gnu::always_inline]] float operator()(float x) const {
    return 0.5f * x * (1 + k::tanh_fast(0.7978845608028654f * (x + 0.044715f * x * x * x)));
  }
};
// The forms code generation writes where the result is rounded to f16 or bf16 next.
struct Tanh16 {
  [[gnu::always_inline]] float operator()(float x) const { return k::tanh16_fast(x); }
};
struct Erf16 {
  [[gnu::always_inline]] float operator()(float x) const { return k::erf16_fast(x); }
};
struct GeluErf16 {
  [[gnu::always_inline]] float operator()(float x) const {
    return 0.5f * x * (1 + k::erf16_fast(x * 0.7071067811865476f));
  }
};
struct GeluTanh16 {
  [[gnu::always_inline]] float operator()(float x) const {
    return 0.5f * x * (1 + k::tanh16_fast(0.7978845608028654f * (x + 0.044715f * x * x * x)));
  }
};
struct HardSwish { // x max(0, min(1, x / 6 + 1/2)), min and max passing NaN on
  static float lo(float a, float b) { return (a != a || a < b) ? a : b; }
  static float hi(float a, float b) { return (a != a || a > b) ? a : b; }
  [[gnu::always_inline]] float operator()(float x) const {
    return x * hi(0.0f, lo(1.0f, x / 6 + 0.5f));
  }
};

template <typename T> std::vector<T> inputs(float lo, float hi) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<T> v(static_cast<size_t>(kElements));
  for (auto& x : v)
    x = k::from_compute<T>(d(rng));
  return v;
}

// F over operand a0, as codegen's computed accessors are written.
template <typename T, typename F> struct Computed {
  using value_type = float;
  static constexpr int rank = 1;
  static constexpr int64_t contig = 1;
  static constexpr bool has_ptr = false;
  k::DenseAccessor<T, 1> a0;
  float load(const k::Index<1>& i) const { return F{}(a0.load(i)); }
  template <typename D> void run_load(const k::Index<1>& i, int64_t n, D* dst) const {
    float b[k::kRunChunk];
    k::load_run(a0, i, n, b);
    for (int64_t j = 0; j < n; ++j)
      dst[j] = D(F{}(b[j]));
  }
};

template <typename T, typename F> void BM_Map(benchmark::State& state) {
  // Log and the square root over positive values, the others over [-8, 8].
  const bool positive =
      std::is_same_v<F, Log> || std::is_same_v<F, LogLibm> || std::is_same_v<F, PowSqrt>;
  std::vector<T> x = inputs<T>(positive ? 0.01f : -8.0f, 8.0f), y(x.size());
  const k::Index<1> shape{kElements};
  k::DenseAccessor<T, 1> in(x.data(), shape), out(y.data(), shape);
  const Computed<T, F> f{in};
  for (auto _ : state) {
    if constexpr (std::is_same_v<F, Copy>)
      k::copy(out, shape, in);
    else
      k::copy(out, shape, f);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double bytes = 2.0 * double(kElements) * double(sizeof(T));
  state.SetBytesProcessed(int64_t(state.iterations() * bytes));
}

#define VTC_MAP_BENCHMARK(F)                                                                       \
  BENCHMARK_TEMPLATE(BM_Map, float, F)->Unit(benchmark::kMillisecond)->UseRealTime();              \
  BENCHMARK_TEMPLATE(BM_Map, k::half, F)->Unit(benchmark::kMillisecond)->UseRealTime();            \
  BENCHMARK_TEMPLATE(BM_Map, k::bfloat16, F)->Unit(benchmark::kMillisecond)->UseRealTime()

VTC_MAP_BENCHMARK(Copy);
VTC_MAP_BENCHMARK(Exp);
VTC_MAP_BENCHMARK(Tanh);
VTC_MAP_BENCHMARK(TanhLibm);
VTC_MAP_BENCHMARK(Erf);
VTC_MAP_BENCHMARK(ErfLibm);
VTC_MAP_BENCHMARK(Log);
VTC_MAP_BENCHMARK(LogLibm);
VTC_MAP_BENCHMARK(Sigmoid);
VTC_MAP_BENCHMARK(Silu);
VTC_MAP_BENCHMARK(PowCube);
VTC_MAP_BENCHMARK(PowCubeLibm);
VTC_MAP_BENCHMARK(PowSqrt);
VTC_MAP_BENCHMARK(GeluErf);
VTC_MAP_BENCHMARK(GeluTanh);
VTC_MAP_BENCHMARK(HardSwish);

// The 16-bit forms, in the two types they serve.
#define VTC_MAP_BENCHMARK16(F)                                                                     \
  BENCHMARK_TEMPLATE(BM_Map, k::half, F)->Unit(benchmark::kMillisecond)->UseRealTime();            \
  BENCHMARK_TEMPLATE(BM_Map, k::bfloat16, F)->Unit(benchmark::kMillisecond)->UseRealTime()
VTC_MAP_BENCHMARK16(Tanh16);
VTC_MAP_BENCHMARK16(Erf16);
VTC_MAP_BENCHMARK16(GeluErf16);
VTC_MAP_BENCHMARK16(GeluTanh16);

} // namespace
