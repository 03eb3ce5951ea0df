// The copy of a transpose on the cpu: out[i] = in[i] where the input runs along a dimension J
// before the last (consecutive i[J] are consecutive addresses) and the output along the last.
// The generic copy (elementwise.h) walks the output's rows and reads such an input one element
// a stride apart, paying a row's fixed cost for every row, however short; this copy moves tiles
// of kTransposeTile x kTransposeTile elements of dimensions J and R-1 instead: each run of the
// input along J is loaded whole, and each output row is stored from a column of the tile.
// 32-bit values whose copy leaves their bits as they are (f32, i32) move through vector
// registers, transposed there, where both sides' runs lie behind ptr(); other tiles move as
// compute values through load_run and store_run (stage.h), as the generic copy's staged path
// moves them. Either way the bits are those of the generic copy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "accessor.h"
#include "parallel.h"
#include "stage.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace vtc::kernels {

// A tile's extent along J and along R-1: a 64-byte line of f32, a vector register.
inline constexpr int64_t kTransposeTile = 16;

namespace detail {

// Values a copy moves as their 32 bits: to_compute and from_compute give them back unchanged.
template <typename T>
inline constexpr bool copies_as_bits32 =
    std::is_same_v<T, float> || std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t>;

#if defined(__AVX512F__)
inline constexpr bool kTransposeInRegisters = true;

// r[k] becomes column k of the 16 x 16 block of 32-bit lanes whose row l is r[l]: pairs of
// rows interleaved by 32 and 64 bits (each 128-bit lane then holds a 4 x 4 block transposed),
// then the 128-bit lanes gathered across four rows twice.
inline void transpose16x16(__m512 r[16]) {
  __m512 t[16];
  for (int k = 0; k < 8; ++k) {
    t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 4; ++k) {
    const __m512d a = _mm512_castps_pd(t[4 * k]), b = _mm512_castps_pd(t[4 * k + 1]),
                  c = _mm512_castps_pd(t[4 * k + 2]), d = _mm512_castps_pd(t[4 * k + 3]);
    r[4 * k] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * k + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * k + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  // r[4k + c], 128-bit lane q: column 4q + c of rows 4k .. 4k + 3.
  for (int c = 0; c < 4; ++c) {
    const __m512 u0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88);
    const __m512 u1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xdd);
    const __m512 u2 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
    const __m512 u3 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xdd);
    t[c] = _mm512_shuffle_f32x4(u0, u2, 0x88);
    t[4 + c] = _mm512_shuffle_f32x4(u1, u3, 0x88);
    t[8 + c] = _mm512_shuffle_f32x4(u0, u2, 0xdd);
    t[12 + c] = _mm512_shuffle_f32x4(u1, u3, 0xdd);
  }
  for (int k = 0; k < 16; ++k)
    r[k] = t[k];
}
#else
inline constexpr bool kTransposeInRegisters = false;
#endif

} // namespace detail

// out[i] = in[i] for every index i of `shape`, where `in_t` is the input read with dimensions J
// and R-1 exchanged (its last dimension runs along J, so its runs are the input's).
template <int J, Accessor Out, Accessor InT>
void copy_transposed(const Out& out, const Index<Out::rank>& shape, const InT& in_t) {
  constexpr int R = Out::rank;
  static_assert(InT::rank == R && J >= 0 && J < R - 1,
                "copy_transposed: J a dimension before the last, both operands of one rank");
  constexpr int64_t T = kTransposeTile;
  int64_t outer = 1;
  for (int k = 0; k < R; ++k) {
    if (shape[size_t(k)] <= 0) return;
    if (k != J && k != R - 1) outer *= shape[size_t(k)];
  }
  const int64_t ej = shape[size_t(J)], el = shape[size_t(R - 1)];
  const int64_t tj = (ej + T - 1) / T, tl = (el + T - 1) / T;
  using V = typename InT::value_type;
  using C = compute_t<InT>;
  constexpr bool in_registers = detail::kTransposeInRegisters && Out::has_ptr && InT::has_ptr &&
                                std::is_same_v<typename Out::value_type, V> &&
                                detail::copies_as_bits32<V>;
  auto move_tiles = [&](int64_t t0, int64_t t1) {
    alignas(64) C tile[T][T];
    alignas(64) C row[T];
    for (int64_t t = t0; t < t1; ++t) {
      int64_t o = t / (tj * tl);
      const int64_t r = t % (tj * tl);
      const int64_t j0 = r / tl * T, l0 = r % tl * T;
      const int64_t nj = std::min(T, ej - j0), nl = std::min(T, el - l0);
      Index<R> i{};
      for (int d = R - 2; d >= 0; --d) {
        if (d == J) continue;
        i[size_t(d)] = o % shape[size_t(d)];
        o /= shape[size_t(d)];
      }
      Index<R> it = i; // the same elements in in_t: i[J] and i[R-1] exchanged
      it[size_t(R - 1)] = j0;
      i[size_t(R - 1)] = l0;
      if constexpr (in_registers) {
        if (run_contiguous<InT>(j0, nj) && run_contiguous<Out>(l0, nl)) {
#if defined(__AVX512F__)
          const __mmask16 mj = __mmask16((1u << nj) - 1), ml = __mmask16((1u << nl) - 1);
          __m512 v[16];
          for (int64_t l = 0; l < T; ++l) {
            it[size_t(J)] = l0 + l;
            v[l] = l < nl ? _mm512_maskz_loadu_ps(mj, in_t.ptr(it)) : _mm512_setzero_ps();
          }
          detail::transpose16x16(v);
          for (int64_t j = 0; j < nj; ++j) {
            i[size_t(J)] = j0 + j;
            _mm512_mask_storeu_ps(out.ptr(i), ml, v[j]);
          }
#endif
          continue;
        }
      }
      for (int64_t l = 0; l < nl; ++l) {
        it[size_t(J)] = l0 + l;
        load_run(in_t, it, nj, tile[l]);
      }
      for (int64_t j = 0; j < nj; ++j) {
        for (int64_t l = 0; l < nl; ++l)
          row[l] = tile[l][j];
        i[size_t(J)] = j0 + j;
        store_run(out, i, nl, row);
      }
    }
  };
  // About 32K elements a chunk, as the generic copy takes them: a small copy stays on one
  // thread.
  parallel_chunks(outer * tj * tl, std::max<int64_t>(1, 32768 / (T * T)), move_tiles);
}

} // namespace vtc::kernels
