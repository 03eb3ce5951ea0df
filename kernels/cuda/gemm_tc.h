// Tensor-core matrix products sized to their shape: C[b, m, n] = sum_k A[b, m, k] * B[b, k, n]
// for f16 or bf16 operands (mma.sync m16n8k16, f32 accumulators), stored through the output
// accessor (bias, activation, residual add as its epilogue).
//
// The vision models' products are small (ShuffleNet's 232 x 49 x 232, YOLO's 64 x 400 x 576 at
// batch 1): one 128 x 128 tile left most of the chip idle and walked K serially, at 2-5 % of
// the tensor cores. So the tile follows the shape (TcPlan): 16, 32, 64 or 128 rows of A for
// M up to 16, 32, 64 or more (128 only when such tiles still fill the chip twice and K is long
// enough, 512, to pay for their fill and epilogue), 64 columns (128 with 128 rows; 32 where K is
// short and 64 would leave multiprocessors without a block), and when the tiles do not fill the
// chip, K is split over up to one wave of blocks (split-K; for short K only below half a wave):
// each block sums its run of k tiles, parks the partial tile in the workspace, and the last
// block of the tile (a counter, the only atomic) adds the runs in run order and stores the sum.
// Within a run the k tiles (32 wide, each two k16 steps) go in turn. The plan is a function of
// (batch, M, N, K) alone, so the sums' order is too: every strategy gets the same bits. When the
// tiles take more than two waves of blocks of up to 64 rows (the pointwise convolutions of the
// vision models), blocks stream them (tc_streams): each resident block walks tiles and fetches
// the next tile's first k tiles while it stores the one before; where A is the same for every
// batch (the weights) and fits, a streaming block loads its rows of A once and keeps them
// (tc_keeps_a).
//
// Operands reach shared memory (4 stages, rows padded by 16 bytes: ldmatrix without bank
// conflicts) through loaders: TileChunks moves 8-element chunks of a rank-3 accessor, by
// cp.async where ptr() is 16-byte aligned and the run holds the chunk, else as loads held in
// registers across the tile's products and stored after them; conv.h's gather loader reads a
// convolution's input as the implicit GEMM's B. The epilogue parks the accumulators in shared
// memory one warp row at a time and stores runs of 8 adjacent columns (one 16-byte vector where
// the output's mapping allows; pairs where it cannot take vectors of 8).
#pragma once

#include "gemm.h"

