// A convolution followed by max pooling of its output (a network's stem: conv, batch norm,
// ReLU, then 3x3 max pooling at stride 2), as one kernel that never writes the convolution's
// output plane. Each task walks a band of pooled rows, computing the convolution rows their
// windows cover one at a time (through the conv's epilogue chain into a row buffer,
// ConvRowBuffer) and pooling each along its columns at once; the band's first rows are
// computed again by the band above it, a row or two per band.
//
// Same bits as conv2d() then max_pool2d(): each convolution output is the same chain over k
// from zero (conv_rows.h's row kernel, or std::fma in the same order), stored through the same
// epilogue; each pooled value is the maximum over the window's taps as pool.h takes it,
// padding taps left out (max_nan(m, -inf) is m, which is what pool.h's -inf padding gives).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "conv.h"
#include "parallel.h"
#include "pool.h"
#include "row_phases.h"
#include "stage.h"

namespace vtc::kernels {

// One convolution row of every channel, per thread: where generated code stores the
// convolution's epilogue chain, channel c's row at c * width of a per-thread scratch buffer.
// The index's batch and row are ignored (the kernel pools each row before computing the next).
struct ConvRowBuffer {
  using value_type = float;
  static constexpr int rank = 4;
  static constexpr int64_t contig = int64_t(1) << 30;
  static constexpr bool has_ptr = true;
  static constexpr int kSlot = 14; // parallel.h scratch slot, used by no other kernel

  int64_t channels = 1, width = 1;

