// What every cuda kernel template shares: the Launch description that each kernel's
// *_launch(shape) returns (plain C++, compiled by the host compiler and under NVRTC), and,
// in device code only, the building blocks of the kernels — fixed-order warp and block
// reductions, 16-byte vector access, cp.async, ldmatrix and mma.sync wrappers.
//
// Calling convention (so code generation can call every kernel the same way): a kernel is a
// __device__ function template foo(out, in..., shape) run by one thread block, reading
// blockIdx / threadIdx; the generated `extern "C" __global__ void vtc_step_N(...)` builds the
// accessors and calls it, and launches it with foo_launch(shape) (grid, block, dynamic shared
// memory; above 48 KB the launcher must first raise the function's
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). Shapes are best passed as literals in the
// entry point, so that the index arithmetic divides by constants.
//
// Bitwise identity: reductions here combine in an order fixed by the number of participants
// (a function of the shape), never by how the operands were loaded.
#pragma once

#include "../common/accessor.h"

namespace vtc::kernels {

// grid, block, dynamic shared memory; min_blocks: the blocks per multiprocessor the kernel is
// built for, the entry point's __launch_bounds__(block, min_blocks) (which caps registers).
struct Launch {
  unsigned grid[3];
  unsigned block[3];
  unsigned smem_bytes;
  unsigned min_blocks = 1;
};

VTC_HD constexpr int64_t cdiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
VTC_HD constexpr int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
VTC_HD constexpr int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}
VTC_HD constexpr int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}
// The smallest power of two >= v (v >= 1).
VTC_HD constexpr int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v)
    p *= 2;
  return p;
}

// Grid-stride kernels stop growing the grid here: 16 blocks of 256 threads for each of the
// 132 multiprocessors of an H100 / H200 is more than fill the chip, and a fixed cap keeps the
// launch a function of the shape alone.
inline constexpr int64_t kMaxGridStrideBlocks = 132 * 16;

// An absent optional operand (a LayerNorm without bias, attention without a mask).
struct NoOperand {
  static constexpr bool present = false;
};
template <class A> inline constexpr bool is_present = true;
template <> inline constexpr bool is_present<NoOperand> = false;

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

#include "scalar.h"

namespace vtc::kernels::cuda {

template <class A, class B> inline constexpr bool same_type = false;
template <class A> inline constexpr bool same_type<A, A> = true;

// -inf and +inf as floats.
__device__ VTC_INLINE float neg_inf() {
  return __int_as_float(0xff800000);
}
__device__ VTC_INLINE float pos_inf() {
  return __int_as_float(0x7f800000);
}
// max / min that propagate NaN (as the cpu target's max_nan).
__device__ VTC_INLINE float max_nan(float a, float b) {
  return (a != a || a > b) ? a : b;
}
__device__ VTC_INLINE float min_nan(float a, float b) {
  return (a != a || a < b) ? a : b;
}

// Reductions across the 32 lanes of a warp by butterfly (xor 16, 8, 4, 2, 1): every lane
// ends with the same bits, since each step adds two equal partial sums in either order.
template <class F> __device__ VTC_INLINE float warp_reduce(float v, F op, int width = 32) {
  for (int o = width / 2; o >= 1; o /= 2)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
struct Add {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return max_nan(a, b); }
};
struct Min {
  __device__ float operator()(float a, float b) const { return min_nan(a, b); }
};

// A block-wide reduction of one value per thread (blockDim.x a multiple of 32, at most
// 1024): butterflies within the warps, then the warps' values combined in warp order by
// every thread. `scratch` holds 32 floats; the function synchronises before and after using
// it, so calls may follow one another.
template <class F> __device__ VTC_INLINE float block_reduce(float v, F op, float* scratch) {
  v = warp_reduce(v, op);
  const int warps = int(blockDim.x) / 32;
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < warps; ++w)
    r = op(r, scratch[w]);
  return r;
}

// Vector access is by 32-bit words: a storage element of 2 or 4 bytes that computes in float
// is packed into them and out again by its bits. (Copying a struct of 16-bit elements, or
// memcpy through one, makes the compiler move the elements one by one.)
template <class T>
inline constexpr bool
    word_packed = (sizeof(T) == 2 || sizeof(T) == 4) && same_type<decltype(to_compute(T{})), float>;

