// 2-D convolution, NCHW, over accessors: out[n, co, y, x] = epi(index, sum over
// (ci, r, s) of W[co, ci, r, s] * In[n, g*Cin_g + ci, y*sh - pad_top + r*dh,
// x*sw - pad_left + s*dw]) with groups (g = co / Cout_g), strides, dilations and padding
// (reads outside the input are zero; bottom and right pads show only in the output size the
// caller gives). The bias is an epilogue: conv2d(out, in, w, shape, bias_epilogue(bias)).
//
// Several kernels, one summation order. The general one is an implicit GEMM on the engine of
// gemm_core.h — batch (n, g), M = Cout_g, N = Hout*Wout, K = Cin_g*kh*kw with k = (ci, r, s)
// — whose B panels are packed straight from the input (im2col-free: a 1x1 filter's rows as
// they lie, a wider filter's from each channel's padded plane split into stride phases, 16
// columns per permute); on large planes it runs over input planes staged once with their
// padding and split into stride phases, whose rows are the B rows as they lie
// (PaddedPlaneConvProblem), and on small planes at stride 1 over the same staged planes with
// its B vectors loaded from them as they lie, no panels packed, or with vectors over output
// channels where those fill them (conv_direct.h); output planes smaller than a vector run it
// transposed, and stems (few values per output) and stride-2 convolutions with weights that
// fit L2 one output row at a time over B copied from the input rows split into phases
// (conv_rows.h; a max pooling of a stem's output pooled as the rows come, conv_max_pool.h).
// The direct depthwise kernel (Cin_g == 1) stages each padded input plane in a local buffer,
// or, for narrow f32 planes, makes each input row's tap vectors by permutes
// (depthwise_rows.h), or, for small planes, computes a vector of channels at once
// (depthwise_channels.h). All compute acc = 0; acc = fma(W, In,
// acc) over k in order, padding positions included as zeros, so they give the same bits and
// conv2d() may pick either by shape.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "constant_packs.h"
#include "conv_direct.h"
#include "conv_pointwise.h"
#include "conv_rows.h"
#include "conv_shape.h"
#include "conv_winograd.h"
#include "depthwise_channels.h"
#include "depthwise_rows.h"
#include "gemm_core.h"
#include "simd.h"
#include "stage.h"
#include "window_phases.h"

