// Stage 1 and stage 3 of every kernel (paper §2.3): moving a run of elements along the last
// dimension between an accessor and a local buffer of compute values. A run is split at the
// accessor's `contig` boundaries; each piece is read or written through ptr() when the
// accessor has one (a plain loop the compiler vectorises) and element by element through
// load()/store() otherwise. Either way the buffer holds the same values — to_compute() of
// the stored element (convert.h's widen/narrow are those conversions, bit for bit, without
// branches) — so what a kernel computes from it cannot depend on the accessor.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "accessor.h"
#include "convert.h"
#include "simd.h"

namespace vtc::kernels {

// Is the run [start, start + len) of the last dimension one contiguous block behind ptr()?
template <typename A> constexpr bool run_contiguous(int64_t start, int64_t len) {
  if constexpr (!A::has_ptr) {
    return false;
  } else {
    return len <= 1 || start / A::contig == (start + len - 1) / A::contig;
  }
}

// Where the run a[i .. i + len) lies in memory as values of type C, to be written in place;
// null when it does not (no ptr(), another storage type, or a run that is not contiguous).
template <typename C, typename A>
inline C* run_target(const A& a, const Index<A::rank>& i, int64_t len) {
  if constexpr (A::has_ptr && std::is_same_v<typename A::value_type, C>) {
    if (run_contiguous<A>(i[A::rank - 1], len)) return a.ptr(i);
  }
  return nullptr;
}

// The epilogue that leaves values as they are.
struct NoEpilogue {
  template <typename I, typename V> V operator()(const I&, V v) const { return v; }
};

// The absent optional operand (gamma, beta, mask, bias, ...).
struct NoAccessor {
  static constexpr int rank = 0;
  static constexpr bool has_ptr = false;
};
template <typename A> inline constexpr bool is_present = !std::is_same_v<A, NoAccessor>;
// An optional operand's type: an accessor, or NoAccessor where the operand is absent.
template <typename A>
concept OptionalAccessor = Accessor<A> || std::is_same_v<A, NoAccessor>;

// Does the accessor move whole runs itself (computed prologues and epilogue chains do: they
// evaluate their expression over a run in one vectorisable loop)?
template <typename A, typename C>
concept RunLoader = requires(const A& a, const Index<A::rank>& i, C* dst) {
  a.run_load(i, int64_t(1), dst);
};
template <typename A, typename C>
concept RunStorer = requires(const A& a, const Index<A::rank>& i, const C* src) {
  a.run_store(i, int64_t(1), src);
};

// dst[x] = src[x * stride] for x < n, between local buffers: a plain copy without a stride,
// and strides of 2 (the common downsampling) spelled out so that the compiler vectorises them.
template <typename C> inline void copy_strided(const C* src, int64_t stride, int64_t n, C* dst) {
  if (stride == 1) {
    std::copy(src, src + n, dst);
  } else if (stride == 2) {
    for (int64_t x = 0; x < n; ++x)
      dst[x] = src[2 * x];
  } else {
    for (int64_t x = 0; x < n; ++x)
      dst[x] = src[x * stride];
  }
}

// dst[0 .. n) = v, for the edges of padded rows: mostly zero or one value, which a call of
// memset would cost many times over.
template <typename C> inline void fill_edge(C* dst, int64_t n, C v) {
  if (n == 1) {
    *dst = v;
  } else if (n > 1) {
    std::fill(dst, dst + n, v);
  }
}

// Runs of f32 up to this long are moved by simd.h's copy_short_run, longer ones by memcpy
// (which measured faster for the 128-value runs of large planes).
inline constexpr int64_t kShortRun = 64;

// dst[0 .. n) = src[0 .. n), between local buffers: short f32 runs by masked vector moves.
template <typename C> inline void copy_run(const C* src, int64_t n, C* dst) {
  if constexpr (std::is_same_v<C, float>) {
    if (n <= kShortRun) return copy_short_run(src, n, dst);
  }
  std::copy(src, src + n, dst);
}

// The longest run an accessor's run_load/run_store is asked for at once (its stack buffers).
inline constexpr int64_t kRunChunk = 128;

// The lanes a run's last partial vector is computed over (map_tail).
inline constexpr int64_t kRunTail = 16;

// dst[j] = f(src[j]) for j < n < kRunTail, computed over kRunTail lanes at once (the lanes
// from n on map zeros and are dropped): one vector's work where the compiler's loop would
// take n scalar steps. f must be a pure function of its value.
template <typename V, typename R, typename F>
inline void map_tail(const V* src, int64_t n, R* dst, const F& f) {
  alignas(64) V in[kRunTail];
  alignas(64) R out[kRunTail];
  if constexpr (std::is_same_v<V, float>) {
    load_few(src, n, in);
  } else {
    for (int64_t l = 0; l < kRunTail; ++l)
      in[l] = l < n ? src[l] : V(0);
  }
  // One vector of lanes: a loop the vectoriser must take as such, since a loop of a constant 16
  // steps is otherwise unrolled first and left scalar (generated code is built without SLP).
#pragma omp simd
  for (int64_t l = 0; l < kRunTail; ++l)
    out[l] = f(in[l]);
  if constexpr (std::is_same_v<R, float>) {
    store_few(out, n, dst);
  } else {
    for (int64_t l = 0; l < n; ++l)
      dst[l] = out[l];
  }
}

// dst[j] = a[i + j along the last dim], for j in [0, len), as compute values of type C.
template <typename C, typename A>
inline void load_run(const A& a, Index<A::rank> i, int64_t len, C* dst) {
  constexpr int L = A::rank - 1;
  const int64_t start = i[L], end = start + len;
  if constexpr (RunLoader<A, C>) {
    for (int64_t s = start; s < end; s += kRunChunk) {
      i[L] = s;
      a.run_load(std::as_const(i), std::min(kRunChunk, end - s), dst + (s - start));
    }
  } else if constexpr (A::has_ptr && A::contig == 1) {
    // Every element a run of its own (a transposed view): one scalar load each, without the
    // run machinery (whose masked copies cost more than the element).
    for (int64_t j = 0; j < len; ++j) {
      i[L] = start + j;
      dst[j] = C(widen(*a.ptr(i)));
    }
  } else if constexpr (A::has_ptr) {
    for (int64_t s = start; s < end;) {
      int64_t e = std::min(end, (s / A::contig + 1) * A::contig);
      i[L] = s;
      const auto* p = a.ptr(i);
      C* d = dst + (s - start);
      if constexpr (std::is_same_v<typename A::value_type, float> && std::is_same_v<C, float>) {
        if (e - s <= kShortRun) {
          copy_short_run(p, e - s, d);
          s = e;
          continue;
        }
      }
      if constexpr (sixteen_bit_float<typename A::value_type> && std::is_same_v<C, float>)
        widen_run(p, e - s, d);
      else
        for (int64_t j = 0, n = e - s; j < n; ++j)
          d[j] = C(widen(p[j]));
      s = e;
    }
  } else {
    for (int64_t j = 0; j < len; ++j) {
      i[L] = start + j;
      dst[j] = C(a.load(i));
    }
  }
}

// A pointer to the run a[i .. i + len) as compute values: straight into the accessor's
// memory when the run is contiguous and stored as C, else staged in `tmp` by load_run().
template <typename C, typename A>
inline const C* view_run(const A& a, const Index<A::rank>& i, int64_t len, C* tmp) {
  if constexpr (A::has_ptr && std::is_same_v<typename A::value_type, C>) {
    if (run_contiguous<A>(i[A::rank - 1], len)) return a.ptr(i);
  }
  load_run(a, i, len, tmp);
  return tmp;
}

// Asks the cache for the run a[i .. i + len) ahead of its use (a no-op without ptr()).
template <typename A> inline void prefetch_run(const A& a, const Index<A::rank>& i, int64_t len) {
  if constexpr (A::has_ptr) {
    const char* p = reinterpret_cast<const char*>(a.ptr(i));
    const int64_t bytes = len * int64_t(sizeof(typename A::value_type));
    for (int64_t off = 0; off < bytes; off += 64)
      __builtin_prefetch(p + off);
  }
}

// out[i + j along the last dim] = epi(index, src[j]) for j in [0, len).
template <typename A, typename C, typename Epi>
inline void store_run(const A& out, Index<A::rank> i, int64_t len, const C* src, const Epi& epi) {
  constexpr int L = A::rank - 1;
  using T = typename A::value_type;
  const int64_t start = i[L], end = start + len;
  if constexpr (RunStorer<A, C>) {
    C tmp[kRunChunk];
    for (int64_t s = start; s < end; s += kRunChunk) {
      const int64_t n = std::min(kRunChunk, end - s);
      const C* q = src + (s - start);
      if constexpr (!std::is_same_v<Epi, NoEpilogue>) {
        for (int64_t j = 0; j < n; ++j) {
          i[L] = s + j;
          tmp[j] = C(epi(std::as_const(i), q[j]));
        }
        q = tmp;
      }
      i[L] = s;
      out.run_store(std::as_const(i), n, q);
    }
  } else if constexpr (A::has_ptr && A::contig == 1) {
    // Every element a run of its own: one scalar store each (as load_run).
    for (int64_t j = 0; j < len; ++j) {
      i[L] = start + j;
      if constexpr (std::is_same_v<Epi, NoEpilogue>)
        *out.ptr(i) = narrow<T>(src[j]);
      else
        *out.ptr(i) = narrow<T>(epi(std::as_const(i), src[j]));
    }
  } else if constexpr (A::has_ptr) {
    for (int64_t s = start; s < end;) {
      int64_t e = std::min(end, (s / A::contig + 1) * A::contig);
      i[L] = s;
      T* p = out.ptr(i);
      const C* q = src + (s - start);
      if constexpr (std::is_same_v<Epi, NoEpilogue> && std::is_same_v<T, float> &&
                    std::is_same_v<C, float>) {
        if (e - s <= kShortRun)
          copy_short_run(q, e - s, p);
        else
          std::copy(q, q + (e - s), p);
      } else if constexpr (std::is_same_v<Epi, NoEpilogue> && sixteen_bit_float<T> &&
                           std::is_same_v<C, float>) {
        narrow_run(q, e - s, p);
      } else if constexpr (std::is_same_v<Epi, NoEpilogue>) {
        for (int64_t j = 0, n = e - s; j < n; ++j)
          p[j] = narrow<T>(q[j]);
      } else {
        for (int64_t j = 0, n = e - s; j < n; ++j) {
          i[L] = s + j;
          p[j] = narrow<T>(epi(std::as_const(i), q[j]));
        }
      }
      s = e;
    }
  } else {
    for (int64_t j = 0; j < len; ++j) {
      i[L] = start + j;
      out.store(i, epi(std::as_const(i), src[j]));
    }
  }
}

template <typename A, typename C>
inline void store_run(const A& out, const Index<A::rank>& i, int64_t len, const C* src) {
  store_run(out, i, len, src, NoEpilogue{});
}

// Index i with dimension D set to x.
template <int D, int R> [[gnu::always_inline]] inline Index<R> with_index(Index<R> i, int64_t x) {
  i[D] = x;
  return i;
}

// Whether writer A (with epilogue Epi) is an epilogue writer whose value() may be computed for
// many outputs in one vectorised loop and stored through its target (accessor.h: store(i, v)
// is target().store(i, value(i, v))): f32 values, a target with ptr().
template <typename A, typename Epi> consteval bool vector_epilogue() {
  if constexpr (epilogue_of<A> && std::is_same_v<Epi, NoEpilogue>) {
    using T = std::remove_cvref_t<decltype(std::declval<const A&>().target())>;
    return T::has_ptr && std::is_same_v<typename T::value_type, float> &&
           std::is_same_v<compute_t<T>, float>;
  }
  return false;
}

// out[i + j along the last dim] = epi(index, src[j]) for j in [0, len), as store_run. Through
// an f32 epilogue writer (vector_epilogue) whose target has the run in memory, the values come
// from value() in one loop the compiler vectorises, written in place: a short run then costs a
// few vector instructions instead of a run_store call with its setup (the rows of the small
// depthwise planes spent about half their time there). The same values, so the same bits.
// `Len`, where not 0, is len known at compile time: the loop then compiles to straight-line
// vector code without the run-time loop's checks and scalar remainder (a convolution tile's
// rows of 14 or 7 positions spent more time there than in the loop's vector body).
template <int64_t Len = 0, typename A, typename Epi>
inline void store_run_vectors(const A& out, Index<A::rank> i, int64_t len, const float* src,
                              const Epi& epi) {
  if constexpr (vector_epilogue<A, Epi>()) {
    constexpr int L = A::rank - 1;
    const auto t = out.target();
    using T = std::remove_cvref_t<decltype(t)>;
    const int64_t n = Len > 0 ? Len : len;
    if (run_contiguous<T>(i[L], n)) {
      float* dst = t.ptr(i);
      // A plain loop (not omp simd, which keeps each lane's index in memory), vectorised
      // once value() is inlined. The index is counted in int, as the generated accessors take
      // it: counted in int64_t, each lane's int(start + j) may wrap for all the compiler
      // knows, and an operand read along the run (a bias along channels-last outputs, a
      // residual along a row) became a gather.
      const int start = int(i[L]);
#pragma GCC ivdep
      for (int j = 0; j < int(n); ++j)
        dst[j] = float(out.value(with_index<L>(i, start + j), src[j]));
      return;
    }
  }
  store_run(out, i, len, src, epi);
}

// Runs along the last dimension at most this long are cheaper stored across the channels
// (store_across_channels) than one run a channel (store_run): a run's fixed cost (its
// operands read, its target found, its tail's lanes masked) is that of about 8 elements.
inline constexpr int64_t kShortChannelRun = 8;

// out[i + c along dim 1] = epi(index, src[c * stride]) for c in [0, channels): one element of
// each channel at one position, a loop over the channels (a fused epilogue's per-channel
// operands read as the loop goes) where store_run would take a run of one element a channel.
// Each element's chain is the one store_run applies: the same bits.
template <typename A, typename C, typename Epi>
inline void store_across_channels(const A& out, Index<A::rank> i, int64_t channels, const C* src,
                                  int64_t stride, const Epi& epi) {
  static_assert(A::rank >= 2, "store_across_channels: a channel dimension");
  const int64_t c0 = i[1];
  for (int64_t c = 0; c < channels; ++c) {
    i[1] = c0 + c;
    out.store(std::as_const(i), epi(std::as_const(i), src[c * stride]));
  }
}

} // namespace vtc::kernels
