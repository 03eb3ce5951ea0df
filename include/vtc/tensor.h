// TensorType (dtype + static shape) and Tensor, an owning, dense, row-major host buffer.
// Tensors hold constants in the IR and the values the reference interpreter computes. A tensor
// read from a model's external-data file may keep its elements in a private mapping of that
// file (Tensor::mapped): pages are read when touched and written pages are the process's own,
// so a large model's weights are not copied at import; such a tensor owns its region alone (a
// copy of it is an ordinary tensor).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
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
  // A tensor whose type.nbytes() bytes lie at `data`, inside a writable private mapping kept
  // alive by `owner`; no other tensor may use those bytes.
  static Tensor mapped(TensorType type, std::shared_ptr<void> owner, std::byte* data);

  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;
  ~Tensor() = default;

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int rank() const { return type_.rank(); }
  int64_t numel() const { return type_.numel(); }
  size_t nbytes() const { return mapped_ ? mapped_bytes_ : bytes_.size(); }
  // Whether the elements lie in a file mapping (Tensor::mapped).
  bool is_mapped() const { return mapped_ != nullptr; }

  std::byte* raw() { return mapped_ ? mapped_ : bytes_.data(); }
  const std::byte* raw() const { return mapped_ ? mapped_ : bytes_.data(); }
  template <typename T> T* data() { return reinterpret_cast<T*>(raw()); }
  template <typename T> const T* data() const { return reinterpret_cast<const T*>(raw()); }

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

  bool bitwise_equal(const Tensor& other) const;

private:
  TensorType type_;
  std::vector<std::byte> bytes_;
  // Tensor::mapped: the elements at mapped_ (mapped_bytes_ of them), bytes_ empty.
  std::shared_ptr<void> mapping_;
  std::byte* mapped_ = nullptr;
  size_t mapped_bytes_ = 0;
};

template <typename T> Tensor Tensor::from(Shape shape, const std::vector<T>& values) {
  Tensor t(dtype_of<T>(), std::move(shape));
  for (size_t i = 0; i < values.size() && i < size_t(t.numel()); ++i)
    t.data<T>()[i] = values[i];
  return t;
}

} // namespace vtc
