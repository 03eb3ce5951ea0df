// Accessors for the cuda kernel tests, in the shapes code generation gives them: a dense
// tensor, a strided view (a transpose or a slice: ptr() but runs of one element), a two-piece
// mapped tensor (a Concat along dimension D: indices below `split` in piece 0, the rest in
// piece 1, each with its own base and strides) and a computed operand (load() and loads<N>()).
// Device code, compiled under NVRTC with the kernels.
#pragma once

#include "kernels/cuda/common.h"

namespace vtc::kernels::test {

template <int R> VTC_HD VTC_INLINE int64_t dot_strides(const Index<R>& i, const int64_t (&st)[R]) {
  int64_t o = 0;
  for (int k = 0; k < R; ++k)
    o += i[k] * st[k];
  return o;
}

// T data[...] at strides `stride` (elements); Contig: the accessor's `contig` (1 << 30 for a
// row-major tensor, 1 for a view whose last dimension is not unit-stride).
template <class T, int R, int64_t Contig = int64_t(1) << 30> struct Strided {
  using value_type = T;
  static constexpr int rank = R;
  static constexpr int64_t contig = Contig;
  static constexpr bool has_ptr = true;
  T* data;
  int64_t stride[R];
  VTC_HD T* ptr(const Index<R>& i) const { return data + dot_strides(i, stride); }
  VTC_HD auto load(const Index<R>& i) const { return to_compute(*ptr(i)); }
  template <class V> VTC_HD void store(const Index<R>& i, V v) const {
    *ptr(i) = from_compute<T>(v);
  }
};
template <class T, int R> using Dense = Strided<T, R>;

template <class T, int R, int D, int64_t Contig = int64_t(1) << 30> struct Concat2 {
  using value_type = T;
  static constexpr int rank = R;
  static constexpr int64_t contig = Contig;
  static constexpr bool has_ptr = true;
  T* p0;
  T* p1;
  int64_t s0[R], s1[R];
  int64_t split;
  VTC_HD T* ptr(const Index<R>& i) const {
    if (i[D] < split) return p0 + dot_strides(i, s0);
    Index<R> j = i;
    j[D] -= split;
    return p1 + dot_strides(j, s1);
  }
  VTC_HD auto load(const Index<R>& i) const { return to_compute(*ptr(i)); }
  template <class V> VTC_HD void store(const Index<R>& i, V v) const {
    *ptr(i) = from_compute<T>(v);
  }
};

// The values of A, through load() and loads<N>() only (as a fused prologue offers them: N
// adjacent values from A's runs, read as vectors where A has them).
template <class A> struct Computed {
  using value_type = typename A::value_type;
  static constexpr int rank = A::rank;
  static constexpr int64_t contig = 1;
  static constexpr bool has_ptr = false;
  A in;
  VTC_HD auto load(const Index<rank>& i) const { return in.load(i); }
  static constexpr bool has_loads = true;
  template <int N>
  __device__ void loads(const Index<rank>& i, int64_t limit, float (&dst)[N]) const {
    cuda::load_floats<N>(in, i, i[rank - 1] + N <= limit && cuda::vector_at<N>(in, i), limit, dst);
  }
};

// A [B, H, L, D] reader over a cache [B, H / group, L, D]: head h reads cache head h / group
// (the grouped-query Expand mapping).
template <class A> struct HeadGroups {
  using value_type = typename A::value_type;
  static constexpr int rank = 4;
  static constexpr int64_t contig = A::contig;
  static constexpr bool has_ptr = A::has_ptr;
  A in;
  int64_t group;
  VTC_HD Index<4> at(const Index<4>& i) const { return Index<4>{i[0], i[1] / group, i[2], i[3]}; }
  VTC_HD auto load(const Index<4>& i) const { return in.load(at(i)); }
  VTC_HD auto ptr(const Index<4>& i) const { return in.ptr(at(i)); }
};

} // namespace vtc::kernels::test
