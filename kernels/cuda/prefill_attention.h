// Prefill attention (T queries against S keys per batch and head) over accessors:
//   Q[B, H, T, D], K[B, H, S, D], V[B, H, S, Dv] -> O[B, H, T, Dv],
// a logit s = dot(q, k) * scale, then cap * tanh(s / cap) when softcap > 0, then
// + mask[b, h, t, s] (an optional [B, H, T, S] reader: the generated view applies the mask's
// broadcasting). K and V are typically virtual (the grouped-query Expand of a KV cache); the
// accessors apply the mapping. A query whose logits are all -inf gets zeros.
//
// Flash style: block (qb, h, b) holds kQueries queries in shared memory and walks the keys in
// blocks of kKeys, in order; per block it stages K and V rows as floats, computes the logits,
// and per query updates its running max m, sum l and weighted values acc:
//   m' = max(m, max_j s_j);  p_j = exp(s_j - m');  alpha = exp(m - m');
//   l' = fma(l, alpha, sum_j p_j);  acc' = acc * alpha + sum_j p_j v_j (a chain over j in order)
// then O = acc / l. Fixed order: a dot product is one chain over d; a block's max and sum are
// butterflies over the 32 lanes of a warp, one key a lane (kKeys = 32); acc is a chain over
// the block's keys in order, per (query, column), one thread each. Every order is a function of
// the shape, so the output bits do not depend on how the operands are loaded.
#pragma once

#include "attention.h"
#include "common.h"