namespace vtc::kernels {

// The epilogue adding bias[co] (a rank-1 accessor) to the accumulated value.
template <typename BiasA> struct BiasEpilogue {
  BiasA bias;
  template <typename V> V operator()(const Index<4>& i, V v) const {
    return v + V(bias.load(Index<1>{i[1]}));
  }
};
template <typename BiasA> BiasEpilogue<BiasA> bias_epilogue(const BiasA& b) {
  return {b};
}

namespace detail {

inline int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
inline int64_t ceil_div(int64_t a, int64_t b) {
  return -floor_div(-a, b);
}

// dst[j] = a[i + j*stride along the last dim] for j < count.
template <typename C, typename A>
inline void load_strided_run(const A& a, Index<A::rank> i, int64_t count, int64_t stride, C* dst) {
  constexpr int L = A::rank - 1;
  const int64_t start = i[L];
  if (stride == 1) return load_run(a, i, count, dst);
  if (run_contiguous<A>(start, (count - 1) * stride + 1)) {
    if constexpr (A::has_ptr) {
      const auto* p = a.ptr(i);
      for (int64_t j = 0; j < count; ++j)
        dst[j] = C(widen(p[j * stride]));
      return;
    }
  }
  for (int64_t j = 0; j < count; ++j) {
    i[L] = start + j * stride;
    dst[j] = C(a.load(i));
  }
}

// Input rows first_row .. first_row + rows - 1 of plane (nb, c), columns -pad_left ..
// -pad_left + wp - 1, into `plane` (row stride wp) with zeros outside the input: what the
// kernels below read in place of padding checks.
template <typename C, typename A>
inline void stage_padded_rows(const A& in, const Conv2dShape& s, int64_t nb, int64_t c,
                              int64_t first_row, int64_t rows, int64_t wp, C* plane) {
  stage_padded_rows(in, PlaneAt{nb, c, s.h, s.w, s.pad_top, s.pad_left}, first_row, rows, wp, C(0),
                    plane);
}

// The padded plane (nb, c) split into the stride phases `ph` (window_phases.h), in `phases`
// (ph.size values): what the depthwise and padded-plane kernels read their taps from.
template <typename C, typename A>
inline void stage_phases(const A& in, const Conv2dShape& s, const WindowPhases& ph, int64_t nb,
                         int64_t c, C* phases) {
  stage_window_phases(in, PlaneAt{nb, c, s.h, s.w, s.pad_top, s.pad_left}, ph, C(0), phases);
}

// The weights of a convolution with constant weights (`wref` given) packed whole per group into
// panels of MR output channels, once per program (gemm_core.h's pack_a_whole); null otherwise.
template <typename C, int MR, typename P>
std::shared_ptr<const C> packed_weights(const P& p, const Conv2dShape& s, ConstantRef wref) {
  if (!wref.packs) return nullptr;
  const int64_t M = p.cout_g, K = p.cin_g * p.khw;
  const int64_t tag = ((s.groups * 4099 + M) * 4099 + K) * 64 + MR;
  return wref.packs->get<C>(wref.key, tag, packed_a_size<MR>(s.groups, M, K),
                            [&](C* dst) { pack_a_whole<C, MR>(p, s.groups, M, K, dst); });
}

// The columns of a convolution's B (output positions n = y * w_out + x) in blocks of 16, each
// gathered from a channel's stride phases (rows at pitch wq) by one LaneGather (simd.h) from
// phase value base[j] on. Empty when a block would span 32 phase values or more.
struct PhaseColumnBlocks {
  std::vector<int64_t> base;
  std::vector<LaneGather> lanes;
};
inline PhaseColumnBlocks phase_column_blocks(int64_t h_out, int64_t w_out, int64_t wq) {
  PhaseColumnBlocks blocks;
  const int64_t n_end = h_out * w_out;
  int32_t offset[16];
  for (int64_t n0 = 0; n0 < n_end; n0 += 16) {
    const int64_t base = n0 / w_out * wq + n0 % w_out;
    const int count = int(std::min<int64_t>(16, n_end - n0));
    for (int l = 0; l < count; ++l) {
      const int64_t o = (n0 + l) / w_out * wq + (n0 + l) % w_out - base;
      if (o >= 32) return {};
      offset[l] = int32_t(o);
    }
    blocks.base.push_back(base);
    blocks.lanes.emplace_back(offset, count);
  }
  return blocks;
}

// The phase values a LaneGather may read past the last one it keeps.
inline constexpr int64_t kGatherSlack = 32;

// The B operand of a convolution's implicit GEMM, B[b, k, n] for k = (ci, r, q) and output
// position n: the input read through its accessor alone. The engine sees it apart from the
// rest of the problem (ConvProblem::b_source), so its loaders are one instance per input
// accessor type, compiled once for every convolution of a part that reads a dense tensor
// (DenseAccessor) instead of once per convolution.
// `Pointwise`: the caller knows the filter is 1x1 at stride 1 without padding (B's rows are the
// input planes as they lie), and only the loaders of that shape are instantiated.
template <typename C, typename InA, bool Pointwise = false> struct ConvInput {
  const InA& in;
  Conv2dShape s;
  int64_t cin_g, khw;
  uint64_t call = next_gemm_call(); // tells this call's staged rows from earlier calls'
  // The stride phases of a padded input plane, for cutting B rows from (pack_b_panels; none
  // for a pointwise filter).
  WindowPhases ph = Pointwise ? WindowPhases{}
                              : window_phases(s.h_out, s.w_out, s.kh, s.kw, s.stride_h, s.stride_w,
                                              s.dil_h, s.dil_w, 1);
  // B's columns gathered from the phases in blocks of 16 (pack_b_panels), when set.
  const PhaseColumnBlocks* blocks = nullptr;

  // B rows k = (ci, r, q) of a filter wider than 1x1 are cut from the input rows of channel
  // ci that columns [n0, n0 + nc) read, staged once with their padding zeros (per thread,
  // reused by the kh * kw rows of the channel): no bounds checks or accessor calls per row.
  void load_b_row(int64_t b, int64_t k, int64_t n0, int64_t nc, C* dst) const {
    if (Pointwise || (khw == 1 && s.stride_w == 1)) return load_b_row_direct(b, k, n0, nc, dst);
    if constexpr (!Pointwise) load_b_row_staged(b, k, n0, nc, dst);
  }
  void load_b_row_staged(int64_t b, int64_t k, int64_t n0, int64_t nc, C* dst) const {
    struct Staged {
      uint64_t call = 0;
      int64_t b = -1, ci = -1, y0 = -1, y1 = -1;
    };
    thread_local Staged staged;
    const int64_t ci = k / khw, r = k % khw / s.kw, q = k % s.kw;
    const int64_t y0 = n0 / s.w_out, y1 = (n0 + nc - 1) / s.w_out;
    // Staged row j is input row y0 * sh - pad_top + j, columns -pad_left .. -pad_left + wp.
    const int64_t rows = (y1 - y0) * s.stride_h + (s.kh - 1) * s.dil_h + 1;
    const int64_t wp = (s.w_out - 1) * s.stride_w + (s.kw - 1) * s.dil_w + 1;
    C* plane = scratch<C, 6>(rows * wp);
    if (staged.call != call || staged.b != b || staged.ci != ci || staged.y0 != y0 ||
        staged.y1 != y1) {
      const int64_t nb = b / s.groups, c = b % s.groups * cin_g + ci;
      stage_padded_rows(in, s, nb, c, y0 * s.stride_h - s.pad_top, rows, wp, plane);
      staged = {call, b, ci, y0, y1};
    }
    int64_t y = y0, x0 = n0 % s.w_out;
    for (int64_t p = n0, end = n0 + nc; p < end; ++y, x0 = 0) {
      const int64_t len = std::min(s.w_out - x0, end - p);
      const C* src = plane + ((y - y0) * s.stride_h + r * s.dil_h) * wp + q * s.dil_w;
      copy_strided(src + x0 * s.stride_w, s.stride_w, len, dst + (p - n0));
      p += len;
    }
  }
  void load_b_row_direct(int64_t b, int64_t k, int64_t n0, int64_t nc, C* dst) const {
    const int64_t nb = b / s.groups, ci = b % s.groups * cin_g + k / khw, rs = k % khw;
    const int64_t r = rs / s.kw, q = rs % s.kw, off = q * s.dil_w - s.pad_left;
    // Output columns x whose input column x*sw + off lies in [0, w).
    const int64_t x_lo = std::max<int64_t>(0, ceil_div(-off, s.stride_w));
    const int64_t x_hi = std::min(s.w_out, floor_div(s.w - 1 - off, s.stride_w) + 1);
    int64_t y = n0 / s.w_out, x0 = n0 % s.w_out;
    for (int64_t p = n0, end = n0 + nc; p < end; ++y, x0 = 0) {
      const int64_t len = std::min(s.w_out - x0, end - p);
      C* d = dst + (p - n0);
      const int64_t hy = y * s.stride_h - s.pad_top + r * s.dil_h;
      const int64_t a = std::clamp(x_lo, x0, x0 + len), e = std::clamp(x_hi, a, x0 + len);
      if (hy < 0 || hy >= s.h || a >= e) {
        std::fill(d, d + len, C(0));
      } else {
        std::fill(d, d + (a - x0), C(0));
        load_strided_run(in, Index<4>{nb, ci, hy, a * s.stride_w + off}, e - a, s.stride_w,
                         d + (a - x0));
        std::fill(d + (e - x0), d + len, C(0));
      }
      p += len;
    }
  }
  // B row k in place: a 1x1 filter at stride 1 without padding reads input channel plane ci
  // as it lies, when the accessor stores it as C and contiguous (its plane one row, as
  // generated code presents flattened planes).
  const C* b_row_in_place(int64_t b, int64_t k) const {
    if constexpr (InA::has_ptr && std::is_same_v<typename InA::value_type, C>) {
      if (khw == 1 && s.h == 1 && s.h_out == 1 && s.w_out == s.w && s.stride_w == 1 &&
          s.pad_left == 0 && run_contiguous<InA>(0, s.w))
        return in.ptr(Index<4>{b / s.groups, b % s.groups * cin_g + k, 0, 0});
    }
    return nullptr;
  }
  // Asks the cache for the input B row k of columns [n0, n0 + nc) ahead of its packing.
  void prefetch_b_row(int64_t b, int64_t k, int64_t n0, int64_t nc) const {
    const int64_t nb = b / s.groups, ci = b % s.groups * cin_g + k / khw, rs = k % khw;
    const int64_t r = rs / s.kw, off = rs % s.kw * s.dil_w - s.pad_left;
    const int64_t y0 = n0 / s.w_out, y1 = (n0 + nc - 1) / s.w_out;
    for (int64_t y = y0; y <= y1; ++y) {
      const int64_t hy = y * s.stride_h - s.pad_top + r * s.dil_h;
      if (hy < 0 || hy >= s.h) continue;
      const int64_t x = std::max<int64_t>(0, off);
      prefetch_run(in, Index<4>{nb, ci, hy, x}, std::min(s.w - x, s.w_out * s.stride_w));
    }
  }
  // The padded input plane of channel ci of batch b split into its stride phases `ph`, in
  // per-thread scratch: tap (r, q) of output row y is the run of w_out values at
  // ph.taps[r * kw + q] + y * ph.wq.
  const C* channel_phases(int64_t b, int64_t ci) const {
    C* phases = scratch<C, 9>(ph.size + kGatherSlack);
    stage_phases(in, s, ph, b / s.groups, b % s.groups * cin_g + ci, phases);
    return phases;
  }
  // Every input plane (image nb, channel c) staged with its padding and split into the phases
  // `ph`, at planes + (nb * c_in + c) * plane_stride (the padded-plane kernel's B).
  void stage_all_phases(C* planes, int64_t plane_stride) const {
    parallel_for(s.n * s.c_in, [&](int64_t t) {
      stage_phases(in, s, ph, t / s.c_in, t % s.c_in, planes + t * plane_stride);
    });
  }
  // The kh * kw B rows of channel ci (k = (ci, r, q)) over every output position, as
  // put(k, row) with row[p] for p < h_out * w_out: the channel's padded input plane is staged
  // once and each row cut from it (the path of 1x1 filters with strides or padding; wider
  // ones pack their panels from the phases, pack_b_panels).
  template <typename Put> void rows_of_channel(int64_t b, int64_t ci, Put&& put) const {
    const int64_t hp = (s.h_out - 1) * s.stride_h + (s.kh - 1) * s.dil_h + 1;
    const int64_t wp = (s.w_out - 1) * s.stride_w + (s.kw - 1) * s.dil_w + 1;
    C* plane = scratch<C, 9>(hp * wp);
    C* row = scratch<C, 11>(s.h_out * s.w_out);
    stage_padded_rows(in, s, b / s.groups, b % s.groups * cin_g + ci, -s.pad_top, hp, wp, plane);
    for (int64_t r = 0; r < s.kh; ++r)
      for (int64_t q = 0; q < s.kw; ++q) {
        for (int64_t y = 0; y < s.h_out; ++y)
          copy_strided(plane + (y * s.stride_h + r * s.dil_h) * wp + q * s.dil_w, s.stride_w,
                       s.w_out, row + y * s.w_out);
        put((ci * s.kh + r) * s.kw + q, std::as_const(row));
      }
  }
  // B packed whole by channels (gemm_core.h): rows k0 .. k1 - 1 are whole channels.
  int64_t b_row_group() const { return khw; }
  template <typename Put> void for_each_b_row(int64_t b, int64_t k0, int64_t k1, Put&& put) const {
    for (int64_t ci = k0 / khw; ci < (k1 + khw - 1) / khw; ++ci) {
      if (const C* row = b_row_in_place(b, ci)) { // 1x1: the channel plane as it lies
        put(ci, row);
      } else if constexpr (Pointwise) { // the plane's rows, no padding to stage
        C* row = scratch<C, 11>(s.h_out * s.w_out);
        load_b_row_direct(b, ci, 0, s.h_out * s.w_out, row);
        put(ci, std::as_const(row));
      } else {
        rows_of_channel(b, ci, put);
      }
    }
  }
  // A filter wider than 1x1 has its B panels packed by channels, straight from the phases
  // (gemm_core.h): every output row of a tap one contiguous run, copied once.
  bool packs_b_panels() const { return khw > 1; }
  template <int NR>
  requires(!Pointwise) void pack_b_panels(int64_t b, int64_t k0, int64_t k1, C* panels,
                                          int64_t panel_stride) const {
    const int64_t N = s.h_out * s.w_out, tail = N % NR;
    for (int64_t ci = k0 / khw; ci < k1 / khw; ++ci) {
      const C* phases = channel_phases(b, ci);
      for (int64_t t = 0; t < khw; ++t) {
        C* row = panels + (ci * khw + t) * NR;
        const C* src = phases + ph.taps[size_t(t)];
        if constexpr (std::is_same_v<C, float>) {
          if (blocks) {
            for (size_t j = 0; j < blocks->base.size(); ++j)
              blocks->lanes[j].gather(src + blocks->base[j],
                                      row + int64_t(j) * 16 / NR * panel_stride +
                                          int64_t(j) * 16 % NR);
            if (const int64_t done = (N + 15) / 16 * 16; done % NR)
              std::fill_n(row + done / NR * panel_stride + done % NR, NR - done % NR, C(0));
            continue;
          }
        }
        for (int64_t y = 0, n = 0; y < s.h_out; ++y)
          for (int64_t x = 0; x < s.w_out;) {
            const int64_t off = n % NR, len = std::min(s.w_out - x, NR - off);
            copy_run(src + y * ph.wq + x, len, row + n / NR * panel_stride + off);
            x += len;
            n += len;
          }
        if (tail) std::fill_n(row + N / NR * panel_stride + tail, NR - tail, C(0));
      }
    }
  }
};

// The A operand of a convolution's implicit GEMM, A[b, co, k] for group b % groups and
// k = (ci, r, q): the weights read through their accessor alone, apart from the rest of the
// problem (ConvProblem::a_source) as B is.
template <typename C, typename WA> struct ConvWeights {
  const WA& wt;
  int64_t groups, cout_g, kh, kw;

  // Index arithmetic once per row, then increments: these run for every packed panel.
  void load_a_row(int64_t b, int64_t m, int64_t k0, int64_t kc, C* dst) const {
    const int64_t co = b % groups * cout_g + m, khw = kh * kw;
    int64_t ci = k0 / khw, r = k0 % khw / kw, q = k0 % kw;
    for (int64_t k = k0, end = k0 + kc; k < end;) {
      const int64_t len = std::min(kw - q, end - k);
      load_run(wt, Index<4>{co, ci, r, q}, len, dst + (k - k0));
      k += len;
      q = 0;
      if (++r == kh) {
        r = 0;
        ++ci;
      }
    }
  }
};

// A convolution as the implicit GEMM of gemm_core.h: A the weights (ConvWeights), B the input
// (ConvInput), each its own Problem (a_source, b_source), and C the output through the
// epilogue.
template <typename C, typename OutA, typename InA, typename WA, typename Epi,
          bool Pointwise = false>
struct ConvProblem : ConvInput<C, InA, Pointwise>, ConvWeights<C, WA> {
  using ConvInput<C, InA, Pointwise>::s;
  using ConvWeights<C, WA>::cout_g;
  const OutA& out;
  const Epi& epi;