// W words at p in global memory (aligned to min(16, 4 W) bytes) in the widest accesses.
// Written in PTX: the compiler splits a uint4 built from separate words into four stores.
template <int W> __device__ VTC_INLINE void load_words(const void* p, unsigned (&w)[W]) {
  const char* c = static_cast<const char*>(p);
  if constexpr (W % 4 == 0) {
#pragma unroll
    for (int k = 0; k < W / 4; ++k)
      asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(w[4 * k]), "=r"(w[4 * k + 1]), "=r"(w[4 * k + 2]), "=r"(w[4 * k + 3])
                   : "l"(c + 16 * k));
  } else if constexpr (W == 2) {
    asm volatile("ld.global.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(c));
  } else {
    static_assert(W == 1, "1, 2 or a multiple of 4 words");
    asm volatile("ld.global.u32 %0, [%1];" : "=r"(w[0]) : "l"(c));
  }
}
template <int W> __device__ VTC_INLINE void store_words(void* p, const unsigned (&w)[W]) {
  char* c = static_cast<char*>(p);
  if constexpr (W % 4 == 0) {
#pragma unroll
    for (int k = 0; k < W / 4; ++k)
      asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(c + 16 * k), "r"(w[4 * k]),
                   "r"(w[4 * k + 1]), "r"(w[4 * k + 2]), "r"(w[4 * k + 3])
                   : "memory");
  } else if constexpr (W == 2) {
    asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(c), "r"(w[0]), "r"(w[1]) : "memory");
  } else {
    static_assert(W == 1, "1, 2 or a multiple of 4 words");
    asm volatile("st.global.u32 [%0], %1;" ::"l"(c), "r"(w[0]) : "memory");
  }
}

// A storage element's bits and back (float, or a 16-bit float: raw_bits of scalar.h).
template <class T> __device__ VTC_INLINE unsigned element_bits(const T& v) {
  if constexpr (sizeof(T) == 4) {
    static_assert(same_type<T, float>, "4-byte word-packed elements are floats");
    return __float_as_uint(v);
  } else {
    return raw_bits(v);
  }
}
template <class T> __device__ VTC_INLINE T element_of_bits(unsigned b) {
  if constexpr (sizeof(T) == 4)
    return __uint_as_float(b);
  else
    return from_raw_bits<T>(static_cast<uint16_t>(b));
}

// Element u of N packed elements of T in words w.
template <class T, int W> __device__ VTC_INLINE T unpack(const unsigned (&w)[W], int u) {
  if constexpr (sizeof(T) == 4)
    return element_of_bits<T>(w[u]);
  else
    return element_of_bits<T>(w[u / 2] >> (16 * (u % 2)));
}

// The alignment a vector of N elements of T needs: its size, at most 16 bytes.
template <class T, int N> inline constexpr int vec_align = sizeof(T) * N > 16 ? 16 : sizeof(T) * N;

template <class T> __device__ VTC_INLINE bool aligned_to(const T* p, int bytes) {
  return (reinterpret_cast<unsigned long long>(p) & (unsigned long long)(bytes - 1)) == 0;
}

// Whether an accessor's elements i .. i + N - 1 along the last dimension can move as one
// vector (accessors' ptr() point into global memory): ptr() exists, the run holds them (i[R-1] a
// multiple of N), and the elements pack into whole words; the caller checks the address against
// vec_align.
template <class A, int N>
inline constexpr bool
    vector_capable = A::has_ptr && (A::contig % N == 0) && word_packed<typename A::value_type> &&
                     (N * sizeof(typename A::value_type)) % 4 == 0;

// Whether store_floats<N> can store N adjacent elements through `a` as one vector: `a` itself,
// or the target of an epilogue, is vector_capable (alignment is checked where it stores).
template <class A, int N> constexpr bool vector_store_capable() {
  if constexpr (vector_capable<A, N>)
    return true;
  else if constexpr (epilogue_of<A>)
    return vector_capable<
        portable::remove_cvref_t<decltype(portable::declval<const A&>().target())>, N>;
  else
    return false;
}

