// Decode attention with the K and V rows streamed through shared memory: the same function
// and split-KV structure as attention.h's decode_attention (a block takes `chunk` keys of one
// batch and cache head for its G query heads; partials combined in chunk order by the last
// block), for head sizes up to 256 and groups up to 8.
//
// decode_attention keeps at most 4 key rows a thread in flight and waits for them before the
// next, with its logits' butterflies and the softmax between the K and V passes: measured at
// 1.1 TB/s at batch 16 (a quarter of the copy rate). Here K and then V come as one stream of
// tiles of kt keys (32 for 16-bit, 16 for f32 elements) into two rings of kStages stages by
// cp.async (16 bytes where the accessor's ptr() and runs allow; loads through the accessor,
// stored to shared memory, otherwise — the same bits), kStages - 1 tiles ahead, the first V
// tiles already in flight while the last logits and the softmax are computed.
//
// Order (a function of the shape): a logit is the chain over its 8-element slice (lane t of T
// takes elements 8t .. 8t + 7, T = attention_row_lanes(D), one slice since D <= 256) then a
// butterfly over the T lanes, as decode_attention's; the softmax is chunk_softmax; thread t
// owns value columns t, t + 128 and chains p_j v_j over the chunk's keys in order.
#pragma once

#include "attention.h"