  const ConvInput<C, InA, Pointwise>& b_source() const { return *this; }
  const ConvWeights<C, WA>& a_source() const { return *this; }
  // Columns n0 .. n0 + nc of row m, over as many output rows as they span; a plane of one row
  // (a pointwise convolution's, flattened) is one run without the 64-bit divisions (tens of
  // cycles each, paid once a channel and block).
  void store_c_row(int64_t b, int64_t m, int64_t n0, int64_t nc, const C* src) const {
    const int64_t nb = s.groups == 1 ? b : b / s.groups;
    const int64_t co = s.groups == 1 ? m : b % s.groups * cout_g + m;
    if (s.h_out == 1) {
      store_run(out, Index<4>{nb, co, 0, n0}, nc, src, epi);
      return;
    }
    int64_t y = n0 / s.w_out, x0 = n0 % s.w_out;
    for (int64_t p = n0, end = n0 + nc; p < end; ++y, x0 = 0) {
      const int64_t len = std::min(s.w_out - x0, end - p);
      store_run(out, Index<4>{nb, co, y, x0}, len, src + (p - n0), epi);
      p += len;
    }
  }
  // Output position n of channels m0 .. m0 + mc, src[k * stride] channel m0 + k's value: one
  // element a channel (store_across_channels), for planes too small for runs.
  void store_c_column(int64_t b, int64_t m0, int64_t mc, int64_t n, const C* src,
                      int64_t stride) const {
    const int64_t nb = s.groups == 1 ? b : b / s.groups;
    const int64_t co = s.groups == 1 ? m0 : b % s.groups * cout_g + m0;
    store_across_channels(out, Index<4>{nb, co, n / s.w_out, n % s.w_out}, mc, src, stride, epi);
  }
};

// The implicit GEMM of a convolution over its padded input planes, read in place. Each input
// plane is staged once per call with its padding zeros and split into its stride phases
// (window_phases.h; without strides the padded plane is its own single phase), and the output
// is computed at the phases' row pitch wq: column n = y * wq + x, x < wq. Then B row
// k = (ci, r, q) is the staged phases of ci from tap (r, q)'s offset on, one contiguous row,
// from which the engine packs its panels directly (no im2col rows, no bounds checks). Columns
// x >= w_out are computed from whatever lies there and never stored. Every stored output is
// the chain of the general kernel, with the same zeros at the same padding positions: the
// same bits.
template <typename C, typename P> struct PaddedPlaneConvProblem {
  const P& p;
  const C* planes; // the phases of plane (b, ci) at planes + (b * cin_g + ci) * plane_stride
  const WindowPhases& ph;
  int64_t plane_stride;

  // The columns of the output at the phases' pitch: every row but the last is wq wide.
  static int64_t columns(const Conv2dShape& s, const WindowPhases& ph) {
    return (s.h_out - 1) * ph.wq + s.w_out;
  }
  const auto& a_source() const { return p.a_source(); }
  void load_b_row(int64_t, int64_t, int64_t, int64_t, C*) const {} // every row is in place
  const C* b_row_in_place(int64_t b, int64_t k) const {
    const int64_t ci = k / p.khw;
    return planes + (b * p.cin_g + ci) * plane_stride + ph.taps[size_t(k % p.khw)];
  }
  void store_c_row(int64_t b, int64_t m, int64_t n0, int64_t nc, const C* src) const {
    const Conv2dShape& s = p.s;
    const int64_t nb = b / s.groups, co = b % s.groups * p.cout_g + m, wq = ph.wq;
    int64_t y = n0 / wq, x0 = n0 % wq;
    for (int64_t n = n0, end = n0 + nc; n < end; ++y, x0 = 0) {
      const int64_t len = std::min(wq - x0, end - n);
      if (x0 < s.w_out)
        store_run(p.out, Index<4>{nb, co, y, x0}, std::min(len, s.w_out - x0), src + (n - n0),
                  p.epi);
      n += len;
    }
  }
};

// The register tile of the padded-plane kernel: with 32 vector registers, 8 rows by 3 vectors
// (24 accumulators, as 12 x 2, but 11 loads a step instead of 14, and output channel counts,
// multiples of 8, fill its panels: 15% faster on the 3x3 convolutions of YOLO's C3k2 block);
// the engine's tile otherwise.
template <typename C> struct PaddedPlaneTile {
#if defined(__AVX512F__)
  static constexpr int MR = 8, NV = 3;
#else
  static constexpr int MR = GemmTile<C>::MR, NV = GemmTile<C>::NV;
#endif
};

#if defined(__AVX512F__)
// The row kernel's A, packed whole in panels of kConvRowsMR output channels: constant weights
// (`wref` given) from the program's packs (held by `keep`), others packed now into this
// thread's scratch.
template <typename C, typename P>
const C* rows_packed_a(const P& p, const Conv2dShape& s, ConstantRef wref,
                       std::shared_ptr<const C>& keep) {
  constexpr int MR = kConvRowsMR;
  const int64_t M = p.cout_g, K = p.cin_g * p.khw;
  keep = packed_weights<C, MR>(p, s, wref);
  if (keep) return keep.get();
  C* buf = scratch<C, 6>(packed_a_size<MR>(s.groups, M, K));
  pack_a_whole<C, MR>(p, s.groups, M, K, buf);
  return buf;
}
#endif

// The row kernel (conv_rows.h) when the accessors and the input's rows allow it (true when
// it ran); constant weights (`wref` given) are packed once per program.
template <typename C, typename P>
bool conv2d_by_rows(const P& p, const Conv2dShape& s, ConstantRef wref) {
#if defined(__AVX512F__)
  using InA = std::decay_t<decltype(p.in)>;
  if constexpr (std::is_same_v<C, float> && rows_in_memory<C, InA>) {
    if (!run_contiguous<InA>(0, s.w)) return false;
    if (s.n <= 0 || p.cout_g <= 0 || s.h_out <= 0) return true;
    std::shared_ptr<const C> packed;
    conv2d_rows(p, rows_packed_a<C>(p, s, wref, packed));
    return true;
  }
#endif
  (void)p, (void)s, (void)wref;
  return false;
}

// Are an input's rows, `width` values wide (-1: not known at compile time), f32 rows in memory
// for certain, as the row kernels (conv_rows.h, depthwise_rows.h) read them?
template <typename C, typename InA> constexpr bool input_rows_in_memory(int64_t width) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<C, float> && rows_in_memory<C, InA>)
    return width >= 0 && run_contiguous<InA>(0, width);
#endif
  (void)width;
  return false;
}

