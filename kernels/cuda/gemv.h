// Decode-sized products: C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] for M <= 16 rows (LLM
// decode: x[1, K] . W[K, N], the weights B streamed once at full bandwidth).
//
// A block owns a panel of 256 columns and one chunk of k (split-K): each of its 8 warps reads
// rows k of B — 32 lanes x 8 columns, one 16-byte load a lane for 16-bit weights — and keeps
// M x 8 accumulators a lane; the rows of A for the chunk are staged in shared memory as
// floats. Fixed order: warp w sums the rows k_begin + w, k_begin + w + 8, ... in turn
// (acc = fma(A, B, acc) from 0), the 8 warps' sums are added in warp order, and the chunks'
// sums in chunk order by the last block of the panel to finish (a counter per panel, the
// only atomic: no float is accumulated atomically). The chunk size is a function of the
// shape (make_gemv_shape), so the result is too.
//
// Reading the weights is the whole cost at a few rows, and it runs at the copy rate only with
// enough bytes in flight (a plain read of 117 MB: 35 us at 4 MB in flight, 31 us at 17 MB, on
// the H200). 16-bit weights are therefore held as their raw 16-byte rows, 8 rows a warp in
// flight (4 words a row, converted when used), with 3 blocks a multiprocessor at one row:
// about 13 MB in flight over the chip, against 4 MB when each row was held as 8 floats, 4
// rows a warp, 2 blocks a multiprocessor.
//
// The workspace (gemv_workspace_bytes) holds the chunks' partial sums and the counters; it
// must be zero when first used, and the kernel leaves its counters at zero again.
#pragma once

#include "common.h"

