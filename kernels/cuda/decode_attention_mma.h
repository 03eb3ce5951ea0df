// Decode attention on tensor cores, for 16-bit Q, K and V: the split-KV structure of
// decode_attention_tiled (a block takes `chunk` keys of one batch and cache head for its G query
// heads, K and then V streamed through shared memory by cp.async; partials combined in chunk
// order by the last block), with both products as mma.sync m16n8k16 (f32 accumulators).
//
// decode_attention_tiled computes them with scalar FMAs, butterflies and shared-memory loads of
// the logits: at D = 128 with 4 heads a group that is about 800 instructions a warp for each
// 32-key tile, and the block is bound by issue, not by memory (948 GB/s at batch 16, of 4.2
// TB/s). Here a tile costs each warp D / 16 + 4 tensor-core instructions and their ldmatrix:
//   logits  S[16 x 32] = Q[16 x D] . K_tile^T: the G query heads are rows 0 .. G-1 of the A
//           operand (the rest zero; its fragments are loaded once a batch row), warp w takes
//           keys 8w .. 8w + 7 of the tile (B operand: ldmatrix of the staged K rows);
//   values  O[16 x Dv] += P[16 x 32] . V_tile: P is the chunk's exp(s - max) from shared
//           memory rounded to the storage type (as the exported graphs cast the softmax to it
//           before their MatMul), warp w takes the 16-column slices w, w + 4, ... (B operand:
//           ldmatrix.trans of the staged V rows).
// K and V tiles share one ring of kStages slots (the stream is K tile 0 .. n-1, V tile 0 ..
// n-1, kStages - 1 tiles ahead), rows padded by 16 bytes so that ldmatrix's eight rows fall in
// distinct banks. The mma's summation order is fixed by the shape, so every strategy gets the
// same bits; they differ from decode_attention's and decode_attention_tiled's in the last bits.
#pragma once

#include "decode_attention_tiled.h"

