// The depthwise convolution of small planes, one vector of output channels at a time. A
// network's late stages hold hundreds of channels of 2 x 2 to 8 x 8 pixels: a kernel that
// walks one channel's plane per task spends most of its time staging it (a 2 x 2 plane of 960
// channels took 90 ns a channel). Here a task takes Vec<float>::width channels of one image:
// their padded planes staged transposed (pixel-major, a lane per channel, zeros in the
// padding), the filters transposed the same way, and each output pixel computed for all lanes
// at once as acc = 0; acc = fma(w[r][q], in(y * sh + r * dh, x * sw + q * dw), acc) over the
// taps (r, q) in order — the chain of the other depthwise kernels (conv.h), padding positions
// included as zeros, so the same bits. The output rows go out per channel through the epilogue
// (rows of a few pixels a pixel at a time, across the lanes' channels).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "constant_packs.h"
#include "conv_shape.h"
#include "parallel.h"
#include "simd.h"
#include "stage.h"

namespace vtc::kernels {

// Which shapes it takes: conv_shape.h (depthwise_channels_fit).

namespace detail {

#if defined(__AVX512F__)
// The input planes of output channels [co0, co0 + lanes) of image nb into the padded planes
// `plane` (pixel-major, a lane per channel, zeros already in place) when every plane has at
// most one vector of values and lies whole in memory as f32: each plane one masked vector
// load, the 16 of them transposed in registers (vector p: pixel p of every lane), each pixel
// then one vector store. False, with nothing written, where a plane does not lie so.
template <typename InA>
bool stage_planes_transposed(const InA& in, const Conv2dShape& s, int64_t nb, int64_t co0,
                             int lanes, int64_t hp, int64_t wp, float* plane) {
  if constexpr (InA::has_ptr && std::is_same_v<typename InA::value_type, float>) {
    using V = Vec<float>;
    constexpr int kW = V::width;
    const int64_t hw = s.h * s.w, cout_g = s.c_out / s.groups;
    if (hw > kW || hw <= 0) return false;
    const __mmask16 mask = lane_range(0, hw);
    V v[kW];
    // Lane l's input channel (co0 + l) / cout_g, stepped: no division a lane.
    int64_t ci = co0 / cout_g, next = (ci + 1) * cout_g;
    for (int l = 0; l < kW; ++l) {
      v[l] = V::zero();
      if (l >= lanes) continue;
      if (co0 + l == next) ++ci, next += cout_g;
      const float* p = run_target<float>(in, Index<4>{nb, ci, 0, 0}, s.w);
      for (int64_t y = 1; p && y < s.h; ++y)
        if (run_target<float>(in, Index<4>{nb, ci, y, 0}, s.w) != p + y * s.w) p = nullptr;
      if (!p) return false;
      v[l].v = _mm512_maskz_loadu_ps(mask, p);
    }
    transpose_16x16(v);
    // Input pixel (y, x) is padded pixel (y + pad_top, x + pad_left).
    for (int64_t y = 0; y < s.h; ++y) {
      const int64_t py = y + s.pad_top;
      if (py < 0 || py >= hp) continue;
      for (int64_t x = 0; x < s.w; ++x) {
        const int64_t px = x + s.pad_left;
        if (px >= 0 && px < wp) v[y * s.w + x].store(plane + (py * wp + px) * kW);
      }
    }
    return true;
  }
  return false;
}
#endif

// Output channels co of image nb for co in [co0, co0 + lanes), lanes <= the vector width
// (lanes past `lanes` compute zeros and are not stored); filter(co) gives channel co's taps.
template <typename OutA, typename InA, typename Epi>
void depthwise_channel_block(const OutA& out, const InA& in, const Conv2dShape& s, const Epi& epi,
                             const float* taps_t, int64_t nb, int64_t co0, int lanes) {
  using V = Vec<float>;
  constexpr int kW = V::width;
  const int64_t cout_g = s.c_out / s.groups, hp = depthwise_padded_rows(s),
                wp = depthwise_padded_cols(s), pixels = s.h_out * s.w_out;
  float* plane = scratch<float, 2>(hp * wp * kW);
  float* result = scratch<float, 4>(pixels * kW + s.w_out);
  float* row = scratch<float, 5>(s.w); // an input row not in memory
  std::fill(plane, plane + hp * wp * kW, 0.0f);
#if defined(__AVX512F__)
  const bool staged = stage_planes_transposed(in, s, nb, co0, lanes, hp, wp, plane);
#else
  const bool staged = false;
#endif
  for (int l = 0; l < lanes && !staged; ++l) {
    const int64_t co = co0 + l, ci = co / cout_g;
    // Input row y is padded row y + pad_top; its column x padded column x + pad_left.
    for (int64_t y = 0; y < s.h; ++y) {
      const int64_t py = y + s.pad_top;
      if (py < 0 || py >= hp) continue;
      const int64_t x_lo = std::max<int64_t>(0, -s.pad_left);
      const int64_t x_hi = std::min<int64_t>(s.w, wp - s.pad_left);
      if (x_hi <= x_lo) continue;
      const Index<4> at{nb, ci, y, x_lo};
      const float* src = run_target<float>(in, at, x_hi - x_lo);
      if (!src) {
        load_run(in, at, x_hi - x_lo, row);
        src = row;
      }
      float* dst = plane + (py * wp + x_lo + s.pad_left) * kW + l;
      for (int64_t x = 0; x < x_hi - x_lo; ++x)
        dst[x * kW] = src[x];
    }
  }
  for (int64_t y = 0; y < s.h_out; ++y)
    for (int64_t x = 0; x < s.w_out; ++x) {
      V acc = V::zero();
      for (int64_t r = 0; r < s.kh; ++r) {
        const float* src = plane + ((y * s.stride_h + r * s.dil_h) * wp + x * s.stride_w) * kW;
        for (int64_t q = 0; q < s.kw; ++q)
          acc = fma(V::load(taps_t + (r * s.kw + q) * kW), V::load(src + q * s.dil_w * kW), acc);
      }
      acc.store(result + (y * s.w_out + x) * kW);
    }
  if (s.w_out <= kShortChannelRun) { // rows too short for runs
#if defined(__AVX512F__)
    if constexpr (vector_epilogue<OutA, Epi>()) {
      if (pixels <= kW) { // a plane a vector: the results transposed, each channel's rows
        V r[kW];
        for (int64_t p = 0; p < kW; ++p)
          r[p] = p < pixels ? V::load(result + p * kW) : V::zero();
        transpose_16x16(r);
        alignas(64) float plane_out[kW];
        for (int l = 0; l < lanes; ++l) {
          r[l].store(plane_out);
          for (int64_t y = 0; y < s.h_out; ++y)
            store_run_vectors(out, Index<4>{nb, co0 + l, y, 0}, s.w_out, plane_out + y * s.w_out,
                              epi);
        }
        return;
      }
    }
#endif
    for (int64_t y = 0; y < s.h_out; ++y) // a pixel at a time
      for (int64_t x = 0; x < s.w_out; ++x)
        store_across_channels(out, Index<4>{nb, co0, y, x}, lanes, result + (y * s.w_out + x) * kW,
                              1, epi);
    return;
  }
  float* out_row = result + pixels * kW;
  for (int l = 0; l < lanes; ++l)
    for (int64_t y = 0; y < s.h_out; ++y) {
      for (int64_t x = 0; x < s.w_out; ++x)
        out_row[x] = result[(y * s.w_out + x) * kW + l];
      store_run_vectors(out, Index<4>{nb, co0 + l, y, 0}, s.w_out, out_row, epi);
    }
}

// The filters of every vector of output channels transposed as the blocks read them: block b's
// tap k at dst[(b * taps + k) * width], a lane per channel, zeros past the last channel
// (depthwise_taps_size values).
inline int64_t depthwise_taps_size(const Conv2dShape& s) {
  constexpr int64_t kW = Vec<float>::width;
  return (s.c_out + kW - 1) / kW * s.kh * s.kw * kW;
}
template <typename Filter>
void transpose_depthwise_taps(const Conv2dShape& s, const Filter& filter, float* dst) {
  constexpr int64_t kW = Vec<float>::width;
  const int64_t taps = s.kh * s.kw;
  std::fill(dst, dst + depthwise_taps_size(s), 0.0f);
  for (int64_t co = 0; co < s.c_out; ++co) {
    const float* wv = filter(co);
    float* block = dst + co / kW * taps * kW + co % kW;
    for (int64_t k = 0; k < taps; ++k)
      block[k * kW] = float(wv[k]);
  }
}

// The filters transposed for the channel blocks (transpose_depthwise_taps): from the
// program's packs when constant (`wref` given; once per program, held by `keep`), else into
// this thread's scratch.
template <typename Filter>
const float* depthwise_block_taps(const Conv2dShape& s, const Filter& filter, ConstantRef wref,
                                  std::shared_ptr<const float>& keep) {
  const int64_t count = depthwise_taps_size(s);
  auto transpose = [&](float* dst) { transpose_depthwise_taps(s, filter, dst); };
  if (wref.packs) keep = wref.packs->get<float>(wref.key, -2, count, transpose);
  if (keep) return keep.get();
  float* buf = scratch<float, 19>(count);
  transpose(buf);
  return buf;
}

// The kernel over every image and vector of output channels (f32 compute), the filters as
// transpose_depthwise_taps lays them out.
template <typename OutA, typename InA, typename Epi>
void depthwise_channels(const OutA& out, const InA& in, const Conv2dShape& s, const Epi& epi,
                        const float* taps_t) {
  constexpr int64_t kW = Vec<float>::width;
  const int64_t blocks = (s.c_out + kW - 1) / kW, taps = s.kh * s.kw;
  parallel_for(s.n * blocks, [&](int64_t t) {
    const int64_t nb = t / blocks, block = t % blocks, co0 = block * kW;
    depthwise_channel_block(out, in, s, epi, taps_t + block * taps * kW, nb, co0,
                            int(std::min<int64_t>(kW, s.c_out - co0)));
  });
}

} // namespace detail
} // namespace vtc::kernels
