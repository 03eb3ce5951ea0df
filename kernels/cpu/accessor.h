// The cpu target's side of the accessor contract (kernels/common/accessor.h, which every
// target shares and which documents it): DenseAccessor, the accessor of every physical tensor,
// and the common Index, Accessor and compute_t, with the scalar types and their conversions
// (kernels/common/scalar_types.h) that load() and store() go through.
//
// The rule that keeps every strategy bitwise identical: a kernel may choose HOW it moves
// data by `contig` and `has_ptr` (vector loads, packing), never the arithmetic or its order.
#pragma once

#include <cstdint>

#include "../common/accessor.h"
#include "../common/scalar_types.h"

namespace vtc::kernels {

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
      strides[k] = s;
      s *= shape[k];
    }
  }
  int64_t offset(const Index<R>& i) const {
    int64_t o = 0;
    for (int k = 0; k < R; ++k)
      o += i[k] * strides[k];
    return o;
  }
  T* ptr(const Index<R>& i) const { return data + offset(i); }
  auto load(const Index<R>& i) const { return to_compute(data[offset(i)]); }
  template <typename V> void store(const Index<R>& i, V v) const {
    data[offset(i)] = from_compute<T>(v);
  }
};

static_assert(Accessor<DenseAccessor<float, 2>>);
static_assert(Accessor<DenseAccessor<half, 0>>);
static_assert(Accessor<DenseAccessor<bfloat16, 4>>);
static_assert(portable::is_same_v<compute_t<DenseAccessor<bfloat16, 3>>, float>);
static_assert(portable::is_same_v<compute_t<DenseAccessor<double, 1>>, double>);
static_assert(portable::is_same_v<compute_t<DenseAccessor<int8_t, 1>>, int64_t>);

} // namespace vtc::kernels