namespace vtc::kernels {

namespace attention_mma_config {
inline constexpr int kStages = 4;
inline constexpr int64_t kTileKeys = 32; // 4 warps x 8 keys; 2 k-steps of the value product
inline constexpr int kMaxD = 256, kMaxGroup = 8;
inline constexpr int kResidentBlocks = 2;
} // namespace attention_mma_config

// Whether decode_attention_mma takes the shape, for 16-bit Q, K and V of one type (the caller's
// business): D a multiple of 32 (k-steps in pairs), Dv of 16 (column slices), both at most 256,
// up to 8 heads a group.
VTC_HD constexpr bool decode_attention_mma_supported(int64_t d, int64_t dv, int64_t group) {
  using namespace attention_mma_config;
  return d >= 32 && d <= kMaxD && d % 32 == 0 && dv >= 16 && dv <= kMaxD && dv % 16 == 0 &&
         group >= 1 && group <= kMaxGroup;
}

// Elements a staged row takes: the longer of K's and V's rows and 8 more (16 bytes).
VTC_HD constexpr int64_t attention_mma_pitch(int64_t columns) {
  return columns + 8;
}

// Shared memory: the ring [kStages][32][pitch], Q [8][D + 8] (16-bit), logits [G][chunk], 32
// floats of reduction scratch, max and sum per head, a flag.
VTC_HD constexpr int64_t decode_attention_mma_smem(const DecodeAttentionShape& s) {
  using namespace attention_mma_config;
  const int64_t ring = kStages * kTileKeys * attention_mma_pitch(max64(s.d, s.dv)) * 2;
  const int64_t q = 8 * attention_mma_pitch(s.d) * 2;
  return ring + q + (s.group * s.chunk + 32 + 2 * s.group + 4) * 4;
}

// The tiled kernel's shape: one wave of two blocks a multiprocessor.
VTC_HD constexpr DecodeAttentionShape make_decode_attention_mma_shape(int64_t batch, int64_t heads,
                                                                      int64_t kv_len, int64_t d,
                                                                      int64_t dv, int64_t group) {
  return make_decode_attention_tiled_shape(batch, heads, kv_len, d, dv, group);
}

VTC_HD constexpr Launch decode_attention_mma_launch(const DecodeAttentionShape& s) {
  return Launch{{unsigned(attention_chunks(s)), unsigned(s.heads / s.group),
                 unsigned(clamp64(s.batch, 1, 65535))},
                {unsigned(attention_config::kThreads), 1, 1},
                unsigned(decode_attention_mma_smem(s)),
                unsigned(attention_mma_config::kResidentBlocks)};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

// G: the group size s.group (1 .. 8), known when the code is generated; Q, K and V of one
// 16-bit storage type. Mask: a [B, H, L] reader or NoOperand. Launch:
// decode_attention_mma_launch(s); workspace attention_workspace_bytes(s).
template <int G, class O, class Q, class K, class V, class Mask = NoOperand>
__device__ void decode_attention_mma(O o, Q q, K k, V v, AttentionWorkspace ws,
                                     DecodeAttentionShape s, AttentionParams p, Mask mask = {}) {
  using namespace attention_config;
  using namespace attention_mma_config;
  using namespace cuda;
  using T = typename K::value_type;
  static_assert(O::rank == 3 && Q::rank == 3 && K::rank == 4 && V::rank == 4,
                "decode_attention_mma: O, Q [B,H,D]; K, V [B,H,L,D]");
  static_assert(G >= 1 && G <= kMaxGroup, "decode_attention_mma: 1 to 8 heads a group");
  static_assert(float16_kind<T> != 0 && same_type<T, typename V::value_type> &&
                    same_type<T, typename Q::value_type>,
                "decode_attention_mma: Q, K and V of one 16-bit storage type");
  static_assert(kThreads == 128, "decode_attention_mma: four warps");
  constexpr int kind = float16_kind<T>;
  constexpr int64_t kt = kTileKeys;
  constexpr int kSteps = kMaxD / 16;      // k-steps of the logits' product, at most
  constexpr int kSlices = kMaxD / 16 / 4; // 16-column value slices a warp, at most
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  const int64_t D = s.d, Dv = s.dv, chunk = s.chunk;
  const int64_t chunks = attention_chunks(s);
  const int64_t rp = attention_mma_pitch(max64(D, Dv)), qp = attention_mma_pitch(D);
  T* ring = reinterpret_cast<T*>(vtc_smem);          // [kStages][kt][rp]
  T* qs = ring + kStages * kt * rp;                  // [8][qp]
  float* ss = reinterpret_cast<float*>(qs + 8 * qp); // [G][chunk]
  float* scratch = ss + G * chunk;                   // 32
  float* mh = scratch + 32;                          // [G] max
  float* lh = mh + G;                                // [G] sum
  unsigned* flag = reinterpret_cast<unsigned*>(lh + G);
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int row = lane / 4, pair = (lane % 4) * 2; // an mma fragment's row and column pair
  const int64_t c = blockIdx.x, g = blockIdx.y, h0 = g * G;
  const int64_t valid = p.valid_length < 0 ? s.kv_len : min64(p.valid_length, s.kv_len);
  const int64_t l0 = c * chunk, n = clamp64(min64(l0 + chunk, valid) - l0, 0, chunk);
  const int64_t tiles = cdiv(n, kt); // K tiles, then as many V tiles
  const int steps = int(D / 16), slices = int(Dv / 16);

  for (int64_t bi = blockIdx.z; bi < s.batch; bi += gridDim.z) {
    // Tile u of the stream (K tile u for u < tiles, else V tile u - tiles) into slot u % kStages.
    auto issue = [&](int64_t u) {
      T* slot = ring + (u % kStages) * kt * rp;
      if (u < tiles)
        stage_rows(k, bi, h0, l0 + u * kt, min64(kt, n - u * kt), kt, D, rp, slot);
      else if (u < 2 * tiles)
        stage_rows(v, bi, h0, l0 + (u - tiles) * kt, min64(kt, n - (u - tiles) * kt), kt, Dv, rp,
                   slot);
    };
    for (int st = 0; st < kStages - 1; ++st) {
      issue(st);
      cp_async_commit();
    }
    // The G query rows as storage elements (exact: Q is of type T), rows G .. 7 zero.
    for (int64_t i = tid; i < 8 * qp; i += kThreads) {
      const int64_t h = i / qp, e = i % qp;
      qs[i] = h < G && e < D ? from_compute<T>(float(q.load(Index<3>{bi, h0 + h, e}))) : T{};
    }
    __syncthreads();
    // The A fragments of every k-step: rows 0 .. 7 (matrices 0 and 2 of an ldmatrix.x4 whose
    // lanes all point at rows 0 .. 7); rows 8 .. 15 are zero.
    unsigned qa[kSteps][2];
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
      qa[ks][0] = qa[ks][1] = 0u;
      if (ks < steps) {
        unsigned r[4];
        ldmatrix_x4(r, qs + (lane % 8) * qp + ks * 16 + lane / 16 * 8);
        qa[ks][0] = r[0];
        qa[ks][1] = r[2];
      }
    }
    float acc[kSlices][2][4];
#pragma unroll
    for (int i = 0; i < kSlices; ++i)
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int x = 0; x < 4; ++x)
          acc[i][half][x] = 0.0f;

    for (int64_t u = 0; u < 2 * tiles; ++u) {
      cp_async_wait<kStages - 2>();
      __syncthreads(); // tile u has landed; at u == tiles, every logit is written
      if (u == tiles) chunk_softmax<G>(ss, n, chunk, mh, lh, scratch);
      issue(u + kStages - 1);
      cp_async_commit();
      const T* slot = ring + (u % kStages) * kt * rp;
      if (u < tiles) {
        // Logits of keys 8 * warp .. + 7 of tile u.
        const int64_t j0 = u * kt, rows = min64(kt, n - j0);
        float sc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        const T* krow = slot + (warp * 8 + lane % 8) * rp + lane / 8 * 8;
#pragma unroll
        for (int ks = 0; ks < kSteps; ks += 2) {
          if (ks < steps) { // steps is even (D % 32 == 0)
            unsigned b[4];
            ldmatrix_x4(b, krow + ks * 16);
            const unsigned a0[4] = {qa[ks][0], 0u, qa[ks][1], 0u};
            const unsigned a1[4] = {qa[ks + 1][0], 0u, qa[ks + 1][1], 0u};
            mma_m16n8k16<kind>(sc, a0, b[0], b[1]);
            mma_m16n8k16<kind>(sc, a1, b[2], b[3]);
          }
        }
        if (row < G)
#pragma unroll
          for (int x = 0; x < 2; ++x) {
            const int64_t key = int64_t(warp) * 8 + pair + x;
            if (key < rows) {
              ss[row * chunk + j0 + key] =
                  decode_logit(sc[x], p, mask, bi, h0 + row, l0 + j0 + key);
            }
          }
      } else {
        // Weighted values of tile u - tiles: two k-steps of 16 keys.
        const int64_t j0 = (u - tiles) * kt;
#pragma unroll
        for (int ks = 0; ks < 2; ++ks) {
          unsigned a[4] = {0u, 0u, 0u, 0u};
          if (row < G) {
            float pr[4];
#pragma unroll
            for (int x = 0; x < 4; ++x) {
              const int64_t j = j0 + ks * 16 + pair + (x / 2) * 8 + x % 2;
              pr[x] = j < n ? ss[row * chunk + j] : 0.0f;
            }
            a[0] = pack_pair<T>(pr[0], pr[1]);
            a[2] = pack_pair<T>(pr[2], pr[3]);
          }
          const T* vrows = slot + (ks * 16 + lane % 8 + (lane / 8) % 2 * 8) * rp + lane / 16 * 8;
#pragma unroll
          for (int i = 0; i < kSlices; ++i) {
            const int slice = warp + 4 * i;
            if (slice < slices) {
              unsigned b[4];
              ldmatrix_x4_trans(b, vrows + slice * 16);
              mma_m16n8k16<kind>(acc[i][0], a, b[0], b[1]);
              mma_m16n8k16<kind>(acc[i][1], a, b[2], b[3]);
            }
          }
        }
      }
    }
    if (tiles == 0) { // no key: max -inf, sum 0
      __syncthreads();
      chunk_softmax<G>(ss, n, chunk, mh, lh, scratch);
    }
    cp_async_wait<0>();

    if (row < G)
#pragma unroll
      for (int i = 0; i < kSlices; ++i) {
        const int slice = warp + 4 * i;
        if (slice >= slices) continue;
#pragma unroll
        for (int half = 0; half < 2; ++half)
#pragma unroll
          for (int x = 0; x < 2; ++x) {
            const int64_t e = int64_t(slice) * 16 + half * 8 + pair + x;
            put_weighted_value(o, ws, s, chunks, bi, h0 + row, c, e, acc[i][half][x], mh[row],
                               lh[row]);
          }
      }
    if (chunks > 1) attention_combine<G>(o, ws, s, bi, g, c, mh, lh, flag);
    __syncthreads(); // the ring, Q and the logits are free before the next batch row's tiles
  }
}

} // namespace vtc::kernels

#endif
