// Decode attention with every warp streaming its own keys, both products on tensor cores:
// decode_attention_stream's structure (four warps a block, each a run of the chunk's keys, a
// running softmax, the warps combined in order, the chunks by the last block) with Q, K and V of
// one 16-bit type, D = Dv a multiple of 64 up to 256, groups up to 8.
//
// decode_attention_stream spends about 90 instructions a key at D = 128 (the products as FMAs,
// the dot products' butterflies): issue-bound at 2.3 TB/s. Here a warp takes 16 keys at a time
// straight from global memory into registers, in the layouts of mma.sync m16n8k16's fragments,
// and spends about a tenth of that:
// - logits S^T = K . Q^T (16 keys x 8 heads): A = K, lane (r, c) holding keys r and r + 8, the
//   elements [c D/4, (c + 1) D/4) of each (16-byte loads; k-step t takes its words 2t, 2t + 1:
//   a permutation of the d axis, applied alike to Q^T, B, built once per block);
// - the running softmax on the logits' fragment (lane (r, c): heads 2c, 2c + 1 of keys r, r + 8;
//   maxima by shuffles over r), P rounded to the storage type, transposed by movmatrix into
//   the B fragment of the second product;
// - weighted values O^T += V^T . P^T (per 16 value columns): A = V^T, lane (r, c) holding rows
//   2c, 2c + 1, 2c + 8, 2c + 9 of the tile, elements [r D/8, (r + 1) D/8) (16-byte loads, two
//   rows' halves joined by byte permutes); the accumulators stay in registers, lane (r, c)
//   owning value columns r D/8 + 2m and r D/8 + 2m + 1 of heads 2c, 2c + 1.
// Heads past G are zero queries whose logits are -inf; keys past the run are zero rows with
// -inf logits.
//
// Order (a function of the shape): the tensor cores' sums over each 16-key tile, rescaled by
// the running max once a tile and added in tile order per warp; the warps and chunks as
// decode_attention_stream's.
#pragma once

#include "decode_attention_stream.h"