namespace vtc::kernels {

namespace attention_tiled_config {
inline constexpr int kStages = 3;
inline constexpr int kMaxD = 256, kMaxGroup = 8;
inline constexpr int kResidentBlocks = 2; // about 100 KB of shared memory a block
} // namespace attention_tiled_config

// Whether decode_attention_tiled takes the shape (the choice is the shape's alone, so every
// strategy runs the same kernel).
VTC_HD constexpr bool decode_attention_tiled_supported(int64_t d, int64_t dv, int64_t group) {
  using namespace attention_tiled_config;
  return d >= 8 && d <= kMaxD && d % 8 == 0 && dv >= 1 && dv <= kMaxD && group >= 1 &&
         group <= kMaxGroup;
}

// Whether code generation picks decode_attention_tiled over decode_attention for a shape it
// supports. Measured on the H200 in bf16: at D = 256 (Gemma-2) the rings win at batch 1 and 16
// (0.10 -> 0.07 ms, 1.00 -> 0.71 ms); at D = 128 with 4 heads a group (Llama-3) the block is
// instruction-bound and equal at batch 1 (46 and 45 us), slower at batch 16 (277 -> 339 us).
VTC_HD constexpr bool decode_attention_tiled_preferred(int64_t d, int64_t dv, int64_t group) {
  return decode_attention_tiled_supported(d, dv, group) && d > 128;
}

// Keys a tile: 32 rows of 16-bit elements, 16 of 4-byte ones (a tile of 256 columns is 16 KB).
VTC_HD constexpr int64_t attention_tile_keys(int64_t element_bytes) {
  return element_bytes <= 2 ? 32 : 16;
}

// As make_decode_attention_shape, for two resident blocks a multiprocessor: one wave of blocks,
// at least 128 keys a block, the logits of a block (G x chunk) at most kMaxScores.
VTC_HD constexpr DecodeAttentionShape make_decode_attention_tiled_shape(int64_t batch,
                                                                        int64_t heads,
                                                                        int64_t kv_len, int64_t d,
                                                                        int64_t dv, int64_t group) {
  using namespace attention_config;
  const int64_t blocks = max64(1, batch * (heads / max64(group, 1)));
  const int64_t chunks =
      max64(1, kMultiprocessors * attention_tiled_config::kResidentBlocks / blocks);
  const int64_t most = max64(64, kMaxScores / max64(group, 1) / 64 * 64);
  const int64_t chunk =
      clamp64(cdiv(cdiv(max64(kv_len, 1), chunks), 64) * 64, min64(128, most), most);
  return DecodeAttentionShape{batch, heads, kv_len, d, dv, group, chunk};
}

// Elements a staged row takes: whole 16-byte chunks.
VTC_HD constexpr int64_t attention_row_pitch(int64_t columns, int64_t element_bytes) {
  return cdiv(columns * element_bytes, 16) * 16 / element_bytes;
}

// Shared memory: the K ring, the V ring, logits [G][chunk], 32 floats of reduction scratch, max
// and sum per head, a flag.
VTC_HD constexpr int64_t decode_attention_tiled_smem(const DecodeAttentionShape& s,
                                                     int64_t element_bytes) {
  using namespace attention_tiled_config;
  const int64_t kt = attention_tile_keys(element_bytes);
  const int64_t rings =
      kStages * kt *
      (attention_row_pitch(s.d, element_bytes) + attention_row_pitch(s.dv, element_bytes)) *
      element_bytes;
  return rings + (s.group * s.chunk + 32 + 2 * s.group + 4) * 4;
}

VTC_HD constexpr Launch decode_attention_tiled_launch(const DecodeAttentionShape& s,
                                                      int64_t element_bytes) {
  return Launch{{unsigned(attention_chunks(s)), unsigned(s.heads / s.group),
                 unsigned(clamp64(s.batch, 1, 65535))},
                {unsigned(attention_config::kThreads), 1, 1},
                unsigned(decode_attention_tiled_smem(s, element_bytes)),
                unsigned(attention_tiled_config::kResidentBlocks)};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

namespace cuda {

// Rows l0 .. l0 + kt - 1 of cache head h of a [B, H, L, E] reader into dst (row pitch `pitch`
// elements), as storage elements: a 16-byte chunk by cp.async where the reader allows, else
// its elements through ptr() or load(); rows at or past `rows` and columns past E are zeros.
template <class A>
__device__ VTC_INLINE void stage_rows(const A& a, int64_t b, int64_t h, int64_t l0, int64_t rows,
                                      int64_t kt, int64_t E, int64_t pitch,
                                      typename A::value_type* dst) {
  using T = typename A::value_type;
  constexpr int P = 16 / int(sizeof(T)); // elements a chunk
  const int64_t per_row = pitch / P;
  for (int64_t c = threadIdx.x; c < kt * per_row; c += attention_config::kThreads) {
    const int64_t r = c / per_row, e0 = c % per_row * P;
    T* d = dst + r * pitch + e0;
    if constexpr (vector_capable<A, P>) {
      if (r < rows && e0 + P <= E) {
        const auto* src = a.ptr(Index<4>{b, h, l0 + r, e0});
        if (aligned_to(src, 16)) {
          cp_async16(d, src);
          continue;
        }
      }
    }
#pragma unroll
    for (int u = 0; u < P; ++u) {
      T x{};
      if (r < rows && e0 + u < E) {
        const Index<4> i{b, h, l0 + r, e0 + u};
        if constexpr (A::has_ptr)
          x = *a.ptr(i);
        else
          x = from_compute<T>(a.load(i));
      }
      d[u] = x;
    }
  }
}

} // namespace cuda

// G: the group size s.group (1 .. 8), known when the code is generated; K and V of one storage
// type. Mask: a [B, H, L] reader or NoOperand. Launch: decode_attention_tiled_launch(s, bytes of
// K's elements); workspace attention_workspace_bytes(s).
template <int G, class O, class Q, class K, class V, class Mask = NoOperand>
__device__ void decode_attention_tiled(O o, Q q, K k, V v, AttentionWorkspace ws,
                                       DecodeAttentionShape s, AttentionParams p, Mask mask = {}) {
  using namespace attention_config;
  using namespace attention_tiled_config;
  using namespace cuda;
  using T = typename K::value_type;
  static_assert(O::rank == 3 && Q::rank == 3 && K::rank == 4 && V::rank == 4,
                "decode_attention_tiled: O, Q [B,H,D]; K, V [B,H,L,D]");
  static_assert(G >= 1 && G <= kMaxGroup, "decode_attention_tiled: 1 to 8 heads a group");
  static_assert(same_type<T, typename V::value_type>, "K and V of one storage type");
  constexpr int64_t kt = attention_tile_keys(int64_t(sizeof(T)));
  constexpr int kCols = (kMaxD + kThreads - 1) / kThreads; // value columns a thread
  extern __shared__ __align__(16) unsigned char vtc_smem[];
  const int64_t D = s.d, Dv = s.dv, chunk = s.chunk;
  const int64_t chunks = attention_chunks(s);
  const int64_t kp = attention_row_pitch(D, sizeof(T)), vp = attention_row_pitch(Dv, sizeof(T));
  T* kring = reinterpret_cast<T*>(vtc_smem);                       // [kStages][kt][kp]
  T* vring = kring + kStages * kt * kp;                            // [kStages][kt][vp]
  float* ss = reinterpret_cast<float*>(vring + kStages * kt * vp); // [G][chunk]
  float* scratch = ss + G * chunk;                                 // 32
  float* mh = scratch + 32;                                        // [G] max
  float* lh = mh + G;                                              // [G] sum
  unsigned* flag = reinterpret_cast<unsigned*>(lh + G);
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int64_t c = blockIdx.x, g = blockIdx.y, h0 = g * G;
  const int64_t valid = p.valid_length < 0 ? s.kv_len : min64(p.valid_length, s.kv_len);
  const int64_t l0 = c * chunk, n = clamp64(min64(l0 + chunk, valid) - l0, 0, chunk);
  const int64_t tiles = cdiv(n, kt); // K tiles, then as many V tiles
  const int T_ = attention_row_lanes(D), t = lane % T_, keys_a_pass = 32 / T_;

  for (int64_t bi = blockIdx.z; bi < s.batch; bi += gridDim.z) {
    // Tile u of the stream: K tile u for u < tiles, else V tile u - tiles.
    auto issue = [&](int64_t u) {
      if (u < tiles)
        stage_rows(k, bi, h0, l0 + u * kt, min64(kt, n - u * kt), kt, D, kp,
                   kring + (u % kStages) * kt * kp);
      else if (u < 2 * tiles)
        stage_rows(v, bi, h0, l0 + (u - tiles) * kt, min64(kt, n - (u - tiles) * kt), kt, Dv, vp,
                   vring + ((u - tiles) % kStages) * kt * vp);
    };
    for (int st = 0; st < kStages - 1; ++st) {
      issue(st);
      cp_async_commit();
    }
    // This lane's slice of the G query rows.
    float qr[G][8];
#pragma unroll
    for (int h = 0; h < G; ++h)
#pragma unroll
      for (int x = 0; x < 8; ++x) {
        const int64_t e = int64_t(t) * 8 + x;
        qr[h][x] = e < D ? float(q.load(Index<3>{bi, h0 + h, e})) : 0.0f;
      }
    float acc[G][kCols];
#pragma unroll
    for (int h = 0; h < G; ++h)
#pragma unroll
      for (int x = 0; x < kCols; ++x)
        acc[h][x] = 0.0f;

    for (int64_t u = 0; u < 2 * tiles; ++u) {
      cp_async_wait<kStages - 2>();
      __syncthreads(); // tile u has landed; at u == tiles, every logit is written
      if (u == tiles) chunk_softmax<G>(ss, n, chunk, mh, lh, scratch);
      issue(u + kStages - 1);
      cp_async_commit();
      if (u < tiles) {
        // Logits of tile u: a warp takes keys_a_pass keys at a time, T_ lanes a key.
        const T* kt_rows = kring + (u % kStages) * kt * kp;
        const int64_t j0 = u * kt, rows = min64(kt, n - j0);
        for (int64_t r0 = int64_t(warp) * keys_a_pass; r0 < kt; r0 += 4 * keys_a_pass) {
          const int64_t r = r0 + lane / T_;
          // The lane's 8 elements in 16-byte shared-memory loads (D % 8 == 0: all or none).
          constexpr int W = 8 * int(sizeof(T)) / 4;
          unsigned words[W];
#pragma unroll
          for (int x = 0; x < W; ++x)
            words[x] = 0u;
          if (int64_t(t) * 8 < D) {
            const uint4* src = reinterpret_cast<const uint4*>(kt_rows + r * kp + int64_t(t) * 8);
#pragma unroll
            for (int x = 0; x < W / 4; ++x) {
              const uint4 w4 = src[x];
              words[4 * x] = w4.x;
              words[4 * x + 1] = w4.y;
              words[4 * x + 2] = w4.z;
              words[4 * x + 3] = w4.w;
            }
          }
          float kv[8];
#pragma unroll
          for (int x = 0; x < 8; ++x)
            kv[x] = float(to_compute(unpack<T>(words, x)));
          float dot[G];
#pragma unroll
          for (int h = 0; h < G; ++h) {
            dot[h] = 0.0f;
#pragma unroll
            for (int x = 0; x < 8; ++x)
              if (int64_t(t) * 8 + x < D) dot[h] = fmaf(qr[h][x], kv[x], dot[h]);
            dot[h] = warp_reduce(dot[h], Add{}, T_);
          }
          if (r < rows && t == 0)
#pragma unroll
            for (int h = 0; h < G; ++h) {
              ss[h * chunk + j0 + r] = decode_logit(dot[h], p, mask, bi, h0 + h, l0 + j0 + r);
            }
        }
      } else {
        // Weighted values of tile u - tiles: thread tid owns columns tid, tid + kThreads.
        const int64_t w = u - tiles, j0 = w * kt, rows = min64(kt, n - j0);
        const T* vt_rows = vring + (w % kStages) * kt * vp;
        for (int64_t r = 0; r < rows; ++r)
#pragma unroll
          for (int x = 0; x < kCols; ++x) {
            const int64_t e = tid + int64_t(x) * kThreads;
            if (e < Dv) {
              const float vj = float(to_compute(vt_rows[r * vp + e]));
#pragma unroll
              for (int h = 0; h < G; ++h)
                acc[h][x] = fmaf(ss[h * chunk + j0 + r], vj, acc[h][x]);
            }
          }
      }
    }
    if (tiles == 0) { // no key: max -inf, sum 0
      __syncthreads();
      chunk_softmax<G>(ss, n, chunk, mh, lh, scratch);
    }
    cp_async_wait<0>();

#pragma unroll
    for (int h = 0; h < G; ++h)
#pragma unroll
      for (int x = 0; x < kCols; ++x) {
        const int64_t e = tid + int64_t(x) * kThreads;
        if (e < Dv) put_weighted_value(o, ws, s, chunks, bi, h0 + h, c, e, acc[h][x], mh[h], lh[h]);
      }
    if (chunks > 1) attention_combine<G>(o, ws, s, bi, g, c, mh, lh, flag);
    __syncthreads(); // the rings and logits are free before the next batch's tiles
  }
}

} // namespace vtc::kernels

#endif