// Whether elements i .. i + N - 1 of `a` along the last dimension move as one vector here:
// vector_capable, and ptr(i) aligned (i[R-1] a multiple of N and the N elements inside the
// tensor: the caller's business).
template <int N, class A>
__device__ VTC_INLINE bool vector_at(const A& a, const Index<A::rank>& i) {
  if constexpr (vector_capable<A, N>)
    return aligned_to(a.ptr(i), vec_align<typename A::value_type, N>);
  else
    return false;
}

// The first statement of every generated kernel (programmatic dependent launch, sm_90 on): the
// kernel may have been launched before the one queued ahead of it finished (launch_kernel's
// `overlap`); wait until that one has completed and its writes are visible, then let the
// kernel queued next start its blocks, which wait here in turn. Elsewhere, or when the kernel
// was launched plainly, both instructions return at once.
__device__ VTC_INLINE void await_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Loads through L2 only (values written by other blocks of the same launch).
__device__ VTC_INLINE float ld_cg(const float* p) {
  float v;
  asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

// cp.async of 16 bytes (global -> shared), and its groups.
__device__ VTC_INLINE void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ VTC_INLINE void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N> __device__ VTC_INLINE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// ldmatrix: four 8x8 matrices of 16-bit elements, each row 16 bytes at the address given by
// one lane (lanes 8j .. 8j+7 give matrix j's rows); .trans transposes each matrix.
__device__ VTC_INLINE void ldmatrix_x4(unsigned (&r)[4], const void* smem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
__device__ VTC_INLINE void ldmatrix_x4_trans(unsigned (&r)[4], const void* smem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

// d = a . b + d for one m16n8k16 tile, f32 accumulators; Kind 1: f16 operands, 2: bf16.
template <int Kind>
__device__ VTC_INLINE void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                        unsigned b1) {
  if constexpr (Kind == 1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Two values as one word of 16-bit elements of T, the first in the low half (the order of an
// mma operand's pair).
template <class T> __device__ VTC_INLINE unsigned pack_pair(float lo, float hi) {
  return element_bits(from_compute<T>(lo)) | (element_bits(from_compute<T>(hi)) << 16);
}

// Index of row `row` of the outer dimensions of `extent` (all but the last), last index 0.
template <int R>
__device__ VTC_INLINE Index<R> row_index(const int64_t (&extent)[R > 0 ? R : 1], int64_t row) {
  Index<R> i{};
  for (int k = R - 2; k >= 0; --k) {
    i[k] = row % extent[k];
    row /= extent[k];
  }
  return i;
}

// The elements at i .. i + N - 1 along the last dimension of a reader, as floats (compute
// values): one vector load when `vec` (the caller checked vector_capable and alignment), a
// computed reader's loads<N> (its operands' runs as vectors), else N loads; elements at or past
// `limit` read as 0. The values are the same every way.
template <int N, class A>
__device__ VTC_INLINE void load_floats(const A& a, Index<A::rank> i, bool vec, int64_t limit,
                                       float (&dst)[N]) {
  using T = typename A::value_type;
  if constexpr (vector_capable<A, N>) {
    if (vec) {
      unsigned w[N * sizeof(T) / 4];
      load_words(a.ptr(i), w);
#pragma unroll
      for (int u = 0; u < N; ++u)
        dst[u] = to_compute(unpack<T>(w, u));
      return;
    }
  }
  if constexpr (loads_of<A>) {
    a.template loads<N>(i, limit, dst);
    return;
  }
  const int64_t first = i[A::rank - 1];
#pragma unroll
  for (int u = 0; u < N; ++u) {
    i[A::rank - 1] = first + u;
    dst[u] = first + u < limit ? float(a.load(i)) : 0.0f;
  }
}

// One vector store at p (aligned for N elements of T) of from_compute<T>(value(u)) for u = 0 ..
// N - 1, packed into 32-bit words.
template <class T, int N, class F> __device__ VTC_INLINE void store_vector(T* p, F&& value) {
  unsigned w[N * sizeof(T) / 4];
#pragma unroll
  for (int k = 0; k < int(N * sizeof(T) / 4); ++k)
    w[k] = 0;
#pragma unroll
  for (int u = 0; u < N; ++u) {
    const unsigned b = element_bits(from_compute<T>(value(u)));
    if constexpr (sizeof(T) == 4)
      w[u] = b;
    else
      w[u / 2] |= b << (16 * (u % 2));
  }
  store_words(p, w);
}

// Stores v[0 .. N) at i .. i + N - 1 along the last dimension of a writer: one vector store of
// from_compute(v[u]) when `vec` (vector_capable, aligned), else store() per element below
// `limit`. A writer with ptr() stores from_compute(v) there (the accessor contract: writers
// that compute, epilogues, have no ptr()), so both ways write the same bits; an epilogue whose
// target() has ptr() computes its N values and stores them as one vector there.
template <int N, class A>
__device__ VTC_INLINE void store_floats(const A& a, Index<A::rank> i, bool vec, int64_t limit,
                                        const float (&v)[N]) {
  using T = typename A::value_type;
  if constexpr (vector_capable<A, N>) {
    if (vec) {
      store_vector<T, N>(a.ptr(i), [&](int u) { return v[u]; });
      return;
    }
  }
  // An epilogue over a writer with ptr(): the N values computed, then one vector store through
  // the target (the bits target().store(i, value(i, v)) writes element by element).
  if constexpr (epilogue_of<A>) {
    using O = decltype(a.target());
    if constexpr (vector_capable<O, N>) {
      const O o = a.target();
      if (i[A::rank - 1] + N <= limit && vector_at<N>(o, i)) {
        if constexpr (values_of<A>) {
          decltype(a.value(i, v[0])) res[N];
          a.template values<N>(i, v, res);
          store_vector<typename O::value_type, N>(o.ptr(i), [&](int u) { return res[u]; });
        } else {
          store_vector<typename O::value_type, N>(o.ptr(i), [&](int u) {
            Index<A::rank> j = i;
            j[A::rank - 1] += u;
            return a.value(j, v[u]);
          });
        }
        return;
      }
    }
  }
  const int64_t first = i[A::rank - 1];
#pragma unroll
  for (int u = 0; u < N; ++u)
    if (first + u < limit) {
      i[A::rank - 1] = first + u;
      a.store(i, v[u]);
    }
}

} // namespace vtc::kernels::cuda

namespace vtc::kernels {

// Whether channels i[1] .. i[1] + N - 1 of `a` at pixel i lie side by side from an address
// aligned for one vector of N elements.
template <int N, class A>
__device__ VTC_INLINE bool adjacent_channels(const A& a, const Index<4>& i) {
  using T = typename A::value_type;
  const T* p = a.ptr(i);
  if (!cuda::aligned_to(p, cuda::vec_align<T, N>)) return false;
  bool adjacent = true;
#pragma unroll
  for (int u = 1; u < N; ++u) {
    Index<4> k = i;
    k[1] += u;
    adjacent &= a.ptr(k) == p + u;
  }
  return adjacent;
}

// Stores v[u] at channel i[1] + u of pixel i, u = 0 .. N - 1, through `out` as one vector store
// where out (or the target of its epilogue) has addresses and adjacent_channels holds there:
// the values out's store would write, element by element, so the same bits. False, storing
// nothing, otherwise.
template <int N, class Out>
__device__ VTC_INLINE bool store_channels(const Out& out, const Index<4>& i, const float (&v)[N]) {
  using namespace cuda;
  if constexpr (epilogue_of<Out>) {
    using O = portable::remove_cvref_t<decltype(out.target())>;
    if constexpr (O::has_ptr && word_packed<typename O::value_type> &&
                  (N * sizeof(typename O::value_type)) % 4 == 0) {
      const O o = out.target();
      if (!adjacent_channels<N>(o, i)) return false;
      store_vector<typename O::value_type, N>(o.ptr(i), [&](int u) {
        Index<4> k = i;
        k[1] += u;
        return out.value(k, v[u]);
      });
      return true;
    }
  } else if constexpr (Out::has_ptr && word_packed<typename Out::value_type> &&
                       (N * sizeof(typename Out::value_type)) % 4 == 0) {
    if (!adjacent_channels<N>(out, i)) return false;
    store_vector<typename Out::value_type, N>(out.ptr(i), [&](int u) { return v[u]; });
    return true;
  }
  return false;
}

} // namespace vtc::kernels

#endif
