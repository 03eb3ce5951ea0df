// The shape of a 2-D convolution as the kernels of conv.h take it, and which of those kernels
// suits a shape. Free of any instruction-set header, so that code generation (which decides
// the kernel at compile time) and the kernels (which decide at run time) share one rule.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../common/window_shapes.h"

namespace vtc::kernels {

// Does the implicit GEMM run over padded planes (conv.h, PaddedPlaneConvProblem)? A filter
// wider than 1x1 (a 1x1 filter at stride 1 needs no staging), on planes of at least 256
// positions wide enough that the columns computed and dropped at the row pitch of the padded
// plane's stride phases are at most an eighth of the work.
inline bool padded_plane_fits(const Conv2dShape& s) {
  if (s.kh * s.kw <= 1 || s.stride_w <= 0 || s.h_out * s.w_out < 256) return false;
  const int64_t wp = (s.w_out - 1) * s.stride_w + (s.kw - 1) * s.dil_w + 1;
  const int64_t wq = (wp + s.stride_w - 1) / s.stride_w; // the phases' row pitch
  return (wq - s.w_out) * 8 <= s.w_out;
}

// The direct kernel of small planes (conv_direct.h) takes output planes of kDirectConvMinPositions
// to kDirectConvMaxPositions positions, where the columns it computes (the rows at the padded
// plane's pitch, rounded up to 16) are at most 7/5 of those it stores, and a group's staged
// input planes are at most kDirectConvMaxStaged bytes (they stay in L1 or near it while every
// tile reads them). Measured on two cores of an AVX-512 host, f32, 1 -> 2 threads, the engine's
// kernel then direct (bench/kernels_bench BM_ConvSmall): 16 -> 16 3x3 on 16 x 16 21.5 / 17.4
// -> 17.2 / 12.6 us, on 8 x 8 8.4 / 10.3 -> 5.4 / 5.5, on 32 x 32 70.7 / 74.6 -> 67.6 / 40.7;
// 16 -> 64 on 14 x 14 59.9 / 37.5 -> 52.3 / 27.6; 64 -> 256 on 7 x 7 203 / 116 -> 188 / 102.
// Not taken: stride 2 (64 -> 64 on 16 x 16, 83 KB of phases: 71 / 51 -> 68 / 61 us), 4 x 4
// planes (32 -> 32: 6.6 -> 7.6 us, twice the columns stored), 1x1 filters (the input staged
// for nothing: 64 -> 64 on 8 x 8 6.6 -> 9.8 us).
inline constexpr int64_t kDirectConvMinPositions = 32, kDirectConvMaxPositions = 1024;
inline constexpr int64_t kDirectConvMaxStaged = 96 * 1024;

// What both forms of the direct kernel need: not depthwise, a filter wider than 1x1 at a
// stride of at most `max_stride`, at most kDirectConvMaxPositions output positions, and a
// group's staged input planes (f32, the window's rows and columns with a stride of slack) within
// kDirectConvMaxStaged bytes.
inline bool direct_conv_plane_fits(const Conv2dShape& s, int64_t max_stride = 1) {
  const int64_t groups = s.groups > 0 ? s.groups : 1;
  const int64_t cin_g = s.c_in / groups;
  if (s.kh * s.kw <= 1 || cin_g <= 1) return false;
  if (s.stride_h < 1 || s.stride_w < 1 || s.stride_h > max_stride || s.stride_w > max_stride)
    return false;
  if (s.h_out * s.w_out > kDirectConvMaxPositions) return false;
  const int64_t hp = (s.h_out - 1) * s.stride_h + (s.kh - 1) * s.dil_h + 1;
  const int64_t wp = (s.w_out - 1) * s.stride_w + (s.kw - 1) * s.dil_w + 1;
  return cin_g * (hp + s.stride_h) * (wp + s.stride_w) * 4 <= kDirectConvMaxStaged;
}

// Does a convolution run on the direct kernel (conv.h, conv_direct.h)? A small plane (above) of
// at least kDirectConvMinPositions positions, its computed columns at most 7/5 of those stored.
inline bool direct_conv_fits(const Conv2dShape& s) {
  const int64_t positions = s.h_out * s.w_out;
  if (!direct_conv_plane_fits(s) || positions < kDirectConvMinPositions) return false;
  const int64_t wp = s.w_out + (s.kw - 1) * s.dil_w;
  const int64_t computed = ((s.h_out - 1) * wp + s.w_out + 15) / 16 * 16;
  return computed * 5 <= positions * 7;
}

// The tile of output positions of the direct kernel's channel-vector form on an output
// plane of h_out x w_out: `x` positions of a row (the whole row up to 16, a wider row split
// into even segments of at most 16) by `y` rows (the largest divisor of h_out with x * y <= 16
// accumulators), so that no position past a row or a plane is computed but in a wide row's
// last segment: 14 x 14 -> 14 x 1, 7 x 7 -> 7 x 1, 8 x 8 -> 8 x 2, 3 x 3 -> 3 x 3, 28 x 28 ->
// 14 x 1.
struct ChannelTile {
  int x = 16, y = 1;
};
inline constexpr int kChannelTileAccumulators = 16;
// At a stride of 2 the channel form takes tiles of at least this many positions (on 2 x 2
// outputs its 4 accumulators wait on the multiply-adds' latency: 128 -> 256 on 4 x 4 in,
// stride 2, 32.3 us on the transposed GEMM, 60.8 on the channel form).
inline constexpr int kChannelTileMinStrided = 8;
constexpr ChannelTile channel_form_tile(int64_t h_out, int64_t w_out) {
  if (h_out <= 0 || w_out <= 0) return {};
  const int64_t segments = (w_out + kChannelTileAccumulators - 1) / kChannelTileAccumulators;
  const int x = int((w_out + segments - 1) / segments);
  int y = 1;
  for (int d = 2; d * x <= kChannelTileAccumulators && d <= h_out; ++d)
    if (h_out % d == 0) y = d;
  return {x, y};
}

// conv2d_nhwc (conv_nhwc.h) stores into an output not held channels-last a channel's row of
// its tile at a time where those rows have at least this many positions, else a position's
// channels at a time (1280 channels of 2 x 2: 21 us by rows of 2, 14 by positions, one
// thread).
inline constexpr int kNhwcMinChannelRow = 8;

// The vectors of 16 output channels conv2d_nhwc's tile holds beside its positions: as many
// as kNhwcAccumulators accumulators allow, at most 4 and no more than the output has. A
// broadcast input value then feeds them all: a 7-position tile with one vector (7
// accumulators) waited on the multiply-adds' latency.
inline constexpr int kNhwcAccumulators = 24;
constexpr int nhwc_channel_vectors(ChannelTile t, int64_t c_out) {
  const int64_t budget = kNhwcAccumulators / (t.x * t.y);
  const int64_t vectors = (c_out + 15) / 16;
  return int(std::max<int64_t>(1, std::min<int64_t>({budget, vectors, 4})));
}

// The staged geometry of a convolution over a channels-last input (conv2d_nhwc's template
// arguments, from the generated code): the padded input's columns and rows, its row pitch in
// values (columns * c_in), and the values a tile may read past the last row.
struct NhwcStaging {
  int64_t cols, rows, pitch, slack;
};
constexpr NhwcStaging nhwc_staging(const Conv2dShape& s, ChannelTile t) {
  const int64_t cols = (s.w_out - 1) * s.stride_w + (s.kw - 1) * s.dil_w + 1;
  const int64_t rows = (s.h_out - 1) * s.stride_h + (s.kh - 1) * s.dil_h + 1;
  // A wide row's last segment computes up to t.x - 1 positions past the row; a tile's rows
  // past the plane (where t.y does not divide h_out) read t.y - 1 rows more.
  const int64_t slack = ((t.x - 1) * s.stride_w + (t.y - 1) * s.stride_h * cols) * s.c_in + 16;
  return {cols, rows, cols * s.c_in, slack};
}

// Does a convolution run on the direct kernel's channel-vector form (conv_direct.h)? A filter
// wider than 1x1 at stride 1, or 2 where its tile holds kChannelTileMinStrided positions, not
// depthwise, on a plane of at most kDirectConvMaxPositions positions whose staged input fits
// kDirectConvMaxStaged, with output channels that fill their vectors of 16 but for an eighth
// at most (16, 30, 32, 48, 64, ... a group). At stride 2 (one thread, the engine's kernel then
// the channel form): 128 -> 128 on 8 x 8 in 65.3 -> 59.3 us, 64 -> 64 on 16 x 16 69.1 ->
// 58.0, 16 -> 32 on 16 x 16 13.3 -> 10.5. It computes
// no column past an output row, where the positions form computes the padded plane's row
// pitch: measured on one core of an AVX-512 host, f32, positions form then channel form
// (bench/kernels_bench BM_ConvSmall): 16 -> 16 3x3 on 16 x 16 16.7 -> 15.0 us, on 8 x 8 5.37
// -> 4.77; 32 -> 128 on 7 x 7 53.3 -> 45.4; 64 -> 256 on 7 x 7 188 -> 163; 64 -> 256 on 3 x 3
// 50.3 (the transposed GEMM) -> 37.9; 32 -> 32 on 4 x 4 7.72 -> 4.73; 8 -> 8 on 16 x 16 5.73
// -> 8.16, so not those (half of each vector idle).
inline bool direct_conv_channels_fit(const Conv2dShape& s) {
  const int64_t cout_g = s.c_out / (s.groups > 0 ? s.groups : 1);
  const int64_t lanes = (cout_g + 15) / 16 * 16;
  if (!direct_conv_plane_fits(s, 2) || cout_g < 16 || lanes * 8 > cout_g * 9) return false;
  const ChannelTile t = channel_form_tile(s.h_out, s.w_out);
  return (s.stride_h == 1 && s.stride_w == 1) || t.x * t.y >= kChannelTileMinStrided;
}

// The Winograd convolution F(2x2, 3x3) (conv_winograd.h): 3x3 filters at stride 1 without
// dilation or groups, on output planes of kWinogradMinPositions to kWinogradMaxPositions
// positions at most kWinogradMaxWidth wide, with at least kWinogradMinChannels input channels,
// output channels whose blocks of 16 add at most a third more (the last block's extra
// channels are zero filters, never stored: 16 -> 30 on 16 x 16 28.3 -> 19.2 us, 16 -> 24
// 23 -> 19, 16 -> 12 15.3 -> 11.9, 64 -> 120 on 14 x 14 280 -> 148; 20 would compute 32) and
// at least kWinogradMinOutputs outputs computed (those of whole blocks). Each 2 x 2 block
// of outputs is 16 products of transformed values a channel pair instead of 36, at the cost of
// transforming every input tile and output block. Measured on one core of an AVX-512 host,
// f32 (bench/kernels_bench BM_ConvSmall, the kernel by shape then Winograd): 16 -> 64 on
// 14 x 14 42.9 -> 30.1 us, 32 -> 128 on 14 x 14 149 -> 88.0, on 7 x 7 41.1 -> 36.1, 48 -> 192
// on 7 x 7 86.1 -> 70.3, 64 -> 256 on 7 x 7 148 -> 110, 16 -> 16 on 16 x 16 15.1 -> 10.3,
// 32 -> 64 on 16 x 16 96.9 -> 58.3, on 32 x 32 57.1 -> 51.6; not taken: 64 -> 256 on 3 x 3
// 31.9 -> 36.9 (16 x 16 products computed for 9 x 9), 32 -> 32 on 4 x 4 4.79 -> 5.75, 32 ->
// 16 on 8 x 8 8.82 -> 13.3 (the transforms outweigh the products saved on few outputs).
inline constexpr int64_t kWinogradMinPositions = 36, kWinogradMaxPositions = 1024;
inline constexpr int64_t kWinogradMaxWidth = 48, kWinogradMinChannels = 16;
inline constexpr int64_t kWinogradMinOutputs = 4096;
inline bool winograd_conv_fits(const Conv2dShape& s) {
  const int64_t positions = s.h_out * s.w_out, computed = (s.c_out + 15) / 16 * 16;
  return s.kh == 3 && s.kw == 3 && s.stride_h == 1 && s.stride_w == 1 && s.dil_h == 1 &&
         s.dil_w == 1 && s.groups == 1 && s.c_in >= kWinogradMinChannels && s.c_out >= 12 &&
         computed * 3 <= s.c_out * 4 && s.h_out >= 2 && s.w_out >= 2 &&
         s.w_out <= kWinogradMaxWidth && positions >= kWinogradMinPositions &&
         positions <= kWinogradMaxPositions && computed * positions >= kWinogradMinOutputs;
}

// The register tile of the Winograd products: `x` tiles (whole rows of 2 x 2 output blocks:
// `rows` of them) by `panels` vectors of 16 output channels, at most kWinogradAccumulators
// accumulators. Of the tiles whose row count divides the plane's, the one of most
// accumulators, then of most tiles: each transformed filter vector, loaded for every tile of
// the task, is the larger stream (64 -> 256 on 7 x 7: 1 MB of them; 16 tiles by 1 panel 110
// us, 4 tiles by 4 panels 136 us). `panels` divides the output's.
inline constexpr int kWinogradAccumulators = 24;
struct WinogradTile {
  int x = 1, rows = 1, panels = 1;
};
constexpr WinogradTile winograd_tile(int64_t h_out, int64_t w_out, int64_t c_out) {
  const int64_t tw = (w_out + 1) / 2, th = (h_out + 1) / 2, vectors = (c_out + 15) / 16;
  WinogradTile best{int(tw), 1, 1};
  for (int64_t r = 1; r <= th && r * tw <= kWinogradAccumulators; ++r) {
    if (th % r) continue;
    for (int64_t np = 1; np <= 4 && np * r * tw <= kWinogradAccumulators; ++np) {
      if (vectors % np) continue;
      const int64_t acc = np * r * tw, best_acc = int64_t(best.panels) * best.x;
      if (acc > best_acc || (acc == best_acc && r * tw > best.x))
        best = {int(r * tw), int(r), int(np)};
    }
  }
  return best;
}

// The most values per output (cin_g * kh * kw) the row kernel (conv_rows.h) takes: its B
// panels of an output row stay in L1, and its gathers pay off where the padded-plane kernel
// would stage many phase values per multiply-add.
inline constexpr int64_t kConvRowsMaxK = 32;
// At a column stride of 2 it takes up to kConvRowsMaxStridedK values per output while its A
// (all the weights, packed once) stays well inside L2, kConvRowsMaxStridedA bytes, and the
// output rows fill its register tile (kConvRowsMinStridedWidth columns): there the
// padded-plane kernel stages the whole input split into phases (YOLO11n's 3x3 stride-2 convs
// at 640: 16 -> 32 over 320 x 320 0.99 -> 0.74 ms, 64 -> 64 over 160 x 160 1.42 -> 1.25 ms at
// 2 threads; 128 -> 128 over 80 x 80, A 590 KB, 1.28 -> 1.37 ms, and 16 -> 32 over 32 x 32,
// rows of 16, 0.014 -> 0.017 ms, so not those).
inline constexpr int64_t kConvRowsMaxStridedK = 576;
inline constexpr int64_t kConvRowsMaxStridedA = 256 * 1024;
inline constexpr int64_t kConvRowsMinStridedWidth = 48;

// Does the convolution run one output row at a time over B gathered from the input rows
// (conv.h, conv_rows.h)? A filter wider than 1x1 over at most kConvRowsMaxK values per
// output (a stem), or kConvRowsMaxStridedK at a column stride of 2 (a downsampling conv with
// weights that fit L2 and wide output rows), output rows of at least a vector, column strides of 1
// or 2. The kernel also needs f32 rows in memory; otherwise the shape runs as padded_plane_fits()
// says.
inline bool conv_rows_fit(const Conv2dShape& s) {
  const int64_t groups = s.groups > 0 ? s.groups : 1;
  const int64_t khw = s.kh * s.kw, k = s.c_in / groups * khw;
  const bool few = k <= kConvRowsMaxK;
  const bool strided = s.stride_w == 2 && k <= kConvRowsMaxStridedK &&
                       s.c_out / groups * k * int64_t(sizeof(float)) <= kConvRowsMaxStridedA &&
                       s.w_out >= kConvRowsMinStridedWidth;
  return khw > 1 && (few || strided) && s.w_out >= 16 && (s.stride_w == 1 || s.stride_w == 2);
}

// The widest filter (columns) the depthwise row kernel (depthwise_rows.h) takes.
inline constexpr int64_t kDepthwiseRowsMaxTaps = 8;

// The largest output plane (pixels) and padded input plane (values a lane) the channel-vector
// depthwise kernel (depthwise_channels.h) takes.
inline constexpr int64_t kDepthwiseChannelsMaxPixels = 64, kDepthwiseChannelsMaxPadded = 400;

// The padded input plane a depthwise convolution's output needs: rows and columns.
inline int64_t depthwise_padded_rows(const Conv2dShape& s) {
  return (s.h_out - 1) * s.stride_h + (s.kh - 1) * s.dil_h + 1;
}
inline int64_t depthwise_padded_cols(const Conv2dShape& s) {
  return (s.w_out - 1) * s.stride_w + (s.kw - 1) * s.dil_w + 1;
}

// Whether a depthwise convolution's planes are small enough for the channel-vector kernel.
inline bool depthwise_channels_fit(const Conv2dShape& s) {
  return s.h_out * s.w_out <= kDepthwiseChannelsMaxPixels &&
         depthwise_padded_rows(s) * depthwise_padded_cols(s) <= kDepthwiseChannelsMaxPadded;
}

// Output planes of at most this many pixels run on the channel-vector kernel rather than the
// row kernel, which computes eight output rows a block (2 threads, f32, AVX-512: 240 channels
// 2 x 2, 3 x 3 filter 18.1 -> 9.1 us, 5 x 5 36.1 -> 10.0 us; 168 channels 4 x 4 14.3 -> 8.5 us;
// but 128 channels 8 x 8 10.8 -> 13.9 us and 96 channels 7 x 7 9.6 -> 14.6 us, so not those).
inline constexpr int64_t kDepthwiseChannelsPreferredPixels = 16;

// Does a depthwise convolution's shape suit the row kernel (depthwise_rows.h): output rows of
// at most one f32 vector, input rows of at most two, at most kDepthwiseRowsMaxTaps filter
// columns, and an output plane too large for the channel-vector kernel to be the faster? The
// kernel also needs the input's f32 rows in memory.
inline bool depthwise_rows_shape_fits(const Conv2dShape& s) {
  const bool channels =
      depthwise_channels_fit(s) && s.h_out * s.w_out <= kDepthwiseChannelsPreferredPixels;
  return s.w_out <= 16 && s.w <= 32 && s.kw <= kDepthwiseRowsMaxTaps && !channels;
}

// The widest max pooling window (columns) conv2d_max_pool() (conv_max_pool.h) takes.
inline constexpr int64_t kMaxPoolTaps = 16;

} // namespace vtc::kernels