// The padded-plane kernel; constant weights (`wref` given) are packed once per program.
template <typename C, typename P>
void conv2d_padded_plane(const P& p, const Conv2dShape& s, ConstantRef wref) {
  if (s.n <= 0 || p.cout_g <= 0 || s.h_out <= 0 || s.w_out <= 0) return;
  const WindowPhases& ph = p.ph;
  // Row k of B ends at taps[k] + columns - 1 < ph.size, inside its channel's phases.
  const int64_t plane_stride = (ph.size + 15) / 16 * 16;
  C* staged = scratch<C, 12>(s.n * s.c_in * plane_stride);
  p.stage_all_phases(staged, plane_stride);
  const PaddedPlaneConvProblem<C, P> pp{p, staged, ph, plane_stride};
  const int64_t N = PaddedPlaneConvProblem<C, P>::columns(s, ph);
  using Tile = PaddedPlaneTile<C>;
  const int64_t M = p.cout_g, K = p.cin_g * p.khw;
  // Every image uses the same weights: the groups packed once (batch b uses group b % groups).
  const auto packed = packed_weights<C, Tile::MR>(p, s, wref);
  const PrepackedOperands<C> pre{packed.get(), s.groups};
  gemm_packed_tiles<C, Tile::MR, Tile::NV>(pp, s.n * s.groups, M, N, K, pre);
}