namespace vtc::kernels {

// Whether decode_attention_stream_tc takes the shape: Q, K and V of one 16-bit storage type
// (element_bytes 2, checked by the caller), D = Dv in 64, 128, 192, 256, up to 8 heads a group.
VTC_HD constexpr bool decode_attention_stream_tc_supported(int64_t d, int64_t dv, int64_t group) {
  return d == dv && d % 64 == 0 && d >= 64 && d <= 256 && group >= 1 && group <= 8;
}

// Blocks a multiprocessor: three (170 registers a thread) up to D = 128, two above (the value
// accumulators and two tiles' rows take about 200).
VTC_HD constexpr int attention_stream_tc_resident(int64_t d) {
  return d <= 128 ? 3 : 2;
}

VTC_HD constexpr DecodeAttentionShape
make_decode_attention_stream_tc_shape(int64_t batch, int64_t heads, int64_t kv_len, int64_t d,
                                      int64_t dv, int64_t group) {
  return streaming_attention_shape(batch, heads, kv_len, d, dv, group,
                                   attention_stream_tc_resident(d));
}

// Shared memory: the G query rows as 16-bit elements, then decode_attention_stream's.
VTC_HD constexpr int64_t decode_attention_stream_tc_smem(const DecodeAttentionShape& s) {
  return s.group * s.d * 2 + decode_attention_stream_smem(s);
}

VTC_HD constexpr Launch decode_attention_stream_tc_launch(const DecodeAttentionShape& s) {
  return streaming_attention_launch(s, decode_attention_stream_tc_smem(s),
                                    attention_stream_tc_resident(s.d));
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

namespace cuda {

// The transpose of an 8 x 8 matrix of 16-bit elements held as mma fragments (lane l: row
// l / 4, columns 2 (l % 4) and 2 (l % 4) + 1).
__device__ VTC_INLINE unsigned movmatrix_trans(unsigned x) {
  unsigned y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}

} // namespace cuda

// G: the group size s.group (1 .. 8) and D = s.d = s.dv, known when the code is generated. Mask:
// a [B, H, L] reader or NoOperand. Launch: decode_attention_stream_tc_launch(s); workspace
// attention_workspace_bytes(s).
template <int G, int D, class O, class Q, class K, class V, class Mask = NoOperand>
__device__ void decode_attention_stream_tc(O o, Q q, K k, V v, AttentionWorkspace ws,
                                           DecodeAttentionShape s, AttentionParams p,
                                           Mask mask = {}) {
  using namespace attention_stream_config;
  using namespace cuda;
  using T = typename K::value_type;
  static_assert(O::rank == 3 && Q::rank == 3 && K::rank == 4 && V::rank == 4,
                "decode_attention_stream_tc: O, Q [B,H,D]; K, V [B,H,L,D]");
  static_assert(G >= 1 && G <= 8, "decode_attention_stream_tc: 1 to 8 heads a group");
  static_assert(D % 64 == 0 && D >= 64 && D <= 256, "decode_attention_stream_tc: D of 64 .. 256");
  static_assert(float16_kind<T> != 0 && same_type<T, typename V::value_type> &&
                    same_type<T, typename Q::value_type>,
                "decode_attention_stream_tc: Q, K and V of one 16-bit storage type");
  constexpr int kind = float16_kind<T>;
  constexpr int kSteps = D / 16;    // k-steps of the logits, 16-column tiles of the values
  constexpr int kKeyWords = D / 8;  // words of a quarter key row (D / 4 elements)
  constexpr int kValWords = D / 16; // words of an eighth value row (D / 8 elements)
  // Above D = 128 a tile's value rows are loaded once its logits are computed (the key rows'
  // registers free; 8 KB a warp still in flight), else with the key rows (8 KB at D = 128).
  constexpr bool kValuesAfterLogits = D > 128;
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  const int64_t chunk = s.chunk, pitch = D + 2;
  unsigned* qs = reinterpret_cast<unsigned*>(vtc_smem);    // [G][D / 2]: query element pairs
  float* parts = reinterpret_cast<float*>(qs + G * D / 2); // [kWarps][G][D + 2]: max, sum, values
  float* mh = parts + kWarps * G * pitch;                  // [G] the block's max
  float* lh = mh + G;                                      // [G] the block's sum
  unsigned* flag = reinterpret_cast<unsigned*>(lh + G);
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int r = lane / 4, cq = lane % 4; // the fragments' row and column pair
  const int64_t c = blockIdx.x, g = blockIdx.y, h0 = g * G;
  const int64_t valid = p.valid_length < 0 ? s.kv_len : min64(p.valid_length, s.kv_len);
  const int64_t l0 = c * chunk, n = clamp64(min64(l0 + chunk, valid) - l0, 0, chunk);
  const int64_t run = cdiv(chunk, kWarps);
  const int64_t r0 = l0 + min64(int64_t(warp) * run, n),
                r1 = l0 + min64(int64_t(warp + 1) * run, n);
  const int64_t key_e0 = int64_t(cq) * (D / 4), val_e0 = int64_t(r) * (D / 8);

  for (int64_t bi = blockIdx.z; bi < s.batch; bi += gridDim.z) {
    // The queries, computed once a block; then Q^T as B fragments: head r's elements
    // [cq D/4, (cq + 1) D/4), words 2t and 2t + 1 for k-step t; zeros for heads past G.
    for (int idx = tid; idx < G * D / 2; idx += attention_config::kThreads) {
      const int64_t h = idx / (D / 2), e = 2 * (idx % (D / 2));
      qs[idx] = pack_pair<T>(float(q.load(Index<3>{bi, h0 + h, e})),
                             float(q.load(Index<3>{bi, h0 + h, e + 1})));
    }
    __syncthreads();
    unsigned qf[kKeyWords];
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w)
      qf[w] = r < G ? qs[r * (D / 2) + key_e0 / 2 + w] : 0u;
    float acc[kSteps][4]; // O^T tile m: {value column r D/8 + 2m, + 1} x {head 2cq, 2cq + 1}
#pragma unroll
    for (int mt = 0; mt < kSteps; ++mt)
#pragma unroll
      for (int x = 0; x < 4; ++x)
        acc[mt][x] = 0.0f;
    float m[2] = {neg_inf(), neg_inf()}, l[2] = {0.0f, 0.0f}; // heads 2cq, 2cq + 1

    for (int64_t base = r0; base < r1; base += 16) {
      unsigned kw[2][kKeyWords], vw[4][kValWords];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int64_t j = base + r + 8 * half;
#pragma unroll
        for (int ch = 0; ch < D / 32; ++ch)
          load_row_slice<4>(k, bi, h0, j < r1 ? j : r0, key_e0 + 8 * ch, j < r1, &kw[half][4 * ch]);
      }
      auto load_values = [&] {
#pragma unroll
        for (int x = 0; x < 4; ++x) {
          const int64_t j = base + 2 * cq + (x & 1) + 8 * (x >> 1);
#pragma unroll
          for (int ch = 0; ch < D / 64; ++ch)
            load_row_slice<4>(v, bi, h0, j < r1 ? j : r0, val_e0 + 8 * ch, j < r1, &vw[x][4 * ch]);
        }
      };
      if constexpr (!kValuesAfterLogits) load_values();

      // Logits: sc = {key r: heads 2cq, 2cq + 1; key r + 8: the same heads}.
      float sc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int t = 0; t < kSteps; ++t) {
        const unsigned a[4] = {kw[0][2 * t], kw[1][2 * t], kw[0][2 * t + 1], kw[1][2 * t + 1]};
        mma_m16n8k16<kind>(sc, a, qf[2 * t], qf[2 * t + 1]);
      }
      if constexpr (kValuesAfterLogits) load_values();
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const int64_t j = base + r + 8 * (x >> 1);
        const int hh = 2 * cq + (x & 1);
        sc[x] = j < r1 && hh < G ? decode_logit(sc[x], p, mask, bi, h0 + hh, j) : neg_inf();
      }

