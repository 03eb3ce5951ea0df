// The packed-panel matrix-multiply engine under gemm.h and conv.h (implicit GEMM):
// C[b, m, n] = sum_k A[b, m, k] * B[b, k, n], with the operands reached through a Problem
// object that loads rows of A and B (stage 1) and stores rows of C (stage 3); the engine
// owns stage 2. The work is cut into blocks of C (MC x NC) spread over the threads; each
// block packs its panels of A (MR rows, k-major) and B (NR columns, k-major) into local
// buffers and runs a register-blocked micro-kernel over them, KC values of k at a time.
//
// Summation order, the property the rest of vtc relies on: every C element is the chain
// acc = 0; acc = fma(A[m, k], B[k, n], acc) for k = 0, 1, ..., K-1, kept in the compute
// type between K blocks. It depends on nothing else — not the accessors, not the block or
// register-tile sizes, not the thread count, not the instruction set — so any two ways of
// feeding the same values give the same bits (and GEMV in gemm.h computes the same chain).
//
// A Problem provides, for compute type C (float or double):
//   void load_a_row(int64_t b, int64_t m, int64_t k0, int64_t kc, C* dst) const;  // A[b,m,k0..]
//   void load_b_row(int64_t b, int64_t k, int64_t n0, int64_t nc, C* dst) const;  // B[b,k,n0..]
//   void store_c_row(int64_t b, int64_t m, int64_t n0, int64_t nc, const C* src) const;
// and optionally, to have the cache fetch B ahead of its packing:
//   void prefetch_b_row(int64_t b, int64_t k, int64_t n0, int64_t nc) const;
// and, to pack all of B at once a whole row at a time, in any order (rows k0 .. k1 - 1, k0
// and k1 multiples of b_row_group() or K; put(k, row) with the N values of row k):
//   int64_t b_row_group() const;
//   void for_each_b_row(int64_t b, int64_t k0, int64_t k1, Put&& put) const;
// and, to pack B's panels itself, whole groups of rows at a time, where that beats loading
// them row by row (then B is packed whole even for a single row block of C; rows k0 .. k1 - 1
// as above, row k of panel J at panels + J * panel_stride + k * NR, zeros past column N):
//   bool packs_b_panels() const;
//   template <int NR> void pack_b_panels(int64_t b, int64_t k0, int64_t k1, C* panels,
//                                        int64_t panel_stride) const;
// and, to store a whole block of C at once (rows m0.., columns n0.., row stride ldc):
//   void store_c_block(int64_t b, int64_t m0, int64_t mc, int64_t n0, int64_t nc,
//                      const C* src, int64_t ldc) const;
// and, when the rows of B lie in memory already, to have the engine pack its panels straight
// from them, fetching rows ahead into the cache: row k of batch b, its N values contiguous,
// or null where it is not in memory as such (then load_b_row loads it):
//   const C* b_row_in_place(int64_t b, int64_t k) const;
// and, to have A's or B's members (load_a_row; the B members above) taken from an object of
// their own, whose loaders are then one instance per such type, shared by every Problem that
// reads the same kind of operand (conv.h's ConvWeights and ConvInput):
//   const auto& a_source() const;   const auto& b_source() const;
// The engine sees the Problem through function pointers (gemm_problem_ref.h), so that it is
// compiled once per register tile rather than once per Problem type.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "column_tail.h"
#include "gemm_problem_ref.h"
#include "parallel.h"
#include "simd.h"

