// Tensor files: NumPy .npy (format 1.0-3.0, little-endian) and ONNX TensorProto .pb, chosen
// by file extension. numpy has no bfloat16, so bf16 tensors are written as float32 .npy
// (exactly) and read back from float32 or uint16 (raw bits) .npy files.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "vtc/tensor.h"

namespace vtc {

// Reads a .npy or .pb file. With `expected` set, converts a float32/uint16 .npy to bf16
// when bf16 is expected. Errors name the file.
Tensor read_tensor_file(const std::string& path, std::optional<DType> expected = std::nullopt);
// Writes `t` as .npy or .pb (by the extension of `path`); `name` is stored in .pb files.
void write_tensor_file(const std::string& path, const Tensor& t, const std::string& name = "");

Tensor read_npy(const std::string& path, std::optional<DType> expected = std::nullopt);
// Reads a .npy file's bytes; `name` (the file) prefixes errors.
Tensor parse_npy(std::string_view bytes, const std::string& name,
                 std::optional<DType> expected = std::nullopt);
void write_npy(const std::string& path, const Tensor& t);
// The TensorProto's stored name is returned through `name` when given.
Tensor read_tensor_pb(const std::string& path, std::string* name = nullptr);
// Reads a TensorProto's bytes; external data resolves against `base_dir`.
Tensor parse_tensor_pb(const std::string& bytes, const std::string& name,
                       const std::string& base_dir, std::string* stored_name = nullptr);
void write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name);

} // namespace vtc
