// Batched matrix multiply over accessors: C[b, m, n] = epi(index, sum_k A[b,m,k] * B[b,k,n])
// with rank-3 accessors, batch first (broadcast batches are the accessors' business).
// Stage 1 packs rows of A and B through the accessors (pointer runs where `contig` allows,
// load() otherwise: the packed values are the same), stage 2 is the engine of gemm_core.h,
// stage 3 stores C through the output accessor with the optional epilogue (bias,
// activation, residual add ...). Accumulation is in float for f32/f16/bf16 operands and in
// double when any operand is f64.
//
// For M <= 4 (LLM decode: x[1, K] . W[K, N]) a GEMV path streams B once, vectorised, in
// column panels of N spread over the threads (accumulators in a per-thread panel, B rows
// widened from f16 / bf16 in registers). It computes the same chain
// as the engine — acc = 0, then acc = fma(A[m,k], B[k,n], acc) for k = 0..K-1 — so both
// paths, and any accessors, give the same bits; the order is a function of K alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "gemm_core.h"
#include "stage.h"

namespace vtc::kernels {

// float, or double when any of the operands computes in double.
template <typename... A>
using gemm_compute_t =
    std::conditional_t<(std::is_same_v<compute_t<A>, double> || ...), double, float>;

namespace detail {

// Whether C's rows reach memory one element at a time: its stores (an epilogue's, through the
// epilogue's target) go through a pointer with no runs along n. A transposed output (a Linear
// whose result is permuted back to channels first) is one: its runs, if any, lie along m.
template <typename CA> consteval bool scattered_rows() {
  if constexpr (epilogue_of<CA>) {
    using T = std::remove_cvref_t<decltype(std::declval<const CA&>().target())>;
    return T::has_ptr && T::contig == 1;
  } else {
    return CA::has_ptr && CA::contig == 1;
  }
}

template <typename C, typename CA, typename AA, typename BA, typename Epi> struct GemmProblem {
  const CA& c;
  const AA& a;
  const BA& b;
  const Epi& epi;
  void load_a_row(int64_t bi, int64_t m, int64_t k0, int64_t kc, C* dst) const {
    load_run(a, Index<3>{bi, m, k0}, kc, dst);
  }
  void load_b_row(int64_t bi, int64_t k, int64_t n0, int64_t nc, C* dst) const {
    load_run(b, Index<3>{bi, k, n0}, nc, dst);
  }
  void store_c_row(int64_t bi, int64_t m, int64_t n0, int64_t nc, const C* src) const {
    store_run(c, Index<3>{bi, m, n0}, nc, src, epi);
  }
  // A block of C whose rows reach memory element by element is stored a column at a time
  // (consecutive addresses, where the output is transposed), each element in one inlined
  // step, instead of a row of a few elements a call staged in a run of its own. value() is
  // what a run store computes and target().store() what it writes (accessor.h): the same bits.
  void store_c_block(int64_t bi, int64_t m0, int64_t mc, int64_t n0, int64_t nc, const C* src,
                     int64_t ldc) const requires(scattered_rows<CA>()) {
    if constexpr (epilogue_of<CA>) {
      const auto t = c.target();
      for (int64_t n = 0; n < nc; ++n)
        for (int64_t m = 0; m < mc; ++m) {
          const Index<3> i{bi, m0 + m, n0 + n};
          t.store(i, c.value(i, C(epi(i, src[m * ldc + n]))));
        }
    } else {
      for (int64_t n = 0; n < nc; ++n)
        for (int64_t m = 0; m < mc; ++m) {
          const Index<3> i{bi, m0 + m, n0 + n};
          c.store(i, epi(i, src[m * ldc + n]));
        }
    }
  }
};

// acc[r][j] = fma(x[r][k + u], w[u][j], acc[r][j]) for u = 0..KU-1 in turn: KU rows of B
// applied to an accumulator panel of `nw` columns.
template <typename C, int MROWS, int KU, typename TB>
inline void gemv_rows(C* __restrict acc, int64_t nw, const C* x, int64_t K, const TB* const* w) {
  using V = Vec<C>;
  constexpr int W = V::width;
  V xv[MROWS][KU];
  for (int r = 0; r < MROWS; ++r)
    for (int u = 0; u < KU; ++u)
      xv[r][u] = V::set1(x[r * K + u]);
  int64_t j = 0;
  for (; j + W <= nw; j += W) {
    V wv[KU];
    for (int u = 0; u < KU; ++u)
      wv[u] = load_widen(w[u] + j);
    for (int r = 0; r < MROWS; ++r) {
      V a = V::load(acc + r * nw + j);
      for (int u = 0; u < KU; ++u)
        a = fma(xv[r][u], wv[u], a);
      a.store(acc + r * nw + j);
    }
  }
  for (; j < nw; ++j)
    for (int r = 0; r < MROWS; ++r)
      for (int u = 0; u < KU; ++u)
        acc[r * nw + j] = std::fma(x[r * K + u], C(widen(w[u][j])), acc[r * nw + j]);
}

// Rows [0, MROWS) of one batch of C over the columns [n0, n0 + nw): B is streamed one row
// segment at a time (KU rows together), the accumulators live in a per-thread panel.
template <typename C, int MROWS, typename CA, typename BA, typename Epi>
inline void gemv_panel(const CA& c, const BA& b, const C* xa, int64_t bi, int64_t n0, int64_t nw,
                       int64_t K, const Epi& epi) {
  constexpr int KU = 4;
  using TB = typename BA::value_type;
  C* acc = scratch<C, 4>(MROWS * nw);
  std::fill(acc, acc + MROWS * nw, C(0));
  constexpr bool can_widen =
      BA::has_ptr && std::is_same_v<compute_t<BA>, C> &&
      (std::is_same_v<TB, C> ||
       (std::is_same_v<C, float> && (std::is_same_v<TB, half> || std::is_same_v<TB, bfloat16>)));
  int64_t k = 0;
  if (can_widen && run_contiguous<BA>(n0, nw)) {
    if constexpr (can_widen) {
      const TB* w[KU];
      // The head of each row segment a few rows ahead is fetched early: the hardware
      // prefetcher then follows the segment, which may start on a new page every row.
      constexpr int64_t kAhead = 2 * KU, kHead = 128 / int64_t(sizeof(TB));
      for (; k + KU <= K; k += KU) {
        for (int u = 0; u < KU; ++u)
          w[u] = b.ptr(Index<3>{bi, k + u, n0});
        for (int64_t u = k + kAhead; u < std::min(K, k + kAhead + KU); ++u)
          prefetch_run(b, Index<3>{bi, u, n0}, std::min(nw, kHead));
        gemv_rows<C, MROWS, KU>(acc, nw, xa + k, K, w);
      }
      for (; k < K; ++k) {
        w[0] = b.ptr(Index<3>{bi, k, n0});
        gemv_rows<C, MROWS, 1>(acc, nw, xa + k, K, w);
      }
    }
  } else {
    C* rows = scratch<C, 6>(KU * nw);
    const C* w[KU];
    for (int u = 0; u < KU; ++u)
      w[u] = rows + u * nw;
    for (; k + KU <= K; k += KU) {
      for (int u = 0; u < KU; ++u)
        load_run(b, Index<3>{bi, k + u, n0}, nw, rows + u * nw);
      gemv_rows<C, MROWS, KU>(acc, nw, xa + k, K, w);
    }
    for (; k < K; ++k) {
      load_run(b, Index<3>{bi, k, n0}, nw, rows);
      gemv_rows<C, MROWS, 1>(acc, nw, xa + k, K, w);
    }
  }
  for (int r = 0; r < MROWS; ++r)
    store_run(c, Index<3>{bi, r, n0}, nw, acc + r * nw, epi);
}

// The GEMV over column panels: the rows of A loaded once, then panel(bi, n0, nw, xa) for the
// columns [n0, n0 + nw) of batch bi (xa: its MROWS rows of A, K each) over the threads. Long
// row segments stream best: panels at most 4096 / M wide (the accumulators stay in L1 / L2),
// about two per thread.
template <typename C, int MROWS, typename AA, typename Panel>
void gemv_panels(const AA& a, int64_t batch, int64_t N, int64_t K, Panel&& panel) {
  constexpr int64_t W = Vec<C>::width;
  const int64_t want = std::max<int64_t>(1, 2 * max_threads() / std::max<int64_t>(batch, 1));
  int64_t nw = std::clamp<int64_t>((N + want - 1) / want, 64, 4096 / MROWS);
  nw = std::min((nw + W - 1) / W * W, N);
  const int64_t panels = (N + nw - 1) / nw;
  C* xa_all = scratch<C, 5>(batch * MROWS * std::max<int64_t>(K, 1));
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int r = 0; r < MROWS; ++r)
      load_run(a, Index<3>{bi, r, 0}, K, xa_all + (bi * MROWS + r) * K);
  parallel_for(batch * panels, [&](int64_t t) {
    const int64_t bi = t / panels, n0 = t % panels * nw;
    panel(bi, n0, std::min(nw, N - n0), static_cast<const C*>(xa_all + bi * MROWS * K));
  });
}

template <typename C, int MROWS, typename CA, typename AA, typename BA, typename Epi>
void gemv(const CA& c, const AA& a, const BA& b, int64_t batch, int64_t N, int64_t K,
          const Epi& epi) {
  gemv_panels<C, MROWS>(a, batch, N, K, [&](int64_t bi, int64_t n0, int64_t nw, const C* xa) {
    gemv_panel<C, MROWS>(c, b, xa, bi, n0, nw, K, epi);
  });
}

// B given transposed, bt[b, n, k], with its runs along k (decode attention's scores q . K^T
// read from the K cache as it lies). Rows [0, MROWS) of C over the columns [n0, n0 + nw): each
// vector of W columns reads its W rows of bt, turns them into vectors over the columns (16 x 16
// blocks transposed in registers on AVX-512 f32, a k-major tile in L1 otherwise) and runs the
// GEMV chain over k; the columns and the order over k are those of gemv_panel, so are the bits.
template <typename C, int MROWS, typename CA, typename BTA, typename Epi>
inline void gemv_bt_panel(const CA& c, const BTA& bt, const C* xa, int64_t bi, int64_t n0,
                          int64_t nw, int64_t K, const Epi& epi) {
  using V = Vec<C>;
  constexpr int W = V::width;
  const int64_t padded = (nw + W - 1) / W * W;
  C* acc = scratch<C, 4>(MROWS * padded);
  C* tile = scratch<C, 6>(std::max<int64_t>(K, 1) * W); // tile[k * W + j] = B[k, n + j]
  C* rows = scratch<C, 7>(std::max<int64_t>(K, 1) * W);
  for (int64_t n = 0; n < nw; n += W) {
    const int64_t cols = std::min<int64_t>(W, nw - n);
    const C* src[W];
    for (int64_t j = 0; j < cols; ++j)
      src[j] = view_run(bt, Index<3>{bi, n0 + n + j, 0}, K, rows + j * K);
    V a[MROWS];
    for (int r = 0; r < MROWS; ++r)
      a[r] = V::zero();
    int64_t k = 0;
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<C, float>) {
      for (; cols == W && k + W <= K; k += W) {
        V t[W];
        for (int j = 0; j < W; ++j)
          t[j] = V::load(src[j] + k);
        transpose_16x16(t); // t[u]: B[k + u, n .. n + 15]
        for (int u = 0; u < W; ++u)
          for (int r = 0; r < MROWS; ++r)
            a[r] = fma(V::set1(xa[r * K + k + u]), t[u], a[r]);
      }
    }
#endif
    const int64_t k_rest = k;
    for (int64_t j = 0; j < W; ++j)
      for (int64_t kk = k_rest; kk < K; ++kk)
        tile[(kk - k_rest) * W + j] = j < cols ? src[j][kk] : C(0);
    for (; k < K; ++k) {
      const V b = V::load(tile + (k - k_rest) * W);
      for (int r = 0; r < MROWS; ++r)
        a[r] = fma(V::set1(xa[r * K + k]), b, a[r]);
    }
    for (int r = 0; r < MROWS; ++r)
      a[r].store(acc + r * padded + n);
  }
  for (int r = 0; r < MROWS; ++r)
    store_run(c, Index<3>{bi, r, n0}, nw, acc + r * padded, epi);
}

