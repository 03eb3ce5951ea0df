// Decode attention with every warp streaming its own keys: the same function and split-KV
// structure as attention.h's decode_attention (a block takes `chunk` keys of one batch and cache
// head for its G query heads; partials combined in chunk order by the last block), for head
// sizes up to 256 with Dv = D, groups up to 8.
//
// decode_attention and decode_attention_tiled run K, the softmax and V as phases of the whole
// block with block-wide barriers between them: measured at 1.0-1.6 TB/s at batch 16. Here the
// four warps of a block split the chunk into four runs of keys and never wait for each other
// until the end: a warp loads the K and the V rows of U groups of keys at once (16-byte loads
// straight into registers, T = attention_row_lanes(D) lanes a row, 32 / T rows a group), then
// computes their logits and folds them into a running softmax (max, sum and weighted values per
// head, rescaled once a tile). Only registers hold keys, so several blocks a multiprocessor keep
// many rows in flight.
//
// Order (a function of the shape): a logit is the chain over the lane's 8 elements then a
// butterfly over the T lanes of its row; a tile's max is a butterfly over its rows; a row's
// weighted values and sum are chains over the keys of its run, in order, rescaled by the tile
// maxima; the rows of a warp are added by a butterfly, the warps in order, with exponentials
// by ex2.approx.
#pragma once

#include "attention.h"

