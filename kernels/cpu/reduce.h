// Reductions over the last axis of a rank-2 view: out[r] = reduce_j in[r, j] for a view
// [outer, reduced] → [outer]. The generated code presents any set of reduced axes as such a
// view through an accessor (or as planes, for global pooling). Each row is staged in a local
// buffer and reduced in the fixed lane order of vmath.h, so the result depends only on the
// row's length and values. Empty rows give the identity of the reduction (0 for sums, 1 for
// the product, -inf / +inf for max / min, -inf for the logarithms, NaN for the mean).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "parallel.h"
#include "simd.h"
#include "stage.h"
#include "vmath.h"

namespace vtc::kernels {

enum class ReduceKind { Sum, Mean, Max, Min, Prod, SumSquare, L1, L2, LogSum, LogSumExp };

// The reduction of x[0, n) of kind K in the fixed lane order. Integer compute types (the
// int64 of integer tensors) take every kind; their logarithms and L2 are computed in double
// and truncated.
template <ReduceKind K, typename C> C reduce_buffer(const C* x, int64_t n) {
  constexpr bool fp = std::is_floating_point_v<C>;
  if constexpr (K == ReduceKind::Sum) {
    return sum_fixed(x, n);
  } else if constexpr (K == ReduceKind::Mean) {
    if (!fp && n == 0) return C(0);
    return sum_fixed(x, n) / C(n);
  } else if constexpr (K == ReduceKind::Max) {
    return max_fixed(x, n);
  } else if constexpr (K == ReduceKind::Min) {
    return min_fixed(x, n);
  } else if constexpr (K == ReduceKind::Prod) {
    C acc[kLanes];
    for (int l = 0; l < kLanes; ++l)
      acc[l] = C(1);
    fold_lanes(acc, n, [&](C a, int64_t j) { return a * x[j]; });
    return combine_lanes(acc, [](C a, C b) { return a * b; });
  } else if constexpr (K == ReduceKind::SumSquare) {
    return sum_sq_dev_fixed(x, n, C(0));
  } else if constexpr (K == ReduceKind::L1) {
    return sum_fixed(x, n, [](C v) { return v < 0 ? -v : v; });
  } else if constexpr (K == ReduceKind::L2) {
    return C(std::sqrt(sum_sq_dev_fixed(x, n, C(0))));
  } else if constexpr (K == ReduceKind::LogSum) {
    return C(std::log(sum_fixed(x, n)));
  } else {
    static_assert(K == ReduceKind::LogSumExp);
    const C m = max_fixed(x, n);
    if constexpr (fp) {
      if (std::isinf(m)) return m;
      return std::log(sum_fixed(x, n, [m](C v) { return exp_fast(v - m); })) + m;
    } else {
      double s = 0;
      for (int64_t j = 0; j < n; ++j)
        s += std::exp(double(x[j] - m));
      return n == 0 ? m : C(std::log(s) + double(m));
    }
  }
}

namespace detail {

#if defined(__AVX512F__)
// sums[i] = sum_fixed(rows + i * len, len) for 16 rows at once, the same bits: row i's lane
// accumulators are one vector (the tail of a row added under a mask, so that lanes past it
// stay as they are), and the fixed tree of sum_lanes (lanes l and l + w for w = 8, 4, 2, 1)
// runs over the 16 rows together once the accumulators are transposed.
inline void sum_fixed_16_rows(const float* rows, int64_t len, float* sums) {
  Vec<float> acc[16];
  const int64_t full = len / kLanes * kLanes;
  const __mmask16 tail = lane_range(0, len - full);
  for (int i = 0; i < 16; ++i) {
    const float* x = rows + i * len;
    __m512 a = _mm512_setzero_ps();
    for (int64_t j = 0; j < full; j += kLanes)
      a = _mm512_add_ps(a, _mm512_loadu_ps(x + j));
    if (tail) a = _mm512_mask_add_ps(a, tail, a, _mm512_maskz_loadu_ps(tail, x + full));
    acc[i].v = a;
  }
  transpose_16x16(acc); // acc[l]: lane l of every row
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l)
      acc[l].v = _mm512_add_ps(acc[l].v, acc[l + w].v);
  acc[0].store(sums);
}
#endif

// No row in memory: every row is staged by load_row.
struct RowsStaged {
  template <typename I> std::nullptr_t operator()(I) const { return nullptr; }
};

// out[r] for r < outer, where load_row(r, dst) fills dst[0, len) with row r and
// store(r, v) writes the result; row_at(r), where given, is row r in memory (or null), reduced
// where it lies instead of staged.
template <ReduceKind K, typename C, typename LoadRow, typename Store, typename RowAt = RowsStaged>
void reduce_rows(int64_t outer, int64_t len, const LoadRow& load_row, const Store& store,
                 const RowAt& row_at = {}) {
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(len, 1));
  parallel_chunks(outer, grain, [&](int64_t r0, int64_t r1) {
    C* buf = scratch<C, 0>(len);
    int64_t r = r0;
#if defined(__AVX512F__)
    if constexpr ((K == ReduceKind::Sum || K == ReduceKind::Mean) && std::is_same_v<C, float>) {
      if (len > 0) {
        C* rows = scratch<C, 1>(16 * len);
        alignas(64) C sums[16];
        for (; r + 16 <= r1; r += 16) {
          // Sixteen rows lying one after another in memory are summed where they lie.
          const C* block = row_at(r);
          for (int i = 1; block && i < 16; ++i)
            if (row_at(r + i) != block + i * len) block = nullptr;
          if (!block) {
            for (int i = 0; i < 16; ++i)
              load_row(r + i, rows + i * len);
            block = rows;
          }
          sum_fixed_16_rows(block, len, sums);
          if constexpr (K == ReduceKind::Mean) // the 16 divisions as one
            _mm512_store_ps(sums, _mm512_div_ps(_mm512_load_ps(sums), _mm512_set1_ps(C(len))));
          for (int i = 0; i < 16; ++i)
            store(r + i, sums[i]);
        }
      }
    }
#endif
    for (; r < r1; ++r) {
      const C* row = row_at(r);
      if (!row) {
        load_row(r, buf);
        row = buf;
      }
      store(r, reduce_buffer<K>(row, len));
    }
  });
}

