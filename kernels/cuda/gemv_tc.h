// Decode-sized products on the tensor cores: C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] for
// 2 to 16 rows with A and B both f16 or both bf16 (batched decode: 16 rows of x against the
// weights W[K, N], streamed once).
//
// gemv (gemv.h) spends 16 fused multiply-adds a weight at 16 rows on the CUDA cores and runs
// at a quarter of the copy rate there. Here the rows are padded to 16 and each multiply is an
// mma.sync m16n8k16 (f32 accumulators): a block owns a panel of 256 columns and a chunk of k
// (split-K, as gemv), stages tiles of 32 rows of B (and A's 16 x 32) through a 4-stage
// cp.async pipeline (rows padded by 16 bytes: ldmatrix without bank conflicts), and each of its
// 8 warps keeps the 16 x 32 outputs of its own 32 columns — no sums across warps. Tiles of
// the chunk in turn, each as two k16 steps: the order is the shape's alone. The sums leave
// through shared memory (16 x 256 floats) to gemv_store_panel, which stores them or, with
// split-K, adds the chunks in chunk order. Workspace as gemv's (gemv_workspace_bytes).
//
// An A the accessor computes (a prologue: the RMSNorm's scale before the QKV product) cannot be
// copied by cp.async; staged tile by tile, its loads and arithmetic sat on every k tile's
// critical path (the QKV product ran at 2.06 TB/s against the MLP products' 3.1). Such an A is
// staged for the block's whole chunk of k once, before the B pipeline starts (its MR rows, up
// to kWholeABytes; rows past MR read a zero row), and the tiles then read it from there.
#pragma once

#include "gemv.h"