template <typename C, int MROWS, typename CA, typename AA, typename BTA, typename Epi>
void gemv_bt(const CA& c, const AA& a, const BTA& bt, int64_t batch, int64_t N, int64_t K,
             const Epi& epi) {
  gemv_panels<C, MROWS>(a, batch, N, K, [&](int64_t bi, int64_t n0, int64_t nw, const C* xa) {
    gemv_bt_panel<C, MROWS>(c, bt, xa, bi, n0, nw, K, epi);
  });
}

// f(std::integral_constant<int, M>{}) for the row counts the GEMV paths take (M = 1..4):
// true when it ran.
template <typename F> bool with_gemv_rows(int64_t M, F&& f) {
  switch (M) {
  case 1:
    return f(std::integral_constant<int, 1>{}), true;
  case 2:
    return f(std::integral_constant<int, 2>{}), true;
  case 3:
    return f(std::integral_constant<int, 3>{}), true;
  case 4:
    return f(std::integral_constant<int, 4>{}), true;
  default:
    return false;
  }
}

// B of a product read through its transpose bt[b, n, k] (for M > 4: the engine's B rows are
// columns of bt, loaded element by element).
template <typename BTA> struct TransposedB {
  using value_type = typename BTA::value_type;
  static constexpr int rank = 3;
  static constexpr int64_t contig = 1;
  static constexpr bool has_ptr = BTA::has_ptr;
  BTA bt;
  static Index<3> swap(const Index<3>& i) { return {i[0], i[2], i[1]}; }
  auto load(const Index<3>& i) const { return bt.load(swap(i)); }
  auto ptr(const Index<3>& i) const { return bt.ptr(swap(i)); }
};

