// Tests of elementwise.h (map, copy, for_each_index) and of the fixed-order math of
// vmath.h: values against a reference, the pointer fast path against load()/store() bit for
// bit (split, permuted and computed accessors), the 16-bit copy shortcut against the
// conversion round trip on every bit pattern, the accuracy of exp_fast, tanh_fast, erf_fast
// and log_fast, and map_tail.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>

#include "kernel_test_util.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/stage.h"
#include "kernels/cpu/vmath.h"

namespace vtc::kernels::test {
namespace {

// a * b + c, with the product and the sum rounded separately or fused as the compiler
// chooses: whatever it picks, it picks for both paths of the same instantiation.
struct MulAdd {
  float operator()(float a, float b, float c) const { return a * b - c * 0.5f; }
};

template <typename T> void check_map(std::mt19937& rng, const Index<3>& shape) {
  const std::string what = std::string(type_name<T>()) + " map " + std::to_string(shape[0]) + "x" +
                           std::to_string(shape[1]) + "x" + std::to_string(shape[2]);
  auto a = random_tensor<T, 3>(rng, shape), b = random_tensor<T, 3>(rng, shape);
  auto c = random_tensor<T, 3>(rng, shape);
  Tensor<T, 3> dense(shape);
  map(dense.acc(), shape, MulAdd{}, a.acc(), b.acc(), c.acc());
  std::vector<double> ref(dense.data.size());
  for (size_t f = 0; f < ref.size(); ++f) {
    const double x = to_compute(a.data[f]), y = to_compute(b.data[f]), z = to_compute(c.data[f]);
    ref[f] = x * y - z * 0.5;
  }
  expect_close(dense, ref, 1e-6, unit_roundoff<T>() * 1.01 + 1e-6, what);

  { // every operand split in blocks of 8: pointer runs of 8
    SplitAccessor<T, 3, 8> sa(shape), sb(shape), sc(shape), so(shape);
    fill_from(sa, a);
    fill_from(sb, b);
    fill_from(sc, c);
    map(so, shape, MulAdd{}, sa, sb, sc);
    expect_bitwise(so, dense, what + ": split 8");
  }
  { // blocks of 4 and 8 with a dense output: pointer runs of 4
    SplitAccessor<T, 3, 4> sa(shape);
    SplitAccessor<T, 3, 8> sb(shape);
    fill_from(sa, a);
    fill_from(sb, b);
    Tensor<T, 3> out(shape);
    map(out.acc(), shape, MulAdd{}, sa, sb, c.acc());
    expect_bitwise(out, dense, what + ": split 4/8");
  }
  { // permuted storage (contig 1) and a computed operand: element by element
    PermutedAccessor<T, 3, true> pa(shape, {2, 0, 1});
    ComputedAccessor<T, 3> cb(shape);
    PermutedAccessor<T, 3, false> po(shape, {1, 2, 0});
    fill_from(pa, a);
    fill_from(cb, b);
    map(po, shape, MulAdd{}, pa, cb, c.acc());
    expect_bitwise(po, dense, what + ": permuted / computed");
  }
}

TEST(ElementwiseTest, MapMatchesReferenceAndIsAccessorInvariant) {
  std::mt19937 rng(11);
  // The last two have rows longer than two of map()'s pieces: split over the threads.
  const std::vector<Index<3>> shapes = {{1, 1, 1},    {2, 3, 17},    {3, 5, 64},
                                        {4, 7, 3},    {1, 9, 100},   {5, 1, 1},
                                        {2, 2, 1031}, {1, 1, 70001}, {2, 1, 65544}};
  for (const auto& s : shapes) {
    check_map<float>(rng, s);
    check_map<half>(rng, s);
    check_map<bfloat16>(rng, s);
  }
}

TEST(ElementwiseTest, MixedTypesAndScalars) {
  std::vector<half> a = {half{float_to_half(1.5f)}, half{float_to_half(-2.0f)}};
  std::vector<float> b = {0.25f, 4.0f};
  std::vector<bfloat16> out(2);
  map(
      DenseAccessor<bfloat16, 1>(out.data(), {2}), Index<1>{2},
      [](float x, float y) { return x * y; }, DenseAccessor<half, 1>(a.data(), {2}),
      DenseAccessor<float, 1>(b.data(), {2}));
  EXPECT_EQ(to_compute(out[0]), 0.375f);
  EXPECT_EQ(to_compute(out[1]), -8.0f);
  float s = 3.0f, r = 0.0f;
  map(
      DenseAccessor<float, 0>(&r, {}), Index<0>{}, [](float x) { return x * x; },
      DenseAccessor<float, 0>(&s, {}));
  EXPECT_EQ(r, 9.0f);
}

// The memory planner may give an elementwise kernel its input's buffer as output.
template <typename T> void check_in_place_map() {
  std::mt19937 rng(15);
  const Index<2> shape = {7, 333};
  auto x = random_tensor<T, 2>(rng, shape), y = random_tensor<T, 2>(rng, shape);
  Tensor<T, 2> out(shape);
  auto f = [](float a, float b) { return a * 3.0f - b; };
  map(out.acc(), shape, f, x.acc(), y.acc());
  map(x.acc(), shape, f, x.acc(), y.acc());
  expect_bitwise(x, out, std::string("in-place map ") + type_name<T>());
}
TEST(ElementwiseTest, InPlaceMapEqualsOutOfPlace) {
  check_in_place_map<bfloat16>();
  check_in_place_map<half>(); // blocks of halves converted a run at a time
}

// copy() of 16-bit floats takes a bit shortcut on the pointer path; it must equal the
// conversion round trip that load()/store() performs, on every bit pattern (NaNs included).
template <typename T> void check_copy_all_patterns() {
  const int64_t n = 65536;
  std::vector<T> src(n), fast(n);
  for (int64_t i = 0; i < n; ++i)
    src[size_t(i)].bits = uint16_t(i);
  copy(DenseAccessor<T, 1>(fast.data(), {n}), Index<1>{n}, DenseAccessor<T, 1>(src.data(), {n}));
  ComputedAccessor<T, 1> slow({n});
  copy(slow, Index<1>{n}, DenseAccessor<T, 1>(src.data(), {n}));
  int64_t changed = 0;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(fast[size_t(i)].bits, slow.raw({i}).bits) << type_name<T>() << " pattern " << i;
    changed += fast[size_t(i)].bits != src[size_t(i)].bits;
  }
  EXPECT_GT(changed, 0) << "signalling NaNs are quietened by the round trip";
  EXPECT_LT(changed, 1024);
}

TEST(ElementwiseTest, CopyOf16BitFloatsEqualsConversionRoundTrip) {
  check_copy_all_patterns<half>();
  check_copy_all_patterns<bfloat16>();
}

TEST(ElementwiseTest, CopyThroughMappedInputMaterialises) {
  std::mt19937 rng(12);
  const Index<3> shape = {3, 4, 50};
  auto t = random_tensor<float, 3>(rng, shape);
  PermutedAccessor<float, 3, true> transposed(shape, {2, 1, 0});
  fill_from(transposed, t);
  Tensor<float, 3> out(shape);
  copy(out.acc(), shape, transposed);
  expect_bitwise(out, t, "copy from permuted storage");
  SplitAccessor<float, 3, 16> split(shape);
  copy(split, shape, out.acc());
  expect_bitwise(split, t, "copy into split storage");
}

TEST(ElementwiseTest, ForEachIndexVisitsEveryIndexOnce) {
  const Index<3> shape = {3, 5, 7};
  std::vector<std::atomic<int>> seen(105);
  for_each_index(shape, [&](const Index<3>& i) { seen[size_t((i[0] * 5 + i[1]) * 7 + i[2])]++; });
  for (auto& s : seen)
    EXPECT_EQ(s.load(), 1);
  int calls = 0;
  for_each_index(Index<2>{4, 0}, [&](const Index<2>&) { ++calls; });
  EXPECT_EQ(calls, 0);
  for_each_index(Index<0>{}, [&](const Index<0>&) { ++calls; });
  EXPECT_EQ(calls, 1);
}

// The branch-free conversions of the pointer paths equal scalar_types.h's on every half and
// on a sweep of floats that covers every exponent with many mantissas (every 251st pattern,
// plus the rounding ties and boundaries of the half range).
// map_tail (stage.h), the last partial vector of a fused store's run computed as a whole
// one: every value of the run mapped as one at a time would, nothing written past it.
template <typename T> void check_map_tail() {
  const auto f = [](T v) { return v * T(3) - T(1) > T(0) ? v * T(3) - T(1) : T(0); };
  alignas(64) T src[kRunTail], dst[kRunTail + 1];
  for (int64_t n = 1; n < kRunTail; ++n) {
    for (int64_t j = 0; j < kRunTail; ++j)
      src[j] = T(j) - T(n) / T(2);
    std::fill(dst, dst + kRunTail + 1, T(-7));
    map_tail(src, n, dst, f);
    for (int64_t j = 0; j <= kRunTail; ++j)
      EXPECT_EQ(dst[j], j < n ? f(src[j]) : T(-7)) << type_name<T>() << " n " << n << " j " << j;
  }
}
TEST(ElementwiseTest, MapTailMapsTheRunAndWritesNothingPast) {
  check_map_tail<float>();
  check_map_tail<double>();
}

TEST(ConvertTest, BranchFreeHalfConversionsAreBitExact) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float a = half_to_float(uint16_t(h)), b = widen(half{uint16_t(h)});
    ASSERT_EQ(bits_of(a), bits_of(b)) << "half pattern " << h;
  }
  auto check = [](uint32_t x) {
    float f;
    std::memcpy(&f, &x, 4);
    ASSERT_EQ(float_to_half(f), narrow<half>(f).bits) << "float pattern " << x;
  };
  for (uint64_t x = 0; x < (uint64_t(1) << 32); x += 251)
    check(uint32_t(x));
  for (uint32_t hi = 0; hi < (1u << 19); ++hi)
    for (uint32_t lo : {0x0u, 0x1u, 0xfffu, 0x1000u, 0x1001u, 0x1fffu})
      check(hi << 13 | lo);
}

