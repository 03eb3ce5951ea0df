// Elementwise kernels: for_each_index() runs a function at every index of a shape, spread
// over the threads; map() computes out[i] = f(a[i], b[i], ...) for any number of inputs
// (operands of the output's rank; broadcasting is the accessors' business); copy() is map()
// with the identity, the generic kernel for data movement that stays physical (a mapped
// input accessor read into a dense output, or the reverse).
//
// Fast path: when every operand has ptr() and the last dimension splits into runs that are
// contiguous for all of them (runs of the gcd of their `contig`), the inner loop walks raw
// pointers — the compiler vectorises it — and computes narrow(f(widen(x)...)), which is
// from_compute(f(to_compute(x)...)) bit for bit (convert.h): exactly what load()/store()
// would give, so fast and slow paths agree bit for bit. Otherwise each row moves through
// staging buffers a run at a time (stage.h), which gives the same values again.
#pragma once

#include <array>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <utility>

#include "accessor.h"
#include "convert.h"
#include "parallel.h"
#include "stage.h"

namespace vtc::kernels {

// Elements of a row one thread takes at a time in map() when rows are long.
inline constexpr int64_t kMapPiece = 32768;
// Elements of a pointer run of 16-bit floats converted and computed at a time (map_run_ptr).
inline constexpr int64_t kHalfBlock = 64;

// The identity function: map(out, shape, Identity{}, in) is the copy kernel.
struct Identity {
  template <typename V> V operator()(V v) const { return v; }
};

namespace detail {

// Index of row `row` of the outer dims (all but the last) of `shape`, last coordinate 0.
template <int R> inline Index<R> row_index(const Index<R>& shape, int64_t row) {
  Index<R> i{};
  for (int k = R - 2; k >= 0; --k) {
    i[k] = row % shape[k];
    row /= shape[k];
  }
  return i;
}

// Advances `i` to the next row of the outer dims of `shape` (row-major), without the
// divisions of row_index; the last coordinate is left as it is.
template <int R> inline void next_row(Index<R>& i, const Index<R>& shape) {
  for (int k = R - 2; k >= 0; --k) {
    if (++i[k] < shape[k]) return;
    i[k] = 0;
  }
}

template <int R> inline int64_t outer_count(const Index<R>& shape) {
  int64_t n = 1;
  for (int k = 0; k + 1 < R; ++k)
    n *= shape[k];
  return n;
}

// A storage-to-storage copy of 16-bit floats equal to from_compute(to_compute(x)): the
// value is unchanged except that a signalling NaN becomes quiet (as the conversion does).
inline uint16_t requiet(half, uint16_t b) {
  return ((b & 0x7c00) == 0x7c00 && (b & 0x3ff)) ? uint16_t(b | 0x200) : b;
}
inline uint16_t requiet(bfloat16, uint16_t b) {
  return ((b & 0x7f80) == 0x7f80 && (b & 0x7f)) ? uint16_t(b | 0x40) : b;
}

template <typename Out, typename F, typename... In>
inline void map_run_ptr(const Out& out, const Index<Out::rank>& i, int64_t len, const F& f,
                        const In&... in) {
  using TO = typename Out::value_type;
  TO* po = out.ptr(i); // may alias an input (in-place elementwise): no __restrict
  if constexpr (sizeof...(In) == 1 && std::is_same_v<F, Identity> &&
                (std::is_same_v<TO, half> || std::is_same_v<TO, bfloat16>)&&(
                    std::is_same_v<typename In::value_type, TO> && ...)) {
    const TO* pi = (in.ptr(i), ...);
    for (int64_t j = 0; j < len; ++j)
      po[j].bits = requiet(TO{}, pi[j].bits);
  } else if constexpr (sixteen_bit_float<TO> ||
                       (sixteen_bit_float<typename In::value_type> || ...)) {
    // Blocks of kHalfBlock: 16-bit floats widened and narrowed a run at a time (convert.h), f
    // over plain arrays in between; the same values as element by element.
    constexpr int64_t B = kHalfBlock;
    auto widen_block = [](const auto* p, int64_t n, auto* d) {
      if constexpr (sixteen_bit_float<std::remove_cv_t<std::remove_pointer_t<decltype(p)>>>)
        widen_run(p, n, d);
      else
        for (int64_t j = 0; j < n; ++j)
          d[j] = widen(p[j]);
    };
    for (int64_t s = 0; s < len; s += B) {
      const int64_t n = std::min(B, len - s);
      using Res = std::decay_t<decltype(f(widen(*in.ptr(i))...))>;
      Res res[B];
      [&](auto*... bufs) {
        (widen_block(in.ptr(i) + s, n, bufs), ...);
        for (int64_t j = 0; j < n; ++j)
          res[j] = f(bufs[j]...);
      }(std::array<decltype(widen(*in.ptr(i))), B>{}.data()...);
      if constexpr (sixteen_bit_float<TO> && std::is_same_v<Res, float>)
        narrow_run(res, n, po + s);
      else
        for (int64_t j = 0; j < n; ++j)
          po[s + j] = narrow<TO>(res[j]);
    }
  } else {
    [&](const auto*... p) {
      for (int64_t j = 0; j < len; ++j)
        po[j] = narrow<TO>(f(widen(p[j])...));
    }(in.ptr(i)...);
  }
}

} // namespace detail

// Calls fn(index) for every index of `shape` (row-major order within a thread; rows of the
// outer dimensions are spread over the threads).
template <int R, typename F> void for_each_index(const Index<R>& shape, F&& fn) {
  if constexpr (R == 0) {
    fn(Index<0>{});
  } else {
    for (int k = 0; k < R; ++k)
      if (shape[size_t(k)] <= 0) return;
    const int64_t inner = shape[size_t(R - 1)], rows = detail::outer_count(shape);
    const int64_t grain = std::max<int64_t>(1, 16384 / inner);
    parallel_chunks(rows, grain, [&](int64_t r0, int64_t r1) {
      Index<R> i = detail::row_index(shape, r0);
      for (int64_t r = r0; r < r1; ++r, detail::next_row(i, shape)) {
        for (int64_t j = 0; j < inner; ++j) {
          i[size_t(R - 1)] = j;
          fn(std::as_const(i));
        }
      }
    });
  }
}

// out[i] = f(in[i]...) for every index i of `shape`.
template <Accessor Out, typename F, Accessor... In>
void map(const Out& out, const Index<Out::rank>& shape, const F& f, const In&... in) {
  constexpr int R = Out::rank;
  static_assert(((In::rank == R) && ...), "map: every operand has the output's rank");
  if constexpr (R == 0) {
    out.store(Index<0>{}, f(in.load(Index<0>{})...));
  } else {
    for (int k = 0; k < R; ++k)
      if (shape[size_t(k)] <= 0) return;
    constexpr bool all_ptr = Out::has_ptr && (In::has_ptr && ...);
    const int64_t inner = shape[size_t(R - 1)], rows = detail::outer_count(shape);
    int64_t seg = 0;
    if constexpr (all_ptr) {
      seg = Out::contig;
      ((seg = std::gcd(seg, In::contig)), ...);
      seg = std::min(seg, inner);
    }
    // Rows longer than a piece are split into pieces (a whole number of runs), so that a
    // tensor of few long rows — a flattened activation, a 1-D tensor — spreads over the
    // threads too; each element is still computed alone, so the split changes no value.
    const int64_t run = seg >= 4 ? seg : kRunChunk;
    const int64_t piece =
        inner > 2 * kMapPiece ? std::max<int64_t>(1, kMapPiece / run) * run : inner;
    const int64_t pieces = (inner + piece - 1) / piece;
    const int64_t grain = std::max<int64_t>(1, 32768 / piece);
    parallel_chunks(rows * pieces, grain, [&](int64_t t0, int64_t t1) {
      // The row of t, advanced as t moves to the next row (a division a row cost as much as
      // copying a short row).
      Index<R> row = detail::row_index(shape, t0 / pieces);
      for (int64_t t = t0; t < t1; ++t) {
        if (t > t0 && t % pieces == 0) detail::next_row(row, shape);
        Index<R> i = row;
        const int64_t begin = t % pieces * piece, end = std::min(inner, begin + piece);
        if constexpr (all_ptr) {
          if (seg >= 4) {
            for (int64_t s = begin; s < end; s += seg) {
              i[size_t(R - 1)] = s;
              detail::map_run_ptr(out, i, std::min(seg, end - s), f, in...);
            }
            continue;
          }
        }
        // Runs through staging buffers: every operand is loaded a run at a time (computed
        // operands evaluate theirs in one loop), f runs over plain arrays, and the results
        // are stored a run at a time — the same values as element by element.
        using Res = std::decay_t<decltype(f(std::declval<compute_t<In>>()...))>;
        for (int64_t s = begin; s < end; s += kRunChunk) {
          const int64_t n = std::min(kRunChunk, end - s);
          i[size_t(R - 1)] = s;
          Res res[kRunChunk];
          if constexpr (sizeof...(In) == 1 && std::is_same_v<F, Identity>) {
            (load_run(in, i, n, res), ...); // the copy kernel: loaded straight into the results
          } else {
            [&](auto*... bufs) {
              (load_run(in, i, n, bufs), ...);
              for (int64_t j = 0; j < n; ++j)
                res[j] = f(bufs[j]...);
            }(std::array<compute_t<In>, kRunChunk>{}.data()...);
          }
          store_run(out, i, n, res);
        }
      }
    });
  }
}

// The generic copy kernel: out[i] = in[i].
template <Accessor Out, Accessor In>
void copy(const Out& out, const Index<Out::rank>& shape, const In& in) {
  map(out, shape, Identity{}, in);
}

} // namespace vtc::kernels
