// Element types of vtc tensors, their sizes and names, and the 16-bit float formats
// (IEEE half and bfloat16) as storage types with exact conversions to and from float.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace vtc {

enum class DType { f32, f16, bf16, f64, i64, i32, i8, u8, boolean };

// Bytes per element.
size_t dtype_size(DType t);
// Short name used in printed IR: "f32", "bf16", "bool", ...
const char* dtype_name(DType t);
// Inverse of dtype_name; throws vtc::Error on an unknown name.
DType parse_dtype(std::string_view name);
bool is_float(DType t);
// ONNX TensorProto.DataType codes (1 f32, 2 u8, 3 i8, 6 i32, 7 i64, 9 bool, 10 f16, 11 f64,
// 16 bf16); nullopt for codes vtc does not support (strings, u16, f8, complex, ...).
std::optional<DType> dtype_from_onnx(int code);
int onnx_code(DType t);
bool is_integer(DType t); // signed and unsigned integers, not bool

// IEEE 754 binary16 stored as its bit pattern; conversions round to nearest even.
struct f16_t {
  uint16_t bits = 0;
  f16_t() = default;
  explicit f16_t(float f);
  operator float() const;
};

// bfloat16 (the top half of a binary32) stored as its bit pattern; round to nearest even.
struct bf16_t {
  uint16_t bits = 0;
  bf16_t() = default;
  explicit bf16_t(float f);
  operator float() const;
};

float half_bits_to_float(uint16_t h);
uint16_t float_to_half_bits(float f);

// Calls fn.template operator()<T>() with T the C++ storage type of `t`
// (float, f16_t, bf16_t, double, int64_t, int32_t, int8_t, uint8_t, bool).
template <typename Fn> decltype(auto) dispatch_dtype(DType t, Fn&& fn) {
  switch (t) {
  case DType::f32:
    return fn.template operator()<float>();
  case DType::f16:
    return fn.template operator()<f16_t>();
  case DType::bf16:
    return fn.template operator()<bf16_t>();
  case DType::f64:
    return fn.template operator()<double>();
  case DType::i64:
    return fn.template operator()<int64_t>();
  case DType::i32:
    return fn.template operator()<int32_t>();
  case DType::i8:
    return fn.template operator()<int8_t>();
  case DType::u8:
    return fn.template operator()<uint8_t>();
  case DType::boolean:
    return fn.template operator()<bool>();
  }
  return fn.template operator()<float>();
}

// The DType of a C++ storage type.
template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <> constexpr DType dtype_of<f16_t>() {
  return DType::f16;
}
template <> constexpr DType dtype_of<bf16_t>() {
  return DType::bf16;
}
template <> constexpr DType dtype_of<double>() {
  return DType::f64;
}
template <> constexpr DType dtype_of<int64_t>() {
  return DType::i64;
}
template <> constexpr DType dtype_of<int32_t>() {
  return DType::i32;
}
template <> constexpr DType dtype_of<int8_t>() {
  return DType::i8;
}
template <> constexpr DType dtype_of<uint8_t>() {
  return DType::u8;
}
template <> constexpr DType dtype_of<bool>() {
  return DType::boolean;
}

} // namespace vtc