// The engine's problem for B read through its transpose bt[b, n, k] (M > 4): B is packed
// whole (gemm_core.h's pack_b_panels), each block of 16 columns by 16 k from 16 runs of bt
// along k turned by a register transpose (AVX-512 f32), the rest element by element. The
// engine sees the same values, so gives the same bits.
template <typename C, typename CA, typename AA, typename BTA, typename Epi>
struct GemmBtProblem : GemmProblem<C, CA, AA, TransposedB<BTA>, Epi> {
  const BTA& bt;
  int64_t N = 0;

  bool packs_b_panels() const { return true; }
  template <int NR>
  void pack_b_panels(int64_t b, int64_t k0, int64_t k1, C* panels, int64_t panel_stride) const {
    using V = Vec<C>;
    constexpr int W = V::width;
    static_assert(NR % W == 0, "panels hold whole vectors");
    const int64_t kc = k1 - k0, width = (N + NR - 1) / NR * NR;
    C* runs = scratch<C, 7>(std::max<int64_t>(kc, 1) * W);
    for (int64_t n0 = 0; n0 < width; n0 += W) {
      const int64_t cols = std::clamp<int64_t>(N - n0, 0, W);
      const C* src[W];
      for (int64_t j = 0; j < cols; ++j)
        src[j] = view_run(bt, Index<3>{b, n0 + j, k0}, kc, runs + j * kc);
      C* dst = panels + n0 / NR * panel_stride + n0 % NR; // row k at dst + k * NR
      int64_t k = k0;
#if defined(__AVX512F__)
      if constexpr (std::is_same_v<C, float>) {
        for (; cols == W && k + W <= k1; k += W) {
          V t[W];
          for (int j = 0; j < W; ++j)
            t[j] = V::load(src[j] + (k - k0));
          transpose_16x16(t); // t[u]: B[k + u, n0 .. n0 + 15]
          for (int u = 0; u < W; ++u)
            t[u].store(dst + (k + u) * NR);
        }
      }
#endif
      for (; k < k1; ++k)
        for (int64_t j = 0; j < W; ++j)
          dst[k * NR + j] = j < cols ? C(src[j][k - k0]) : C(0);
    }
  }
};

} // namespace detail

