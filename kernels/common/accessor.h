// The accessor contract shared by every target's kernel templates (kernels/cpu, kernels/cuda)
// and the code vtc generates. A kernel never sees a pointer and strides; it sees accessors,
// which is how one kernel reads a physical tensor, a virtual tensor (a mapping onto one or
// more physical buffers) or a fused elementwise prologue, and writes a physical tensor, a
// virtual one, or through an epilogue.
//
// An accessor type A provides:
//   using value_type = T;                   // storage type of the elements (float, half, ...)
//   static constexpr int rank = R;          // number of index dimensions
//   static constexpr int64_t contig = C;    // >= 1: for every index i with i[R-1] % C == 0,
//                                           // elements i .. i + (C-1 along the last dim) are
//                                           // adjacent in memory in one buffer
//   static constexpr bool has_ptr = P;      // ptr() is available (false for computed values)
//   auto load(const Index<R>& i) const;     // the element at i in its compute type (float,
//                                           // double for f64, the integer or bool itself)
//   void store(const Index<R>& i, V v) const;   // writers only
//   value_type* ptr(const Index<R>& i) const;   // when has_ptr: address of element i
// and optionally the run forms over `n` elements along the last dimension from i:
//   void run_load(const Index<R>& i, int64_t n, D* dst) const;
//   void run_store(const Index<R>& i, int64_t n, const D* src) const;
// An epilogue (a writer that computes before it stores: bias, activation, residual add), and a
// view of one, may also declare
//   static constexpr bool is_epilogue = true;
//   auto value(const Index<R>& i, V v) const;   // what store(i, v) would write, in compute type
//   auto target() const;                        // the writer store() writes it through
// so that a kernel can compute several outputs and move them as one vector through target():
// store(i, v) is target().store(i, value(i, v)).
//
// The rule that keeps every strategy bitwise identical: a kernel may choose HOW it moves
// data by `contig` and `has_ptr` (vector loads, packing), never the arithmetic or its order.
//
// This header compiles as host C++20 (g++, clang) and as CUDA device code under NVRTC
// (-default-device, C++20): no standard-library headers (portable.h), VTC_HD on every function.
#pragma once

#include "portable.h"

namespace vtc::kernels {

// An index into a rank-R index space: a plain aggregate (Index<3>{b, m, k}), usable in device
// code, copied by value.
template <int R> struct Index {
  int64_t v[R > 0 ? R : 1];
  VTC_HD constexpr int64_t& operator[](int64_t k) { return v[k]; }
  VTC_HD constexpr const int64_t& operator[](int64_t k) const { return v[k]; }
  VTC_HD static constexpr int size() { return R; }
  VTC_HD constexpr int64_t* begin() { return v; }
  VTC_HD constexpr int64_t* end() { return v + R; }
  VTC_HD constexpr const int64_t* begin() const { return v; }
  VTC_HD constexpr const int64_t* end() const { return v + R; }
  VTC_HD constexpr bool operator==(const Index& o) const {
    for (int k = 0; k < R; ++k)
      if (v[k] != o.v[k]) return false;
    return true;
  }
};

// What every accessor declares (the member functions are checked where a kernel calls them:
// a reader needs load, a writer store, a pointer-based fast path ptr).
template <typename A>
concept Accessor = requires {
  typename A::value_type;
  A::rank;
  A::contig;
  A::has_ptr;
  requires int(A::rank) >= 0 && int64_t(A::contig) >= 1;
  requires bool(A::has_ptr) || !bool(A::has_ptr); // a constant
};

// Whether writer A is an epilogue with value() and target() (see the top of the file).
template <typename A> inline constexpr bool epilogue_of = requires {
  requires bool(A::is_epilogue);
};

// Whether epilogue A computes N adjacent results at once: values<N>(i, v, res), the results
// value(i + u, v[u]) would give (device code; its operands read as vectors where they can be).
template <typename A> inline constexpr bool values_of = requires {
  requires bool(A::has_values);
};

// Whether reader A computes N adjacent elements at once: loads<N>(i, limit, dst), the values
// load_floats<N> would give element by element (device code; a computed accessor's operands
// read as vectors where they can be).
template <typename A> inline constexpr bool loads_of = requires {
  requires bool(A::has_loads);
};

// The compute type an accessor's load() returns (float for f32/f16/bf16, double for f64,
// int64_t for the integer types).
template <typename A>
using compute_t =
    portable::remove_cvref_t<decltype(portable::declval<const A&>().load(Index<A::rank>{}))>;

} // namespace vtc::kernels
