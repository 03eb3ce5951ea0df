// Batched matrix multiply over rank-3 accessors, batch first (broadcast batches are the
// accessors' business): C[b, m, n] = sum_k A[b, m, k] * B[b, k, n], stored through the output
// accessor (which may be an epilogue: bias, activation, residual add).
//
// This file: the shape every product kernel takes, gemm_f32 and the staging of 16-bit operands
// the tensor-core kernels share (gemm_tc.h for products sized to their shape, gemv_tc.h for
// decode). load_bits / stage_chunk8 give a 16-bit operand's storage bits: cp.async straight
// from ptr() when the accessor's `contig` holds a chunk of 8 and the address is 16-byte
// aligned; otherwise through load(), converted back to storage bits. Both give the same operand
// bits (a signalling NaN is quieted, which the product does anyway).
//
// gemm_f32: f32 on CUDA cores (no TF32): block tile 128 x 128 x 8, 8 x 8 outputs per thread,
// double-buffered; each output is acc = 0, acc = fma(A[m, k], B[k, n], acc) for k = 0..K-1,
// the chain of the cpu target's kernels.
//
// gemm_f32_small: products whose whole output is small (M * N <= 1024: EfficientViT's linear
// attention, 17 x 16 over K = 1024 per head), a thread per output, blocks by batch and by
// split of K (k_split: gemm_f32_small_k_split of the shape): each split's chain over its k
// from 0, the splits' sums added in split order by the batch's last split to finish (a counter
// per batch in the workspace, which starts and is left zero). gemm_f32's 128 x 128 tile put such a
// product in one block of mostly idle threads, each walking all of K with its 8 x 8 outputs (0.4
// TFLOP/s in EfficientViT at batch 16). K goes in chunks (gemm_f32_small_chunk): the whole block
// stages a chunk of A's rows and B's columns in shared memory (neighbouring threads along B's runs:
// n where B has them, else k, as for a transposed K), then every thread continues its chain from
// there. Reading the operands per thread instead left each chain waiting on one load at a time (195
// GB/s in the model, through the virtual Pad and Transpose of the attention's operands). A's
// chunk along k goes in runs of 8 (load_floats: a vector where A has runs, and through a fused
// prologue the vector of the operand under it), not element by element.
//
// Decode-sized M (<= 16) belongs to gemv.h.
#pragma once

#include "common.h"