// Every 251st float pattern, and under every 7th value of the bits above `shift` the low
// parts `lows` (a 16-bit type's rounding ties and their neighbours).
std::vector<float> float_sweep(int shift, std::initializer_list<uint32_t> lows) {
  std::vector<uint32_t> patterns;
  for (uint64_t x = 0; x < (uint64_t(1) << 32); x += 251)
    patterns.push_back(uint32_t(x));
  for (uint32_t hi = 0; hi < (1u << (32 - shift)); hi += 7)
    for (uint32_t lo : lows)
      patterns.push_back(hi << shift | lo);
  std::vector<float> floats(patterns.size());
  std::memcpy(floats.data(), patterns.data(), patterns.size() * 4);
  return floats;
}

// widen_run and narrow_run of T (sixteen at a time where built for AVX-512) equal the scalar
// conversions `wide` and `narrow` on every 16-bit pattern, on the float sweep, and on every
// run length and offset around the vector width (from the pattern of 1.0, `one`), writing
// nothing past the run.
template <typename T>
void check_runs(float (*wide)(uint16_t), uint16_t (*narrow)(float), const std::vector<float>& sweep,
                uint16_t one) {
  std::vector<T> all(65536);
  for (uint32_t h = 0; h < 65536; ++h)
    all[h].bits = uint16_t(h);
  std::vector<float> widened(65536);
  widen_run(all.data(), 65536, widened.data());
  for (uint32_t h = 0; h < 65536; ++h)
    ASSERT_EQ(bits_of(widened[h]), bits_of(wide(uint16_t(h)))) << type_name<T>() << " " << h;
  std::vector<T> narrowed(sweep.size() + 1, T{0xabcd});
  narrow_run(sweep.data(), int64_t(sweep.size()), narrowed.data());
  for (size_t k = 0; k < sweep.size(); ++k)
    ASSERT_EQ(narrowed[k].bits, narrow(sweep[k])) << "float pattern " << bits_of(sweep[k]);
  EXPECT_EQ(narrowed.back().bits, 0xabcd);
  for (int64_t offset = 0; offset < 3; ++offset)
    for (int64_t n = 0; n <= 35; ++n) {
      const uint16_t first = uint16_t(one + offset);
      std::vector<float> d(size_t(n + 1), -7.0f);
      widen_run(all.data() + first, n, d.data());
      std::vector<T> h(size_t(n + 1), T{0xabcd});
      narrow_run(d.data(), n, h.data());
      for (int64_t j = 0; j < n; ++j) {
        EXPECT_EQ(bits_of(d[size_t(j)]), bits_of(wide(uint16_t(first + j))));
        EXPECT_EQ(h[size_t(j)].bits, uint16_t(first + j));
      }
      EXPECT_EQ(d[size_t(n)], -7.0f) << "n " << n;
      EXPECT_EQ(h[size_t(n)].bits, 0xabcd) << "n " << n;
    }
}