namespace vtc::kernels {

// How a product runs: the block tile (bm x bn, warps by tc_warps_m / tc_warps_n) and the
// split of K into `splits` runs of `k_tiles` tiles of 32 (splits * k_tiles covers K).
// `a_shared`: A is the same for every batch (a convolution's weights), so a streaming block may
// keep its rows of A in shared memory for all its tiles (tc_keeps_a).
struct TcPlan {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  int64_t bm = 64, bn = 64;
  int64_t splits = 1, k_tiles = 1;
  bool a_shared = false;
};

namespace gemm_tc_config {
inline constexpr int kBK = 32, kStages = 4;
inline constexpr int kAPitch = kBK + 8; // elements; +16 bytes a row
inline constexpr int64_t kMultiprocessors = 132;
// K up to which a product counts as short for the plan (plan_gemm_tc).
inline constexpr int64_t kShortK = 512;
} // namespace gemm_tc_config

VTC_HD constexpr int tc_warps_m(int64_t bm) {
  return bm <= 16 ? 1 : 2;
}
VTC_HD constexpr int tc_warps_n(int64_t bm) {
  return bm == 32 || bm == 64 ? 2 : 4;
}
VTC_HD constexpr int tc_threads(int64_t bm) {
  return 32 * tc_warps_m(bm) * tc_warps_n(bm);
}
// Whether loads that cannot go by cp.async are held in registers across a tile's products.
VTC_HD constexpr bool tc_holds(int64_t bm) {
  return bm < 128;
}
VTC_HD constexpr unsigned tc_smem_bytes(int64_t bm, int64_t bn) {
  using namespace gemm_tc_config;
  return unsigned(kStages * (bm * kAPitch + kBK * (bn + 8)) * 2 + 16); // + the split-K flag
}
VTC_HD constexpr int64_t tc_tiles_m(const TcPlan& p) {
  return cdiv(p.m, p.bm);
}
VTC_HD constexpr int64_t tc_tiles_n(const TcPlan& p) {
  return cdiv(p.n, p.bn);
}

// The plan of a product (see the top of the file). Batches past 65535 / splits run as a
// grid-stride loop over batches without split-K.
VTC_HD constexpr TcPlan plan_gemm_tc(int64_t batch, int64_t m, int64_t n, int64_t k) {
  using namespace gemm_tc_config;
  TcPlan p{batch, m, n, k, 64, 64, 1, 1};
  p.bm = m <= 16 ? 16 : m <= 32 ? 32 : 64;
  if (m > 64 && k >= 512 && cdiv(m, 128) * cdiv(n, 128) * batch >= 2 * kMultiprocessors) p.bm = 128;
  p.bn = p.bm == 128 ? 128 : 64;
  // Short K: a tile's time is mostly its fixed cost (the first loads, the epilogue), so a
  // product short of a block a multiprocessor takes narrower tiles before splitting K, and
  // splits K only where fewer than half the multiprocessors would have a block (each split
  // adds a round trip through the workspace). ShuffleNet V2's pointwise convolutions at batch
  // 16 (H100): 116 x 196 x 116 0.016 -> 0.011 ms, 232 x 49 x 232 0.019 -> 0.011 ms.
  const bool short_k = k <= kShortK;
  int64_t blocks = tc_tiles_m(p) * tc_tiles_n(p) * batch;
  if (short_k && (p.bm == 32 || p.bm == 64) && blocks < kMultiprocessors &&
      cdiv(n, 32) > cdiv(n, 64)) { // (16-row tiles' four warps need 64 columns)
    p.bn = 32;
    blocks = tc_tiles_m(p) * tc_tiles_n(p) * batch;
  }
  const int64_t tiles = max64(1, cdiv(k, kBK));
  int64_t splits = 1;
  if (blocks < (short_k ? kMultiprocessors / 2 : kMultiprocessors) && tiles >= 4)
    splits = min64(cdiv(kMultiprocessors, blocks), tiles / 2);
  if (batch * splits > 65535) splits = 1;
  p.k_tiles = cdiv(tiles, splits);
  p.splits = cdiv(tiles, p.k_tiles);
  return p;
}

// Blocks of a tile size a multiprocessor holds (the second argument of __launch_bounds__).
VTC_HD constexpr int tc_resident(int64_t bm) {
  return tc_threads(bm) == 256 ? 2 : 4;
}

// Whether blocks stream tiles: a grid of resident blocks, each taking every gridDim.x-th output
// tile and fetching the next tile's first k tiles while it stores the one before (the stages
// would otherwise sit idle through every epilogue). Products without split-K whose tiles take
// more than two waves: the pointwise convolutions of the vision models (K of 64 to 256 over
// planes of 6400 to 25600 pixels a batch), whose blocks each load all of K at once. Not the
// 128-row tiles (long K, compute-bound; their accumulators leave no registers for the walk).
VTC_HD constexpr bool tc_streams(const TcPlan& p) {
  using namespace gemm_tc_config;
  return p.splits == 1 && p.bm < 128 &&
         tc_tiles_m(p) * tc_tiles_n(p) * p.batch > 2 * tc_resident(p.bm) * kMultiprocessors;
}

// A streaming block parks its accumulators (one warp row, TM x (BN + 4) floats) past the stages.
VTC_HD constexpr unsigned tc_park_bytes(int64_t bm, int64_t bn) {
  return unsigned(bm / tc_warps_m(bm) * (bn + 4) * 4);
}
VTC_HD constexpr unsigned tc_stream_smem_bytes(int64_t bm, int64_t bn) {
  return tc_smem_bytes(bm, bn) + tc_park_bytes(bm, bn);
}

// A block that keeps A holds its BM rows over all of K (rounded up to k tiles), padded by 16
// bytes a row as the stages are, then the B stages, the flag's 16 bytes and the park.
VTC_HD constexpr int64_t tc_kept_a_pitch(const TcPlan& p) {
  using namespace gemm_tc_config;
  return cdiv(p.k, kBK) * kBK + 8;
}
VTC_HD constexpr unsigned tc_kept_a_bytes(const TcPlan& p) {
  return unsigned(p.bm * tc_kept_a_pitch(p) * 2);
}
VTC_HD constexpr unsigned tc_keep_a_smem_bytes(const TcPlan& p) {
  using namespace gemm_tc_config;
  return tc_kept_a_bytes(p) + unsigned(kStages * kBK * (p.bn + 8) * 2 + 16) +
         tc_park_bytes(p.bm, p.bn);
}

// Whether a streaming block loads its rows of A once and keeps them (the pointwise convolutions'
// weights: 64 x 128 of them were fetched again, chunk by chunk, for every tile of pixels): A the
// same for every batch, the grid a multiple of the tiles along M (so a block's tiles all have
// the same rows), and the kept rows leaving room for the blocks a multiprocessor holds (228 KB,
// 1 KB of it reserved a block).
VTC_HD constexpr bool tc_keeps_a(const TcPlan& p) {
  using namespace gemm_tc_config;
  return p.a_shared && tc_streams(p) && tc_resident(p.bm) * kMultiprocessors % tc_tiles_m(p) == 0 &&
         int64_t(tc_resident(p.bm)) * (tc_keep_a_smem_bytes(p) + 1024) <= 228 * 1024;
}

// grid: n tiles, m tiles, batch x splits (streaming: resident blocks on every multiprocessor,
// or fewer when there are fewer tiles); 128 threads (256 for 128-row tiles), built for 4
// blocks a multiprocessor (2 with 256 threads): at most 128 registers a thread.
VTC_HD constexpr Launch gemm_tc_launch(const TcPlan& p) {
  using namespace gemm_tc_config;
  const int threads = tc_threads(p.bm);
  const unsigned resident = unsigned(tc_resident(p.bm));
  if (tc_streams(p))
    return Launch{{unsigned(resident * kMultiprocessors), 1, 1},
                  {unsigned(threads), 1, 1},
                  tc_keeps_a(p) ? tc_keep_a_smem_bytes(p) : tc_stream_smem_bytes(p.bm, p.bn),
                  resident};
  return Launch{{unsigned(tc_tiles_n(p)), unsigned(tc_tiles_m(p)),
                 unsigned(clamp64(p.batch * p.splits, 1, 65535))},
                {unsigned(threads), 1, 1},
                tc_smem_bytes(p.bm, p.bn),
                resident};
}

// Split-K workspace: the runs' partial tiles (f32, [batch][split][m][n]) and a counter per
// output tile; zero when first used, and the kernel leaves the counters at zero.
VTC_HD constexpr int64_t gemm_tc_workspace_partial_bytes(const TcPlan& p) {
  return p.splits == 1 ? 0 : p.batch * p.splits * p.m * p.n * 4;
}
VTC_HD constexpr int64_t gemm_tc_workspace_bytes(const TcPlan& p) {
  if (p.splits == 1) return 0;
  return gemm_tc_workspace_partial_bytes(p) + p.batch * tc_tiles_m(p) * tc_tiles_n(p) * 4;
}

struct TcWorkspace {
  float* partial = nullptr;
  unsigned* counters = nullptr;
};
VTC_HD inline TcWorkspace tc_workspace(void* base, const TcPlan& p) {
  float* partial = static_cast<float*>(base);
  return TcWorkspace{partial, reinterpret_cast<unsigned*>(static_cast<unsigned char*>(base) +
                                                          gemm_tc_workspace_partial_bytes(p))};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

namespace cuda {

// The chunks of 8 elements of a R x C tile of a 16-bit operand that thread `tid` of T moves:
// chunk c = tid + j T, row c / (C / 8), columns (c % (C / 8)) * 8 ... + 7. fetch() starts a
// tile — cp.async for chunks that can, loads into registers for the others — and put() stores
// the held ones once the products that read the stage before are done. Without Hold (the
// 128-row tiles, whose accumulators leave no registers to hold loads across the products),
// fetch() stores them at once.
template <int R, int C, int T, bool Hold> struct TileChunks {
  static constexpr int kChunks = (R * C / 8 + T - 1) / T;
  unsigned held[kChunks][4];
  bool pending[kChunks];

  template <class A>
  __device__ VTC_INLINE void fetch(const A& a, int64_t b, int64_t r0, int64_t c0, int64_t rows,
                                   int64_t cols, uint16_t* tile, int pitch) {
    const int tid = int(threadIdx.x);
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
      pending[j] = false;
      const int c = tid + j * T;
      if (R * C / 8 % T != 0 && c >= R * C / 8) continue;
      const int r = c / (C / 8), col = c % (C / 8) * 8;
      const int64_t row = r0 + r, k = c0 + col;
      if constexpr (vector_capable<A, 8>) {
        if (row < rows && k + 8 <= cols) {
          const auto* p = a.ptr(Index<3>{b, row, k});
          if (aligned_to(p, 16)) {
            cp_async16(tile + r * pitch + col, p);
            continue;
          }
        }
      }
      pending[j] = true;
      if constexpr (A::has_ptr && A::contig >= 2) {
        const int64_t n = min64(8, cols - k);
        if (row < rows && n > 0 && k / A::contig == (k + n - 1) / A::contig) {
          const auto* p = a.ptr(Index<3>{b, row, k});
#pragma unroll
          for (int u = 0; u < 4; ++u)
            held[j][u] = unsigned(2 * u < n ? raw_bits(p[2 * u]) : uint16_t(0)) |
                         unsigned(2 * u + 1 < n ? raw_bits(p[2 * u + 1]) : uint16_t(0)) << 16;
          continue;
        }
      }
#pragma unroll
      for (int u = 0; u < 4; ++u)
        held[j][u] =
            unsigned(load_bits(a, Index<3>{b, row, k + 2 * u}, row < rows && k + 2 * u < cols)) |
            unsigned(
                load_bits(a, Index<3>{b, row, k + 2 * u + 1}, row < rows && k + 2 * u + 1 < cols))
                << 16;
    }
    if constexpr (!Hold) store(tile, pitch);
  }

  __device__ VTC_INLINE void put(uint16_t* tile, int pitch) const {
    if constexpr (Hold) store(tile, pitch);
  }

  __device__ VTC_INLINE void store(uint16_t* tile, int pitch) const {
    const int tid = int(threadIdx.x);
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
      if (!pending[j]) continue;
      const int c = tid + j * T;
      const int r = c / (C / 8), col = c % (C / 8) * 8;
      *reinterpret_cast<uint4*>(tile + r * pitch + col) =
          make_uint4(held[j][0], held[j][1], held[j][2], held[j][3]);
    }
  }
};

// B as a plain rank-3 operand [b, k, n]: the k tile's rows, the block's columns.
template <class B, int BN, int T, bool Hold> struct MatrixColumns {
  const B& b;
  TileChunks<gemm_tc_config::kBK, BN, T, Hold> chunks;
  __device__ VTC_INLINE void start(int64_t, int64_t) {}
  __device__ VTC_INLINE void fetch(int64_t bi, int64_t k0, int64_t n0, int64_t K, int64_t N,
                                   uint16_t* tile) {
    chunks.fetch(b, bi, k0, n0, K, N, tile, BN + 8);
  }
  __device__ VTC_INLINE void put(uint16_t* tile) const { chunks.put(tile, BN + 8); }
};

// Where one block tile's products run: batch bi, rows from m0, columns from n0, and the run of
// `tiles` k tiles from t_begin.
struct TcTileAt {
  int64_t bi, tile_m, tile_n, m0, n0, t_begin, tiles;
};

template <int BM, int BN>
VTC_HD VTC_INLINE TcTileAt tc_tile_at(const TcPlan& p, int64_t bi, int64_t tile_m, int64_t tile_n,
                                      int64_t split) {
  using namespace gemm_tc_config;
  const int64_t t_begin = split * p.k_tiles;
  return TcTileAt{bi,
                  tile_m,
                  tile_n,
                  tile_m * BM,
                  tile_n * BN,
                  t_begin,
                  max64(0, min64(p.k_tiles, cdiv(p.k, kBK) - t_begin))};
}

// A block's products over shared-memory stages: fetch_first() starts the first kStages - 1 k
// tiles of a tile (cp.async groups, held loads stored at once), products() runs the tile's k
// tiles into the accumulators, fetching each later k tile kStages - 1 ahead, and leaves every
// stage free (all groups waited for, the block synchronised). KeepA (tc_keeps_a): keep_a()
// loads the block's rows of A over all of K into `sa` once; the stages then carry B alone.
template <int BM, int BN, class A, class BLoader, bool KeepA = false> struct TcProducts {
  static constexpr int WM = tc_warps_m(BM), WN = tc_warps_n(BM), T = 32 * WM * WN;
  static constexpr int TM = BM / WM, TN = BN / WN, MI = TM / 16, NI = TN / 8;
  static constexpr int BPitch = BN + 8, AStage = BM * gemm_tc_config::kAPitch,
                       BStage = gemm_tc_config::kBK * BPitch;
  static_assert(MI >= 1 && NI % 2 == 0, "warp tiles of 16 rows and 16 columns");

  const A& a;
  BLoader& lb;
  const TcPlan& p;
  uint16_t* sa;
  uint16_t* sb;
  TileChunks<BM, gemm_tc_config::kBK, T, tc_holds(BM)> la;

  __device__ VTC_INLINE void fetch(const TcTileAt& at, int64_t t, int stage) {
    using namespace gemm_tc_config;
    const int64_t k0 = (at.t_begin + t) * kBK;
    if constexpr (!KeepA) la.fetch(a, at.bi, at.m0, k0, p.m, p.k, sa + stage * AStage, kAPitch);
    lb.fetch(at.bi, k0, at.n0, p.k, p.n, sb + stage * BStage);
  }
  __device__ VTC_INLINE void put(int stage) {
    if constexpr (!KeepA) la.put(sa + stage * AStage, gemm_tc_config::kAPitch);
    lb.put(sb + stage * BStage);
  }

  // KeepA: rows m0 ... m0 + BM - 1 of A (batch 0: A is the same for all) over every k tile,
  // zeros past M and K, waited for before the block goes on.
  __device__ VTC_INLINE void keep_a(int64_t m0) {
    using namespace gemm_tc_config;
    const int pitch = int(tc_kept_a_pitch(p));
    for (int64_t t = 0; t < cdiv(p.k, kBK); ++t) {
      la.fetch(a, 0, m0, t * kBK, p.m, p.k, sa + t * kBK, pitch);
      la.put(sa + t * kBK, pitch);
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
  }

  __device__ VTC_INLINE void fetch_first(const TcTileAt& at) {
    using namespace gemm_tc_config;
    lb.start(at.bi, at.n0);
    for (int st = 0; st < kStages - 1; ++st) {
      if (st < at.tiles) {
        fetch(at, st, st);
        put(st);
      }
      cp_async_commit();
    }
  }

  __device__ VTC_INLINE void products(const TcTileAt& at, float (&acc)[MI][NI][4]) {
    using namespace gemm_tc_config;
    constexpr int kind = float16_kind<typename A::value_type>;
    const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
    const int wm = warp / WN, wn = warp % WN;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          acc[i][j][r] = 0.0f;
    for (int64_t t = 0; t < at.tiles; ++t) {
      cp_async_wait<kStages - 2>();
      __syncthreads();
      const int64_t next = t + kStages - 1;
      if (next < at.tiles) fetch(at, next, int(next % kStages));
      cp_async_commit();
      const int a_pitch = KeepA ? int(tc_kept_a_pitch(p)) : kAPitch;
      const uint16_t* ta = KeepA ? sa + (at.t_begin + t) * kBK : sa + int(t % kStages) * AStage;
      const uint16_t* tb = sb + int(t % kStages) * BStage;
#pragma unroll
      for (int kk = 0; kk < kBK; kk += 16) {
        unsigned af[MI][4], bf[NI][2];
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
          ldmatrix_x4(af[mi], ta + (wm * TM + mi * 16 + lane % 16) * a_pitch + kk + lane / 16 * 8);
#pragma unroll
        for (int nj = 0; nj < NI / 2; ++nj) {
          unsigned r[4];
          ldmatrix_x4_trans(r, tb + (kk + lane % 8 + (lane / 8) % 2 * 8) * BPitch + wn * TN +
                                   nj * 16 + lane / 16 * 8);
          bf[2 * nj][0] = r[0];
          bf[2 * nj][1] = r[1];
          bf[2 * nj + 1][0] = r[2];
          bf[2 * nj + 1][1] = r[3];
        }
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
          for (int ni = 0; ni < NI; ++ni)
            mma_m16n8k16<kind>(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
      }
      if (next < at.tiles) put(int(next % kStages));
    }
    cp_async_wait<0>();
    __syncthreads(); // every warp is done with the stages
  }
};

// The accumulators of a block tile stored, one warp row at a time: its warps park them in
// `park` (TM x BN floats), then every thread stores V adjacent columns of a row through `out`
// (splits == 1) or writes them to the workspace as run `split`'s partial tile: V = 8 where the
// output stores 8 as one 16-byte vector (one address and one bias load for all 8), else pairs.
template <int BM, int BN, class Out, int MI, int NI>
__device__ VTC_INLINE void tc_store_tile(const Out& out, const float (&acc)[MI][NI][4], float* park,
                                         TcWorkspace ws, const TcPlan& p, const TcTileAt& at,
                                         int64_t split) {
  constexpr int WM = tc_warps_m(BM), WN = tc_warps_n(BM), T = 32 * WM * WN;
  constexpr int TM = BM / WM, TN = BN / WN;
  constexpr int V = vector_store_capable<Out, 8>() ? 8 : 2;
  constexpr int kParkPitch = BN + 4; // floats; a multiple of 4, so rows stay 16-byte aligned
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int wm = warp / WN, wn = warp % WN;
  const int64_t M = p.m, N = p.n, splits = p.splits;
  for (int pass = 0; pass < WM; ++pass) {
    if (wm == pass) {
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int r = mi * 16 + lane / 4 + half * 8, c = wn * TN + ni * 8 + lane % 4 * 2;
            park[r * kParkPitch + c] = acc[mi][ni][2 * half];
            park[r * kParkPitch + c + 1] = acc[mi][ni][2 * half + 1];
          }
    }
    __syncthreads();
#pragma unroll 1
    for (int e = tid; e < TM * BN / V; e += T) {
      const int r = e / (BN / V), c = e % (BN / V) * V;
      const int64_t m = at.m0 + pass * TM + r, n = at.n0 + c;
      if (m >= M || n >= N) continue;
      float v[V];
      const float* src = park + r * kParkPitch + c;
      if constexpr (V % 4 == 0) {
#pragma unroll
        for (int u = 0; u < V; u += 4) {
          const float4 q = *reinterpret_cast<const float4*>(src + u);
          v[u] = q.x, v[u + 1] = q.y, v[u + 2] = q.z, v[u + 3] = q.w;
        }
      } else {
#pragma unroll
        for (int u = 0; u < V; ++u)
          v[u] = src[u];
      }
      if (splits == 1) {
        const Index<3> i{at.bi, m, n};
        store_floats<V>(out, i, n + V <= N && vector_at<V>(out, i), N, v);
      } else {
        float* dst = ws.partial + ((at.bi * splits + split) * M + m) * N + n;
#pragma unroll
        for (int u = 0; u < V; ++u)
          if (n + u < N) dst[u] = v[u];
      }
    }
    __syncthreads();
  }
}

// The block's tile of C for batch bi and run `split` of k tiles: A by TileChunks, B by the
// loader `lb` (start(bi, n0), fetch(bi, k0, n0, K, N, tile), put(tile)); the sums stored
// through `out`, or with split-K as described at the top of the file.
template <int BM, int BN, class Out, class A, class BLoader>
__device__ VTC_INLINE void tc_tile(const Out& out, const A& a, BLoader& lb, TcWorkspace ws,
                                   const TcPlan& p, int64_t bi, int64_t split) {
  using namespace gemm_tc_config;
  using Products = TcProducts<BM, BN, A, BLoader>;
  constexpr int V = vector_store_capable<Out, 8>() ? 8 : 2;
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  uint16_t* sa = reinterpret_cast<uint16_t*>(vtc_smem);
  unsigned* flag = reinterpret_cast<unsigned*>(vtc_smem + tc_smem_bytes(BM, BN) - 16);
  const int tid = int(threadIdx.x);
  const TcTileAt at = tc_tile_at<BM, BN>(p, bi, blockIdx.y, blockIdx.x, split);
  Products pr{a, lb, p, sa, sa + kStages * Products::AStage, {}};
  float acc[Products::MI][Products::NI][4];
  pr.fetch_first(at);
  pr.products(at, acc);
  tc_store_tile<BM, BN>(out, acc, reinterpret_cast<float*>(vtc_smem), ws, p, at, split);
  const int64_t M = p.m, N = p.n, splits = p.splits;
  if (splits == 1) return;

  // The last run of this tile to finish adds the runs in order and stores the sums.
  __threadfence();
  __syncthreads();
  unsigned* counter = ws.counters + (bi * tc_tiles_m(p) + at.tile_m) * tc_tiles_n(p) + at.tile_n;
  if (tid == 0) *flag = atomicAdd(counter, 1u) == unsigned(splits - 1);
  __syncthreads();
  if (*flag) {
    __threadfence();
#pragma unroll 1
    for (int e = tid; e < BM * BN / V; e += Products::T) {
      const int r = e / (BN / V), c = e % (BN / V) * V;
      const int64_t m = at.m0 + r, n = at.n0 + c;
      if (m >= M || n >= N) continue;
      const float* src = ws.partial + (bi * splits * M + m) * N + n;
      float v[V];
#pragma unroll
      for (int u = 0; u < V; ++u)
        v[u] = n + u < N ? ld_cg(src + u) : 0.0f;
      for (int64_t s = 1; s < splits; ++s)
#pragma unroll
        for (int u = 0; u < V; ++u)
          if (n + u < N) v[u] += ld_cg(src + s * M * N + u);
      const Index<3> i{bi, m, n};
      store_floats<V>(out, i, n + V <= N && vector_at<V>(out, i), N, v);
    }
    if (tid == 0) *counter = 0u;
  }
  __syncthreads();
}

// A streaming block (tc_streams): tiles s = blockIdx.x, + gridDim.x, ... in the order rows of
// tiles fastest (the blocks of one column of tiles run together and share its B from L2), then
// columns, then batches. Each tile's first k tiles are fetched while the tile before is stored,
// its accumulators parked past the stages. KeepA (tc_keeps_a): the grid is a multiple of the
// tiles along M, so every tile of a block has the rows of its first, kept from the start.
template <int BM, int BN, bool KeepA, class Out, class A, class BLoader>
__device__ VTC_INLINE void tc_stream(const Out& out, const A& a, BLoader& lb, const TcPlan& p) {
  using namespace gemm_tc_config;
  using Products = TcProducts<BM, BN, A, BLoader, KeepA>;
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  uint16_t* sa = reinterpret_cast<uint16_t*>(vtc_smem);
  uint16_t* sb = KeepA ? reinterpret_cast<uint16_t*>(vtc_smem + tc_kept_a_bytes(p))
                       : sa + kStages * Products::AStage;
  float* park = reinterpret_cast<float*>(
      vtc_smem + (KeepA ? tc_keep_a_smem_bytes(p) - tc_park_bytes(BM, BN) : tc_smem_bytes(BM, BN)));
  const int64_t tm = tc_tiles_m(p), tn = tc_tiles_n(p), count = tm * tn * p.batch;
  auto at_of = [&](int64_t s) {
    return tc_tile_at<BM, BN>(p, s / (tm * tn), s % tm, s / tm % tn, 0);
  };
  Products pr{a, lb, p, sa, sb, {}};
  float acc[Products::MI][Products::NI][4];
  int64_t s = blockIdx.x;
  if (s >= count) return;
  TcTileAt at = at_of(s);
  if constexpr (KeepA) pr.keep_a(at.m0);
  pr.fetch_first(at);
  while (true) {
    pr.products(at, acc);
    const int64_t next = s + gridDim.x;
    const TcTileAt now = at;
    if (next < count) {
      at = at_of(next);
      pr.fetch_first(at);
    }
    tc_store_tile<BM, BN>(out, acc, park, TcWorkspace{}, p, now, 0);
    if (next >= count) break;
    s = next;
  }
}

// The product of a plan: streamed (tc_streams), or a block a tile with blocks walking (batch,
// split) pairs by grid.z (z = batch * splits + split).
template <int BM, int BN, class Out, class A, class BLoader>
__device__ VTC_INLINE void tc_run(const Out& out, const A& a, BLoader& lb, TcWorkspace ws,
                                  const TcPlan& p) {
  if (tc_keeps_a(p)) {
    tc_stream<BM, BN, true>(out, a, lb, p);
    return;
  }
  if (tc_streams(p)) {
    tc_stream<BM, BN, false>(out, a, lb, p);
    return;
  }
  const int64_t runs = p.batch * p.splits;
  for (int64_t z = blockIdx.z; z < runs; z += gridDim.z)
    tc_tile<BM, BN>(out, a, lb, ws, p, z / p.splits, z % p.splits);
}

} // namespace cuda

// The tensor-core kernel (A and B both f16 or both bf16), BM x BN the plan's tile. Launch:
// gemm_tc_launch(plan); workspace gemm_tc_workspace_bytes(plan).
template <int BM, int BN, class Out, class A, class B>
__device__ void gemm_tc(Out out, A a, B b, TcWorkspace ws, TcPlan p) {
  using namespace cuda;
  constexpr int kind = float16_kind<typename A::value_type>;
  static_assert(Out::rank == 3 && A::rank == 3 && B::rank == 3, "gemm_tc: rank-3 accessors");
  static_assert(kind != 0 && kind == float16_kind<typename B::value_type>,
                "gemm_tc: A and B both f16 or both bf16");
  MatrixColumns<B, BN, tc_threads(BM), tc_holds(BM)> lb{b};
  tc_run<BM, BN>(out, a, lb, ws, p);
}

} // namespace vtc::kernels

#endif