// Where plane (b, ch) of `in` lies in memory as one run of h * w values of type C; null when
// it does not (every row is asked, so any mapping may answer).
template <typename C, typename InA>
const C* plane_in_memory(const InA& in, int64_t b, int64_t ch, int64_t h, int64_t w) {
  const C* p = run_target<C>(in, Index<4>{b, ch, 0, 0}, w);
  for (int64_t y = 1; p && y < h; ++y)
    if (run_target<C>(in, Index<4>{b, ch, y, 0}, w) != p + y * w) return nullptr;
  return p;
}

// out[n, c, 0, 0] = reduce of the plane in[n, c, :, :]; planes in memory are reduced where
// they lie, others staged first (the same values in the same order either way).
template <ReduceKind K, typename OutA, typename InA>
void reduce_planes(const OutA& out, const InA& in, int64_t n, int64_t c, int64_t h, int64_t w) {
  using C = compute_t<InA>;
  // Row r is plane (r / c, r % c); for one image the divisions (a few per row, as much as
  // the sum of a small plane) are left out.
  auto reduce = [&](auto image, auto channel) {
    reduce_rows<K, C>(
        n * c, h * w,
        [&](int64_t r, C* dst) {
          for (int64_t y = 0; y < h; ++y)
            load_run(in, Index<4>{image(r), channel(r), y, 0}, w, dst + y * w);
        },
        [&](int64_t r, C v) {
          out.store(Index<4>{image(r), channel(r), 0, 0}, v);
        },
        [&](int64_t r) { return plane_in_memory<C>(in, image(r), channel(r), h, w); });
  };
  if (n == 1)
    reduce([](int64_t) { return int64_t(0); }, [](int64_t r) { return r; });
  else
    reduce([c](int64_t r) { return r / c; }, [c](int64_t r) { return r % c; });
}

} // namespace detail

// out[r] = reduce_j in[r, j] for r < outer, j < reduced (out rank 1, in rank 2). Rows that lie
// in memory are reduced where they lie, as reduce_planes does (a ReduceMean over the spatial
// axes then costs what GlobalAveragePool does); others are staged first, the same values in
// the same order either way.
template <ReduceKind K, Accessor OutA, Accessor InA>
void reduce(const OutA& out, const InA& in, int64_t outer, int64_t reduced) {
  static_assert(OutA::rank == 1 && InA::rank == 2, "reduce: [outer, reduced] -> [outer]");
  using C = compute_t<InA>;
  detail::reduce_rows<K, C>(
      outer, reduced,
      [&](int64_t r, C* dst) {
        load_run(in, Index<2>{r, 0}, reduced, dst);
      },
      [&](int64_t r, C v) { out.store(Index<1>{r}, v); },
      [&](int64_t r) -> const C* {
        return reduced > 0 ? run_target<C>(in, Index<2>{r, 0}, reduced) : nullptr;
      });
}

} // namespace vtc::kernels