TEST(ConvertTest, HalfRunsEqualTheScalarConversions) {
  check_runs<half>(half_to_float, float_to_half, float_sweep(13, {0xfffu, 0x1000u, 0x1001u}),
                   0x3c00);
}
TEST(ConvertTest, BfloatRunsEqualTheScalarConversions) {
  check_runs<bfloat16>(bf16_to_float, float_to_bf16, float_sweep(16, {0x7fffu, 0x8000u, 0x8001u}),
                       0x3f80);
}

TEST(VmathTest, ExpFastIsWithinTwoUlp) {
  auto ulp_error = [](float got, double want) {
    if (want == 0) return got == 0 ? 0.0 : 1e9;
    const double ulp = std::ldexp(1.0, std::ilogb(float(want)) - 23);
    return std::abs(double(got) - want) / std::max(ulp, std::ldexp(1.0, -149));
  };
  double worst = 0;
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> d(-103.0f, 88.7f);
  for (int i = 0; i < 200000; ++i) {
    const float x = i < 1000 ? -10.0f + i * 0.02f : d(rng);
    worst = std::max(worst, ulp_error(exp_fast(x), std::exp(double(x))));
  }
  EXPECT_LE(worst, 2.0);
  EXPECT_EQ(exp_fast(0.0f), 1.0f);
  EXPECT_EQ(exp_fast(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(exp_fast(-200.0f), 0.0f);
  EXPECT_EQ(exp_fast(89.0f), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(exp_fast(std::nanf(""))));
  EXPECT_GT(exp_fast(-100.0f), 0.0f); // gradual underflow
}

// Error in units in the last place of float(want); inf and NaN must match exactly.
double ulps(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e9;
  if (std::isinf(want)) return double(got) == want ? 0 : 1e9;
  if (want == 0) return got == 0 ? 0.0 : 1e9;
  const double ulp = std::ldexp(1.0, std::ilogb(float(want)) - 23);
  return std::abs(double(got) - want) / std::max(ulp, std::ldexp(1.0, -149));
}

// Worst error of f against the double-precision g over random arguments: uniform over
// [lo, hi], and as many of the form u 2^-k (small magnitudes, u uniform in [-2, 2]).
template <typename F, typename G> double worst_ulps(F f, G g, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> wide(lo, hi), unit(-2.0f, 2.0f);
  double worst = 0;
  for (int i = 0; i < 400000; ++i) {
    const float x = i % 2 ? wide(rng) : std::ldexp(unit(rng), -(i % 60));
    worst = std::max(worst, ulps(f(x), g(double(x))));
  }
  return worst;
}

TEST(VmathTest, TanhErfLogFastAreWithinAFewUlp) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  EXPECT_LE(worst_ulps([](float x) { return tanh_fast(x); }, [](double x) { return std::tanh(x); },
                       -12.0f, 12.0f, 21),
            2.0);
  EXPECT_LE(worst_ulps([](float x) { return erf_fast(x); }, [](double x) { return std::erf(x); },
                       -6.0f, 6.0f, 22),
            3.0);
  // log over positive arguments of every binade, subnormals included.
  EXPECT_LE(
      worst_ulps([](float x) { return log_fast(std::fabs(x) * 1e-30f + 1e-44f); },
                 [](double x) { return std::log(double(std::fabs(float(x)) * 1e-30f + 1e-44f)); },
                 -1e30f, 1e30f, 23),
      2.0);
  EXPECT_LE(worst_ulps([](float x) { return log_fast(std::fabs(x)); },
                       [](double x) { return std::log(std::fabs(x)); }, 1e-3f, 1e3f, 24),
            2.0);
  EXPECT_EQ(bits_of(tanh_fast(-0.0f)), bits_of(-0.0f));
  EXPECT_EQ(tanh_fast(inf), 1.0f);
  EXPECT_EQ(tanh_fast(-inf), -1.0f);
  EXPECT_TRUE(std::isnan(tanh_fast(nan)));
  EXPECT_EQ(bits_of(erf_fast(-0.0f)), bits_of(-0.0f));
  EXPECT_EQ(erf_fast(inf), 1.0f);
  EXPECT_EQ(erf_fast(-inf), -1.0f);
  EXPECT_TRUE(std::isnan(erf_fast(nan)));
  EXPECT_EQ(log_fast(1.0f), 0.0f);
  EXPECT_EQ(log_fast(0.0f), -inf);
  EXPECT_EQ(log_fast(-0.0f), -inf);
  EXPECT_EQ(log_fast(inf), inf);
  EXPECT_TRUE(std::isnan(log_fast(-1.0f)));
  EXPECT_TRUE(std::isnan(log_fast(-inf)));
  EXPECT_TRUE(std::isnan(log_fast(nan)));
}

// Worst relative error of f against the double-precision g, as worst_ulps samples.
template <typename F, typename G>
double worst_relative(F f, G g, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> wide(lo, hi), unit(-2.0f, 2.0f);
  double worst = 0;
  for (int i = 0; i < 400000; ++i) {
    const float x = i % 2 ? wide(rng) : std::ldexp(unit(rng), -(i % 60));
    const double want = g(double(x));
    if (want != 0) worst = std::max(worst, std::abs(double(f(x)) - want) / std::abs(want));
  }
  return worst;
}

TEST(VmathTest, SixteenBitFormsAreFarInsideTheirRounding) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  // 4e-6 relative: a 120th of a half's 2^-11 rounding step.
  EXPECT_LE(worst_relative([](float x) { return tanh16_fast(x); },
                           [](double x) { return std::tanh(x); }, -12.0f, 12.0f, 31),
            4e-6);
  EXPECT_LE(worst_relative([](float x) { return erf16_fast(x); },
                           [](double x) { return std::erf(x); }, -6.0f, 6.0f, 32),
            4e-6);
  EXPECT_LE(worst_relative([](float x) { return exp16_fast(x); },
                           [](double x) { return std::exp(x); }, -87.0f, 88.0f, 33),
            4e-6);
  for (float x : {-0.0f, 0.0f}) {
    EXPECT_EQ(bits_of(tanh16_fast(x)), bits_of(x));
    EXPECT_EQ(bits_of(erf16_fast(x)), bits_of(x));
  }
  EXPECT_EQ(tanh16_fast(inf), 1.0f);
  EXPECT_EQ(tanh16_fast(-inf), -1.0f);
  EXPECT_EQ(erf16_fast(inf), 1.0f);
  EXPECT_EQ(erf16_fast(-inf), -1.0f);
  EXPECT_TRUE(std::isnan(tanh16_fast(nan)));
  EXPECT_TRUE(std::isnan(erf16_fast(nan)));
  // Rounded to half they give the correctly rounded half of the exact value almost always.
  int differ = 0, total = 0;
  for (int i = -40000; i <= 40000; ++i, ++total) {
    const float x = float(i) * 2.5e-4f;
    differ += float_to_half(tanh16_fast(x)) != float_to_half(float(std::tanh(double(x))));
    differ += float_to_half(erf16_fast(x)) != float_to_half(float(std::erf(double(x))));
  }
  EXPECT_LE(differ, total / 1000);
}

TEST(VmathTest, InterleavedDotsEqualSingleDots) {
  std::mt19937 rng(14);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t n : {1, 15, 16, 17, 128, 333}) {
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(7 * n));
    for (auto& v : x)
      v = d(rng);
    for (auto& v : y)
      v = d(rng);
    const float* rows[7];
    for (int p = 0; p < 7; ++p)
      rows[p] = y.data() + p * n;
    float out[7];
    dots_fixed(x.data(), rows, 7, n, out);
    for (int p = 0; p < 7; ++p)
      EXPECT_EQ(bits_of(out[p]), bits_of(dot_fixed(x.data(), rows[p], n)));
  }
}

} // namespace
} // namespace vtc::kernels::test