namespace vtc::kernels {

struct GemvShape {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  int64_t k_chunk = 1; // rows of B per block (split-K chunk): make_gemv_shape
};

namespace gemv_config {
inline constexpr int kThreads = 256, kWarps = 8, kCols = 256; // 32 lanes x 8 columns
inline constexpr int64_t kMultiprocessors = 132;              // H100 / H200 SXM
inline constexpr int64_t kMaxStagedFloats = 8192;             // A rows of a chunk: 32 KB
// Blocks a multiprocessor holds at once: the entry's __launch_bounds__ minimum, which caps
// registers at 65536 / (256 x 3) = 85 a thread at one row (8 raw rows of B, 8 accumulators),
// 128 up to 4 rows, and leaves the M > 4 kernels (about 220) one block.
VTC_HD constexpr int64_t resident_blocks(int64_t m) {
  return m <= 1 ? 3 : m <= 4 ? 2 : 1;
}
} // namespace gemv_config

// The split-K count is the largest that keeps the grid within one wave of resident blocks:
// a second, partly filled wave (560 blocks where 264 fit) costs a whole wave's latency for a
// fraction of the bytes.
VTC_HD constexpr GemvShape make_gemv_shape(int64_t batch, int64_t m, int64_t n, int64_t k) {
  using namespace gemv_config;
  const int64_t panels = cdiv(n, kCols), kk = max64(k, 1);
  const int64_t wave = kMultiprocessors * resident_blocks(m);
  int64_t splits = clamp64(wave / max64(1, panels * batch), 1, cdiv(kk, 32));
  int64_t chunk = cdiv(cdiv(kk, splits), 32) * 32;
  chunk = min64(chunk, max64(32, kMaxStagedFloats / max64(m, 1) / 32 * 32));
  return GemvShape{batch, m, n, k, chunk};
}

VTC_HD constexpr int64_t gemv_splits(const GemvShape& s) {
  return max64(1, cdiv(s.k, s.k_chunk));
}
VTC_HD constexpr int64_t gemv_panels(const GemvShape& s) {
  return cdiv(s.n, gemv_config::kCols);
}

// Partial sums [batch][splits][m][n] floats, then a counter per (batch, panel); 0 without
// split-K. The partial sums are written before they are read; the counters start and are left
// zero (gemv_workspace_partial_bytes is where they begin).
VTC_HD constexpr int64_t gemv_workspace_partial_bytes(const GemvShape& s) {
  return gemv_splits(s) == 1 ? 0 : s.batch * gemv_splits(s) * s.m * s.n * 4;
}
VTC_HD constexpr int64_t gemv_workspace_bytes(const GemvShape& s) {
  if (gemv_splits(s) == 1) return 0;
  return gemv_workspace_partial_bytes(s) + s.batch * gemv_panels(s) * 4;
}

VTC_HD constexpr Launch gemv_launch(const GemvShape& s) {
  using namespace gemv_config;
  const int64_t smem = s.m * s.k_chunk * 4 + kWarps * kCols * 4 + 16;
  return Launch{
      {unsigned(gemv_panels(s)), unsigned(gemv_splits(s)), unsigned(clamp64(s.batch, 1, 65535))},
      {kThreads, 1, 1},
      unsigned(smem),
      unsigned(resident_blocks(s.m))};
}

struct GemvWorkspace {
  float* partial = nullptr;
  unsigned* counters = nullptr;
};

// The workspace as the kernel sees it, from its base address.
VTC_HD inline GemvWorkspace gemv_workspace(void* base, const GemvShape& s) {
  float* partial = static_cast<float*>(base);
  return GemvWorkspace{partial, reinterpret_cast<unsigned*>(static_cast<unsigned char*>(base) +
                                                            gemv_workspace_partial_bytes(s))};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

// The end of a gemv block: `sum(m)` is the block's sum for row m at column threadIdx.x of
// its panel (called by every thread, rows in order). Without split-K it is stored through
// `out`; else it is the chunk's partial sum, and the last block of the panel to finish (a
// counter per panel, the only atomic) adds the chunks in chunk order and stores that, loading
// `Ahead` chunks at a time.
template <int MR, int Ahead = 1, class Out, class Sum>
__device__ void gemv_store_panel(Out out, GemvWorkspace ws, const GemvShape& s, int64_t bi,
                                 int64_t panel, int64_t split, unsigned* flag, Sum sum) {
  using namespace gemv_config;
  using namespace cuda;
  const int tid = int(threadIdx.x);
  const int64_t N = s.n, splits = gemv_splits(s), n = panel * kCols + tid;
#pragma unroll
  for (int m = 0; m < MR; ++m) {
    const float v = sum(m);
    if (n < N) {
      if (splits == 1)
        out.store(Index<3>{bi, m, n}, v);
      else
        ws.partial[((bi * splits + split) * MR + m) * N + n] = v;
    }
  }
  if (splits > 1) {
    __threadfence();
    __syncthreads();
    unsigned* counter = ws.counters + bi * gemv_panels(s) + panel;
    if (tid == 0) *flag = atomicAdd(counter, 1u) == unsigned(splits - 1);
    __syncthreads();
    if (*flag) {
      __threadfence();
      if (n < N)
        for (int m = 0; m < MR; ++m) {
          const float* p = ws.partial + (bi * splits * MR + m) * N + n;
          float v = ld_cg(p);
          int64_t c = 1;
          // Ahead chunks' loads issued together, added in chunk order (the same bits).
          for (; c + Ahead <= splits; c += Ahead) {
            float t[Ahead];
#pragma unroll
            for (int u = 0; u < Ahead; ++u)
              t[u] = ld_cg(p + (c + u) * MR * N);
#pragma unroll
            for (int u = 0; u < Ahead; ++u)
              v += t[u];
          }
          for (; c < splits; ++c)
            v += ld_cg(p + c * MR * N);
          out.store(Index<3>{bi, m, n}, v);
        }
      if (tid == 0) *counter = 0u;
    }
    __syncthreads();
  }
}

namespace cuda {

// Elements n0 .. n0 + 7 of row (bi, k) of a 16-bit B as the raw bits of 4 words: one 16-byte
// load through the read-only path where B allows it there, else element by element (the same
// bits), zeros at and past column N.
template <class B>
__device__ VTC_INLINE void gemv_row_bits(const B& b, int64_t bi, int64_t k, int64_t n0, int64_t N,
                                         unsigned (&w)[4]) {
  using T = typename B::value_type;
  const Index<3> i{bi, k, n0};
  if constexpr (vector_capable<B, 8>) {
    if (n0 + 8 <= N && aligned_to(b.ptr(i), 16)) {
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                   : "l"(b.ptr(i)));
      return;
    }
  }
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    unsigned lo = 0u, hi = 0u;
    if (n0 + 2 * u < N) lo = element_bits(from_compute<T>(b.load(Index<3>{bi, k, n0 + 2 * u})));
    if (n0 + 2 * u + 1 < N)
      hi = element_bits(from_compute<T>(b.load(Index<3>{bi, k, n0 + 2 * u + 1})));
    w[u] = (lo & 0xffffu) | hi << 16;
  }
}

} // namespace cuda

