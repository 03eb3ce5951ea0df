// Tensor storage and generic element access.
#include "vtc/tensor.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <utility>

#include "vtc/error.h"

namespace vtc {

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    VTC_CHECK(!__builtin_mul_overflow(n, d, &n))
        << "shape " << shape_str(s) << " has more elements than a 64-bit count holds";
  return n;
}

size_t TensorType::nbytes() const {
  int64_t n = numel();
  size_t bytes = 0;
  VTC_CHECK(n >= 0 && !__builtin_mul_overflow(size_t(n), dtype_size(dtype), &bytes))
      << "tensor " << type_str(*this) << " has more bytes than a 64-bit size holds";
  return bytes;
}

Shape shape_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i)
    os << (i ? "," : "") << s[i];
  os << "]";
  return os.str();
}

std::string type_str(const TensorType& t) {
  return dtype_name(t.dtype) + shape_str(t.shape);
}

Tensor::Tensor(TensorType type) : type_(std::move(type)) {
  for (int64_t d : type_.shape)
    VTC_CHECK(d >= 0) << "negative dimension in " << type_str(type_);
  bytes_.assign(type_.nbytes(), std::byte{0});
}

Tensor Tensor::mapped(TensorType type, std::shared_ptr<void> owner, std::byte* data) {
  Tensor t;
  t.type_ = std::move(type);
  t.mapping_ = std::move(owner);
  t.mapped_ = data;
  t.mapped_bytes_ = t.type_.nbytes();
  return t;
}

// A copy owns its bytes: a mapped region stays with the one tensor it was given to.
Tensor::Tensor(const Tensor& other)
    : type_(other.type_), bytes_(other.raw(), other.raw() + other.nbytes()) {}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) *this = Tensor(other);
  return *this;
}

Tensor::Tensor(Tensor&& other) noexcept
    : type_(std::move(other.type_)), bytes_(std::move(other.bytes_)),
      mapping_(std::move(other.mapping_)), mapped_(std::exchange(other.mapped_, nullptr)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)) {}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    type_ = std::move(other.type_);
    bytes_ = std::move(other.bytes_);
    mapping_ = std::move(other.mapping_);
    mapped_ = std::exchange(other.mapped_, nullptr);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
  }
  return *this;
}

bool Tensor::bitwise_equal(const Tensor& other) const {
  return type_ == other.type_ && nbytes() == other.nbytes() &&
         (nbytes() == 0 || std::memcmp(raw(), other.raw(), nbytes()) == 0);
}

double Tensor::get_f64(int64_t i) const {
  return dispatch_dtype(dtype(), [&]<typename T>() -> double {
    if constexpr (std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>)
      return double(float(data<T>()[i]));
    else
      return double(data<T>()[i]);
  });
}

int64_t Tensor::get_i64(int64_t i) const {
  return dispatch_dtype(dtype(), [&]<typename T>() -> int64_t {
    if constexpr (std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>)
      return int64_t(float(data<T>()[i]));
    else
      return int64_t(data<T>()[i]);
  });
}

void Tensor::set_f64(int64_t i, double v) {
  dispatch_dtype(dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>)
      data<T>()[i] = T(float(v)); // double -> float -> 16 bit (see DESIGN: ref rounds per op)
    else if constexpr (std::is_same_v<T, bool>)
      data<T>()[i] = v != 0;
    else if constexpr (std::is_integral_v<T>)
      data<T>()[i] = std::isfinite(v) ? T(v) : T(0);
    else
      data<T>()[i] = T(v);
  });
}

void Tensor::set_i64(int64_t i, int64_t v) {
  dispatch_dtype(dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>)
      data<T>()[i] = T(float(v));
    else if constexpr (std::is_same_v<T, bool>)
      data<T>()[i] = v != 0;
    else
      data<T>()[i] = T(v);
  });
}

std::vector<int64_t> Tensor::to_i64_vector() const {
  VTC_CHECK(is_integer(dtype()) || dtype() == DType::boolean)
      << "expected an integer tensor, got " << type_str(type_);
  std::vector<int64_t> v(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i)
    v[size_t(i)] = get_i64(i);
  return v;
}

Tensor Tensor::reshaped(Shape shape) const {
  VTC_CHECK(shape_numel(shape) == numel())
      << "cannot reshape " << type_str(type_) << " to " << shape_str(shape);
  Tensor t = *this;
  t.type_.shape = std::move(shape);
  return t;
}

} // namespace vtc