namespace vtc::kernels {

struct PrefillAttentionShape {
  int64_t batch = 1, heads = 1, q_len = 1, kv_len = 1, d = 1, dv = 1;
};

namespace prefill_config {
inline constexpr int kThreads = 128;
inline constexpr int64_t kQueries = 16;              // per block
inline constexpr int64_t kKeys = 32;                 // per step: one a lane
inline constexpr int64_t kMaxSmemBytes = 227 * 1024; // sm_90's dynamic shared memory per block
} // namespace prefill_config

// Shared memory: q [kQueries][D], K rows [kKeys][D + 1] (padded: lanes read rows apart), V rows
// [kKeys][Dv], logits [kQueries][kKeys], acc [kQueries][Dv], m, l, alpha and a live flag per
// query.
VTC_HD constexpr int64_t prefill_attention_smem_floats(const PrefillAttentionShape& s) {
  using namespace prefill_config;
  return kQueries * s.d + kKeys * (s.d + 1) + kKeys * s.dv + kQueries * kKeys + kQueries * s.dv +
         4 * kQueries;
}

VTC_HD constexpr bool prefill_attention_supported(const PrefillAttentionShape& s) {
  return s.batch >= 1 && s.heads >= 1 && s.heads <= 65535 && s.q_len >= 1 && s.kv_len >= 1 &&
         s.d >= 1 && s.dv >= 1 &&
         prefill_attention_smem_floats(s) * 4 <= prefill_config::kMaxSmemBytes;
}

VTC_HD constexpr Launch prefill_attention_launch(const PrefillAttentionShape& s) {
  using namespace prefill_config;
  return Launch{
      {unsigned(cdiv(s.q_len, kQueries)), unsigned(s.heads), unsigned(clamp64(s.batch, 1, 65535))},
      {unsigned(kThreads), 1, 1},
      unsigned(prefill_attention_smem_floats(s) * 4)};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

// Mask: a [B, H, T, S] reader or NoOperand. Launch: prefill_attention_launch.
template <class O, class Q, class K, class V, class Mask = NoOperand>
__device__ void prefill_attention(O o, Q q, K k, V v, PrefillAttentionShape s, AttentionParams p,
                                  Mask mask = {}) {
  using namespace prefill_config;
  using namespace cuda;
  static_assert(O::rank == 4 && Q::rank == 4 && K::rank == 4 && V::rank == 4,
                "prefill_attention: Q, O [B,H,T,D]; K, V [B,H,S,D]");
  static_assert(kKeys == 32 && kThreads % 32 == 0, "prefill_attention: one key a lane");
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  const int64_t D = s.d, Dv = s.dv, T = s.q_len, S = s.kv_len, KD = D + 1;
  float* qs = reinterpret_cast<float*>(vtc_smem); // [kQueries][D]
  float* ks = qs + kQueries * D;                  // [kKeys][KD]
  float* vs = ks + kKeys * KD;                    // [kKeys][Dv]
  float* ss = vs + kKeys * Dv;                    // [kQueries][kKeys]
  float* acc = ss + kQueries * kKeys;             // [kQueries][Dv]
  float* mq = acc + kQueries * Dv;                // [kQueries] running max
  float* lq = mq + kQueries;                      // [kQueries] running sum
  float* aq = lq + kQueries;                      // [kQueries] alpha of this key block
  float* live = aq + kQueries;                    // [kQueries] 1: the block has a finite max
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32, warps = kThreads / 32;
  const int64_t t0 = int64_t(blockIdx.x) * kQueries, h = blockIdx.y;
  const int64_t tq = min64(kQueries, T - t0);

  for (int64_t bi = blockIdx.z; bi < s.batch; bi += gridDim.z) {
    for (int64_t idx = tid; idx < kQueries * D; idx += kThreads) {
      const int64_t r = idx / D, e = idx % D;
      qs[idx] = r < tq ? float(q.load(Index<4>{bi, h, t0 + r, e})) : 0.0f;
    }
    for (int64_t idx = tid; idx < kQueries * Dv; idx += kThreads)
      acc[idx] = 0.0f;
    if (tid < kQueries) {
      mq[tid] = neg_inf();
      lq[tid] = 0.0f;
    }
    __syncthreads();

    for (int64_t s0 = 0; s0 < S; s0 += kKeys) {
      const int64_t n = min64(kKeys, S - s0);
      // Stage the block's K and V rows as floats, 8 elements a thread at a time (rows past S
      // read as zeros and are never used).
      // Rows of `width` elements of `src` into dst, `pitch` floats a row.
      auto stage = [&](const auto& src, int64_t width, int64_t pitch, float* dst) {
        const int64_t chunks = cdiv(width, 8);
        for (int64_t idx = tid; idx < kKeys * chunks; idx += kThreads) {
          const int64_t j = idx / chunks, e0 = idx % chunks * 8;
          const Index<4> i{bi, h, s0 + (j < n ? j : 0), e0};
          float x[8];
          load_floats<8>(src, i, e0 + 8 <= width && vector_at<8>(src, i), j < n ? width : 0, x);
#pragma unroll
          for (int u = 0; u < 8; ++u)
            if (e0 + u < width) dst[j * pitch + e0 + u] = x[u];
        }
      };
      stage(k, D, KD, ks);
      stage(v, Dv, Dv, vs);
      __syncthreads();

      // Logits: one (query, key) a thread at a time, a chain over d.
      for (int64_t idx = tid; idx < kQueries * kKeys; idx += kThreads) {
        const int64_t r = idx / kKeys, j = idx % kKeys;
        float x = neg_inf();
        if (r < tq && j < n) {
          float dot = 0.0f;
          for (int64_t e = 0; e < D; ++e)
            dot = fmaf(qs[r * D + e], ks[j * KD + e], dot);
          x = dot * p.scale;
          if (p.softcap > 0.0f) x = p.softcap * tanhf(x / p.softcap);
          if constexpr (is_present<Mask>) x += float(mask.load(Index<4>{bi, h, t0 + r, s0 + j}));
        }
        ss[idx] = x;
      }
      __syncthreads();

      // Running max and sum: a warp per query, a key a lane.
      for (int64_t r = warp; r < kQueries; r += warps) {
        const float x = ss[r * kKeys + lane];
        const float mblk = warp_reduce(x, Max{});
        const bool row_live = r < tq && mblk != neg_inf();
        float pj = 0.0f, alpha = 1.0f;
        if (row_live) {
          const float mnew = max_nan(mq[r], mblk);
          alpha = expf(mq[r] - mnew);
          pj = expf(x - mnew);
          const float sum = warp_reduce(pj, Add{});
          __syncwarp();
          if (lane == 0) {
            lq[r] = fmaf(lq[r], alpha, sum);
            mq[r] = mnew;
          }
        }
        ss[r * kKeys + lane] = pj;
        if (lane == 0) {
          aq[r] = alpha;
          live[r] = row_live ? 1.0f : 0.0f;
        }
      }
      __syncthreads();

      // Weighted values: one (query, column) a thread, a chain over the block's keys.
      for (int64_t idx = tid; idx < kQueries * Dv; idx += kThreads) {
        const int64_t r = idx / Dv, e = idx % Dv;
        if (live[r] == 0.0f) continue;
        float a = acc[idx] * aq[r];
        for (int64_t j = 0; j < n; ++j)
          a = fmaf(ss[r * kKeys + j], vs[j * Dv + e], a);
        acc[idx] = a;
      }
      __syncthreads();
    }

    for (int64_t idx = tid; idx < kQueries * Dv; idx += kThreads) {
      const int64_t r = idx / Dv, e = idx % Dv;
      if (r >= tq) continue;
      const float l = lq[r];
      o.store(Index<4>{bi, h, t0 + r, e}, l > 0.0f ? acc[idx] / l : 0.0f);
    }
    __syncthreads();
  }
}

} // namespace vtc::kernels

#endif