namespace vtc::kernels {

// Register tile: MR rows x NV vectors of C held in registers by the micro-kernel.
template <typename C> struct GemmTile {
  static constexpr int NV = Vec<C>::width == 1 ? 4 : 2;
#if defined(__AVX512F__)
  static constexpr int MR = 12;
#elif defined(__AVX2__) && defined(__FMA__)
  static constexpr int MR = 6;
#else
  static constexpr int MR = 4;
#endif
  static constexpr int NR = NV * Vec<C>::width;
};

// c[r][n] (+)= sum_k a[k][r] * b[k][n] over a full MR x (NV vectors) tile; `a` is an MR-wide
// panel, `b` a panel of row stride BS (NV vectors wide unless the tile covers part of it),
// both k-major; c has row stride ldc.
template <typename C, int MR, int NV, int BS = NV* Vec<C>::width>
inline void micro_kernel(int64_t kc, const C* __restrict a, const C* __restrict b, C* __restrict c,
                         int64_t ldc, bool accumulate) {
  using V = Vec<C>;
  constexpr int W = V::width, NR = BS;
  V acc[MR][NV];
  if (accumulate) {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[r][v] = V::load(c + r * ldc + v * W);
  } else {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[r][v] = V::zero();
  }
  for (int64_t k = 0; k < kc; ++k) {
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = V::load(b + k * NR + v * W);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      V av = V::set1(a[k * MR + r]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[r][v] = fma(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[r][v].store(c + r * ldc + v * W);
}

// The tile of a panel's last real columns: NV whole vectors as in micro_kernel, then COLS
// single columns (at most kColumnTail), each as the MR rows of A's panel in vectors times
// b[k][n] broadcast, in the same loop over k (a column's chain of dependent fmas then runs
// beside the vectors' independent ones instead of alone). Every element is the register
// tile's fma chain over k in order (a * b + acc, one rounding): the bits are the same. Column
// vectors reach past the MR rows into the next k's; the last k's, whose vectors would reach
// past the panel, take their columns element by element.
template <typename C, int MR, int NV, int BS, int COLS>
inline void tail_tile(int64_t kc, const C* __restrict a, const C* __restrict b, C* __restrict c,
                      int64_t ldc, bool accumulate) {
  using V = Vec<C>;
  constexpr int W = V::width, NVR = (MR + W - 1) / W, SPAN = NVR * W;
  constexpr int64_t kTail = (SPAN - MR + MR - 1) / MR; // k's whose columns go element-wise
  constexpr int NA = NV > 0 ? NV : 1, NC = COLS > 0 ? COLS : 1;
  V acc[MR][NA];
  alignas(64) C rows[NC][SPAN];
  V col[NC][NVR];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v)
      acc[r][v] = accumulate ? V::load(c + r * ldc + v * W) : V::zero();
  for (int n = 0; n < COLS; ++n) {
    for (int r = 0; r < SPAN; ++r)
      rows[n][r] = accumulate && r < MR ? c[r * ldc + NV * W + n] : C(0);
    for (int v = 0; v < NVR; ++v)
      col[n][v] = V::load(&rows[n][v * W]);
  }
  auto vectors = [&](int64_t k) {
    V bv[NA];
    for (int v = 0; v < NV; ++v)
      bv[v] = V::load(b + k * BS + v * W);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const V av = V::set1(a[k * MR + r]);
      for (int v = 0; v < NV; ++v)
        acc[r][v] = fma(av, bv[v], acc[r][v]);
    }
  };
  const int64_t kv = COLS > 0 ? std::max<int64_t>(0, kc - kTail) : kc;
  for (int64_t k = 0; k < kv; ++k) {
    vectors(k);
    V ar[NVR];
    for (int v = 0; v < NVR; ++v)
      ar[v] = V::load(a + k * MR + v * W);
#pragma GCC unroll 4
    for (int n = 0; n < COLS; ++n) {
      const V bn = V::set1(b[k * BS + NV * W + n]);
      for (int v = 0; v < NVR; ++v)
        col[n][v] = fma(ar[v], bn, col[n][v]);
    }
  }
  for (int n = 0; n < COLS; ++n)
    for (int v = 0; v < NVR; ++v)
      col[n][v].store(&rows[n][v * W]);
  for (int64_t k = kv; k < kc; ++k) {
    vectors(k);
    for (int n = 0; n < COLS; ++n)
      for (int r = 0; r < MR; ++r)
        rows[n][r] = std::fma(a[k * MR + r], b[k * BS + NV * W + n], rows[n][r]);
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v)
      acc[r][v].store(c + r * ldc + v * W);
  for (int n = 0; n < COLS; ++n)
    for (int r = 0; r < MR; ++r)
      c[r * ldc + NV * W + n] = rows[n][r];
}

// The real columns of the last B panel of N columns (known at compile time) when tail_tile()
// runs it (column_tail.h); 0 otherwise. Only the engines of such shapes are instantiated with
// that one tail tile (with tail tiles compiled into every engine, shapes that never took them
// ran up to 30% slower).
template <typename C, int NV> constexpr int column_tail_width(int64_t n) {
  return column_tail_width_of(Vec<C>::width, NV, n);
}

// dst[0 .. NR) = src[0 .. NR): one row of a B panel, in whole vectors (a call of memmove per
// panel row costs more than the copy).
template <typename C, int NR> inline void copy_panel_row(const C* src, C* dst) {
  using V = Vec<C>;
#pragma GCC unroll 8
  for (int v = 0; v < NR / V::width; ++v)
    V::load(src + v * V::width).store(dst + v * V::width);
}

// src[0 .. n) as row k of consecutive k-major B panels, NR columns each (panel j at
// dst + j * panel_stride, its row k at + k * NR); the last panel's columns past n are zero.
template <typename C, int NR>
inline void put_panel_row(const C* src, int64_t n, C* dst, int64_t panel_stride) {
  const int64_t full = n / NR;
  for (int64_t j = 0; j < full; ++j)
    copy_panel_row<C, NR>(src + j * NR, dst + j * panel_stride);
  if (full * NR < n) {
    C* d = dst + full * panel_stride;
    std::copy(src + full * NR, src + n, d);
    std::fill(d + (n - full * NR), d + NR, C(0));
  }
}

// Row k of B in place, or null (also for a Problem without b_row_in_place).
template <typename C>
inline const C* b_row_in_place_of(const GemmProblemRef<C>& p, int64_t b, int64_t k) {
  return p.b_row_in_place ? p.b_row_in_place(p.b_problem, b, k) : nullptr;
}

struct GemmBlocks {
  int64_t mc, nc, kc;
  int64_t tm = 0, tn = 0; // row and column blocks: M and N cut into tm and tn even shares
};

// When the threads take the blocks of a tm x tn split of an mp x np panel grid (batch times)
// in turn, each as soon as it is free: the time the last one finishes, in micro-kernel runs of
// one k step, a block costing `task_cost` more. The engine's blocks differ by one panel at most.
inline int64_t gemm_split_makespan(int64_t batch, int64_t mp, int64_t np, int64_t tm, int64_t tn,
                                   int64_t k, int64_t task_cost, int threads) {
  constexpr int kMaxThreads = 16;
  int64_t free_at[kMaxThreads] = {};
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < tm; ++i)
      for (int64_t j = 0; j < tn; ++j) {
        int first = 0;
        for (int t = 1; t < threads; ++t)
          if (free_at[t] < free_at[first]) first = t;
        const int64_t rows = (i + 1) * mp / tm - i * mp / tm,
                      cols = (j + 1) * np / tn - j * np / tn;
        free_at[first] += rows * cols * k + task_cost;
      }
  return *std::max_element(free_at, free_at + threads);
}

// The slot of a shape (its five words) in a memo of `slots` entries: each word multiplied in
// and its high bits folded down, so that every bit of the key moves the slot.
inline size_t gemm_split_slot(const int64_t (&key)[5], size_t slots) {
  uint64_t h = 0;
  for (int64_t word : key) {
    h = (h ^ uint64_t(word)) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  return size_t(h % slots);
}

// Cache blocks for a problem: KC values of k (B panel in L1), MC x KC of A and KC x NC of B
// in L2, shrunk until there are a few blocks per thread. Every row block of C packs its own
// B panels, so M is cut into as few row blocks as fit (evenly). Only speed depends on them.
template <typename C, int MR, int NR>
inline GemmBlocks gemm_blocks(int64_t batch, int64_t M, int64_t N, int64_t K, int threads) {
  constexpr int64_t kKc = sizeof(C) == 4 ? 256 : 192;
  constexpr int64_t kMaxMc = int64_t(MR) * (216 / MR);
  int64_t kc = K <= kKc + kKc / 4 ? std::max<int64_t>(K, 1) : 0;
  if (kc == 0) {
    int64_t nk = (K + kKc - 1) / kKc;
    kc = (K + nk - 1) / nk;
  }
  auto round_up = [](int64_t x, int64_t m) { return (x + m - 1) / m * m; };
  const int64_t nm = (M + kMaxMc - 1) / kMaxMc;
  int64_t mc = round_up((M + nm - 1) / nm, MR);
  int64_t nc = std::min(round_up(N, NR), int64_t(256));
  auto tasks = [&] { return batch * ((M + mc - 1) / mc) * ((N + nc - 1) / nc); };
  while (tasks() < 2 * threads) {
    if (nc >= mc && nc > 2 * NR)
      nc = round_up(nc / 2, NR);
    else if (mc > 2 * MR)
      mc = round_up(mc / 2, MR);
    else if (nc > 2 * NR)
      nc = round_up(nc / 2, NR);
    else
      break;
  }
  // A few tasks that do not divide among the threads leave some idle at the end: cut M into
  // a number of blocks that makes them divide, when one a little larger does.
  const int64_t per_block = batch * ((N + nc - 1) / nc);
  if (tasks() % threads != 0 && tasks() < 8 * threads)
    for (int64_t blocks = (M + mc - 1) / mc + 1; blocks <= (M + mc - 1) / mc + threads; ++blocks) {
      const int64_t m = round_up((M + blocks - 1) / blocks, MR);
      if (m >= MR && (M + m - 1) / m * per_block % threads == 0) {
        mc = m;
        break;
      }
    }
  GemmBlocks bl{mc, nc, kc, (M + mc - 1) / mc, (N + nc - 1) / nc};
  // A problem of few tiles for the threads: the split of its tiles into at most 8 blocks a
  // thread that finishes first (3 even blocks on 2 threads leave one idle for a third of the
  // time; 7 column panels of one row block, 2 threads, leave one idle for 1/8 of it), each block
  // costing as much as 64 k steps of a tile more. Remembered per shape: the search takes about
  // a microsecond.
  const int64_t mp = (M + MR - 1) / MR, np = (N + NR - 1) / NR;
  if (threads > 1 && threads <= 16 && batch < threads && batch * mp * np <= 256 * threads) {
    struct Split {
      int64_t key[5] = {-1, -1, -1, -1, -1};
      int64_t tm = 0, tn = 0;
    };
    // Slots for the shapes of a large model: a hash that mixes every bit of the key, then the
    // next few slots (a polynomial hash modulo 32 slots put SqueezeNet's 17 shapes into 4,
    // and its searches, 20 us a run on two cores, were redone on every call).
    constexpr size_t kSlots = 256, kProbes = 4;
    thread_local Split memo[kSlots + kProbes];
    const int64_t key[5] = {batch, M, N, K, threads};
    Split* slot = memo + gemm_split_slot(key, kSlots);
    Split* found = std::find_if(slot, slot + kProbes,
                                [&](const Split& e) { return std::equal(key, key + 5, e.key); });
    if (found == slot + kProbes) // a free one of the slots, or the first
      found = std::find_if(slot, slot + kProbes, [](const Split& e) { return e.key[0] < 0; });
    Split& m = found == slot + kProbes ? *slot : *found;
    if (!std::equal(key, key + 5, m.key)) {
      constexpr int64_t kTaskCost = 64;
      const int64_t most = 8 * threads;
      int64_t best = gemm_split_makespan(batch, mp, np, bl.tm, bl.tn, K, kTaskCost, threads);
      m.tm = bl.tm;
      m.tn = bl.tn;
      for (int64_t tm = std::max<int64_t>(1, (M + kMaxMc - 1) / kMaxMc);
           tm <= mp && batch * tm <= most; ++tm)
        for (int64_t tn = std::max<int64_t>(1, (N + 255) / 256);
             tn <= np && batch * tm * tn <= most; ++tn) {
          const int64_t t = gemm_split_makespan(batch, mp, np, tm, tn, K, kTaskCost, threads);
          if (t < best) {
            best = t;
            m.tm = tm;
            m.tn = tn;
          }
        }
      std::copy(key, key + 5, m.key);
    }
    bl.tm = m.tm;
    bl.tn = m.tn;
    bl.mc = (mp + bl.tm - 1) / bl.tm * MR;
    bl.nc = (np + bl.tn - 1) / bl.tn * NR;
  }
  return bl;
}

// A number unique to each gemm_packed call (keys the per-thread A-panel cache).
inline uint64_t next_gemm_call() {
  static std::atomic<uint64_t> calls{0};
  return calls.fetch_add(1, std::memory_order_relaxed) + 1;
}

// A packed whole, in panels of MR rows: for batch b, panel i (rows i*MR .. i*MR+MR-1, zero
// past M) holds element (k, r) at ((b * panels + i) * K + k) * MR + r.
template <int MR> inline int64_t packed_a_size(int64_t batch, int64_t M, int64_t K) {
  return batch * ((M + MR - 1) / MR) * K * MR;
}

// A packed whole in that layout, its rows loaded by load_a_row(problem, ...): one instance per
// (C, MR) whatever the Problem (constant weights are packed once per program).
template <typename C, int MR>
void pack_a_panels(const void* problem,
                   void (*load_a_row)(const void*, int64_t, int64_t, int64_t, int64_t, C*),
                   int64_t batch, int64_t M, int64_t K, C* dst) {
  const int64_t panels = (M + MR - 1) / MR;
  parallel_for(batch * panels, [&](int64_t t) {
    C* d = dst + t * K * MR;
    C* row = scratch<C, 3>(K);
    const int64_t b = t / panels, i = t % panels;
    for (int r = 0; r < MR; ++r) {
      const int64_t m = i * MR + r;
      if (m < M) {
        load_a_row(problem, b, m, 0, K, row);
        for (int64_t k = 0; k < K; ++k)
          d[k * MR + r] = row[k];
      } else {
        for (int64_t k = 0; k < K; ++k)
          d[k * MR + r] = C(0);
      }
    }
  });
}

template <typename C, int MR, typename Problem>
void pack_a_whole(const Problem& p, int64_t batch, int64_t M, int64_t K, C* dst) {
  const auto& a = a_source_of(p);
  pack_a_panels<C, MR>(&a, &GemmThunks<C, std::remove_cvref_t<decltype(a)>>::load_a_row, batch, M,
                       K, dst);
}

// B packed whole, in panels of NR columns: for batch b, panel j (columns j*NR .. j*NR+NR-1,
// zero past N) holds element (k, c) at ((b * panels + j) * K + k) * NR + c.
template <int NR> inline int64_t packed_b_size(int64_t batch, int64_t N, int64_t K) {
  return batch * ((N + NR - 1) / NR) * K * NR;
}

// Operands packed ahead of the call (constant weights, or B shared by every row block): the
// layouts above, batch b using the panels of batch b % a_batches (b % b_batches). Null:
// packed by the engine.
template <typename C> struct PrepackedOperands {
  const C* a = nullptr;
  int64_t a_batches = 1;
  const C* b = nullptr;
  int64_t b_batches = 1;
};

// The engine with register tiles of MR rows x NV vectors, over a Problem behind function
// pointers (gemm_problem_ref.h): one instance per tile shape, whatever the Problem.
template <typename C, int MR, int NV, int TailWidth = 0>
void gemm_engine(const GemmProblemRef<C>& p, int64_t batch, int64_t M, int64_t N, int64_t K,
                 const PrepackedOperands<C>& pre) {
  constexpr int NR = NV * Vec<C>::width;
  const void* q = p.problem;
  const void* qa = p.a_problem; // A's and B's members take their own objects
  const void* qb = p.b_problem;
  const SerialScope serial(2.0 * double(batch) * double(M) * double(N) * double(K) <
                           kParallelMinFlops);
  const GemmBlocks bl = gemm_blocks<C, MR, NR>(batch, M, N, K, max_threads());
  const int64_t tm = bl.tm, tn = bl.tn;
  const int64_t m_panels = (M + MR - 1) / MR, n_panels = (N + NR - 1) / NR;
  // Without packed A, a thread that runs several column blocks of one row block packs its A
  // panels once, for every k, when they fit in 4 MB (conv weights are packed from short
  // runs: costly).
  const uint64_t call = next_gemm_call();
  const bool keep_a =
      !pre.a && (bl.mc + MR - 1) / MR * MR * K * int64_t(sizeof(C)) <= (int64_t(4) << 20);
  // Several row blocks would each pack the same B panels: when B is small, pack it whole once
  // instead, spread over the threads by rows (panel J of batch b holds element (k, c) at
  // ((b * b_panels + J) * K + k) * NR + c).
  const int64_t b_panels = (N + NR - 1) / NR;
  const bool packs_panels = p.packs_b_panels;
  const bool shared_b =
      pre.b || ((tm > 1 || packs_panels) && K > 0 &&
                packed_b_size<NR>(batch, N, K) * int64_t(sizeof(C)) <= (int64_t(2) << 20));
  // B rows in memory are packed from their place, by every row block when B is not shared.
  const bool b_in_place = !shared_b && K > 0 && b_row_in_place_of<C>(p, 0, 0) != nullptr;
  const C* b_whole = pre.b;
  const int64_t b_batches = pre.b ? pre.b_batches : batch;
  if (shared_b && !pre.b) {
    C* dst = scratch<C, 8>(batch * b_panels * K * NR);
    const bool by_rows = p.for_each_b_row != nullptr;
    const int64_t group = by_rows ? p.b_row_group : 1;
    const int64_t groups = (K + group - 1) / group;
    const int64_t chunks = std::min<int64_t>(groups, 4 * int64_t(max_threads())),
                  rows = (groups + chunks - 1) / chunks * group;
    parallel_for(batch * chunks, [&](int64_t t) {
      const int64_t b = t / chunks, k0 = t % chunks * rows, k1 = std::min(K, k0 + rows);
      C* base = dst + b * b_panels * K * NR;
      auto put = [&](int64_t k, const C* row) {
        put_panel_row<C, NR>(row, N, base + k * NR, K * NR);
      };
      if (packs_panels && p.pack_b_panels) return p.pack_b_panels(qb, b, k0, k1, base, K * NR);
      if (by_rows) {
        using Put = decltype(put);
        const GemmRowSink<C> sink{
            &put, [](void* f, int64_t k, const C* row) { (*static_cast<Put*>(f))(k, row); }};
        p.for_each_b_row(qb, b, k0, k1, sink);
      } else {
        C* row = scratch<C, 3>(N);
        for (int64_t k = k0; k < k1; ++k) {
          const C* src = b_row_in_place_of<C>(p, b, k);
          if (!src) {
            p.load_b_row(qb, b, k, 0, N, row);
            src = row;
          }
          put(k, src);
        }
      }
    });
    b_whole = dst;
  }
  parallel_for(
      batch * tm * tn,
      [&](int64_t t) {
        // Block (i, j) covers an even share of the MR-row and NR-column panels: blocks differ
        // by one panel at most (never a full block beside a sliver).
        const int64_t b = t / (tm * tn), i = (t / tn) % tm, j = t % tn;
        const int64_t m0 = i * m_panels / tm * MR, m1 = std::min(M, (i + 1) * m_panels / tm * MR);
        const int64_t n0 = j * n_panels / tn * NR, n1 = std::min(N, (j + 1) * n_panels / tn * NR);
        const int64_t mc = m1 - m0, nc = n1 - n0;
        const int64_t pm = (mc + MR - 1) / MR, pn = (nc + NR - 1) / NR, ldc = pn * NR;
        struct PackedA {
          uint64_t call = 0;
          int64_t b = -1, m0 = -1;
        };
        thread_local PackedA packed_here;
        const bool have_a =
            keep_a && packed_here.call == call && packed_here.b == b && packed_here.m0 == m0;
        // The A panels of this block: panel i of k block k0 starts at a_base + i * a_panel +
        // k0 * a_k (whole-K panels when A is packed whole or kept, one k block otherwise).
        const bool whole_k = pre.a || keep_a;
        C* a_buf = pre.a ? nullptr : scratch<C, 0>(pm * MR * (keep_a ? K : bl.kc));
        const C* a_base = pre.a ? pre.a + (b % pre.a_batches * m_panels + m0 / MR) * K * MR : a_buf;
        const int64_t a_panel = (whole_k ? K : bl.kc) * MR, a_k = whole_k ? MR : 0;
        C* bp = scratch<C, 1>(pn * NR * bl.kc);
        C* cb = scratch<C, 2>(pm * MR * ldc);
        C* row = scratch<C, 3>(std::max(bl.kc, pn * NR));
        if (K == 0) std::fill(cb, cb + pm * MR * ldc, C(0));
        for (int64_t k0 = 0; k0 < K; k0 += bl.kc) {
          const int64_t kc = std::min(bl.kc, K - k0);
          // Pack B: panel j is kc x NR, k-major; one row of the block at a time, read in place
          // (the row kAhead rows on asked of the cache: rows of scattered planes defeat the
          // hardware prefetcher) or loaded by the Problem (one call per row: its index
          // arithmetic is per run, not per panel).
          constexpr int64_t kAhead = 18;
          for (int64_t k = 0; k < kc && !shared_b; ++k) {
            const C* src = b_in_place ? b_row_in_place_of<C>(p, b, k0 + k) : nullptr;
            if (src) {
              src += n0;
              if (k + kAhead < kc)
                if (const C* ahead = b_row_in_place_of<C>(p, b, k0 + k + kAhead))
                  for (int64_t x = 0; x < nc; x += 64 / int64_t(sizeof(C)))
                    __builtin_prefetch(ahead + n0 + x);
            } else {
              if (p.prefetch_b_row && n1 < N) // the same row of the next column block
                p.prefetch_b_row(qb, b, k0 + k, n1, std::min(nc, N - n1));
              p.load_b_row(qb, b, k0 + k, n0, nc, row);
              src = row;
            }
            put_panel_row<C, NR>(src, nc, bp + k * NR, kc * NR);
          }
          for (int64_t i = 0; i < pm && a_buf && !have_a; ++i) { // pack A: panel i, k-major
            C* dst = a_buf + i * a_panel + k0 * a_k;
            for (int r = 0; r < MR; ++r) {
              const int64_t m = i * MR + r;
              if (m < mc) {
                p.load_a_row(qa, b, m0 + m, k0, kc, row);
                for (int64_t k = 0; k < kc; ++k)
                  dst[k * MR + r] = row[k];
              } else {
                for (int64_t k = 0; k < kc; ++k)
                  dst[k * MR + r] = C(0);
              }
            }
          }
          for (int64_t j = 0; j < pn; ++j) {
            const C* b_panel =
                shared_b ? b_whole + ((b % b_batches * b_panels + n0 / NR + j) * K + k0) * NR
                         : bp + j * kc * NR;
            // Only the last panel of B is narrower than NR: TailWidth columns, when given.
            bool tail = false;
            if constexpr (TailWidth > 0) {
              tail = nc - j * NR == TailWidth;
              for (int64_t i = 0; i < pm && tail; ++i)
                tail_tile<C, MR, TailWidth / Vec<C>::width, NR, TailWidth % Vec<C>::width>(
                    kc, a_base + i * a_panel + k0 * a_k, b_panel, cb + i * MR * ldc + j * NR, ldc,
                    k0 > 0);
            }
            for (int64_t i = 0; i < pm && !tail; ++i)
              micro_kernel<C, MR, NV>(kc, a_base + i * a_panel + k0 * a_k, b_panel,
                                      cb + i * MR * ldc + j * NR, ldc, k0 > 0);
          }
        }
        if (keep_a) packed_here = {call, b, m0};
        if (p.store_c_block) {
          p.store_c_block(q, b, m0, mc, n0, nc, cb, ldc);
        } else {
          for (int64_t m = 0; m < mc; ++m)
            p.store_c_row(q, b, m0 + m, n0, nc, cb + m * ldc);
        }
      },
      true);
}

// The engine over `p` (any Problem): the engine instance of the tile shape, passed `p` behind
// function pointers.
template <typename C, int MR, int NV, int TailWidth = 0, typename Problem>
void gemm_packed_tiles(const Problem& p, int64_t batch, int64_t M, int64_t N, int64_t K,
                       const PrepackedOperands<C>& pre) {
  gemm_engine<C, MR, NV, TailWidth>(gemm_problem_ref<C, NV * Vec<C>::width>(p), batch, M, N, K,
                                    pre);
}

// C = A . B through the Problem: register tiles one vector wide when N fits in one vector
// (small output planes), two otherwise. Neither choice changes any bits. `packed_a`, when
// given, is A packed by pack_a_whole<C, GemmTile<C>::MR> for `a_batches` batches.
// `StaticN`, when the caller knows N at compile time (generated code does), instantiates
// only the tile that runs.
template <typename C, int64_t StaticN = -1, typename Problem>
void gemm_packed(const Problem& p, int64_t batch, int64_t M, int64_t N, int64_t K,
                 const C* packed_a = nullptr, int64_t a_batches = 0) {
  if (batch <= 0 || M <= 0 || N <= 0) return;
  constexpr int MR = GemmTile<C>::MR;
  const PrepackedOperands<C> pre{packed_a, a_batches > 0 ? a_batches : batch};
  constexpr bool narrow_known = StaticN >= 0 && StaticN <= Vec<C>::width && Vec<C>::width > 1;
  if constexpr (StaticN >= 0) {
    constexpr int NV = narrow_known ? 1 : GemmTile<C>::NV;
    gemm_packed_tiles<C, MR, NV, column_tail_width<C, NV>(StaticN)>(p, batch, M, N, K, pre);
  } else if (N <= Vec<C>::width && Vec<C>::width > 1) {
    gemm_packed_tiles<C, MR, 1>(p, batch, M, N, K, pre);
  } else {
    gemm_packed_tiles<C, MR, GemmTile<C>::NV>(p, batch, M, N, K, pre);
  }
}

} // namespace vtc::kernels