  float* base() const { return scratch<float, kSlot>(channels * width); }
  float* ptr(const Index<4>& i) const { return base() + i[1] * width + i[3]; }
  float load(const Index<4>& i) const { return *ptr(i); }
  template <typename V> void store(const Index<4>& i, V v) const { *ptr(i) = float(v); }
};

namespace detail {

// Convolution row y of image nb (every channel) stored through p.out, computed directly: the
// fallback where the row kernel cannot run (no AVX-512, input rows not in memory).
template <typename P> void conv_row_direct(const P& p, int64_t nb, int64_t y, float* row) {
  const Conv2dShape& s = p.s;
  for (int64_t co = 0; co < s.c_out; ++co) {
    const int64_t g = co / p.cout_g;
    for (int64_t x = 0; x < s.w_out; ++x) {
      float acc = 0.0f;
      for (int64_t ci = 0; ci < p.cin_g; ++ci)
        for (int64_t r = 0; r < s.kh; ++r)
          for (int64_t q = 0; q < s.kw; ++q) {
            const int64_t hy = y * s.stride_h + r * s.dil_h - s.pad_top;
            const int64_t hx = x * s.stride_w + q * s.dil_w - s.pad_left;
            const bool inside = hy >= 0 && hy < s.h && hx >= 0 && hx < s.w;
            const float b =
                inside ? float(p.in.load(Index<4>{nb, g * p.cin_g + ci, hy, hx})) : 0.0f;
            acc = std::fma(float(p.wt.load(Index<4>{co, ci, r, q})), b, acc);
          }
      row[x] = acc;
    }
    store_run(p.out, Index<4>{nb, co, y, 0}, s.w_out, row, p.epi);
  }
}

// dst[x] = max over the rows in order of rows[r][x] (K of them when known, else count), x < n
// (n a whole number of vectors): max_nan where some row holds a NaN (Nan), else max_ordered
// (the same values then: max_nan differs only on NaN).
template <int K, bool Nan>
inline void max_rows(const float* const* rows, int64_t count, int64_t n, float* dst) {
  using V = Vec<float>;
  const int64_t k = K > 0 ? K : count;
  for (int64_t x = 0; x < n; x += V::width) {
    V m = V::set1(-std::numeric_limits<float>::infinity());
    for (int64_t r = 0; r < k; ++r) {
      const V v = V::load(rows[r] + x);
      m = Nan ? max_nan(m, v) : max_ordered(m, v);
    }
    m.store(dst + x);
  }
}

inline void max_rows(const float* const* rows, int64_t count, bool nan, int64_t n, float* dst) {
  if (count == 3)
    nan ? max_rows<3, true>(rows, count, n, dst) : max_rows<3, false>(rows, count, n, dst);
  else
    nan ? max_rows<0, true>(rows, count, n, dst) : max_rows<0, false>(rows, count, n, dst);
}

// The windows of one pooled row along a convolution row: dst[x] = max over the taps q in
// order of src[x * stride_w + q * dil_w - pad_left] inside the row. The row is split into its
// stride phases (row_phases.h, -inf around them); each tap's values are then a row of their
// own, and the maximum over taps is max_rows(). dst is whole vectors.
class PoolColumns {
public:
  explicit PoolColumns(const Pool2dShape& ps)
      : phases_(ps.w, ps.w_out, ps.kw, ps.stride_w, ps.dil_w, ps.pad_left, Vec<float>::width),
        pitch_((ps.w_out + Vec<float>::width - 1) / Vec<float>::width * Vec<float>::width) {}
  int64_t pitch() const { return pitch_; }
  int64_t buffer_size() const { return phases_.buffer_size(); }
  void run(const float* src, bool nan, float* buf, float* dst) const {
    phases_.split(src, -std::numeric_limits<float>::infinity(), buf);
    const float* taps[kMaxPoolTaps];
    for (int64_t q = 0; q < phases_.taps(); ++q)
      taps[q] = buf + phases_.tap(q);
    max_rows(taps, phases_.taps(), nan, pitch_, dst);
  }

private:
  RowPhases phases_;
  int64_t pitch_ = 0;
};

} // namespace detail

// Whether conv2d_max_pool() can take these shapes: the pooling reads exactly the
// convolution's output, `rows` one row of every output channel, windows at most
// kMaxPoolTaps wide.
inline bool conv_max_pool_shapes_agree(const Conv2dShape& cs, const Pool2dShape& ps,
                                       const ConvRowBuffer& rows) {
  return ps.n == cs.n && ps.c == cs.c_out && ps.h == cs.h_out && ps.w == cs.w_out &&
         rows.channels == cs.c_out && rows.width == cs.w_out && ps.kh >= 1 && ps.kw >= 1 &&
         ps.kw <= kMaxPoolTaps;
}

// out = max_pool2d(conv2d(in, w) through conv_out), where conv_out stores the convolution's
// epilogue chain into `rows` (generated code makes it so). Constant weights (`wref` given)
// are packed once per program.
//
// Each convolution row is pooled along its columns as soon as it is computed, into a ring
// of the last (kh - 1) * dil_h + 1 such rows per thread; each pooled row is then the maximum
// of its window's rows in the ring. Taking the maximum along the columns first keeps the
// result of the window order (r, q): the first of equal values (+0 before -0) and the last
// NaN win either way.
template <typename OutA, typename ConvOutA, typename InA, typename WA>
void conv2d_max_pool(const OutA& out, const ConvOutA& conv_out, const ConvRowBuffer& rows,
                     const InA& in, const WA& w, const Conv2dShape& cs, const Pool2dShape& ps,
                     ConstantRef wref = {}) {
  using C = float;
  if (!conv_max_pool_shapes_agree(cs, ps, rows))
    throw std::invalid_argument("conv2d_max_pool: pooling shape does not follow the convolution");
  if (ps.n <= 0 || ps.c <= 0 || ps.h_out <= 0 || ps.w_out <= 0) return;
  const int64_t cin_g = cs.c_in / cs.groups, cout_g = cs.c_out / cs.groups, khw = cs.kh * cs.kw;
  const detail::ConvProblem<C, ConvOutA, InA, WA, NoEpilogue> p{
      {in, cs, cin_g, khw}, {w, cs.groups, cout_g, cs.kh, cs.kw}, conv_out, NoEpilogue{}};
  // The convolution's rows by the row kernel where it runs, else directly.
  std::shared_ptr<const C> packed;
  const C* a = nullptr;
  bool by_rows = false;
#if defined(__AVX512F__)
  detail::ConvRowsPlan plan;
  if constexpr (rows_in_memory<C, InA>) {
    if (conv_rows_fit(cs) && run_contiguous<InA>(0, cs.w)) {
      by_rows = true;
      a = detail::rows_packed_a<C>(p, cs, wref, packed);
      plan = detail::conv_rows_plan(p);
    }
  }
#endif
  const detail::PoolColumns columns(ps);
  const int64_t pitch = columns.pitch(), plane = ps.c * pitch;
  const int64_t span = (ps.kh - 1) * ps.dil_h + 1; // the ring's rows
  // Bands of pooled rows, two per thread per image: few rows computed twice, and a thread
  // that wakes late still gets a share.
  const int64_t bands = std::min<int64_t>(ps.h_out, 2 * int64_t(max_threads()));
  const int64_t band_rows = (ps.h_out + bands - 1) / bands;
  parallel_for(
      ps.n * bands,
      [&](int64_t t) {
        const int64_t nb = t / bands, i0 = t % bands * band_rows;
        const int64_t i1 = std::min(ps.h_out, i0 + band_rows);
        C* ring = scratch<C, 15>(span * plane);
        uint8_t* ring_nan = scratch<uint8_t, 16>(span);
        C* row = scratch<C, 7>(std::max(cs.w_out, pitch));
        C* phases = scratch<C, 17>(columns.buffer_size());
        std::vector<const C*> window(size_t(ps.kh)), channel(size_t(ps.kh));
        int64_t next = std::numeric_limits<int64_t>::min(); // first row not in the ring
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t y0 = i * ps.stride_h - ps.pad_top;
          const int64_t lo = std::max<int64_t>(0, y0), hi = std::min(cs.h_out, y0 + span);
          for (int64_t y = std::max(lo, next); y < hi; ++y) {
            if (by_rows) {
#if defined(__AVX512F__)
              for (int64_t g = 0; g < cs.groups; ++g)
                detail::conv_row(p, a, plan, nb, g, y);
#endif
            } else {
              detail::conv_row_direct(p, nb, y, row);
            }
            const C* computed = rows.base();
            const bool nan = detail::any_nan(computed, cs.c_out * cs.w_out);
            C* pooled = ring + y % span * plane;
            ring_nan[y % span] = nan;
            for (int64_t c = 0; c < ps.c; ++c)
              columns.run(computed + c * cs.w_out, nan, phases, pooled + c * pitch);
          }
          next = std::max(next, hi);
          // The window's rows inside the convolution's output, in order (r).
          int count = 0;
          bool nan = false;
          for (int64_t r = 0; r < ps.kh; ++r) {
            const int64_t y = y0 + r * ps.dil_h;
            if (y < 0 || y >= cs.h_out) continue;
            window[size_t(count++)] = ring + y % span * plane;
            nan = nan || ring_nan[y % span];
          }
          for (int64_t c = 0; c < ps.c; ++c) {
            for (int k = 0; k < count; ++k)
              channel[size_t(k)] = window[size_t(k)] + c * pitch;
            detail::max_rows(channel.data(), count, nan, pitch, row);
            store_run(out, Index<4>{nb, c, i, 0}, ps.w_out, row);
          }
        }
      },
      true);
}

} // namespace vtc::kernels