      // The running softmax per head, and P as the B fragments of the values' product.
      float pr[4];
#pragma unroll
      for (int x2 = 0; x2 < 2; ++x2) {
        float tile_max = max_nan(sc[x2], sc[2 + x2]);
#pragma unroll
        for (int o = 4; o < 32; o *= 2)
          tile_max = max_nan(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, o));
        const float mn = max_nan(m[x2], tile_max);
        const bool none = mn == neg_inf();
        const float alpha = none ? 1.0f : stream_exp(m[x2] - mn);
        m[x2] = mn;
#pragma unroll
        for (int mt = 0; mt < kSteps; ++mt) {
          acc[mt][x2] *= alpha;
          acc[mt][2 + x2] *= alpha;
        }
        pr[x2] = none ? 0.0f : stream_exp(sc[x2] - mn);
        pr[2 + x2] = none ? 0.0f : stream_exp(sc[2 + x2] - mn);
        l[x2] = l[x2] * alpha + pr[x2] + pr[2 + x2];
      }
      const unsigned b0 = movmatrix_trans(pack_pair<T>(pr[0], pr[1]));
      const unsigned b1 = movmatrix_trans(pack_pair<T>(pr[2], pr[3]));

      // Weighted values, 16 columns a tile: A = V^T from rows 2cq, 2cq + 1 (low halves: column
      // r D/8 + 2m; high halves: + 1) and rows 2cq + 8, 2cq + 9.
#pragma unroll
      for (int mt = 0; mt < kSteps; ++mt) {
        const unsigned a[4] = {
            __byte_perm(vw[0][mt], vw[1][mt], 0x5410), __byte_perm(vw[0][mt], vw[1][mt], 0x7632),
            __byte_perm(vw[2][mt], vw[3][mt], 0x5410), __byte_perm(vw[2][mt], vw[3][mt], 0x7632)};
        mma_m16n8k16<kind>(acc[mt], a, b0, b1);
      }
    }

    // The sums over the key rows r, then the warp's partial per head.
#pragma unroll
    for (int x2 = 0; x2 < 2; ++x2) {
#pragma unroll
      for (int o = 4; o < 32; o *= 2)
        l[x2] += __shfl_xor_sync(0xffffffffu, l[x2], o);
      const int hh = 2 * cq + x2;
      if (hh < G) {
        float* part = parts + (int64_t(warp) * G + hh) * pitch;
        if (r == 0) {
          part[0] = m[x2];
          part[1] = l[x2];
        }
#pragma unroll
        for (int mt = 0; mt < kSteps; ++mt) {
          part[2 + val_e0 + 2 * mt] = acc[mt][x2];
          part[2 + val_e0 + 2 * mt + 1] = acc[mt][2 + x2];
        }
      }
    }
    combine_warps<G>(o, ws, s, bi, g, c, parts, mh, lh, flag);
  }
}

} // namespace vtc::kernels

#endif
