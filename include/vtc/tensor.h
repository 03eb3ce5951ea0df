// TensorType (dtype + static shape) and Tensor, an owning, dense, row-major host buffer.
// Tensors hold constants in the IR and the values the reference interpreter computes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vtc/dtype.h"

namespace vtc {

using Shape = std::vector<int64_t>;

// Number of elements; throws vtc::Error when the product overflows 64 bits.
int64_t shape_numel(const Shape& s);
// Row-major strides in elements.
Shape shape_strides(const Shape& s);
// "[2,3,4]"
std::string shape_str(const Shape& s);

struct TensorType {
  DType dtype = DType::f32;
  Shape shape;

  int64_t numel() const { return shape_numel(shape); }
  // Checked: a shape whose byte count does not fit size_t is an error, never a wrapped size.
  size_t nbytes() const;
  int rank() const { return int(shape.size()); }
  bool operator==(const TensorType&) const = default;
};

// "f32[2,3,4]"
std::string type_str(const TensorType& t);

class Tensor {
public:
  Tensor() = default;
  // Zero-filled tensor of the given type.
  explicit Tensor(TensorType type);
  Tensor(DType dtype, Shape shape) : Tensor(TensorType{dtype, std::move(shape)}) {}

  // A tensor of dtype_of<T>() with the given values (numel must match).
  template <typename T> static Tensor from(Shape shape, const std::vector<T>& values);

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int rank() const { return type_.rank(); }
  int64_t numel() const { return type_.numel(); }
  size_t nbytes() const { return bytes_.size(); }

  std::byte* raw() { return bytes_.data(); }
  const std::byte* raw() const { return bytes_.data(); }
  template <typename T> T* data() { return reinterpret_cast<T*>(bytes_.data()); }
  template <typename T> const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }

  // Element `i` (flat, row-major) converted to double / int64, whatever the dtype.
  double get_f64(int64_t i) const;
  int64_t get_i64(int64_t i) const;
  // Stores `v` into element `i`, converting (rounding to nearest) to the tensor's dtype.
  void set_f64(int64_t i, double v);
  void set_i64(int64_t i, int64_t v);

  // All elements as int64 (for shape-like tensors); throws unless the dtype is an integer.
  std::vector<int64_t> to_i64_vector() const;

  // Same bytes, new shape of equal numel.
  Tensor reshaped(Shape shape) const;

  bool bitwise_equal(const Tensor& other) const {
    return type_ == other.type_ && bytes_ == other.bytes_;
  }

private:
  TensorType type_;
  std::vector<std::byte> bytes_;
};

template <typename T> Tensor Tensor::from(Shape shape, const std::vector<T>& values) {
  Tensor t(dtype_of<T>(), std::move(shape));
  for (size_t i = 0; i < values.size() && i < size_t(t.numel()); ++i)
    t.data<T>()[i] = values[i];
  return t;
}

} // namespace vtc