namespace vtc::kernels {

namespace gemv_tc_config {
inline constexpr int kThreads = 256, kBK = 32, kStages = 4, kRows = 16;
inline constexpr int kCols = gemv_config::kCols;             // 8 warps x 32 columns
inline constexpr int kAPitch = kBK + 8, kBPitch = kCols + 8; // elements; +16 bytes a row
inline constexpr int kAStage = kRows * kAPitch, kBStage = kBK * kBPitch;
inline constexpr int kParkPitch = kCols + 4; // floats
inline constexpr unsigned kStagesBytes = unsigned(kStages * (kAStage + kBStage) * 2);
// After the stages: the split-K flag (16 bytes), a zero row of 8 elements (16 bytes), then a
// computed A's whole chunk where it fits kWholeABytes (two blocks still fit a multiprocessor).
inline constexpr unsigned kFlagAt = kStagesBytes, kZeroAt = kStagesBytes + 16,
                          kWholeAAt = kStagesBytes + 32;
inline constexpr int64_t kWholeABytes = 33024; // 16 rows of 1024 + 8 elements
static_assert(kRows * kParkPitch * 4 <= kStagesBytes, "the sums fit the stages' memory");
// 71 KB of shared memory a block (up to 104 KB with a whole chunk of a computed A): 2 fit a
// multiprocessor either way, and the grid aims at 2 a multiprocessor in one wave.
inline constexpr int64_t kResidentBlocks = 2;
} // namespace gemv_tc_config

// As make_gemv_shape, chunks a multiple of the 32-row tile and no cap from staging A (tiles of
// A come with B's).
VTC_HD constexpr GemvShape make_gemv_tc_shape(int64_t batch, int64_t m, int64_t n, int64_t k) {
  using namespace gemv_tc_config;
  const int64_t panels = cdiv(n, kCols), kk = max64(k, 1);
  const int64_t wave = gemv_config::kMultiprocessors * kResidentBlocks;
  const int64_t splits = clamp64(wave / max64(1, panels * batch), 1, cdiv(kk, kBK));
  const int64_t chunk = cdiv(cdiv(kk, splits), kBK) * kBK;
  return GemvShape{batch, m, n, k, chunk};
}

// Pitch (elements) of a whole chunk of A in shared memory, and whether it fits.
VTC_HD constexpr int64_t gemv_tc_whole_a_pitch(const GemvShape& s) {
  return s.k_chunk + 8;
}
VTC_HD constexpr bool gemv_tc_whole_a_fits(const GemvShape& s) {
  return s.m * gemv_tc_whole_a_pitch(s) * 2 <= gemv_tc_config::kWholeABytes;
}

// Shared memory: the stages, the flag and zero row, and room for a whole chunk of A where it
// fits (used when the A accessor computes its elements).
VTC_HD constexpr unsigned gemv_tc_smem_bytes(const GemvShape& s) {
  using namespace gemv_tc_config;
  return kWholeAAt +
         unsigned(gemv_tc_whole_a_fits(s) ? s.m * gemv_tc_whole_a_pitch(s) * 2 : int64_t(0));
}

VTC_HD constexpr Launch gemv_tc_launch(const GemvShape& s) {
  using namespace gemv_tc_config;
  return Launch{
      {unsigned(gemv_panels(s)), unsigned(gemv_splits(s)), unsigned(clamp64(s.batch, 1, 65535))},
      {kThreads, 1, 1},
      gemv_tc_smem_bytes(s),
      unsigned(kResidentBlocks)};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

#include "gemm.h" // stage_chunk8

namespace vtc::kernels {

// MR: the row count s.m (2 .. 16), known when the code is generated. Launch: gemv_tc_launch.
template <int MR, class Out, class A, class B>
__device__ void gemv_tc(Out out, A a, B b, GemvWorkspace ws, GemvShape s) {
  using namespace gemv_tc_config;
  using namespace cuda;
  constexpr int kind = float16_kind<typename A::value_type>;
  static_assert(Out::rank == 3 && A::rank == 3 && B::rank == 3, "gemv_tc: rank-3 accessors");
  static_assert(MR >= 1 && MR <= kRows, "gemv_tc: 1 to 16 rows");
  static_assert(kind != 0 && kind == float16_kind<typename B::value_type>,
                "gemv_tc: A and B both f16 or both bf16");
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  uint16_t* sa = reinterpret_cast<uint16_t*>(vtc_smem);
  uint16_t* sb = sa + kStages * kAStage;
  unsigned* flag = reinterpret_cast<unsigned*>(vtc_smem + kFlagAt);
  const uint16_t* zero_row = reinterpret_cast<const uint16_t*>(vtc_smem + kZeroAt);
  uint16_t* whole_a = reinterpret_cast<uint16_t*>(vtc_smem + kWholeAAt);
  // A computed element by element is staged for the whole chunk at once (see above).
  const bool whole = !vector_capable<A, 8> && gemv_tc_whole_a_fits(s);
  const int64_t pitch = gemv_tc_whole_a_pitch(s);
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  if (tid < 4) reinterpret_cast<unsigned*>(vtc_smem + kZeroAt)[tid] = 0u;
  const int64_t N = s.n, K = s.k;
  const int64_t panel = blockIdx.x, split = blockIdx.y;
  const int64_t n0 = panel * kCols, k_begin = split * s.k_chunk;
  const int64_t k_end = min64(K, k_begin + s.k_chunk);
  const int64_t tiles = max64(0, cdiv(k_end - k_begin, kBK));

  for (int64_t bi = blockIdx.z; bi < s.batch; bi += gridDim.z) {
    auto load_tile = [&](int64_t t, int stage) {
      const int64_t k0 = k_begin + t * kBK;
      uint16_t* ta = sa + stage * kAStage;
      uint16_t* tb = sb + stage * kBStage;
      if (!whole && tid < kRows * kBK / 8) { // A: 16 rows of 4 chunks, past MR and k_end zero
        const int r = tid / (kBK / 8), col = tid % (kBK / 8) * 8;
        stage_chunk8(a, bi, r, k0 + col, MR, k_end, ta + r * kAPitch + col);
      }
      for (int c = tid; c < kBK * kCols / 8; c += kThreads) { // B: 32 rows of 32 chunks
        const int r = c / (kCols / 8), col = c % (kCols / 8) * 8;
        stage_chunk8(b, bi, k0 + r, n0 + col, k_end, N, tb + r * kBPitch + col);
      }
    };

    float acc[4][4]; // n8 tiles of the warp's 32 columns x the m16n8 fragment
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        acc[j][r] = 0.0f;

    if (whole) { // MR rows of the chunk, 8 elements a thread at a time, loads issued first
      const int64_t per_row = tiles * kBK / 8, items = MR * per_row; // zeros past k_end
      for (int64_t i0 = 0; i0 < items; i0 += 4 * kThreads) {
        uint4 bits[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const int64_t i = i0 + u * kThreads + tid;
          const int64_t r = i / per_row, col = i % per_row * 8;
          bits[u] = chunk8_bits(a, bi, r, k_begin + col, i < items ? MR : 0, k_end);
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const int64_t i = i0 + u * kThreads + tid;
          if (i < items)
            *reinterpret_cast<uint4*>(whole_a + i / per_row * pitch + i % per_row * 8) = bits[u];
        }
      }
    }
    for (int st = 0; st < kStages - 1; ++st) {
      if (st < tiles) load_tile(st, st);
      cp_async_commit();
    }
    for (int64_t t = 0; t < tiles; ++t) {
      cp_async_wait<kStages - 2>();
      __syncthreads();
      const int64_t next = t + kStages - 1;
      if (next < tiles) load_tile(next, int(next % kStages));
      cp_async_commit();
      const uint16_t* ta = sa + int(t % kStages) * kAStage;
      const uint16_t* tb = sb + int(t % kStages) * kBStage;
      // This lane's row of A for ldmatrix: the tile's, or the whole chunk's (a zero row past MR).
      const int arow = lane % 16;
      const uint16_t* a_at = !whole      ? ta + arow * kAPitch + lane / 16 * 8
                             : arow < MR ? whole_a + arow * pitch + t * kBK + lane / 16 * 8
                                         : zero_row;
      const int a_step = arow < MR || !whole ? 1 : 0; // the zero row stays put
#pragma unroll
      for (int kk = 0; kk < kBK; kk += 16) {
        unsigned af[4], bf[4][2];
        ldmatrix_x4(af, a_at + kk * a_step);
#pragma unroll
        for (int nj = 0; nj < 2; ++nj) {
          unsigned r[4];
          ldmatrix_x4_trans(r, tb + (kk + lane % 8 + (lane / 8) % 2 * 8) * kBPitch + warp * 32 +
                                   nj * 16 + lane / 16 * 8);
          bf[2 * nj][0] = r[0];
          bf[2 * nj][1] = r[1];
          bf[2 * nj + 1][0] = r[2];
          bf[2 * nj + 1][1] = r[3];
        }
#pragma unroll
        for (int ni = 0; ni < 4; ++ni)
          mma_m16n8k16<kind>(acc[ni], af, bf[ni][0], bf[ni][1]);
      }
    }
    cp_async_wait<0>();
    __syncthreads(); // every warp is done with the stages

    // Fragment (row lane / 4 [+ 8], columns lane % 4 * 2 + {0, 1}) into park[row][column].
    float* park = reinterpret_cast<float*>(vtc_smem);
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = lane / 4 + half * 8, col = warp * 32 + ni * 8 + lane % 4 * 2;
        park[row * kParkPitch + col] = acc[ni][2 * half];
        park[row * kParkPitch + col + 1] = acc[ni][2 * half + 1];
      }
    __syncthreads();
    gemv_store_panel<MR>(out, ws, s, bi, panel, split, flag,
                         [&](int m) { return park[m * kParkPitch + tid]; });
    __syncthreads(); // the sums are read before the next batch's tiles land
  }
}

} // namespace vtc::kernels

#endif