namespace vtc::kernels {

namespace attention_stream_config {
inline constexpr int kWarps = attention_config::kThreads / 32;
inline constexpr int kMaxD = 256, kMaxGroup = 8;
} // namespace attention_stream_config

// Blocks a multiprocessor the kernel is built for: three (170 registers a thread) up to four
// heads a group, two above (their queries and accumulators take 128 registers).
VTC_HD constexpr int attention_stream_resident(int64_t group) {
  return group <= 4 ? 3 : 2;
}

// Whether decode_attention_stream takes the shape.
VTC_HD constexpr bool decode_attention_stream_supported(int64_t d, int64_t dv, int64_t group) {
  using namespace attention_stream_config;
  return d >= 8 && d <= kMaxD && d % 8 == 0 && dv == d && group >= 1 && group <= kMaxGroup;
}

// Row groups a lane has in flight, for K and for V each (U): 256 bytes a lane at small groups
// of 16-bit elements, fewer where the accumulators or wide elements take the registers.
VTC_HD constexpr int attention_stream_groups(int64_t group, int64_t element_bytes) {
  const int u = group <= 2 ? 8 : group <= 4 ? 4 : 2;
  return element_bytes > 2 ? (u > 2 ? u / 2 : 2) : u;
}

// As make_decode_attention_shape, for `resident` blocks a multiprocessor in one wave, at least
// 128 keys a block (32 a warp): the streaming kernels' split.
VTC_HD constexpr DecodeAttentionShape streaming_attention_shape(int64_t batch, int64_t heads,
                                                                int64_t kv_len, int64_t d,
                                                                int64_t dv, int64_t group,
                                                                int resident) {
  using namespace attention_config;
  const int64_t blocks = max64(1, batch * (heads / max64(group, 1)));
  const int64_t chunks = max64(1, kMultiprocessors * resident / blocks);
  const int64_t chunk = max64(128, cdiv(cdiv(max64(kv_len, 1), chunks), 64) * 64);
  return DecodeAttentionShape{batch, heads, kv_len, d, dv, group, chunk};
}

VTC_HD constexpr DecodeAttentionShape
make_decode_attention_stream_shape(int64_t batch, int64_t heads, int64_t kv_len, int64_t d,
                                   int64_t dv, int64_t group) {
  return streaming_attention_shape(batch, heads, kv_len, d, dv, group,
                                   attention_stream_resident(group));
}

// A streaming kernel's launch: a block of four warps for each chunk, cache head and batch row.
VTC_HD constexpr Launch streaming_attention_launch(const DecodeAttentionShape& s,
                                                   int64_t smem_bytes, int resident) {
  return Launch{{unsigned(attention_chunks(s)), unsigned(s.heads / s.group),
                 unsigned(clamp64(s.batch, 1, 65535))},
                {unsigned(attention_config::kThreads), 1, 1},
                unsigned(smem_bytes),
                unsigned(resident)};
}

// Shared memory: each warp's max, sum and weighted values per head [kWarps][G][Dv + 2], the
// block's max and sum per head, a flag.
VTC_HD constexpr int64_t decode_attention_stream_smem(const DecodeAttentionShape& s) {
  return (attention_stream_config::kWarps * s.group * (s.dv + 2) + 2 * s.group + 4) * 4;
}

VTC_HD constexpr Launch decode_attention_stream_launch(const DecodeAttentionShape& s) {
  return streaming_attention_launch(s, decode_attention_stream_smem(s),
                                    attention_stream_resident(s.group));
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

namespace cuda {

// e^x by ex2.approx (2 ulp), flushing subnormal results to zero; e^-inf = 0.
__device__ VTC_INLINE float stream_exp(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
  return y;
}

// Elements e0 .. e0 + 7 of row l of cache head h of a [B, H, L, E] reader as the W words of
// their storage bits at w: one or two 16-byte loads where the reader allows, else element by
// element (the same bits); zeros when !in.
template <int W, class A>
__device__ VTC_INLINE void load_row_slice(const A& a, int64_t b, int64_t h, int64_t l, int64_t e0,
                                          bool in, unsigned* w) {
  using T = typename A::value_type;
  static_assert(W == 8 * int(sizeof(T)) / 4, "8 elements: W words");
  const Index<4> i{b, h, l, e0};
  if constexpr (vector_capable<A, 8>) {
    if (in && aligned_to(a.ptr(i), 16)) {
      load_words(a.ptr(i), *reinterpret_cast<unsigned(*)[W]>(w));
      return;
    }
  }
#pragma unroll
  for (int x = 0; x < W; ++x)
    w[x] = 0u;
  if (!in) return;
#pragma unroll
  for (int u = 0; u < 8; ++u) {
    const unsigned bits = element_bits(from_compute<T>(a.load(Index<4>{b, h, l, e0 + u})));
    if constexpr (sizeof(T) == 4)
      w[u] = bits;
    else
      w[u / 2] |= bits << (16 * (u % 2));
  }
}

// The end of a block whose warps each left their max, sum and weighted values per head in
// parts[warp][h] = {max, sum, values[Dv]}: the warps in order make the block's, stored as the
// output (one chunk) or as the chunk's partial, combined by the last block (attention_combine).
template <int G, class O>
__device__ VTC_INLINE void
combine_warps(const O& o, AttentionWorkspace ws, const DecodeAttentionShape& s, int64_t bi,
              int64_t g, int64_t c, float* parts, float* mh, float* lh, unsigned* flag) {
  using namespace attention_stream_config;
  const int64_t Dv = s.dv, pitch = Dv + 2, chunks = attention_chunks(s);
  __syncthreads();
  for (int64_t idx = threadIdx.x; idx < G * Dv; idx += attention_config::kThreads) {
    const int64_t h = idx / Dv, e = idx % Dv;
    float mx = neg_inf();
    for (int w = 0; w < kWarps; ++w)
      mx = max_nan(mx, parts[(w * G + h) * pitch]);
    float sum = 0.0f, r = 0.0f;
    if (mx != neg_inf())
      for (int w = 0; w < kWarps; ++w) {
        const float* part = parts + (w * G + h) * pitch;
        const float f = part[0] == neg_inf() ? 0.0f : stream_exp(part[0] - mx);
        sum = fmaf(part[1], f, sum);
        r = fmaf(part[2 + e], f, r);
      }
    put_weighted_value(o, ws, s, chunks, bi, g * G + h, c, e, r, mx, sum);
    if (e == 0) {
      mh[h] = mx;
      lh[h] = sum;
    }
  }
  __syncthreads();
  if (chunks > 1) attention_combine<G>(o, ws, s, bi, g, c, mh, lh, flag);
  __syncthreads(); // the warps' partials are free before the next batch row
}

} // namespace cuda

// G: the group size s.group (1 .. 8), known when the code is generated. Mask: a [B, H, L]
// reader or NoOperand. Launch: decode_attention_stream_launch(s); workspace
// attention_workspace_bytes(s).
template <int G, class O, class Q, class K, class V, class Mask = NoOperand>
__device__ void decode_attention_stream(O o, Q q, K k, V v, AttentionWorkspace ws,
                                        DecodeAttentionShape s, AttentionParams p, Mask mask = {}) {
  using namespace attention_stream_config;
  using namespace cuda;
  using KT = typename K::value_type;
  using VT = typename V::value_type;
  static_assert(O::rank == 3 && Q::rank == 3 && K::rank == 4 && V::rank == 4,
                "decode_attention_stream: O, Q [B,H,D]; K, V [B,H,L,D]");
  static_assert(G >= 1 && G <= kMaxGroup, "decode_attention_stream: 1 to 8 heads a group");
  constexpr int U = attention_stream_groups(G, sizeof(KT) > sizeof(VT) ? sizeof(KT) : sizeof(VT));
  constexpr int KW = 8 * int(sizeof(KT)) / 4, VW = 8 * int(sizeof(VT)) / 4;
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  const int64_t D = s.d, Dv = s.dv, chunk = s.chunk, pitch = Dv + 2;
  float* parts = reinterpret_cast<float*>(vtc_smem); // [kWarps][G][Dv + 2]: max, sum, values
  float* mh = parts + kWarps * G * pitch;            // [G] the block's max
  float* lh = mh + G;                                // [G] the block's sum
  unsigned* flag = reinterpret_cast<unsigned*>(lh + G);
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int64_t c = blockIdx.x, g = blockIdx.y, h0 = g * G;
  const int64_t valid = p.valid_length < 0 ? s.kv_len : min64(p.valid_length, s.kv_len);
  const int64_t l0 = c * chunk, n = clamp64(min64(l0 + chunk, valid) - l0, 0, chunk);
  const int T = attention_row_lanes(D), rows = 32 / T, row = lane / T;
  const int64_t e0 = int64_t(lane % T) * 8;
  const bool active = e0 < D; // D % 8 == 0: all 8 elements or none
  // This warp's run of keys [r0, r1) of the chunk.
  const int64_t run = cdiv(chunk, kWarps);
  const int64_t r0 = l0 + min64(int64_t(warp) * run, n),
                r1 = l0 + min64(int64_t(warp + 1) * run, n);

  for (int64_t bi = blockIdx.z; bi < s.batch; bi += gridDim.z) {
    float qr[G][8], acc[G][8], m[G], l[G];
#pragma unroll
    for (int h = 0; h < G; ++h) {
      m[h] = neg_inf();
      l[h] = 0.0f;
#pragma unroll
      for (int x = 0; x < 8; ++x) {
        qr[h][x] = active ? float(q.load(Index<3>{bi, h0 + h, e0 + x})) : 0.0f;
        acc[h][x] = 0.0f;
      }
    }

    for (int64_t base = r0; base < r1; base += int64_t(rows) * U) {
      unsigned kw[U][KW], vw[U][VW];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t j = base + int64_t(u) * rows + row;
        load_row_slice<KW>(k, bi, h0, j < r1 ? j : r0, e0, j < r1 && active, kw[u]);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t j = base + int64_t(u) * rows + row;
        load_row_slice<VW>(v, bi, h0, j < r1 ? j : r0, e0, j < r1 && active, vw[u]);
      }
      // Logits of the tile, and its max per head over all rows of the warp.
      float sc[U][G], tile_max[G];
#pragma unroll
      for (int h = 0; h < G; ++h)
        tile_max[h] = neg_inf();
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t j = base + int64_t(u) * rows + row;
        float kf[8];
#pragma unroll
        for (int x = 0; x < 8; ++x)
          kf[x] = float(to_compute(unpack<KT>(kw[u], x)));
#pragma unroll
        for (int h = 0; h < G; ++h) {
          float dot = 0.0f;
#pragma unroll
          for (int x = 0; x < 8; ++x)
            dot = fmaf(qr[h][x], kf[x], dot);
          dot = warp_reduce(dot, Add{}, T);
          sc[u][h] = j < r1 ? decode_logit(dot, p, mask, bi, h0 + h, j) : neg_inf();
          tile_max[h] = max_nan(tile_max[h], sc[u][h]);
        }
      }
#pragma unroll
      for (int h = 0; h < G; ++h) {
        for (int o = T; o < 32; o *= 2)
          tile_max[h] = max_nan(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], o));
        const float mn = max_nan(m[h], tile_max[h]);
        const bool none = mn == neg_inf();
        const float alpha = none ? 1.0f : stream_exp(m[h] - mn);
        m[h] = mn;
        l[h] *= alpha;
#pragma unroll
        for (int x = 0; x < 8; ++x)
          acc[h][x] *= alpha;
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const float pu = none ? 0.0f : stream_exp(sc[u][h] - mn);
          l[h] += pu;
#pragma unroll
          for (int x = 0; x < 8; ++x)
            acc[h][x] = fmaf(pu, float(to_compute(unpack<VT>(vw[u], x))), acc[h][x]);
        }
      }
    }

    // The warp's rows share their maxima: add their sums and values, then publish them.
#pragma unroll
    for (int h = 0; h < G; ++h) {
      for (int o = T; o < 32; o *= 2) {
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], o);
#pragma unroll
        for (int x = 0; x < 8; ++x)
          acc[h][x] += __shfl_xor_sync(0xffffffffu, acc[h][x], o);
      }
      float* part = parts + (int64_t(warp) * G + h) * pitch;
      if (lane == 0) {
        part[0] = m[h];
        part[1] = l[h];
      }
      if (row == 0 && active)
#pragma unroll
        for (int x = 0; x < 8; ++x)
          part[2 + e0 + x] = acc[h][x];
    }
    combine_warps<G>(o, ws, s, bi, g, c, parts, mh, lh, flag);
  }
}

} // namespace vtc::kernels

#endif
