// Decode attention (one query token per batch and head) over accessors:
//   Q[B, H, D], K[B, H, L, D], V[B, H, L, Dv] -> O[B, H, Dv].
// K and V are typically virtual: the grouped-query Expand mapping onto a KV cache
// [B, Hkv, L, D], which the accessor already applies (head h reads cache head h / G). The
// kernel is told the group size G = H / Hkv: heads g*G .. g*G + G-1 read the same rows, so a
// block serves the G query heads of one cache head and reads each key and value row once
// (through head g*G) instead of G times. A logit is
//   s = dot(q, k) * scale;  s = cap * tanh(s / cap) when softcap > 0;  s += mask[b, h, l]
// with keys l >= valid_length absent (a query with no key gets zeros).
//
// Split over L (flash decoding): block (c, g, b) takes keys [c*chunk, (c+1)*chunk) and writes
// a partial (max, sum, weighted V) per head; the last block of (b, g) to finish combines the
// chunks in chunk order (a counter per (b, g); no float atomics). Fixed order: a dot product
// is a chain over 8-element slices taken by T lanes (a function of D) then a butterfly over
// those lanes; max and sum over a chunk are block reductions; the weighted V is a chain over
// keys per key slice (keys slice, slice + S, ... in turn), the slices added in order. Several
// rows per thread are loaded before they are used (U), which changes no order. chunk comes from the
// shape (make_decode_attention_shape), so the bits do too.
#pragma once

#include "common.h"

