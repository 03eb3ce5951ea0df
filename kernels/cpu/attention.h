// Scaled dot-product attention over accessors, softmax computed online (flash style):
//   decode:  Q[B,H,D], K[B,H,L,D], V[B,H,L,Dv] -> O[B,H,Dv], one query token;
//   prefill: Q[B,H,T,D], K[B,H,S,D], V[B,H,S,Dv] -> O[B,H,T,Dv].
// K and V are typically virtual: the grouped-query Expand mapping onto a KV cache
// [B,Hkv,L,D] (head h reads cache head h / (H/Hkv)), contiguous over D, so the cache is
// read in place instead of through a copy H/Hkv times its size. A logit is
//   s = dot(q, k) * scale;  s = cap * tanh(s / cap) when softcap > 0;  s += mask[...]
// with an optional additive mask accessor ([B,H,L] for decode, [B,H,T,S] for prefill),
// a valid length (decode: keys l >= valid_length are absent), and causal / sliding-window
// visibility (prefill: query t sits at key position t + S - T and sees keys s with
// t + S - T - window < s <= t + S - T). A query that sees no key gets zeros.
//
// Fixed order: decode splits L into chunks of kDecodeChunk keys (independent of the thread
// count), each giving a partial (max, sum, weighted V) that are combined in chunk order;
// prefill walks key blocks of kKeyBlock in order, rescaling its running state per block.
// Dot products use the lane order of vmath.h. So the output depends on the shapes and
// values only, never on the accessors or the threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "parallel.h"
#include "stage.h"
#include "vmath.h"

namespace vtc::kernels {

struct AttentionShape {
  int64_t batch = 1, heads = 1;
  int64_t q_len = 1;  // T (prefill); 1 for decode
  int64_t kv_len = 1; // L (decode) or S (prefill)
  int64_t d = 1;      // query / key head size
  int64_t dv = 1;     // value head size
};

struct AttentionParams {
  double scale = 1.0;
  double softcap = 0.0;      // > 0: logits pass through softcap * tanh(x / softcap)
  int64_t valid_length = -1; // decode: keys at or past it are absent; -1: all kv_len keys
  bool causal = false;       // prefill: key s is visible to query t iff s <= t + S - T
  int64_t window = 0;        // prefill, > 0: and s > t + S - T - window
};

namespace detail {

inline constexpr int64_t kDecodeChunk = 256;
inline constexpr int64_t kKeyBlock = 64;
inline constexpr int64_t kQueryBlock = 16;

template <typename C> inline C finish_logit(C dot, C scale, C cap) {
  C s = dot * scale;
  if (cap > C(0)) s = cap * std::tanh(s / cap);
  return s;
}

// rows[j] points at row first + j (along dim 2) of a [B,H,N,len] accessor as compute
// values: into the accessor's memory when it allows (view_run), else staged in buf + j*len.
template <typename C, typename A>
inline void view_rows(const A& a, const Index<4>& first, int64_t n, int64_t len, C* buf,
                      const C** rows) {
  for (int64_t j = 0; j < n; ++j)
    rows[j] = view_run(a, Index<4>{first[0], first[1], first[2] + j, 0}, len, buf + j * len);
}

// Whether the rows of a [B,H,N,len] accessor can be read in place, in their storage type:
// ptr() exists and a whole row is one contiguous run (the same for every row).
template <typename A> constexpr bool rows_in_place(int64_t len) {
  return A::has_ptr && run_contiguous<A>(0, len);
}

// rows[j] = ptr() of row first + j, for rows_in_place accessors.
template <typename A>
inline void ptr_rows(const A& a, const Index<4>& first, int64_t n,
                     const typename A::value_type** rows) {
  if constexpr (A::has_ptr)
    for (int64_t j = 0; j < n; ++j)
      rows[j] = a.ptr(Index<4>{first[0], first[1], first[2] + j, 0});
}

// s[j] = logit of query q against key rows[j], j < n (rows of compute or storage type).
template <typename C, typename R>
inline void key_logits(const R* const* rows, int64_t n, int64_t d, const C* q, C scale, C cap,
                       C* s) {
  dots_fixed(q, rows, n, d, s);
  for (int64_t j = 0; j < n; ++j)
    s[j] = finish_logit(s[j], scale, cap);
}

// acc[:] = fma(p[j], rows[j][:], acc[:]) for j = 0..n-1 in turn (four rows per pass over
// acc, the same chain).
template <typename C, typename R>
inline void accumulate_values(const R* const* rows, int64_t n, int64_t dv, const C* p,
                              C* __restrict acc) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const R *r0 = rows[j], *r1 = rows[j + 1], *r2 = rows[j + 2], *r3 = rows[j + 3];
    const C p0 = p[j], p1 = p[j + 1], p2 = p[j + 2], p3 = p[j + 3];
    for (int64_t e = 0; e < dv; ++e) {
      C a = std::fma(p0, C(widen(r0[e])), acc[e]);
      a = std::fma(p1, C(widen(r1[e])), a);
      a = std::fma(p2, C(widen(r2[e])), a);
      acc[e] = std::fma(p3, C(widen(r3[e])), a);
    }
  }
  for (; j < n; ++j) {
    const R* row = rows[j];
    const C pj = p[j];
    for (int64_t e = 0; e < dv; ++e)
      acc[e] = std::fma(pj, C(widen(row[e])), acc[e]);
  }
}

