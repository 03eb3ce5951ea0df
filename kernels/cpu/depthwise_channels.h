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

#include "conv_shape.h"
#include "parallel.h"
#include "simd.h"
#include "stage.h"

namespace vtc::kernels {

// Which shapes it takes: conv_shape.h (depthwise_channels_fit).

namespace detail {

// Output channels co of image nb for co in [co0, co0 + lanes), lanes <= the vector width
// (lanes past `lanes` compute zeros and are not stored); filter(co) gives channel co's taps.
template <typename OutA, typename InA, typename Epi, typename Filter>
void depthwise_channel_block(const OutA& out, const InA& in, const Conv2dShape& s, const Epi& epi,
                             const Filter& filter, int64_t nb, int64_t co0, int lanes) {
  using V = Vec<float>;
  constexpr int kW = V::width;
  const int64_t cout_g = s.c_out / s.groups, hp = depthwise_padded_rows(s),
                wp = depthwise_padded_cols(s), taps = s.kh * s.kw, pixels = s.h_out * s.w_out;
  float* plane = scratch<float, 2>(hp * wp * kW);
  float* taps_t = scratch<float, 3>(taps * kW);
  float* result = scratch<float, 4>(pixels * kW + s.w_out);
  float* row = scratch<float, 5>(s.w); // an input row not in memory
  std::fill(plane, plane + hp * wp * kW, 0.0f);
  std::fill(taps_t, taps_t + taps * kW, 0.0f);
  for (int l = 0; l < lanes; ++l) {
    const int64_t co = co0 + l, ci = co / cout_g;
    const float* wv = filter(co);
    for (int64_t k = 0; k < taps; ++k)
      taps_t[k * kW + l] = float(wv[k]);
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
  if (s.w_out <= kShortChannelRun) { // rows too short for runs: a pixel at a time
    for (int64_t y = 0; y < s.h_out; ++y)
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

// The kernel over every image and vector of output channels (f32 compute).
template <typename OutA, typename InA, typename Epi, typename Filter>
void depthwise_channels(const OutA& out, const InA& in, const Conv2dShape& s, const Epi& epi,
                        const Filter& filter) {
  constexpr int64_t kW = Vec<float>::width;
  const int64_t blocks = (s.c_out + kW - 1) / kW;
  parallel_for(s.n * blocks, [&](int64_t t) {
    const int64_t nb = t / blocks, co0 = t % blocks * kW;
    depthwise_channel_block(out, in, s, epi, filter, nb, co0,
                            int(std::min<int64_t>(kW, s.c_out - co0)));
  });
}

} // namespace detail
} // namespace vtc::kernels
