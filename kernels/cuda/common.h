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

struct Launch {
  unsigned grid[3];
  unsigned block[3];
  unsigned smem_bytes;
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

// Raw vectors of N storage elements, aligned to their size up to 16 bytes (one vector load
// or store of 4, 8 or 16 bytes; 16-byte pieces beyond that).
template <class T, int N> inline constexpr int vec_align = sizeof(T) * N > 16 ? 16 : sizeof(T) * N;
template <class T, int N> struct alignas(vec_align<T, N>) RawVec { T v[N]; };

template <class T> __device__ VTC_INLINE bool aligned_to(const T* p, int bytes) {
  return (reinterpret_cast<unsigned long long>(p) & (unsigned long long)(bytes - 1)) == 0;
}

// Whether an accessor's elements i .. i + N - 1 along the last dimension can be moved as one
// vector: ptr() exists and the run holds them (i[R-1] a multiple of N); the caller checks the
// address against vec_align.
template <class A, int N> inline constexpr bool vector_capable = A::has_ptr && (A::contig % N == 0);

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
// values): one vector load when `vec` (the caller checked vector_capable and alignment),
// else N loads, elements at or past `limit` reading as 0. The values are the same both ways.
template <int N, class A>
__device__ VTC_INLINE void load_floats(const A& a, Index<A::rank> i, bool vec, int64_t limit,
                                       float (&dst)[N]) {
  using T = typename A::value_type;
  if constexpr (A::has_ptr) {
    if (vec) {
      const RawVec<T, N> r = *reinterpret_cast<const RawVec<T, N>*>(a.ptr(i));
      for (int u = 0; u < N; ++u)
        dst[u] = float(to_compute(r.v[u]));
      return;
    }
  }
  const int64_t first = i[A::rank - 1];
  for (int u = 0; u < N; ++u) {
    i[A::rank - 1] = first + u;
    dst[u] = first + u < limit ? float(a.load(i)) : 0.0f;
  }
}

} // namespace vtc::kernels::cuda

#endif