// The direct kernel (conv_direct.h) over the padded planes' tile; constant weights (`wref`
// given) are packed once per program.
template <typename C, typename P>
void conv2d_direct_planes(const P& p, const Conv2dShape& s, ConstantRef wref) {
  using Tile = PaddedPlaneTile<C>;
  conv2d_direct<C, Tile::MR, Tile::NV, PaddedPlaneConvProblem>(
      p, s, packed_weights<C, Tile::MR>(p, s, wref));
}

// The direct kernel's channel-vector form (conv_direct.h) on its tile of output positions
// (conv_shape.h's channel_form_tile): `Tile`, when the caller knows the output plane at
// compile time, instantiates that tile alone; otherwise it is chosen here among the common
// planes' tiles, the others on whole rows of 16, 8 or 4. Constant weights (`wref` given) are
// packed once per program.
template <typename C, ChannelTile Tile = ChannelTile{0, 0}, typename P>
void conv2d_direct_channels_planes(const P& p, const Conv2dShape& s, ConstantRef wref) {
  constexpr int W = Vec<C>::width;
  const auto packed = packed_weights<C, W>(p, s, wref);
  if constexpr (Tile.x > 0) {
    conv2d_direct_channels<C, Tile.x, Tile.y>(p, s, packed);
  } else {
    const ChannelTile t = channel_form_tile(s.h_out, s.w_out);
    auto is = [&](int x, int y) { return t.x == x && t.y == y; };
    if (is(16, 1)) return conv2d_direct_channels<C, 16, 1>(p, s, packed);
    if (is(14, 1)) return conv2d_direct_channels<C, 14, 1>(p, s, packed);
    if (is(8, 2)) return conv2d_direct_channels<C, 8, 2>(p, s, packed);
    if (is(7, 1)) return conv2d_direct_channels<C, 7, 1>(p, s, packed);
    if (is(4, 4)) return conv2d_direct_channels<C, 4, 4>(p, s, packed);
    if (is(3, 3)) return conv2d_direct_channels<C, 3, 3>(p, s, packed);
    if (s.w_out > 8) return conv2d_direct_channels<C, 16, 1>(p, s, packed);
    if (s.w_out > 4) return conv2d_direct_channels<C, 8, 1>(p, s, packed);
    conv2d_direct_channels<C, 4, 1>(p, s, packed);
  }
}

// The implicit GEMM transposed, C^T = B^T . A^T, for output planes smaller than a vector:
// rows are output positions and the vectors run over output channels. Each C element is still
// acc = fma(., ., acc) over k in order with the same two factors (fma is commutative in
// them), so the bits are those of the direct orientation. The conv packs both operands ahead
// (A^T from the input planes, B^T from the weights); the row loaders are the slow general
// fallback the engine never needs then.
template <typename C, typename P> struct TransposedConvProblem {
  const P& p;
  void load_a_row(int64_t b, int64_t m, int64_t k0, int64_t kc, C* dst) const {
    for (int64_t k = 0; k < kc; ++k)
      p.load_b_row(b, k0 + k, m, 1, dst + k);
  }
  void load_b_row(int64_t b, int64_t k, int64_t n0, int64_t nc, C* dst) const {
    for (int64_t c = 0; c < nc; ++c)
      p.load_a_row(b, n0 + c, k, 1, dst + c);
  }
  void store_c_row(int64_t b, int64_t m, int64_t n0, int64_t nc, const C* src) const {
    for (int64_t c = 0; c < nc; ++c)
      p.store_c_row(b, n0 + c, m, 1, src + c);
  }
  // A block of C^T is stored a channel at a time: one run over the output positions each
  // (on a one-row plane a single store_run: ConvProblem::store_c_row); a block of a few
  // positions a position at a time, across its channels.
  void store_c_block(int64_t b, int64_t m0, int64_t mc, int64_t n0, int64_t nc, const C* src,
                     int64_t ldc) const {
    if (mc <= kShortChannelRun) {
      for (int64_t m = 0; m < mc; ++m)
        p.store_c_column(b, n0, nc, m0 + m, src + m * ldc, 1);
      return;
    }
    C* column = scratch<C, 5>(mc);
    for (int64_t c = 0; c < nc; ++c) {
      for (int64_t m = 0; m < mc; ++m)
        column[m] = src[m * ldc + c];
      p.store_c_row(b, n0 + c, m0, mc, column);
    }
  }
};

// The register tile of the transposed GEMM: a few output positions by NV vectors of output
// channels, four where a group has more than one vector of them, else one (a classifier's 10
// channels on 3 x 3 computed 64 lanes for 10; with the packing below, 16.6 -> 8.5 us).
inline constexpr int kTransposedMR = 4, kTransposedNV = 4;
inline constexpr int64_t kTransposedPackChannels = 32;