// MR: the row count s.m, known when the code is generated (1 .. 16). Launch: gemv_launch.
template <int MR, class Out, class A, class B>
__device__ void gemv(Out out, A a, B b, GemvWorkspace ws, GemvShape s) {
  using namespace gemv_config;
  using namespace cuda;
  using TB = typename B::value_type;
  static_assert(Out::rank == 3 && A::rank == 3 && B::rank == 3, "gemv: rank-3 accessors");
  static_assert(MR >= 1 && MR <= 16, "gemv: 1 to 16 rows");
  // 16-bit weights that move as vectors held raw (4 words a row); others as 8 floats a row.
  constexpr bool kRaw = sizeof(TB) == 2 && vector_capable<B, 8>;
  constexpr int U = kRaw && MR <= 4 ? 8 : MR <= 4 ? 4 : 2; // rows of B in flight per warp
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  const int64_t kc = s.k_chunk, N = s.n, K = s.k;
  float* xs = reinterpret_cast<float*>(vtc_smem); // [MR][kc]
  float* red = xs + MR * kc;                      // [kWarps][kCols]
  unsigned* flag = reinterpret_cast<unsigned*>(red + kWarps * kCols);
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int64_t panel = blockIdx.x, split = blockIdx.y, splits = gemv_splits(s);
  const int64_t n0 = panel * kCols + lane * 8; // this lane's columns
  const int64_t k_begin = split * kc, kn = max64(0, min64(K, k_begin + kc) - k_begin);

  for (int64_t bi = blockIdx.z; bi < s.batch; bi += gridDim.z) {
    for (int64_t idx = tid; idx < MR * kn; idx += kThreads)
      xs[idx / kn * kc + idx % kn] = float(a.load(Index<3>{bi, idx / kn, k_begin + idx % kn}));
    __syncthreads();

    float acc[MR][8];
#pragma unroll
    for (int m = 0; m < MR; ++m)
#pragma unroll
      for (int c = 0; c < 8; ++c)
        acc[m][c] = 0.0f;
    // Rows k0, k0 + 8, ... of the chunk added in turn, weight(u, c) the element of row u and
    // column c of the lane's eight.
    auto accumulate = [&](int64_t k0, auto&& weight) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t k = k0 + u * kWarps;
        if (k < kn) {
#pragma unroll
          for (int m = 0; m < MR; ++m) {
            const float x = xs[m * kc + k];
#pragma unroll
            for (int c = 0; c < 8; ++c)
              acc[m][c] = fmaf(x, weight(u, c), acc[m][c]);
          }
        }
      }
    };
    for (int64_t k0 = warp; k0 < kn; k0 += kWarps * U) {
      if constexpr (kRaw) {
        unsigned w[U][4];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int64_t k = k0 + u * kWarps;
          gemv_row_bits(b, bi, k_begin + (k < kn ? k : 0), n0, N, w[u]);
        }
        accumulate(k0, [&](int u, int c) { return to_compute(unpack<TB>(w[u], c)); });
      } else {
        float w[U][8];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int64_t k = k0 + u * kWarps;
          const Index<3> i{bi, k_begin + (k < kn ? k : 0), n0};
          const bool vec = n0 + 8 <= N && vector_at<8>(b, i);
          load_floats<8>(b, i, vec, k < kn ? N : 0, w[u]);
        }
        accumulate(k0, [&](int u, int c) { return w[u][c]; });
      }
    }

    // The warps' sums in warp order: thread tid sums column tid of the panel.
    gemv_store_panel<MR, 8>(out, ws, s, bi, panel, split, flag, [&](int m) {
      float4* r = reinterpret_cast<float4*>(red + warp * kCols + lane * 8);
      r[0] = make_float4(acc[m][0], acc[m][1], acc[m][2], acc[m][3]);
      r[1] = make_float4(acc[m][4], acc[m][5], acc[m][6], acc[m][7]);
      __syncthreads();
      float v = red[tid];
      for (int w = 1; w < kWarps; ++w)
        v += red[w * kCols + tid];
      __syncthreads();
      return v;
    });
  }
}

} // namespace vtc::kernels

#endif
