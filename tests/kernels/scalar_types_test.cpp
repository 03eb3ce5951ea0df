// kernels/common/scalar_types.h against the conversions it replaced (the memcpy-based ones of
// kernels/cpu/scalar_types.h, copied here verbatim as the reference): bit for bit on every half
// and bfloat16 pattern, and on a sweep of floats with every rounding tie and boundary of both
// formats, NaNs with every payload position, infinities, zeros and subnormals; and the
// to_compute / from_compute family's types and values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/common/scalar_types.h"

namespace vtc::kernels::test {
namespace {

// The conversions as they were before kernels/common existed.
namespace reference {

inline float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | uint32_t(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)
    return sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 | ((absx >> 13) & 0x3ff) : 0);
  if (absx >= 0x477ff000u) return sign | 0x7c00;
  if (absx < 0x38800000u) {
    if (absx < 0x33000000u) return sign;
    uint32_t mant = (absx & 0x7fffff) | 0x800000;
    int shift = 126 - int(absx >> 23);
    uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1))) ++q;
    return sign | uint16_t(q);
  }
  uint32_t q = absx - 0x38000000u, rem = q & 0x1fff;
  q >>= 13;
  if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) ++q;
  return sign | uint16_t(q);
}

inline float bf16_to_float(uint16_t b) {
  uint32_t x = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

} // namespace reference