// The transposed convolution of a problem with constant weights (packed once, transposed).
template <typename C, int NV = kTransposedNV, typename P>
void conv2d_transposed(const P& p, const Conv2dShape& s, int64_t M, int64_t N, int64_t K,
                       ConstantRef wref) {
  constexpr int MR = kTransposedMR, NR = NV * Vec<C>::width;
  const int64_t batch = s.n * s.groups;
  // B^T: the weights of group g as panels of NR output channels, k-major.
  const int64_t w_panels = (M + NR - 1) / NR;
  const int64_t tag = -(((s.groups * 4099 + M) * 4099 + K) * 64 + NR);
  auto wt = wref.packs->get<C>(wref.key, tag, packed_b_size<NR>(s.groups, M, K), [&](C* dst) {
    parallel_for(s.groups * w_panels, [&](int64_t t) {
      const int64_t g = t / w_panels, j = t % w_panels;
      C* d = dst + t * K * NR;
      C* row = scratch<C, 3>(K);
      for (int64_t c = 0; c < NR; ++c) {
        const int64_t co = j * NR + c;
        if (co < M) p.load_a_row(g, co, 0, K, row);
        for (int64_t k = 0; k < K; ++k)
          d[k * NR + c] = co < M ? row[k] : C(0);
      }
    });
  });
  // A^T: the im2col columns of every output position as panels of MR positions, k-major. The
  // rows k = (ci, r, q) of channel ci in panel P are khw * MR values in a row, read from the
  // channel's input plane at offsets tabled once per call (-1: padding, or past position N).
  const int64_t panels = (N + MR - 1) / MR, khw = p.khw, per_panel = khw * MR;
  std::vector<int64_t> reads(size_t(panels * per_panel));
  for (int64_t pos = 0; pos < panels * MR; ++pos)
    for (int64_t t = 0; t < khw; ++t) {
      const int64_t y = pos / s.w_out, x = pos % s.w_out;
      const int64_t hy = y * s.stride_h - s.pad_top + t / s.kw * s.dil_h;
      const int64_t hx = x * s.stride_w - s.pad_left + t % s.kw * s.dil_w;
      const bool inside = pos < N && hy >= 0 && hy < s.h && hx >= 0 && hx < s.w;
      reads[size_t((pos / MR * khw + t) * MR + pos % MR)] = inside ? hy * s.w + hx : -1;
    }
  C* at = scratch<C, 10>(packed_a_size<MR>(batch, N, K));
  // Tasks of kTransposedPackChannels channels: one channel's plane is a few values, and a task
  // a channel cost more than its copies (512 channels of 3 x 3: 7 of 10 us).
  const int64_t chunks = (p.cin_g + kTransposedPackChannels - 1) / kTransposedPackChannels;
  parallel_for(batch * chunks, [&](int64_t t) {
    const int64_t b = t / chunks, c0 = t % chunks * kTransposedPackChannels;
    const int64_t c1 = std::min(p.cin_g, c0 + kTransposedPackChannels);
    C* plane = scratch<C, 9>(s.h * s.w);
    for (int64_t ci = c0; ci < c1; ++ci) {
      for (int64_t y = 0; y < s.h; ++y)
        load_run(p.in, Index<4>{b / s.groups, b % s.groups * p.cin_g + ci, y, 0}, s.w,
                 plane + y * s.w);
      for (int64_t pn = 0; pn < panels; ++pn) {
        C* dst = at + ((b * panels + pn) * K + ci * khw) * MR;
        const int64_t* from = reads.data() + pn * per_panel;
        for (int64_t j = 0; j < per_panel; ++j)
          dst[j] = from[j] >= 0 ? plane[from[j]] : C(0);
      }
    }
  });
  const PrepackedOperands<C> pre{at, batch, wt.get(), s.groups};
  gemm_packed_tiles<C, MR, NV>(TransposedConvProblem<C, P>{p}, batch, N, M, K, pre);
}

} // namespace detail

// Which convolution kernel runs, when the caller knows it at compile time (generated code
// knows every shape): only that kernel is instantiated, which halves compile times.
// implicit_gemm is the general kernel; padded_plane its form over staged planes split into
// stride phases (for the shapes padded_plane_fits() accepts).
// rows is the row kernel, for the shapes conv_rows_fit() accepts (padded planes or the general
// kernel as by_shape would choose where the accessors do not allow it). pointwise is the general
// kernel for a 1x1 filter at stride 1 without padding: without the code that stages padded
// rows or packs B from stride phases, which such a shape never runs (a third of its compile
// time).
// depthwise is the direct depthwise kernel, over rows (depthwise_rows.h) or staged planes as the
// shape allows; depthwise_rows the same for a shape depthwise_rows_shape_fits() accepts, which
// with the input's width (`Width`) known instantiates only the row kernel where the input's rows
// lie in memory; depthwise_planes the staged-plane kernel alone, for the shapes it rejects.
// direct is the direct kernel of small planes (conv_direct.h), for the shapes
// direct_conv_fits() accepts; direct_channels its channel-vector form, for those
// direct_conv_channels_fit() accepts.
enum class ConvKernel {
  by_shape,
  depthwise,
  implicit_gemm,
  padded_plane,
  rows,
  pointwise,
  depthwise_rows,
  depthwise_planes,
  direct,
  direct_channels
};

// The implicit-GEMM convolution (any groups), general, direct or over padded planes
// (`Kernel`; by_shape: the direct kernel or padded planes where they fit). Constant weights
// (`wref` given) are packed once per program and reused. `Positions`, when known at compile
// time, is h_out * w_out; `Width` the input's w: where the row kernel then always runs, the
// kernels it falls back to are not instantiated (they were half of a row-kernel
// convolution's compile time). For direct_channels `Width` is the output's w_out instead: with
// `Positions` it gives the kernel's tile at compile time.
template <int64_t Positions = -1, ConvKernel Kernel = ConvKernel::implicit_gemm, int64_t Width = -1,
          Accessor OutA, Accessor InA, Accessor WA, typename Epi = NoEpilogue>
