// The accessor contract between kernel templates and generated code. A kernel never sees a
// pointer and strides; it sees accessors, which is how the same kernel reads a physical
// tensor, a virtual tensor (a mapping onto one or more physical buffers), or a fused
// elementwise prologue, and writes a physical tensor, a virtual one, or through an epilogue.
//
// An accessor type A provides:
//   using value_type = T;                   // storage type of the elements (float, f16, ...)
//   static constexpr int rank = R;          // number of index dimensions
//   static constexpr int64_t contig = C;    // >= 1: for every index i with i[R-1] % C == 0,
//                                           // elements i .. i + (C-1 along the last dim) are
//                                           // adjacent in memory in one buffer
//   static constexpr bool has_ptr = P;      // ptr() is available (false for computed values)
//   float load(const Index<R>& i) const;    // the element at i, converted to float (double
//                                           // for f64 tensors)
//   void store(const Index<R>& i, float v) const;   // writers only
//   value_type* ptr(const Index<R>& i) const;       // when has_ptr: address of element i
//
// The rule that keeps every strategy bitwise identical: a kernel may choose HOW it moves
// data by `contig` and `has_ptr` (vector loads, packing), never the arithmetic or its order.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "../common/scalar_types.h"

namespace vtc::kernels {

template <int R> using Index = std::array<int64_t, size_t(R)>;

// A dense, row-major tensor in one buffer: the accessor of every physical tensor.
template <typename T, int R> struct DenseAccessor {
  using value_type = T;
  static constexpr int rank = R;
  static constexpr int64_t contig = 1 << 30; // the whole last dimension is contiguous
  static constexpr bool has_ptr = true;

  T* data = nullptr;
  Index<R> strides{}; // in elements

  DenseAccessor() = default;
  DenseAccessor(T* d, const Index<R>& shape) : data(d) {
    int64_t s = 1;
    for (int k = R - 1; k >= 0; --k) {
      strides[size_t(k)] = s;
      s *= shape[size_t(k)];
    }
  }
  int64_t offset(const Index<R>& i) const {
    int64_t o = 0;
    for (int k = 0; k < R; ++k)
      o += i[size_t(k)] * strides[size_t(k)];
    return o;
  }
  T* ptr(const Index<R>& i) const { return data + offset(i); }
  auto load(const Index<R>& i) const { return to_compute(data[offset(i)]); }
  template <typename V> void store(const Index<R>& i, V v) const {
    data[offset(i)] = from_compute<T>(v);
  }
};

} // namespace vtc::kernels