uint32_t bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}
float from_bits(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// Calls f on float patterns where rounding to half or bfloat16 can go wrong, with both signs:
// a stride over all 2^32 patterns, every tie and its neighbours of both formats (normal and
// half-subnormal), the edges of the half range, NaNs, infinities, zeros and float subnormals.
// Returns how many it visited.
template <typename F> int64_t for_each_float_sample(const F& f) {
  int64_t n = 0;
  auto visit = [&](uint32_t x) {
    f(x);
    f(x ^ 0x80000000u);
    n += 2;
  };
  for (uint64_t x = 0; x < (uint64_t(1) << 31); x += 97)
    visit(uint32_t(x));
  for (uint32_t hi = 0; hi < (1u << 18); ++hi) // half's rounding bit is bit 12
    for (uint32_t lo : {0x0u, 0x1u, 0xfffu, 0x1000u, 0x1001u, 0x1fffu})
      visit(hi << 13 | lo);
  for (uint32_t hi = 0; hi < (1u << 15); ++hi) // bfloat16's rounding bit is bit 15
    for (uint32_t lo : {0x0u, 0x1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu})
      visit(hi << 16 | lo);
  for (uint32_t k = 1; k < (1u << 12); ++k) { // multiples of half's subnormal half-ulp, 2^-25
    const uint32_t x = bits(std::ldexp(float(k), -25));
    for (uint32_t d : {0u, 1u, 2u})
      visit(x + d), visit(x - d);
  }
  for (uint32_t x : {0x00000000u, 0x00000001u, 0x007fffffu, 0x00800000u, 0x33000000u, 0x33000001u,
                     0x337fffffu, 0x38800000u, 0x387fffffu, 0x477fe000u, 0x477fefffu, 0x477ff000u,
                     0x477fffffu, 0x7f7fffffu, 0x7f800000u, 0x7f800001u, 0x7fbfffffu, 0x7fc00000u,
                     0x7fc00001u, 0x7fffe000u, 0x7fffffffu, 0x7f802000u, 0x7f800100u, 0x7f810000u})
    visit(x);
  return n;
}

// The new header's conversions are usable in constant expressions (__builtin_bit_cast).
static_assert(float_to_bf16(1.0f) == 0x3f80);
static_assert(bf16_to_float(0x4040) == 3.0f);
static_assert(float_to_half(1.0f) == 0x3c00);
static_assert(half_to_float(0x0001) == 0x1p-24f);
static_assert(from_compute<half>(65520.0f).bits == 0x7c00); // the first value that overflows
static_assert(to_compute(from_compute<bfloat16>(-2.5f)) == -2.5f);

TEST(ScalarTypesTest, EverySixteenBitPatternWidensAsBefore) {
  for (uint32_t p = 0; p < 65536; ++p) {
    const uint16_t b = uint16_t(p);
    ASSERT_EQ(bits(half_to_float(b)), bits(reference::half_to_float(b))) << "half " << p;
    ASSERT_EQ(bits(to_compute(half{b})), bits(reference::half_to_float(b))) << "half " << p;
    ASSERT_EQ(bits(bf16_to_float(b)), bits(reference::bf16_to_float(b))) << "bfloat16 " << p;
    ASSERT_EQ(bits(to_compute(bfloat16{b})), bits(reference::bf16_to_float(b))) << "bfloat16 " << p;
  }
}

TEST(ScalarTypesTest, EverySixteenBitPatternRoundTrips) {
  // A 16-bit value widened and narrowed again is itself, except that a signalling NaN comes
  // back quiet — exactly as the reference does it.
  for (uint32_t p = 0; p < 65536; ++p) {
    const uint16_t b = uint16_t(p);
    ASSERT_EQ(float_to_half(half_to_float(b)),
              reference::float_to_half(reference::half_to_float(b)))
        << "half " << p;
    ASSERT_EQ(float_to_bf16(bf16_to_float(b)),
              reference::float_to_bf16(reference::bf16_to_float(b)))
        << "bfloat16 " << p;
  }
}

TEST(ScalarTypesTest, FloatsNarrowAsBefore) {
  int64_t wrong_half = 0, wrong_bf16 = 0;
  uint32_t first_half = 0, first_bf16 = 0;
  const int64_t visited = for_each_float_sample([&](uint32_t x) {
    const float f = from_bits(x);
    const uint16_t h = reference::float_to_half(f), b = reference::float_to_bf16(f);
    if ((float_to_half(f) != h || from_compute<half>(f).bits != h) && !wrong_half++) first_half = x;
    if ((float_to_bf16(f) != b || from_compute<bfloat16>(f).bits != b) && !wrong_bf16++)
      first_bf16 = x;
  });
  EXPECT_GT(visited, int64_t(40'000'000));
  EXPECT_EQ(wrong_half, 0) << "float -> half differs, first at float pattern " << std::hex
                           << first_half;
  EXPECT_EQ(wrong_bf16, 0) << "float -> bfloat16 differs, first at float pattern " << std::hex
                           << first_bf16;
}

TEST(ScalarTypesTest, DoublesNarrowThroughFloat) {
  for (double v :
       {0.0, -0.0, 1.0 / 3.0, 1e-8, -65519.99, 65520.0, 1e300, -1e-300,
        std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_EQ(from_compute<half>(v).bits, reference::float_to_half(float(v))) << v;
    EXPECT_EQ(from_compute<bfloat16>(v).bits, reference::float_to_bf16(float(v))) << v;
  }
  EXPECT_EQ(bits(from_compute<float>(1.0 / 3.0)), bits(float(1.0 / 3.0)));
}

TEST(ScalarTypesTest, ComputeTypesAndIntegerConversions) {
  static_assert(std::is_same_v<decltype(to_compute(half{})), float>);
  static_assert(std::is_same_v<decltype(to_compute(bfloat16{})), float>);
  static_assert(std::is_same_v<decltype(to_compute(float{})), float>);
  static_assert(std::is_same_v<decltype(to_compute(double{})), double>);
  static_assert(std::is_same_v<decltype(to_compute(int64_t{})), int64_t>);
  static_assert(std::is_same_v<decltype(to_compute(int32_t{})), int64_t>);
  static_assert(std::is_same_v<decltype(to_compute(int8_t{})), int64_t>);
  static_assert(std::is_same_v<decltype(to_compute(uint8_t{})), int64_t>);
  static_assert(std::is_same_v<decltype(to_compute(bool{})), int64_t>);
  EXPECT_EQ(to_compute(int8_t(-128)), -128);
  EXPECT_EQ(to_compute(uint8_t(255)), 255);
  EXPECT_EQ(to_compute(true), 1);
  EXPECT_EQ(from_compute<int8_t>(int64_t(-3)), int8_t(-3));
  EXPECT_EQ(from_compute<uint8_t>(int64_t(300)), uint8_t(44));
  EXPECT_EQ(from_compute<int32_t>(int64_t(1) << 40 | 7), int32_t(7));
  EXPECT_EQ(from_compute<bool>(int64_t(2)), true);
  EXPECT_EQ(from_compute<int64_t>(-2.75), int64_t(-2));
  EXPECT_EQ(from_compute<double>(0.1f), double(0.1f));
}

} // namespace
} // namespace vtc::kernels::test