void conv2d_implicit_gemm(const OutA& out, const InA& in, const WA& w, const Conv2dShape& s,
                          const Epi& epi = {}, ConstantRef wref = {}) {
  using C = std::conditional_t<std::is_same_v<compute_t<InA>, double> ||
                                   std::is_same_v<compute_t<WA>, double>,
                               double, float>;
  const int64_t cin_g = s.c_in / s.groups, cout_g = s.c_out / s.groups, khw = s.kh * s.kw;
  constexpr bool pointwise = Kernel == ConvKernel::pointwise;
  detail::ConvProblem<C, OutA, InA, WA, Epi, pointwise> p{
      {in, s, cin_g, khw}, {w, s.groups, cout_g, s.kh, s.kw}, out, epi};
  const int64_t M = cout_g, K = cin_g * khw, N = s.h_out * s.w_out;
  if constexpr (Kernel == ConvKernel::padded_plane) {
    (void)N;
    detail::conv2d_padded_plane<C>(p, s, wref);
  } else if constexpr (Kernel == ConvKernel::direct) {
    (void)N;
    detail::conv2d_direct_planes<C>(p, s, wref);
  } else if constexpr (Kernel == ConvKernel::direct_channels) {
    (void)N;
    constexpr ChannelTile tile = Positions > 0 && Width > 0
                                     ? channel_form_tile(Positions / Width, Width)
                                     : ChannelTile{0, 0};
    detail::conv2d_direct_channels_planes<C, tile>(p, s, wref);
  } else if constexpr (Kernel == ConvKernel::rows && detail::input_rows_in_memory<C, InA>(Width)) {
    (void)N;
    detail::conv2d_by_rows<C>(p, s, wref);
  } else {
    // The row and padded-plane kernels are instantiated only where they may run.
    if constexpr (Kernel == ConvKernel::rows || Kernel == ConvKernel::by_shape) {
      if (Kernel == ConvKernel::rows || conv_rows_fit(s))
        if (detail::conv2d_by_rows<C>(p, s, wref)) return;
      if (Kernel == ConvKernel::by_shape && direct_conv_channels_fit(s))
        return detail::conv2d_direct_channels_planes<C>(p, s, wref);
      if (Kernel == ConvKernel::by_shape && direct_conv_fits(s))
        return detail::conv2d_direct_planes<C>(p, s, wref);
      if (padded_plane_fits(s)) return detail::conv2d_padded_plane<C>(p, s, wref);
    }
    detail::PhaseColumnBlocks blocks;
    if constexpr (std::is_same_v<C, float> && kVectorStridedLanes && !pointwise) {
      if (khw > 1 && N >= Vec<C>::width) {
        blocks = detail::phase_column_blocks(s.h_out, s.w_out, p.ph.wq);
        if (!blocks.base.empty()) p.blocks = &blocks;
      }
    }
    if (s.n <= 0 || M <= 0 || N <= 0) return;
    // Output planes smaller than a vector: the vectors run over output channels instead.
    constexpr bool small_known = Positions >= 0 && Positions < Vec<C>::width;
#if defined(__AVX512F__)
    // A pointwise convolution into few channels over rows in memory: the direct kernel, one
    // masked vector of positions by panels of 8 channels (SqueezeNet's classifier, 512 -> 10 on
    // 3 x 3: 9.7 -> 3-4 us in the model), where the transposed GEMM packs every input position
    // first.
    if constexpr (pointwise && std::is_same_v<C, float> && rows_in_memory<C, InA>) {
      if (N < Vec<C>::width && M <= kPointwiseDirectMaxChannels && pointwise_direct_fits(s) &&
          run_contiguous<InA>(0, N))
        return conv2d_pointwise_direct(p, s, detail::packed_weights<C, kPointwiseMR>(p, s, wref));
    }
#endif
    if constexpr (Positions < 0 || small_known) {
      if (wref.packs && N < Vec<C>::width) {
        if (M <= Vec<C>::width) return detail::conv2d_transposed<C, 1>(p, s, M, N, K, wref);
        return detail::conv2d_transposed<C>(p, s, M, N, K, wref);
      }
    }
    if constexpr (small_known) {
      if (wref.packs) return; // only an empty output plane gets here
    }
    // Constant weights: the groups packed once for every batch n. Batch b of the problem is
    // image b / groups, group b % groups: the packs are per group. (One call either way: the
    // engine's setup is inlined once per kernel.)
#if defined(__AVX512F__)
    if constexpr (pointwise && std::is_same_v<C, float> && rows_in_memory<C, InA>) {
      if (pointwise_direct_fits(s) && run_contiguous<InA>(0, N))
        return conv2d_pointwise_direct(p, s, detail::packed_weights<C, kPointwiseMR>(p, s, wref));
    }
#endif
    const auto packed = detail::packed_weights<C, GemmTile<C>::MR>(p, s, wref);
    gemm_packed<C, Positions>(p, s.n * s.groups, M, N, K, packed.get(), packed ? s.groups : 0);
  }
}

namespace detail {

// The staged-plane kernel of depthwise_conv2d (output channel co's taps at filter(co)): the
// padded input plane split into its stride phases, the whole output plane one flat run per tap.
template <typename C, typename OutA, typename InA, typename Epi, typename Filter>
void depthwise_planes(const OutA& out, const InA& in, const Conv2dShape& s, const Epi& epi,
                      const Filter& filter) {
  using V = Vec<C>;
  constexpr int64_t kW = V::width, kBlock = 4 * kW;
  const int64_t cout_g = s.c_out / s.groups;
  const WindowPhases ph =
      window_phases(s.h_out, s.w_out, s.kh, s.kw, s.stride_h, s.stride_w, s.dil_h, s.dil_w, kW);
  const int64_t flat = ph.flat;
  parallel_for(s.n * s.c_out, [&](int64_t t) {
    const int64_t nb = t / s.c_out, co = t % s.c_out, ci = co / cout_g;
    C* phases = scratch<C, 3>(ph.size);
    C* acc = scratch<C, 2>(flat);
    // Stage 1: the input plane with zeros around it, split into phases, and the filter.
    stage_phases(in, s, ph, nb, ci, phases);
    const C* wv = filter(co);
    // Stage 2: blocks of the flat output held in registers across the taps.
    const int64_t ntaps = s.kh * s.kw;
    int64_t j0 = 0;
    for (; j0 + kBlock <= flat; j0 += kBlock) {
      V a[4] = {V::zero(), V::zero(), V::zero(), V::zero()};
      for (int64_t k = 0; k < ntaps; ++k) {
        const V f = V::set1(wv[k]);
        const C* src = phases + ph.taps[size_t(k)] + j0;
        for (int v = 0; v < 4; ++v)
          a[v] = fma(f, V::load(src + v * kW), a[v]);
      }
      for (int v = 0; v < 4; ++v)
        a[v].store(acc + j0 + v * kW);
    }
    for (; j0 < flat; j0 += kW) {
      V a = V::zero();
      for (int64_t k = 0; k < ntaps; ++k)
        a = fma(V::set1(wv[k]), V::load(phases + ph.taps[size_t(k)] + j0), a);
      a.store(acc + j0);
    }
    // Stage 3: the output rows.
    for (int64_t y = 0; y < s.h_out; ++y) {
      if constexpr (std::is_same_v<C, float>)
        store_run_vectors(out, Index<4>{nb, co, y, 0}, s.w_out, acc + y * ph.wq, epi);
      else
        store_run(out, Index<4>{nb, co, y, 0}, s.w_out, acc + y * ph.wq, epi);
    }
  });
}

} // namespace detail

