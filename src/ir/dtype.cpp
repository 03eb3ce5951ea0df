// Element type names, sizes and the half / bfloat16 conversions.
#include "ir/dtype.h"

#include "support/error.h"

namespace vtc {

size_t dtype_size(DType t) {
  switch (t) {
  case DType::f32: return 4;
  case DType::f16: return 2;
  case DType::bf16: return 2;
  case DType::f64: return 8;
  case DType::i64: return 8;
  case DType::i32: return 4;
  case DType::i8: return 1;
  case DType::u8: return 1;
  case DType::boolean: return 1;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
  case DType::f32: return "f32";
  case DType::f16: return "f16";
  case DType::bf16: return "bf16";
  case DType::f64: return "f64";
  case DType::i64: return "i64";
  case DType::i32: return "i32";
  case DType::i8: return "i8";
  case DType::u8: return "u8";
  case DType::boolean: return "bool";
  }
  return "?";
}

DType parse_dtype(std::string_view name) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i64, DType::i32,
                  DType::i8, DType::u8, DType::boolean})
    if (name == dtype_name(t)) return t;
  VTC_FAIL() << "unknown dtype '" << name << "'";
}

bool is_float(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64;
}

std::optional<DType> dtype_from_onnx(int code) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i64, DType::i32,
                  DType::i8, DType::u8, DType::boolean})
    if (onnx_code(t) == code) return t;
  return std::nullopt;
}

int onnx_code(DType t) {
  switch (t) {
  case DType::f32: return 1;
  case DType::u8: return 2;
  case DType::i8: return 3;
  case DType::i32: return 6;
  case DType::i64: return 7;
  case DType::boolean: return 9;
  case DType::f16: return 10;
  case DType::f64: return 11;
  case DType::bf16: return 16;
  }
  return 0;
}

bool is_integer(DType t) {
  return t == DType::i64 || t == DType::i32 || t == DType::i8 || t == DType::u8;
}

float half_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalise
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

uint16_t float_to_half_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or nan
    return sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 | ((absx >> 13) & 0x3ff) : 0);
  if (absx >= 0x477ff000u) return sign | 0x7c00; // rounds to >= 65520: overflow to inf
  if (absx < 0x38800000u) {                       // below the smallest normal half: subnormal
    if (absx < 0x33000000u) return sign;          // below half the smallest subnormal
    uint32_t mant = (absx & 0x7fffff) | 0x800000;
    int shift = 126 - int(absx >> 23);            // 14..24
    uint32_t q = mant >> (shift);
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return sign | uint16_t(q);
  }
  uint32_t q = absx - 0x38000000u; // rebias exponent 127 -> 15
  uint32_t rem = q & 0x1fff;
  q >>= 13;
  if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) ++q;
  return sign | uint16_t(q);
}

f16_t::f16_t(float f) : bits(float_to_half_bits(f)) {}
f16_t::operator float() const { return half_bits_to_float(bits); }

bf16_t::bf16_t(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    bits = uint16_t((x >> 16) | 0x40); // quiet nan
  } else {
    x += 0x7fff + ((x >> 16) & 1);
    bits = uint16_t(x >> 16);
  }
}
bf16_t::operator float() const {
  uint32_t x = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

} // namespace vtc
