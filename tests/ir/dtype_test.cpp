// Element types: sizes, names, and exact half / bfloat16 rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "vtc/dtype.h"
#include "vtc/error.h"

namespace vtc {
namespace {

TEST(DType, NamesRoundTrip) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i64, DType::i32,
                  DType::i8, DType::u8, DType::boolean})
    EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  EXPECT_THROW(parse_dtype("f8"), Error);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::i64), 8u);
}

TEST(DType, HalfExactValues) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);              // rounds up to infinity
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000); // tie to even: zero
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(NAN))));
  EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_bits_to_float(0x3555), 0.333251953125f);
}

TEST(DType, HalfRoundTripsEveryPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = half_bits_to_float(uint16_t(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(float_to_half_bits(f), h) << std::hex << h;
  }
}

TEST(DType, HalfRoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
}

TEST(DType, BFloat16) {
  EXPECT_EQ(bf16_t(1.0f).bits, 0x3f80);
  EXPECT_EQ(float(bf16_t(3.140625f)), 3.140625f);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even is 1.
  EXPECT_EQ(float(bf16_t(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  EXPECT_TRUE(std::isnan(float(bf16_t(NAN))));
  EXPECT_EQ(float(bf16_t(std::numeric_limits<float>::infinity())),
            std::numeric_limits<float>::infinity());
}

} // namespace
} // namespace vtc