template <typename... A>
using attention_compute_t =
    std::conditional_t<(std::is_same_v<compute_t<A>, double> || ...), double, float>;

} // namespace detail

// Decode attention (one query token per batch and head).
template <Accessor OA, Accessor QA, Accessor KA, Accessor VA, OptionalAccessor MA = NoAccessor>
void decode_attention(const OA& o, const QA& q, const KA& k, const VA& v, const AttentionShape& sh,
                      const AttentionParams& prm, const MA& mask = {}) {
  static_assert(OA::rank == 3 && QA::rank == 3 && KA::rank == 4 && VA::rank == 4,
                "decode_attention: O, Q [B,H,D]; K, V [B,H,L,D]");
  using C = detail::attention_compute_t<QA, KA, VA>;
  constexpr int64_t kChunk = detail::kDecodeChunk;
  const int64_t B = sh.batch, H = sh.heads, L = sh.kv_len, D = sh.d, Dv = sh.dv;
  if (B <= 0 || H <= 0) return;
  const int64_t valid = prm.valid_length < 0 ? L : std::min(prm.valid_length, L);
  const int64_t chunks = std::max<int64_t>(1, (L + kChunk - 1) / kChunk);
  const int64_t stride = Dv + 2; // partial: max, sum, weighted values
  C* part = scratch<C, 7>(B * H * chunks * stride);
  const C scale = C(prm.scale), cap = C(prm.softcap);
  // Tasks ordered (b, chunk, h): heads that share a cache head read the same chunk together.
  parallel_for(
      B * chunks * H,
      [&](int64_t t) {
        const int64_t b = t / (chunks * H), c = t / H % chunks, h = t % H;
        C* out = part + ((b * H + h) * chunks + c) * stride;
        C* acc = out + 2;
        std::fill(acc, acc + Dv, C(0));
        const int64_t l0 = c * kChunk, n = std::max<int64_t>(0, std::min(l0 + kChunk, valid) - l0);
        C* qb = scratch<C, 0>(D);
        C* s = scratch<C, 1>(kChunk);
        C* tmp = scratch<C, 2>(4 * std::max(D, Dv));
        const C* rows[4];
        const typename KA::value_type* krows[4];
        const typename VA::value_type* vrows[4];
        load_run(q, Index<3>{b, h, 0}, D, qb);
        constexpr int64_t kAhead = 16; // rows prefetched ahead of use
        for (int64_t j = 0; j < std::min(n, kAhead); ++j)
          prefetch_run(k, Index<4>{b, h, l0 + j, 0}, D);
        for (int64_t j = 0; j < n; j += 4) {
          const int64_t g = std::min<int64_t>(4, n - j);
          for (int64_t u = j + kAhead; u < std::min(n, j + kAhead + 4); ++u)
            prefetch_run(k, Index<4>{b, h, l0 + u, 0}, D);
          if (detail::rows_in_place<KA>(D)) {
            detail::ptr_rows(k, Index<4>{b, h, l0 + j, 0}, g, krows);
            detail::key_logits(krows, g, D, qb, scale, cap, s + j);
          } else {
            detail::view_rows(k, Index<4>{b, h, l0 + j, 0}, g, D, tmp, rows);
            detail::key_logits(rows, g, D, qb, scale, cap, s + j);
          }
        }
        if constexpr (is_present<MA>) {
          C* mb = scratch<C, 3>(kChunk);
          if (n > 0) load_run(mask, Index<3>{b, h, l0}, n, mb);
          for (int64_t j = 0; j < n; ++j)
            s[j] += mb[j];
        }
        const C m = max_fixed(s, n);
        if (m == -std::numeric_limits<C>::infinity()) {
          out[0] = m;
          out[1] = C(0);
          return;
        }
        for (int64_t j = 0; j < std::min(n, kAhead); ++j)
          prefetch_run(v, Index<4>{b, h, l0 + j, 0}, Dv);
        for (int64_t j = 0; j < n; ++j)
          s[j] = exp_fast(s[j] - m);
        out[0] = m;
        out[1] = sum_fixed(s, n);
        for (int64_t j = 0; j < n; j += 4) {
          const int64_t g = std::min<int64_t>(4, n - j);
          for (int64_t u = j + kAhead; u < std::min(n, j + kAhead + 4); ++u)
            prefetch_run(v, Index<4>{b, h, l0 + u, 0}, Dv);
          if (detail::rows_in_place<VA>(Dv)) {
            detail::ptr_rows(v, Index<4>{b, h, l0 + j, 0}, g, vrows);
            detail::accumulate_values(vrows, g, Dv, s + j, acc);
          } else {
            detail::view_rows(v, Index<4>{b, h, l0 + j, 0}, g, Dv, tmp, rows);
            detail::accumulate_values(rows, g, Dv, s + j, acc);
          }
        }
      },
      true);
  parallel_for(B * H, [&](int64_t t) {
    const int64_t b = t / H, h = t % H;
    const C* pt = part + t * chunks * stride;
    C* res = scratch<C, 4>(Dv);
    std::fill(res, res + Dv, C(0));
    C mx = -std::numeric_limits<C>::infinity();
    for (int64_t c = 0; c < chunks; ++c)
      mx = max_nan(mx, pt[c * stride]);
    if (mx != -std::numeric_limits<C>::infinity()) {
      C sum = 0;
      for (int64_t c = 0; c < chunks; ++c) {
        const C* pc = pt + c * stride;
        const C f = exp_fast(pc[0] - mx);
        sum = std::fma(pc[1], f, sum);
        for (int64_t e = 0; e < Dv; ++e)
          res[e] = std::fma(pc[2 + e], f, res[e]);
      }
      for (int64_t e = 0; e < Dv; ++e)
        res[e] = res[e] / sum;
    }
    store_run(o, Index<3>{b, h, 0}, Dv, res);
  });
}

