// Helpers for the kernel template tests: tensors in the three storage types, and accessors
// that reach the same values in unusual ways — permuted storage with or without ptr(),
// the last dimension split into blocks over two buffers (small `contig`), a computed
// accessor with no pointer at all, and a broadcast over the first dimension — so a test can
// run a kernel on dense operands and on these, and demand bitwise equal outputs.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/accessor.h"
#include "kernels/cpu/stage.h"

namespace vtc::kernels::test {

template <int R> int64_t volume(const Index<R>& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

// Index of flat position `flat` in a row-major `shape`.
template <int R> Index<R> unflatten(const Index<R>& shape, int64_t flat) {
  Index<R> i{};
  for (int k = R - 1; k >= 0; --k) {
    i[size_t(k)] = flat % shape[size_t(k)];
    flat /= shape[size_t(k)];
  }
  return i;
}

template <typename T> const char* type_name() {
  if constexpr (std::is_same_v<T, float>)
    return "f32";
  else if constexpr (std::is_same_v<T, half>)
    return "f16";
  else if constexpr (std::is_same_v<T, bfloat16>)
    return "bf16";
  else
    return "f64";
}

// Unit roundoff of the storage type (the error of one rounding into it).
template <typename T> double unit_roundoff() {
  if constexpr (std::is_same_v<T, half>)
    return std::ldexp(1.0, -11);
  else if constexpr (std::is_same_v<T, bfloat16>)
    return std::ldexp(1.0, -8);
  else if constexpr (std::is_same_v<T, double>)
    return std::ldexp(1.0, -53);
  else
    return std::ldexp(1.0, -24);
}

// A dense row-major tensor of storage type T.
template <typename T, int R> struct Tensor {
  Index<R> shape{};
  std::vector<T> data;
  Tensor() = default;
  explicit Tensor(const Index<R>& s) : shape(s), data(size_t(volume<R>(s))) {}
  DenseAccessor<T, R> acc() { return DenseAccessor<T, R>(data.data(), shape); }
  double at(const Index<R>& i) const { return double(to_compute(data[size_t(acc_offset(i))])); }
  int64_t acc_offset(const Index<R>& i) const {
    int64_t o = 0;
    for (int k = 0; k < R; ++k)
      o = o * shape[size_t(k)] + i[size_t(k)];
    return o;
  }
};

// Uniform values in [lo, hi), rounded to T.
template <typename T, int R>
Tensor<T, R> random_tensor(std::mt19937& rng, const Index<R>& shape, double lo = -1.0,
                           double hi = 1.0) {
  Tensor<T, R> t(shape);
  std::uniform_real_distribution<double> d(lo, hi);
  for (auto& v : t.data)
    v = from_compute<T>(float(d(rng)));
  return t;
}

template <typename T> uint64_t bits_of(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

// The tensor stored with its dimensions permuted: storage dim k is logical dim perm[k].
// Contig must be truthful: large only when perm keeps the last dimension innermost.
template <typename T, int R, bool HasPtr, int64_t Contig = 1> struct PermutedAccessor {
  using value_type = T;
  static constexpr int rank = R;
  static constexpr int64_t contig = Contig;
  static constexpr bool has_ptr = HasPtr;
  std::shared_ptr<std::vector<T>> buf;
  Index<R> strides{}; // per logical dimension

  PermutedAccessor(const Index<R>& shape, const std::array<int, R>& perm) {
    buf = std::make_shared<std::vector<T>>(size_t(volume<R>(shape)));
    int64_t s = 1;
    for (int k = R - 1; k >= 0; --k) {
      strides[size_t(perm[size_t(k)])] = s;
      s *= shape[size_t(perm[size_t(k)])];
    }
  }
  int64_t offset(const Index<R>& i) const {
    int64_t o = 0;
    for (int k = 0; k < R; ++k)
      o += i[size_t(k)] * strides[size_t(k)];
    return o;
  }
  T* ptr(const Index<R>& i) const { return buf->data() + offset(i); }
  auto load(const Index<R>& i) const { return to_compute((*buf)[size_t(offset(i))]); }
  template <typename V> void store(const Index<R>& i, V v) const {
    (*buf)[size_t(offset(i))] = from_compute<T>(v);
  }
  T raw(const Index<R>& i) const { return (*buf)[size_t(offset(i))]; }
};

// The last dimension cut into blocks of Block elements, even blocks in one buffer and odd
// blocks in another: contiguous runs of exactly Block elements, with ptr().
template <typename T, int R, int64_t Block> struct SplitAccessor {
  using value_type = T;
  static constexpr int rank = R;
  static constexpr int64_t contig = Block;
  static constexpr bool has_ptr = true;
  std::shared_ptr<std::vector<T>> even, odd;
  Index<R> shape{};
  int64_t row = 0; // elements per outer index in each buffer

  explicit SplitAccessor(const Index<R>& s) : shape(s) {
    const int64_t n = s[R - 1], blocks = (n + Block - 1) / Block;
    row = (blocks + 1) / 2 * Block;
    const int64_t outer = volume<R>(s) / std::max<int64_t>(n, 1);
    even = std::make_shared<std::vector<T>>(size_t(outer * row + 1));
    odd = std::make_shared<std::vector<T>>(size_t(outer * row + 1));
  }
  T* ptr(const Index<R>& i) const {
    int64_t outer = 0;
    for (int k = 0; k + 1 < R; ++k)
      outer = outer * shape[size_t(k)] + i[size_t(k)];
    const int64_t j = i[R - 1], q = j / Block;
    T* base = (q % 2 == 0 ? even : odd)->data();
    return base + outer * row + q / 2 * Block + j % Block;
  }
  auto load(const Index<R>& i) const { return to_compute(*ptr(i)); }
  template <typename V> void store(const Index<R>& i, V v) const { *ptr(i) = from_compute<T>(v); }
  T raw(const Index<R>& i) const { return *ptr(i); }
};

// Values computed on demand from a tensor held reversed along every dimension: no ptr().
template <typename T, int R> struct ComputedAccessor {
  using value_type = T;
  static constexpr int rank = R;
  static constexpr int64_t contig = 1;
  static constexpr bool has_ptr = false;
  std::shared_ptr<std::vector<T>> buf;
  Index<R> shape{};

  explicit ComputedAccessor(const Index<R>& s)
      : buf(std::make_shared<std::vector<T>>(size_t(volume<R>(s)))), shape(s) {}
  int64_t offset(const Index<R>& i) const {
    int64_t o = 0;
    for (int k = 0; k < R; ++k)
      o = o * shape[size_t(k)] + (shape[size_t(k)] - 1 - i[size_t(k)]);
    return o;
  }
  auto load(const Index<R>& i) const { return to_compute((*buf)[size_t(offset(i))]); }
  template <typename V> void store(const Index<R>& i, V v) const {
    (*buf)[size_t(offset(i))] = from_compute<T>(v);
  }
  T raw(const Index<R>& i) const { return (*buf)[size_t(offset(i))]; }
};

// Dimension `Dim` read at index i[Dim] / Factor of an underlying accessor (an Expand:
// grouped-query attention reads cache head h / (H / Hkv)).
template <typename A, int Dim, int64_t Factor> struct ExpandAccessor {
  using value_type = typename A::value_type;
  static constexpr int rank = A::rank;
  static constexpr int64_t contig = A::contig;
  static constexpr bool has_ptr = A::has_ptr;
  A base;
  Index<rank> map(Index<rank> i) const {
    i[Dim] /= Factor;
    return i;
  }
  auto load(const Index<rank>& i) const { return base.load(map(i)); }
  value_type* ptr(const Index<rank>& i) const { return base.ptr(map(i)); }
};

// Writes the values of `t` into accessor `a` element by element.
template <typename A, typename T, int R> void fill_from(const A& a, const Tensor<T, R>& t) {
  for (int64_t f = 0; f < volume<R>(t.shape); ++f) {
    Index<R> i = unflatten<R>(t.shape, f);
    a.store(i, to_compute(t.data[size_t(f)]));
  }
}

// Expects accessor `a` (with raw()) to hold exactly the bits of dense tensor `t`.
template <typename A, typename T, int R>
void expect_bitwise(const A& a, const Tensor<T, R>& t, const std::string& what) {
  int64_t bad = 0;
  for (int64_t f = 0; f < volume<R>(t.shape); ++f) {
    Index<R> i = unflatten<R>(t.shape, f);
    if (bits_of(a.raw(i)) != bits_of(t.data[size_t(f)]) && bad++ < 5)
      ADD_FAILURE() << what << ": element " << f << " differs: " << double(to_compute(a.raw(i)))
                    << " vs " << double(to_compute(t.data[size_t(f)]));
  }
  EXPECT_EQ(bad, 0) << what;
}

// Expects two dense tensors to be bitwise equal.
template <typename T, int R>
void expect_bitwise(const Tensor<T, R>& a, const Tensor<T, R>& b, const std::string& what) {
  ASSERT_EQ(a.data.size(), b.data.size()) << what;
  int64_t bad = 0;
  for (size_t f = 0; f < a.data.size(); ++f)
    if (bits_of(a.data[f]) != bits_of(b.data[f]) && bad++ < 5)
      ADD_FAILURE() << what << ": element " << f << " differs: " << double(to_compute(a.data[f]))
                    << " vs " << double(to_compute(b.data[f]));
  EXPECT_EQ(bad, 0) << what;
}

// Expects |out - ref| <= atol + rtol * scale for every element (scale[i] defaults to |ref|).
template <typename T, int R>
void expect_close(const Tensor<T, R>& out, const std::vector<double>& ref, double atol, double rtol,
                  const std::string& what, const std::vector<double>* scale = nullptr) {
  ASSERT_EQ(out.data.size(), ref.size()) << what;
  int64_t bad = 0;
  for (size_t f = 0; f < ref.size(); ++f) {
    const double o = double(to_compute(out.data[f])), r = ref[f];
    const double s = scale ? (*scale)[f] : std::abs(r);
    const bool ok = (std::isnan(r) && std::isnan(o)) || (std::isinf(r) && o == r) ||
                    std::abs(o - r) <= atol + rtol * s;
    if (!ok && bad++ < 5)
      ADD_FAILURE() << what << ": element " << f << " = " << o << ", want " << r;
  }
  EXPECT_EQ(bad, 0) << what;
}

// t [n, c, h, w] as [n, h, w, c].
inline Tensor<float, 4> to_nhwc(const Tensor<float, 4>& t) {
  const Index<4> s = t.shape;
  Tensor<float, 4> r(Index<4>{s[0], s[2], s[3], s[1]});
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t y = 0; y < s[2]; ++y)
        for (int64_t x = 0; x < s[3]; ++x)
          r.data[size_t(((n * s[2] + y) * s[3] + x) * s[1] + c)] =
              t.data[size_t(((n * s[1] + c) * s[2] + y) * s[3] + x)];
  return r;
}

// t [n, h, w, c] as [n, c, h, w].
inline Tensor<float, 4> to_nchw(const Tensor<float, 4>& t) {
  const Index<4> s = t.shape;
  Tensor<float, 4> r(Index<4>{s[0], s[3], s[1], s[2]});
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t y = 0; y < s[1]; ++y)
      for (int64_t x = 0; x < s[2]; ++x)
        for (int64_t c = 0; c < s[3]; ++c)
          r.data[size_t(((n * s[3] + c) * s[1] + y) * s[2] + x)] =
              t.data[size_t(((n * s[1] + y) * s[2] + x) * s[3] + c)];
  return r;
}

} // namespace vtc::kernels::test