// The direct depthwise convolution: every output channel reads one input channel
// (c_in / groups == 1; c_out / groups output channels per input channel).
//
// The padded input plane is split into its stride phases (window_phases.h): the whole output
// plane is one flat run per filter tap. Each output is acc = 0; acc = fma(w[r][q], in, acc)
// over the taps (r, q) in order, as in the implicit GEMM. Constant filters (`wref` given) are
// loaded once per program.
template <ConvKernel Kernel = ConvKernel::depthwise, int64_t Width = -1, Accessor OutA,
          Accessor InA, Accessor WA, typename Epi = NoEpilogue>
void depthwise_conv2d(const OutA& out, const InA& in, const WA& w, const Conv2dShape& s,
                      const Epi& epi = {}, ConstantRef wref = {}) {
  using C = std::conditional_t<std::is_same_v<compute_t<InA>, double> ||
                                   std::is_same_v<compute_t<WA>, double>,
                               double, float>;
  if (s.n <= 0 || s.c_out <= 0 || s.h_out <= 0 || s.w_out <= 0) return;
  const int64_t taps = s.kh * s.kw;
  // The filter of output channel co, its taps in order; constant filters are loaded once per
  // program, all channels' in a row.
  auto load_filter = [&](int64_t co, C* dst) {
    for (int64_t r = 0; r < s.kh; ++r)
      load_run(w, Index<4>{co, 0, r, 0}, s.kw, dst + r * s.kw);
  };
  std::shared_ptr<const C> filters;
  if (wref.packs)
    filters = wref.packs->get<C>(wref.key, -1, s.c_out * taps, [&](C* dst) {
      for (int64_t co = 0; co < s.c_out; ++co)
        load_filter(co, dst + co * taps);
    });
  // Output channel co's filter, from the constant pack or loaded into a per-thread buffer.
  auto filter = [&](int64_t co) -> const C* {
    if (filters) return filters.get() + co * taps;
    C* row = scratch<C, 1>(taps);
    load_filter(co, row);
    return row;
  };
  // Only the kernels the caller's choice (`Kernel`, `Width`) may run are instantiated.
  constexpr bool rows_only =
      Kernel == ConvKernel::depthwise_rows && detail::input_rows_in_memory<C, InA>(Width);
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<C, float> && rows_in_memory<C, InA> &&
                Kernel != ConvKernel::depthwise_planes) {
    if (rows_only || detail::depthwise_rows_fit<InA>(s)) {
      if (s.kw == 3) return detail::depthwise_rows<3>(out, in, s, epi, filter);
      return detail::depthwise_rows<0>(out, in, s, epi, filter);
    }
  }
#endif
  if constexpr (!rows_only) {
    if constexpr (std::is_same_v<C, float>) {
      if (depthwise_channels_fit(s)) {
        std::shared_ptr<const float> keep;
        const float* taps_t = detail::depthwise_block_taps(s, filter, wref, keep);
        return detail::depthwise_channels(out, in, s, epi, taps_t);
      }
    }
    detail::depthwise_planes<C>(out, in, s, epi, filter);
  }
}

// The Winograd convolution (conv_winograd.h) of a shape winograd_conv_fits() accepts, on the
// tile winograd_tile() gives it (X tiles of Rows tile rows by Panels vectors of output
// channels). Constant weights (`wref` given) are transformed once per program.
template <int X, int Rows, int Panels, Accessor OutA, Accessor InA, Accessor WA,
          typename Epi = NoEpilogue>
void conv2d_winograd(const OutA& out, const InA& in, const WA& w, const Conv2dShape& s,
                     const Epi& epi = {}, ConstantRef wref = {}) {
  using C = std::conditional_t<std::is_same_v<compute_t<InA>, double> ||
                                   std::is_same_v<compute_t<WA>, double>,
                               double, float>;
  // The problem's B loaders are not used (the kernel stages its own rows): `Pointwise` spares
  // computing the stride phases they would cut B rows from.
  const detail::ConvProblem<C, OutA, InA, WA, Epi, true> p{
      {in, s, s.c_in, 9}, {w, 1, s.c_out, 3, 3}, out, epi};
  detail::conv2d_winograd<C, X, Rows, Panels>(p, s,
                                              detail::winograd_filters<C, Panels>(p, s, wref));
}

// conv2d: the direct kernel for depthwise shapes, the implicit GEMM otherwise (over padded
// planes where they fit) — chosen here by the shape, or by the caller (`Kernel`, with
// `Positions` = h_out * w_out and `Width` = w, w_out for direct_channels) at compile time.
template <ConvKernel Kernel = ConvKernel::by_shape, int64_t Positions = -1, int64_t Width = -1,
          Accessor OutA, Accessor InA, Accessor WA, typename Epi = NoEpilogue>
void conv2d(const OutA& out, const InA& in, const WA& w, const Conv2dShape& s, const Epi& epi = {},
            ConstantRef wref = {}) {
  if constexpr (Kernel == ConvKernel::depthwise || Kernel == ConvKernel::depthwise_rows ||
                Kernel == ConvKernel::depthwise_planes) {
    depthwise_conv2d<Kernel, Width>(out, in, w, s, epi, wref);
  } else if constexpr (Kernel != ConvKernel::by_shape) {
    conv2d_implicit_gemm<Positions, Kernel, Width>(out, in, w, s, epi, wref);
  } else if (s.c_in / s.groups == 1 && s.groups > 1) {
    depthwise_conv2d(out, in, w, s, epi, wref);
  } else {
    conv2d_implicit_gemm<-1, ConvKernel::by_shape>(out, in, w, s, epi, wref);
  }
}

} // namespace vtc::kernels