namespace vtc::kernels {

struct GemmShape {
  int64_t batch = 1, m = 1, n = 1, k = 1;
};

namespace gemm_f32_config {
inline constexpr int kBM = 128, kBN = 128, kBK = 8, kThreads = 256;
inline constexpr unsigned kSmemBytes = unsigned(2 * (kBK * kBM + kBK * kBN) * 4);
} // namespace gemm_f32_config

VTC_HD constexpr unsigned batch_grid(int64_t batch) {
  return unsigned(clamp64(batch, 1, 65535));
}

// One block a multiprocessor: capped at 128 registers (two blocks) the kernel spills.
VTC_HD constexpr Launch gemm_f32_launch(const GemmShape& s) {
  using namespace gemm_f32_config;
  return Launch{{unsigned(cdiv(s.n, kBN)), unsigned(cdiv(s.m, kBM)), batch_grid(s.batch)},
                {kThreads, 1, 1},
                kSmemBytes,
                1};
}

// The largest output (M * N) gemm_f32_small takes: one thread an output, one block a batch.
inline constexpr int64_t kGemmF32SmallOutputs = 1024;

VTC_HD constexpr bool gemm_f32_small_fits(const GemmShape& s) {
  return s.m * s.n <= kGemmF32SmallOutputs;
}

// The k chunk gemm_f32_small stages: up to 128, as many as fit (M + N) rows of chunk + 1
// floats (padded against bank conflicts) in 48 KB.
VTC_HD constexpr int64_t gemm_f32_small_chunk(const GemmShape& s) {
  int64_t c = 128;
  while (c > 1 && (s.m + s.n) * (c + 1) * 4 > 48 * 1024)
    c /= 2;
  return c;
}

// Split-K: the blocks gemm_f32_small aims for (four a multiprocessor of an H100 / H200: a block
// a batch left 256 batches two blocks of 288 threads a multiprocessor, each waiting on its own
// chain of loads), each split a whole number of chunks.
inline constexpr int64_t kGemmF32SmallBlocks = 132 * 4;
// The k each split takes (K itself: no split).
VTC_HD constexpr int64_t gemm_f32_small_k_split(const GemmShape& s) {
  const int64_t c = gemm_f32_small_chunk(s), kk = max64(s.k, 1);
  const int64_t splits = clamp64(kGemmF32SmallBlocks / max64(s.batch, 1), 1, cdiv(kk, c));
  return cdiv(cdiv(kk, splits), c) * c;
}
VTC_HD constexpr int64_t gemm_f32_small_splits(const GemmShape& s, int64_t k_split) {
  return max64(1, cdiv(s.k, max64(k_split, 1)));
}
// Partial sums [batch][splits][m * n] floats, then a counter per batch; 0 without split-K.
VTC_HD constexpr int64_t gemm_f32_small_workspace_partial_bytes(const GemmShape& s,
                                                                int64_t k_split) {
  const int64_t splits = gemm_f32_small_splits(s, k_split);
  return splits == 1 ? 0 : s.batch * splits * s.m * s.n * 4;
}
VTC_HD constexpr int64_t gemm_f32_small_workspace_bytes(const GemmShape& s, int64_t k_split) {
  const int64_t splits = gemm_f32_small_splits(s, k_split);
  return splits == 1 ? 0 : gemm_f32_small_workspace_partial_bytes(s, k_split) + s.batch * 4;
}

// gemm_f32_skinny: K and one of M and N at most 32 (the short side), the other long. A
// thread a long-side index: the short operand staged whole in shared memory, the thread's K
// values of the long one in registers.
inline constexpr int64_t kGemmF32SkinnyMaxShort = 32, kGemmF32SkinnyMaxK = 32;
inline constexpr int kGemmF32SkinnyThreads = 256;
VTC_HD constexpr bool gemm_f32_skinny_fits(const GemmShape& s) {
  return s.k <= kGemmF32SkinnyMaxK &&
         (s.m <= kGemmF32SkinnyMaxShort || s.n <= kGemmF32SkinnyMaxShort);
}
// Whether the long side is M (rows: a thread a row), else N (a thread a column).
VTC_HD constexpr bool gemm_f32_skinny_long_m(const GemmShape& s) {
  return s.n <= kGemmF32SkinnyMaxShort && s.m > s.n;
}
VTC_HD constexpr Launch gemm_f32_skinny_launch(const GemmShape& s) {
  const bool long_m = gemm_f32_skinny_long_m(s);
  const int64_t long_side = long_m ? s.m : s.n, short_side = long_m ? s.n : s.m;
  // The short operand, and for long M the block's outputs parked for coalesced stores.
  const int64_t smem = (short_side * s.k + (long_m ? kGemmF32SkinnyThreads * (s.n + 1) : 0)) * 4;
  return Launch{{unsigned(cdiv(long_side, kGemmF32SkinnyThreads)), 1, batch_grid(s.batch)},
                {unsigned(kGemmF32SkinnyThreads), 1, 1},
                unsigned(smem),
                1};
}

VTC_HD constexpr Launch gemm_f32_small_launch(const GemmShape& s, int64_t k_split) {
  const unsigned threads = unsigned(clamp64(cdiv(s.m * s.n, 32) * 32, 32, kGemmF32SmallOutputs));
  const int64_t smem = (s.m + s.n) * (gemm_f32_small_chunk(s) + 1) * 4;
  return Launch{{1, unsigned(gemm_f32_small_splits(s, k_split)), batch_grid(s.batch)},
                {threads, 1, 1},
                unsigned(smem),
                1};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

namespace cuda {

// The storage bits of element i of a 16-bit float reader (0 outside the matrix): read at ptr()
// where the accessor has one (the bits cp.async moves), else load() converted back (the same
// bits, a signalling NaN quieted, which the product does anyway). The conversions are integer
// code: an operand read element by element through them ran pointwise convolutions at 1-5 GB/s.
template <class A>
__device__ VTC_INLINE uint16_t load_bits(const A& a, const Index<3>& i, bool inside) {
  using T = typename A::value_type;
  if (!inside) return uint16_t(0);
  if constexpr (A::has_ptr)
    return raw_bits(*a.ptr(i));
  else
    return raw_bits(from_compute<T>(a.load(i)));
}

// The storage bits of eight elements of a row (zeros outside the matrix), element by element.
template <class A>
__device__ VTC_INLINE uint4 chunk8_bits(const A& a, int64_t b, int64_t row, int64_t col,
                                        int64_t rows, int64_t cols) {
  unsigned w[4];
#pragma unroll
  for (int u = 0; u < 4; ++u)
    w[u] = unsigned(load_bits(a, Index<3>{b, row, col + 2 * u}, row < rows && col + 2 * u < cols)) |
           unsigned(load_bits(a, Index<3>{b, row, col + 2 * u + 1},
                              row < rows && col + 2 * u + 1 < cols))
               << 16;
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Eight elements of a row of a 16-bit float operand into shared memory (16-byte aligned dst):
// by cp.async when the accessor allows; from one ptr() when the chunk's elements inside the
// matrix lie in one of the accessor's runs (an unaligned row, like a 7 x 7 plane's 49: no index
// map per element); else element by element. Zeros outside the matrix; the same bits each way.
template <class A>
__device__ VTC_INLINE void stage_chunk8(const A& a, int64_t b, int64_t row, int64_t col,
                                        int64_t rows, int64_t cols, uint16_t* dst) {
  if constexpr (vector_capable<A, 8>) {
    if (row < rows && col + 8 <= cols) {
      const auto* p = a.ptr(Index<3>{b, row, col});
      if (aligned_to(p, 16)) {
        cp_async16(dst, p);
        return;
      }
    }
  }
  if constexpr (A::has_ptr && A::contig >= 2) {
    const int64_t n = min64(8, cols - col);
    if (row < rows && n > 0 && col / A::contig == (col + n - 1) / A::contig) {
      const auto* p = a.ptr(Index<3>{b, row, col});
      unsigned w[4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        w[u] = unsigned(2 * u < n ? raw_bits(p[2 * u]) : uint16_t(0)) |
               unsigned(2 * u + 1 < n ? raw_bits(p[2 * u + 1]) : uint16_t(0)) << 16;
      *reinterpret_cast<uint4*>(dst) = make_uint4(w[0], w[1], w[2], w[3]); // shared memory
      return;
    }
  }
  *reinterpret_cast<uint4*>(dst) = chunk8_bits(a, b, row, col, rows, cols); // shared memory
}

} // namespace cuda

// The CUDA-core kernel (any operand types, computed in f32). Launch: gemm_f32_launch.
template <class Out, class A, class B> __device__ void gemm_f32(Out out, A a, B b, GemmShape s) {
  using namespace gemm_f32_config;
  using namespace cuda;
  static_assert(Out::rank == 3 && A::rank == 3 && B::rank == 3, "gemm_f32: rank-3 accessors");
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  float* sa = reinterpret_cast<float*>(vtc_smem); // [2][kBK][kBM]: A transposed
  float* sb = sa + 2 * kBK * kBM;                 // [2][kBK][kBN]
  const int tid = int(threadIdx.x), ty = tid / 16, tx = tid % 16;
  const int64_t M = s.m, N = s.n, K = s.k;
  const int64_t m0 = int64_t(blockIdx.y) * kBM, n0 = int64_t(blockIdx.x) * kBN;
  const int64_t kt_count = cdiv(K, kBK);
  // This thread's loads: A row ar, k ak .. ak+3; B row bk, columns bn .. bn+3.
  const int ar = tid / 2, ak = tid % 2 * 4, bk = tid / 32, bn = tid % 32 * 4;

  for (int64_t bi = blockIdx.z; bi < s.batch; bi += gridDim.z) {
    float ra[4], rb[4];
    auto fetch = [&](int64_t kt) {
      const int64_t k0 = kt * kBK;
      {
        const int64_t m = m0 + ar, k = k0 + ak;
        const bool vec = m < M && k + 4 <= K && vector_at<4>(a, Index<3>{bi, m, k});
        load_floats<4>(a, Index<3>{bi, m < M ? m : 0, k}, vec, m < M ? K : 0, ra);
      }
      {
        const int64_t k = k0 + bk, n = n0 + bn;
        const bool vec = k < K && n + 4 <= N && vector_at<4>(b, Index<3>{bi, k, n});
        load_floats<4>(b, Index<3>{bi, k < K ? k : 0, n}, vec, k < K ? N : 0, rb);
      }
    };
    auto put = [&](int buf) {
      float* ta = sa + buf * kBK * kBM;
      float* tb = sb + buf * kBK * kBN;
#pragma unroll
      for (int u = 0; u < 4; ++u)
        ta[(ak + u) * kBM + ar] = ra[u];
      *reinterpret_cast<float4*>(tb + bk * kBN + bn) = make_float4(rb[0], rb[1], rb[2], rb[3]);
    };

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j)
        acc[i][j] = 0.0f;
    if (kt_count > 0) {
      fetch(0);
      put(0);
    }
    __syncthreads();
    for (int64_t kt = 0; kt < kt_count; ++kt) {
      const int buf = int(kt % 2);
      if (kt + 1 < kt_count) fetch(kt + 1);
      const float* ta = sa + buf * kBK * kBM;
      const float* tb = sb + buf * kBK * kBN;
      const int kmax = int(min64(kBK, K - kt * kBK)); // no padded products: the chain is K long
      for (int kk = 0; kk < kmax; ++kk) {
        float av[8], bv[8];
        const float4 a0 = *reinterpret_cast<const float4*>(ta + kk * kBM + ty * 4);
        const float4 a1 = *reinterpret_cast<const float4*>(ta + kk * kBM + 64 + ty * 4);
        const float4 b0 = *reinterpret_cast<const float4*>(tb + kk * kBN + tx * 4);
        const float4 b1 = *reinterpret_cast<const float4*>(tb + kk * kBN + 64 + tx * 4);
        av[0] = a0.x, av[1] = a0.y, av[2] = a0.z, av[3] = a0.w;
        av[4] = a1.x, av[5] = a1.y, av[6] = a1.z, av[7] = a1.w;
        bv[0] = b0.x, bv[1] = b0.y, bv[2] = b0.z, bv[3] = b0.w;
        bv[4] = b1.x, bv[5] = b1.y, bv[6] = b1.z, bv[7] = b1.w;
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
          for (int j = 0; j < 8; ++j)
            acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      }
      if (kt + 1 < kt_count) put(1 - buf);
      __syncthreads();
    }
    // Four adjacent columns at tx * 4 and at 64 + tx * 4: one 4-element store where `out` allows.
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; j += 4) {
        const int64_t m = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
        const int64_t n = n0 + (j < 4 ? tx * 4 : 64 + tx * 4);
        if (m >= M || n >= N) continue;
        const float v[4] = {acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]};
        const Index<3> ix{bi, m, n};
        store_floats<4>(out, ix, n + 4 <= N && vector_at<4>(out, ix), N, v);
      }
  }
}

// Elements e = t, t + T, ... below `count` read by load(e) and handed to park(e, value),
// kStagedInFlight loads issued before their values are parked: element by element, one load at
// a time left each thread waiting on one read (EfficientViT's linear attention at 0.36 TB/s).
inline constexpr int kStagedInFlight = 8;
template <class Load, class Park>
__device__ VTC_INLINE void stage_in_flight(int t, int T, int count, Load&& load, Park&& park) {
  for (int e0 = t; e0 < count; e0 += T * kStagedInFlight) {
    float v[kStagedInFlight];
#pragma unroll
    for (int j = 0; j < kStagedInFlight; ++j)
      if (e0 + j * T < count) v[j] = load(e0 + j * T);
#pragma unroll
    for (int j = 0; j < kStagedInFlight; ++j)
      if (e0 + j * T < count) park(e0 + j * T, v[j]);
  }
}

// A product over a short K with one short side (gemm_f32_skinny_fits: EfficientViT's linear
// attention q . (k^T . v) per head, 1024 x 16 by 16 x 17): thread t of block (x, batch) takes
// long-side index x * 256 + t, every short-side output of it, from the short operand staged
// in shared memory and its K values of the long one loaded at once (every load in flight before
// the first product); the chain of gemm_f32, acc = fma(A[m, k], B[k, n], acc) from k = 0, so
// the same bits. For a long M the block's rows are parked in shared memory and stored in the
// order of the output's rows (neighbouring threads, neighbouring elements). gemm_f32's 128 x 128
// tile left 111 of 128 columns idle on such a product (0.36 TB/s in EfficientViT at batch 16).
// Launch: gemm_f32_skinny_launch.
template <class Out, class A, class B>
__device__ void gemm_f32_skinny(Out out, A a, B b, GemmShape s) {
  static_assert(Out::rank == 3 && A::rank == 3 && B::rank == 3, "gemm_f32_skinny: rank-3");
  constexpr int SR = int(kGemmF32SkinnyMaxShort), KR = int(kGemmF32SkinnyMaxK);
  constexpr int T = kGemmF32SkinnyThreads;
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  const bool long_m = gemm_f32_skinny_long_m(s);
  const int K = int(s.k), S = int(long_m ? s.n : s.m), t = int(threadIdx.x);
  const int64_t L = long_m ? s.m : s.n, l0 = int64_t(blockIdx.x) * T, l = l0 + t;
  float* shorts = reinterpret_cast<float*>(vtc_smem); // [S][K]: B's columns or A's rows
  float* park = shorts + S * K;                       // [T][S + 1]: a long M's outputs
  for (int64_t bi = blockIdx.z; bi < s.batch; bi += gridDim.z) {
    __syncthreads(); // the previous batch's staging is consumed
    for (int e = t; e < S * K; e += T) {
      const int j = e / K, k = e % K;
      shorts[e] = long_m ? float(b.load(Index<3>{bi, k, j})) : float(a.load(Index<3>{bi, j, k}));
    }
    float lv[KR];
#pragma unroll
    for (int k = 0; k < KR; ++k)
      lv[k] = k < K && l < L
                  ? (long_m ? float(a.load(Index<3>{bi, l, k})) : float(b.load(Index<3>{bi, k, l})))
                  : 0.0f;
    __syncthreads();
#pragma unroll
    for (int j = 0; j < SR; ++j) {
      if (j >= S) break;
      float acc = 0.0f;
#pragma unroll
      for (int k = 0; k < KR; ++k)
        if (k < K)
          acc = fmaf(long_m ? lv[k] : shorts[j * K + k], long_m ? shorts[j * K + k] : lv[k], acc);
      if (long_m) {
        park[t * (S + 1) + j] = acc;
      } else if (l < L) {
        const float v[1] = {acc};
        cuda::store_floats<1>(out, Index<3>{bi, j, l}, false, s.n, v);
      }
    }
    if (long_m) {
      __syncthreads();
      const int rows = int(min64(T, L - l0));
      for (int e = t; e < rows * S; e += T) {
        const float v[1] = {park[e / S * (S + 1) + e % S]};
        cuda::store_floats<1>(out, Index<3>{bi, l0 + e / S, e % S}, false, s.n, v);
      }
    }
  }
}

// A small product (gemm_f32_small_fits): thread t computes output (t / N, t % N) of each batch
// the block walks, its chain over k read from the chunks the block stages. AAlongM: A's chunk
// is loaded by neighbouring threads along m (its runs), not k; the same values either way.
// Launch: gemm_f32_small_launch.
template <bool AAlongM = false, class Out, class A, class B>
__device__ void gemm_f32_small(Out out, A a, B b, void* ws, GemmShape s, int64_t k_split) {
  static_assert(Out::rank == 3 && A::rank == 3 && B::rank == 3, "gemm_f32_small: rank-3 accessors");
  using namespace cuda;
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  const int64_t M = s.m, N = s.n, K = s.k;
  const int C = int(gemm_f32_small_chunk(s)), pitch = C + 1;
  float* as = reinterpret_cast<float*>(vtc_smem); // [M][pitch]: A's rows
  float* bs = as + M * pitch;                     // [N][pitch]: B's columns
  const int t = int(threadIdx.x), T = int(blockDim.x);
  const bool active = t < M * N;
  const int m = active ? int(t / N) : 0, n = active ? int(t % N) : 0;
  // B's chunk in the order of its runs: along n where it has them, else along k.
  constexpr bool b_along_n = B::contig > 1;
  const int64_t splits = gemm_f32_small_splits(s, k_split), split = blockIdx.y;
  const int64_t k_begin = split * k_split, k_end = min64(K, k_begin + k_split);
  float* partial = static_cast<float*>(ws);
  unsigned* counters = reinterpret_cast<unsigned*>(
      static_cast<unsigned char*>(ws) + gemm_f32_small_workspace_partial_bytes(s, k_split));
  __shared__ bool last_split;
  for (int64_t bi = blockIdx.z; bi < s.batch; bi += gridDim.z) {
    float acc = 0.0f;
    for (int64_t k0 = k_begin; k0 < k_end; k0 += C) {
      const int width = int(min64(C, k_end - k0));
      __syncthreads(); // the previous chunk is consumed
      // A's chunk in the order of its runs: along k, or along m where only its transpose has
      // them (EfficientViT's k^T read from a Transpose kept physical, a k every 48 elements).
      if constexpr (AAlongM) {
        stage_in_flight(
            t, T, int(M) * width,
            [&](int e) {
              return float(a.load(Index<3>{bi, e % int(M), k0 + e / int(M)}));
            },
            [&](int e, float v) { as[e % int(M) * pitch + e / int(M)] = v; });
      } else { // runs of 8 along k (vectors where A, or the operand under its prologue, has them)
        const int runs = (width + 7) / 8;
        for (int e = t; e < int(M) * runs; e += T) {
          const int row = e % int(M), c = e / int(M) * 8;
          const Index<3> ix{bi, row, k0 + c};
          float v[8];
          load_floats<8>(a, ix, c + 8 <= width && vector_at<8>(a, ix), k0 + width, v);
#pragma unroll
          for (int u = 0; u < 8; ++u)
            if (c + u < width) as[row * pitch + c + u] = v[u];
        }
      }
      auto b_col = [&](int e) { return b_along_n ? e % int(N) : e / width; };
      auto b_k = [&](int e) { return b_along_n ? e / int(N) : e % width; };
      stage_in_flight(
          t, T, int(N) * width,
          [&](int e) {
            return float(b.load(Index<3>{bi, k0 + b_k(e), b_col(e)}));
          },
          [&](int e, float v) { bs[b_col(e) * pitch + b_k(e)] = v; });
      __syncthreads();
      if (active) {
        const float* ar = as + m * pitch;
        const float* bc = bs + n * pitch;
#pragma unroll 8
        for (int kk = 0; kk < width; ++kk)
          acc = fmaf(ar[kk], bc[kk], acc);
      }
    }
    if (splits > 1) { // park the split's sum; the batch's last split to finish adds them
      if (active) partial[(bi * splits + split) * M * N + t] = acc;
      __threadfence();
      __syncthreads();
      if (t == 0) last_split = atomicAdd(counters + bi, 1u) == unsigned(splits - 1);
      __syncthreads();
      if (!last_split) continue;
      __threadfence();
      if (active) {
        acc = ld_cg(partial + bi * splits * M * N + t);
        for (int64_t c = 1; c < splits; ++c)
          acc += ld_cg(partial + (bi * splits + c) * M * N + t);
      }
      if (t == 0) counters[bi] = 0u;
    }
    if (active) {
      const float v[1] = {acc};
      store_floats<1>(out, Index<3>{bi, m, n}, false, N, v);
    }
  }
}

} // namespace vtc::kernels

#endif