// C = A . B with B given as its transpose bt[b, n, k] (rank 3, batch first), whose runs lie
// along k: the same bits as gemm() over B. For M <= 4 the GEMV reads bt's rows whole; above,
// the engine packs B whole by register transposes (GemmBtProblem).
template <Accessor CA, Accessor AA, Accessor BTA, typename Epi = NoEpilogue>
void gemm_bt(const CA& c, const AA& a, const BTA& bt, int64_t batch, int64_t M, int64_t N,
             int64_t K, const Epi& epi = {}) {
  static_assert(CA::rank == 3 && AA::rank == 3 && BTA::rank == 3, "gemm_bt: rank-3 accessors");
  using C = gemm_compute_t<AA, BTA>;
  if (batch <= 0 || M <= 0 || N <= 0) return;
  if (detail::with_gemv_rows(
          M, [&](auto rows) { detail::gemv_bt<C, rows()>(c, a, bt, batch, N, K, epi); }))
    return;
  const detail::TransposedB<BTA> b{bt};
  gemm_packed<C>(detail::GemmBtProblem<C, CA, AA, BTA, Epi>{{c, a, b, epi}, bt, N}, batch, M, N, K);
}

// C[b, m, n] = epi(Index<3>{b, m, n}, sum_k A[b, m, k] * B[b, k, n]) for b < batch, m < M,
// n < N, k < K. `epi` takes the index and the accumulated value and returns the value to
// store (default: the value).
template <Accessor CA, Accessor AA, Accessor BA, typename Epi = NoEpilogue>
void gemm(const CA& c, const AA& a, const BA& b, int64_t batch, int64_t M, int64_t N, int64_t K,
          const Epi& epi = {}) {
  static_assert(CA::rank == 3 && AA::rank == 3 && BA::rank == 3, "gemm: rank-3 accessors");
  using C = gemm_compute_t<AA, BA>;
  static_assert(std::is_floating_point_v<C>, "gemm: floating-point operands");
  if (batch <= 0 || M <= 0 || N <= 0) return;
  if (detail::with_gemv_rows(
          M, [&](auto rows) { detail::gemv<C, rows()>(c, a, b, batch, N, K, epi); }))
    return;
  gemm_packed<C>(detail::GemmProblem<C, CA, AA, BA, Epi>{c, a, b, epi}, batch, M, N, K);
}

} // namespace vtc::kernels