// Prefill attention (T queries against S keys per batch and head).
template <Accessor OA, Accessor QA, Accessor KA, Accessor VA, OptionalAccessor MA = NoAccessor>
void prefill_attention(const OA& o, const QA& q, const KA& k, const VA& v, const AttentionShape& sh,
                       const AttentionParams& prm, const MA& mask = {}) {
  static_assert(OA::rank == 4 && QA::rank == 4 && KA::rank == 4 && VA::rank == 4,
                "prefill_attention: Q, O [B,H,T,D]; K, V [B,H,S,D]");
  using C = detail::attention_compute_t<QA, KA, VA>;
  constexpr int64_t kQb = detail::kQueryBlock, kKb = detail::kKeyBlock;
  constexpr C kNegInf = -std::numeric_limits<C>::infinity();
  const int64_t B = sh.batch, H = sh.heads, T = sh.q_len, S = sh.kv_len, D = sh.d, Dv = sh.dv;
  if (B <= 0 || H <= 0 || T <= 0) return;
  const int64_t qblocks = (T + kQb - 1) / kQb, offset = S - T;
  const C scale = C(prm.scale), cap = C(prm.softcap);
  // Keys [lo, hi) visible to query t.
  auto visible = [&](int64_t t) {
    int64_t hi = prm.causal ? std::clamp<int64_t>(t + offset + 1, 0, S) : S;
    int64_t lo = prm.window > 0 ? std::clamp<int64_t>(t + offset - prm.window + 1, 0, S) : 0;
    return std::pair<int64_t, int64_t>{lo, std::max(lo, hi)};
  };
  parallel_for(
      B * H * qblocks,
      [&](int64_t task) {
        const int64_t b = task / (H * qblocks), h = task / qblocks % H;
        const int64_t t0 = task % qblocks * kQb, tq = std::min(kQb, T - t0);
        C* qb = scratch<C, 0>(kQb * D);
        C* acc = scratch<C, 1>(kQb * Dv);
        C* s = scratch<C, 2>(kKb);
        C* kbuf = scratch<C, 3>(kKb * D);
        C* vbuf = scratch<C, 5>(kKb * Dv);
        C* mb = scratch<C, 4>(kKb);
        const C* krows[kKb];
        const C* vrows[kKb];
        C m[kQb], lsum[kQb];
        for (int64_t r = 0; r < tq; ++r) {
          load_run(q, Index<4>{b, h, t0 + r, 0}, D, qb + r * D);
          m[r] = kNegInf;
          lsum[r] = C(0);
        }
        std::fill(acc, acc + tq * Dv, C(0));
        int64_t lo_all = S, hi_all = 0;
        for (int64_t r = 0; r < tq; ++r) {
          auto [lo, hi] = visible(t0 + r);
          if (lo < hi) {
            lo_all = std::min(lo_all, lo);
            hi_all = std::max(hi_all, hi);
          }
        }
        for (int64_t s0 = lo_all / kKb * kKb; s0 < hi_all; s0 += kKb) {
          const int64_t s1 = std::min(s0 + kKb, S);
          detail::view_rows(k, Index<4>{b, h, s0, 0}, s1 - s0, D, kbuf, krows);
          detail::view_rows(v, Index<4>{b, h, s0, 0}, s1 - s0, Dv, vbuf, vrows);
          for (int64_t r = 0; r < tq; ++r) {
            auto [lo, hi] = visible(t0 + r);
            const int64_t a = std::max(s0, lo), e = std::min(s1, hi), n = e - a;
            if (n <= 0) continue;
            detail::key_logits(krows + (a - s0), n, D, qb + r * D, scale, cap, s);
            if constexpr (is_present<MA>) {
              load_run(mask, Index<4>{b, h, t0 + r, a}, n, mb);
              for (int64_t j = 0; j < n; ++j)
                s[j] += mb[j];
            }
            const C mblk = max_fixed(s, n);
            if (mblk == kNegInf) continue;
            const C mnew = max_nan(m[r], mblk);
            const C alpha = exp_fast(m[r] - mnew);
            for (int64_t j = 0; j < n; ++j)
              s[j] = exp_fast(s[j] - mnew);
            lsum[r] = std::fma(lsum[r], alpha, sum_fixed(s, n));
            C* ar = acc + r * Dv;
            for (int64_t e2 = 0; e2 < Dv; ++e2)
              ar[e2] *= alpha;
            detail::accumulate_values(vrows + (a - s0), n, Dv, s, ar);
            m[r] = mnew;
          }
        }
        for (int64_t r = 0; r < tq; ++r) {
          C* ar = acc + r * Dv;
          if (lsum[r] > C(0))
            for (int64_t e = 0; e < Dv; ++e)
              ar[e] = ar[e] / lsum[r];
          else
            std::fill(ar, ar + Dv, C(0));
          store_run(o, Index<4>{b, h, t0 + r, 0}, Dv, ar);
        }
      },
      true);
}

} // namespace vtc::kernels
