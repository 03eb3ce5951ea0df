// Element type names, sizes and the half / bfloat16 conversions.
#include "vtc/dtype.h"

#include "kernels/common/scalar_types.h"
#include "vtc/error.h"

namespace vtc {

size_t dtype_size(DType t) {
  switch (t) {
  case DType::f32:
    return 4;
  case DType::f16:
    return 2;
  case DType::bf16:
    return 2;
  case DType::f64:
    return 8;
  case DType::i64:
    return 8;
  case DType::i32:
    return 4;
  case DType::i8:
    return 1;
  case DType::u8:
    return 1;
  case DType::boolean:
    return 1;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
  case DType::f32:
    return "f32";
  case DType::f16:
    return "f16";
  case DType::bf16:
    return "bf16";
  case DType::f64:
    return "f64";
  case DType::i64:
    return "i64";
  case DType::i32:
    return "i32";
  case DType::i8:
    return "i8";
  case DType::u8:
    return "u8";
  case DType::boolean:
    return "bool";
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
  case DType::f32:
    return 1;
  case DType::u8:
    return 2;
  case DType::i8:
    return 3;
  case DType::i32:
    return 6;
  case DType::i64:
    return 7;
  case DType::boolean:
    return 9;
  case DType::f16:
    return 10;
  case DType::f64:
    return 11;
  case DType::bf16:
    return 16;
  }
  return 0;
}

bool is_integer(DType t) {
  return t == DType::i64 || t == DType::i32 || t == DType::i8 || t == DType::u8;
}

// The conversions are the ones generated kernels use, so every target rounds alike.
float half_bits_to_float(uint16_t h) {
  return kernels::half_to_float(h);
}
uint16_t float_to_half_bits(float f) {
  return kernels::float_to_half(f);
}

f16_t::f16_t(float f) : bits(float_to_half_bits(f)) {}
f16_t::operator float() const {
  return half_bits_to_float(bits);
}

bf16_t::bf16_t(float f) : bits(kernels::float_to_bf16(f)) {}
bf16_t::operator float() const {
  return kernels::bf16_to_float(bits);
}

} // namespace vtc