namespace vtc::kernels {

struct DecodeAttentionShape {
  int64_t batch = 1, heads = 1, kv_len = 1, d = 1, dv = 1;
  int64_t group = 1;  // query heads per cache head (G)
  int64_t chunk = 64; // keys per block: make_decode_attention_shape
};

struct AttentionParams {
  float scale = 1.0f;
  float softcap = 0.0f;      // > 0: logits pass through softcap * tanh(x / softcap)
  int64_t valid_length = -1; // keys at or past it are absent; -1: all kv_len keys
};

namespace attention_config {
inline constexpr int kThreads = 128;
inline constexpr int64_t kMultiprocessors = 132;
inline constexpr int64_t kMaxScores = 4096; // G * chunk logits in shared memory
} // namespace attention_config

// Blocks a multiprocessor the kernel is built for: four (128 registers a thread) up to four
// heads a group, two above (their accumulators need more). The grid is one wave of them: the
// kernel is bound by the bytes in flight, so every multiprocessor is kept full and none runs
// a second wave.
VTC_HD constexpr int attention_min_blocks(int64_t group) {
  return group <= 4 ? 4 : 2;
}

// Lanes that share one row of `d` elements, 8 elements a lane at a time (1 .. 32).
VTC_HD constexpr int attention_row_lanes(int64_t d) {
  return int(clamp64(pow2_ceil(max64(1, cdiv(d, 8))), 1, 32));
}

VTC_HD constexpr DecodeAttentionShape make_decode_attention_shape(int64_t batch, int64_t heads,
                                                                  int64_t kv_len, int64_t d,
                                                                  int64_t dv, int64_t group) {
  using namespace attention_config;
  const int64_t blocks = max64(1, batch * (heads / max64(group, 1)));
  const int64_t chunks = max64(1, kMultiprocessors * attention_min_blocks(group) / blocks);
  const int64_t most = max64(64, kMaxScores / max64(group, 1) / 64 * 64);
  // At least 128 keys a block: with 64 the combine and the per-block setup outweigh the keys
  // (batch 1, 4096 keys: 45 us against 38 us with 128).
  const int64_t chunk =
      clamp64(cdiv(cdiv(max64(kv_len, 1), chunks), 64) * 64, min64(128, most), most);
  return DecodeAttentionShape{batch, heads, kv_len, d, dv, group, chunk};
}

VTC_HD constexpr int64_t attention_chunks(const DecodeAttentionShape& s) {
  return max64(1, cdiv(s.kv_len, s.chunk));
}

// Partials [B][H][chunks][Dv + 2] floats, then a counter per (b, cache head); 0 with one chunk.
VTC_HD constexpr int64_t attention_workspace_partial_bytes(const DecodeAttentionShape& s) {
  return attention_chunks(s) == 1 ? 0 : s.batch * s.heads * attention_chunks(s) * (s.dv + 2) * 4;
}
VTC_HD constexpr int64_t attention_workspace_bytes(const DecodeAttentionShape& s) {
  if (attention_chunks(s) == 1) return 0;
  return attention_workspace_partial_bytes(s) + s.batch * (s.heads / s.group) * 4;
}

// Shared memory: q [G][D], logits [G][chunk], per-slice sums [128 * 8 / 8][G][8] ... (4 KB a
// head), 32 floats of reduction scratch, max and sum per head, a flag.
VTC_HD constexpr int64_t attention_smem_floats(const DecodeAttentionShape& s) {
  return s.group * s.d + s.group * s.chunk + attention_config::kThreads * 8 * s.group + 32 +
         2 * s.group + 4;
}

VTC_HD constexpr Launch decode_attention_launch(const DecodeAttentionShape& s) {
  return Launch{{unsigned(attention_chunks(s)), unsigned(s.heads / s.group),
                 unsigned(clamp64(s.batch, 1, 65535))},
                {unsigned(attention_config::kThreads), 1, 1},
                unsigned(attention_smem_floats(s) * 4),
                unsigned(attention_min_blocks(s.group))};
}

struct AttentionWorkspace {
  float* partial = nullptr;
  unsigned* counters = nullptr;
};

VTC_HD inline AttentionWorkspace attention_workspace(void* base, const DecodeAttentionShape& s) {
  float* partial = static_cast<float*>(base);
  return AttentionWorkspace{partial,
                            reinterpret_cast<unsigned*>(static_cast<unsigned char*>(base) +
                                                        attention_workspace_partial_bytes(s))};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

namespace cuda {

// A logit from its dot product: scaled, capped where softcap > 0, and masked (mask[b, h, l],
// when a mask is given). Every decode attention kernel ends its logits here.
template <class Mask>
__device__ VTC_INLINE float decode_logit(float dot, const AttentionParams& p, const Mask& mask,
                                         int64_t b, int64_t h, int64_t l) {
  float x = dot * p.scale;
  if (p.softcap > 0.0f) x = p.softcap * tanhf(x / p.softcap);
  if constexpr (is_present<Mask>) x += float(mask.load(Index<3>{b, h, l}));
  return x;
}

// Column e of head h's weighted values `r` from chunk c of batch row bi: with one chunk the
// output itself (r over the head's sum l; zeros for a head that saw no key, max m = -inf),
// else the chunk's partial for attention_combine.
template <class O>
__device__ VTC_INLINE void put_weighted_value(const O& o, const AttentionWorkspace& ws,
                                              const DecodeAttentionShape& s, int64_t chunks,
                                              int64_t bi, int64_t h, int64_t c, int64_t e, float r,
                                              float m, float l) {
  if (chunks == 1)
    o.store(Index<3>{bi, h, e}, m == neg_inf() ? 0.0f : r / l);
  else
    ws.partial[((bi * s.heads + h) * chunks + c) * (s.dv + 2) + 2 + e] = r;
}

// Softmax over a chunk's n logits ss[h][0 .. n) of each of the G heads (pitch `chunk`), by
// the block: their max, then exp(s - max) in place and its sum, in mh[h] and lh[h].
template <int G>
__device__ VTC_INLINE void chunk_softmax(float* ss, int64_t n, int64_t chunk, float* mh, float* lh,
                                         float* scratch) {
  using namespace attention_config;
  const int tid = int(threadIdx.x);
  for (int h = 0; h < G; ++h) {
    float mx = neg_inf();
    for (int64_t j = tid; j < n; j += kThreads)
      mx = max_nan(mx, ss[h * chunk + j]);
    mx = block_reduce(mx, Max{}, scratch);
    float sum = 0.0f;
    for (int64_t j = tid; j < n; j += kThreads) {
      const float e = mx == neg_inf() ? 0.0f : expf(ss[h * chunk + j] - mx);
      ss[h * chunk + j] = e;
      sum += e;
    }
    sum = block_reduce(sum, Add{}, scratch);
    if (tid == 0) {
      mh[h] = mx;
      lh[h] = sum;
    }
  }
  __syncthreads();
}

// The end of a block of split-KV decode attention with several chunks: its heads' max and sum
// join the weighted values it wrote to ws.partial, and the last block of (bi, cache head g) to
// finish (a counter, the only atomic) combines the chunks in chunk order and stores O.
//
// The last block's loads are what the step waits for: a column's max over the chunks, then its
// weighted sum, each a chain of loads from L2, and each thread walked G columns in turn (Llama-3
// at batch 1: 32 chunks, 4 columns a thread, about 500 loads a thread). So where the heads'
// chunks fit in kChunkWeights, each chunk's max and sum is loaded once, by one thread, the
// heads' maxima, chunk weights exp(m_c - max) and sums go to shared memory, and each thread
// then loads its columns' partials kAhead chunks at a time for all its columns at once. Every
// value is computed as before, in the same order (max, then the sums in chunk order).
namespace attention_combine_config {
inline constexpr int kChunkWeights = 512; // G x chunks weights in static shared memory
inline constexpr int kAhead = 8;          // chunks of partials a thread loads at once
inline constexpr int kColumns = 2;        // columns a thread combines at once
} // namespace attention_combine_config

template <int G, class O>
__device__ VTC_INLINE void attention_combine_in_order(const O& o, AttentionWorkspace ws,
                                                      const DecodeAttentionShape& s, int64_t bi,
                                                      int64_t h0) {
  using namespace attention_config;
  const int tid = int(threadIdx.x);
  const int64_t Dv = s.dv, H = s.heads, chunks = attention_chunks(s);
  for (int64_t idx = tid; idx < G * Dv; idx += kThreads) {
    const int64_t h = idx / Dv, e = idx % Dv;
    const float* part = ws.partial + (bi * H + h0 + h) * chunks * (Dv + 2);
    float mx = neg_inf();
    for (int64_t cc = 0; cc < chunks; ++cc)
      mx = max_nan(mx, ld_cg(part + cc * (Dv + 2)));
    float res = 0.0f;
    if (mx != neg_inf()) {
      float sum = 0.0f, r = 0.0f;
      for (int64_t cc = 0; cc < chunks; ++cc) {
        const float* pc = part + cc * (Dv + 2);
        const float f = expf(ld_cg(pc) - mx);
        sum = fmaf(ld_cg(pc + 1), f, sum);
        r = fmaf(ld_cg(pc + 2 + e), f, r);
      }
      res = r / sum;
    }
    o.store(Index<3>{bi, h0 + h, e}, res);
  }
}

template <int G, class O>
__device__ VTC_INLINE void
attention_combine(const O& o, AttentionWorkspace ws, const DecodeAttentionShape& s, int64_t bi,
                  int64_t g, int64_t c, const float* mh, const float* lh, unsigned* flag) {
  using namespace attention_config;
  using namespace attention_combine_config;
  __shared__ float weight[kChunkWeights]; // [G][chunks]: exp(m_c - max), 0 for an empty chunk
  __shared__ float head_max[G], head_sum[G];
  const int tid = int(threadIdx.x);
  const int64_t Dv = s.dv, H = s.heads, h0 = g * G, chunks = attention_chunks(s), groups = H / G;
  if (tid < G) {
    float* part = ws.partial + ((bi * H + h0 + tid) * chunks + c) * (Dv + 2);
    part[0] = mh[tid];
    part[1] = lh[tid];
  }
  __threadfence();
  __syncthreads();
  unsigned* counter = ws.counters + bi * groups + g;
  if (tid == 0) *flag = atomicAdd(counter, 1u) == unsigned(chunks - 1);
  __syncthreads();
  if (*flag) {
    __threadfence();
    if (G * chunks > kChunkWeights) {
      attention_combine_in_order<G>(o, ws, s, bi, h0);
    } else {
      // Each chunk's max once (into weight[]), then a thread a head: its max, the chunks'
      // weights and the sum of their sums, in chunk order.
      for (int64_t i = tid; i < G * chunks; i += kThreads)
        weight[i] = ld_cg(ws.partial + ((bi * H + h0) * chunks + i) * (Dv + 2));
      __syncthreads();
      if (tid < G) {
        const float* part = ws.partial + (bi * H + h0 + tid) * chunks * (Dv + 2);
        float* wh = weight + tid * chunks;
        float mx = neg_inf();
        for (int64_t cc = 0; cc < chunks; ++cc)
          mx = max_nan(mx, wh[cc]);
        float sum = 0.0f;
        if (mx != neg_inf())
          for (int64_t cc = 0; cc < chunks; ++cc) {
            const float f = expf(wh[cc] - mx);
            sum = fmaf(ld_cg(part + cc * (Dv + 2) + 1), f, sum);
            wh[cc] = f;
          }
        head_max[tid] = mx;
        head_sum[tid] = sum;
      }
      __syncthreads();
      // Columns idx0 + j kThreads (j < kColumns): r = sum over chunks of partial . weight.
      for (int64_t idx0 = tid; idx0 < G * Dv; idx0 += kThreads * kColumns) {
        float r[kColumns];
        const float* col[kColumns];
        const float* wc[kColumns];
#pragma unroll
        for (int j = 0; j < kColumns; ++j) {
          const int64_t idx = min64(idx0 + j * kThreads, G * Dv - 1), h = idx / Dv;
          r[j] = 0.0f;
          col[j] = ws.partial + (bi * H + h0 + h) * chunks * (Dv + 2) + 2 + idx % Dv;
          wc[j] = weight + h * chunks;
        }
        for (int64_t c0 = 0; c0 < chunks; c0 += kAhead) {
          float pv[kColumns][kAhead];
#pragma unroll
          for (int j = 0; j < kColumns; ++j)
#pragma unroll
            for (int u = 0; u < kAhead; ++u)
              pv[j][u] = c0 + u < chunks ? ld_cg(col[j] + (c0 + u) * (Dv + 2)) : 0.0f;
#pragma unroll
          for (int j = 0; j < kColumns; ++j)
#pragma unroll
            for (int u = 0; u < kAhead; ++u)
              if (c0 + u < chunks) r[j] = fmaf(pv[j][u], wc[j][c0 + u], r[j]);
        }
#pragma unroll
        for (int j = 0; j < kColumns; ++j) {
          const int64_t idx = idx0 + j * kThreads, h = idx / Dv;
          if (idx >= G * Dv) continue;
          o.store(Index<3>{bi, h0 + h, idx % Dv},
                  head_max[h] == neg_inf() ? 0.0f : r[j] / head_sum[h]);
        }
      }
    }
    if (tid == 0) *counter = 0u;
  }
  __syncthreads();
}

} // namespace cuda

// G: the group size s.group, known when the code is generated. Mask: a [B, H, L] reader or
// NoOperand. Launch: decode_attention_launch.
template <int G, class O, class Q, class K, class V, class Mask = NoOperand>
__device__ void decode_attention(O o, Q q, K k, V v, AttentionWorkspace ws, DecodeAttentionShape s,
                                 AttentionParams p, Mask mask = {}) {
  using namespace attention_config;
  using namespace cuda;
  static_assert(O::rank == 3 && Q::rank == 3 && K::rank == 4 && V::rank == 4,
                "decode_attention: O, Q [B,H,D]; K, V [B,H,L,D]");
  static_assert(G >= 1 && G <= 16, "decode_attention: 1 to 16 query heads per cache head");
  constexpr int U = G <= 8 ? 4 : 2; // key rows in flight per thread
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  const int64_t D = s.d, Dv = s.dv, chunk = s.chunk;
  const int64_t chunks = attention_chunks(s);
  float* qs = reinterpret_cast<float*>(vtc_smem); // [G][D]
  float* ss = qs + G * D;                         // [G][chunk]
  float* red = ss + G * chunk;                    // [kThreads * 8 / cols][G][cols]
  float* scratch = red + kThreads * 8 * G;        // 32
  float* mh = scratch + 32;                       // [G] max
  float* lh = mh + G;                             // [G] sum
  unsigned* flag = reinterpret_cast<unsigned*>(lh + G);
  const int tid = int(threadIdx.x);
  const int64_t c = blockIdx.x, g = blockIdx.y, h0 = g * G;
  const int64_t valid = p.valid_length < 0 ? s.kv_len : min64(p.valid_length, s.kv_len);
  const int64_t l0 = c * chunk, n = clamp64(min64(l0 + chunk, valid) - l0, 0, chunk);

  for (int64_t bi = blockIdx.z; bi < s.batch; bi += gridDim.z) {
    for (int64_t idx = tid; idx < G * D; idx += kThreads)
      qs[idx] = float(q.load(Index<3>{bi, h0 + idx / D, idx % D}));
    __syncthreads();

    // Logits: T lanes per key, kThreads / T keys at a time, U such groups in flight.
    {
      const int T = attention_row_lanes(D), per_pass = kThreads / T;
      const int t = tid % T;
      for (int64_t base = 0; base < n; base += int64_t(per_pass) * U) {
        float dot[U][G];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int h = 0; h < G; ++h)
            dot[u][h] = 0.0f;
        for (int64_t e0 = int64_t(t) * 8; e0 < D; e0 += int64_t(T) * 8) {
          float kv[U][8];
#pragma unroll
          for (int u = 0; u < U; ++u) {
            const int64_t j = base + u * per_pass + tid / T;
            const Index<4> i{bi, h0, l0 + (j < n ? j : 0), e0};
            load_floats<8>(k, i, e0 + 8 <= D && vector_at<8>(k, i), j < n ? D : 0, kv[u]);
          }
#pragma unroll
          for (int u = 0; u < U; ++u)
#pragma unroll
            for (int x = 0; x < 8; ++x)
              if (e0 + x < D)
#pragma unroll
                for (int h = 0; h < G; ++h)
                  dot[u][h] = fmaf(qs[h * D + e0 + x], kv[u][x], dot[u][h]);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int64_t j = base + u * per_pass + tid / T;
#pragma unroll
          for (int h = 0; h < G; ++h)
            dot[u][h] = warp_reduce(dot[u][h], Add{}, T);
          if (j < n && t == 0)
#pragma unroll
            for (int h = 0; h < G; ++h) {
              ss[h * chunk + j] = decode_logit(dot[u][h], p, mask, bi, h0 + h, l0 + j);
            }
        }
      }
    }
    __syncthreads();

    chunk_softmax<G>(ss, n, chunk, mh, lh, scratch);

    // Weighted values: T2 lanes per value row (8 columns a lane), kThreads / T2 key slices.
    {
      const int T2 = attention_row_lanes(Dv), slices = kThreads / T2, cols = 8 * T2;
      const int t2 = tid % T2, slice = tid / T2;
      for (int64_t cb = 0; cb < Dv; cb += cols) {
        const int64_t e0 = cb + int64_t(t2) * 8;
        float acc[G][8];
#pragma unroll
        for (int h = 0; h < G; ++h)
#pragma unroll
          for (int u = 0; u < 8; ++u)
            acc[h][u] = 0.0f;
        if (e0 < Dv)
          for (int64_t base = slice; base < n; base += int64_t(slices) * U) {
            float vv[U][8];
#pragma unroll
            for (int u = 0; u < U; ++u) {
              const int64_t j = base + u * slices;
              const Index<4> i{bi, h0, l0 + (j < n ? j : 0), e0};
              load_floats<8>(v, i, e0 + 8 <= Dv && vector_at<8>(v, i), Dv, vv[u]);
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
              const int64_t j = base + u * slices;
              if (j < n)
#pragma unroll
                for (int h = 0; h < G; ++h) {
                  const float pj = ss[h * chunk + j];
#pragma unroll
                  for (int x = 0; x < 8; ++x)
                    acc[h][x] = fmaf(pj, vv[u][x], acc[h][x]);
                }
            }
          }
#pragma unroll
        for (int h = 0; h < G; ++h)
#pragma unroll
          for (int u = 0; u < 8; ++u)
            red[(slice * G + h) * cols + t2 * 8 + u] = acc[h][u];
        __syncthreads();
        for (int idx = tid; idx < G * cols; idx += kThreads) {
          const int h = idx / cols, col = idx % cols;
          const int64_t e = cb + col;
          float r = red[h * cols + col];
          for (int sl = 1; sl < slices; ++sl)
            r += red[(sl * G + h) * cols + col];
          if (e >= Dv) continue;
          put_weighted_value(o, ws, s, chunks, bi, h0 + h, c, e, r, mh[h], lh[h]);
        }
        __syncthreads();
      }
    }

    if (chunks > 1) attention_combine<G>(o, ws, s, bi, g, c, mh, lh, flag);
  }
}

} // namespace vtc::kernels

#endif
