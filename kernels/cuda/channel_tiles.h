// Tiles of 64 pixels by 64 channels over an [n, c, h, w] extent: the unit of work of the kernels
// that turn a tensor between NCHW and NHWC through shared memory (library_epilogue_nhwc after a
// channels-last library convolution, library_prologue_nhwc before one). A block takes one tile
// a round, tiles in the order (n, pixel tile, channel tile), up to the grid-stride cap.
#pragma once

#include "common.h"

namespace vtc::kernels {

inline constexpr int64_t kTilePixels = 64, kTileChannels = 64;

// The tiles of an extent: their count, and tile t's image and first pixel and channel.
struct ChannelTiles {
  int64_t images = 0, pixel_tiles = 0, channel_tiles = 0;

  VTC_HD constexpr explicit ChannelTiles(const Index<4>& extent)
      : images(extent[0]), pixel_tiles(cdiv(extent[2] * extent[3], kTilePixels)),
        channel_tiles(cdiv(extent[1], kTileChannels)) {}
  VTC_HD constexpr int64_t count() const { return images * pixel_tiles * channel_tiles; }
  VTC_HD constexpr int64_t image(int64_t t) const { return t / (pixel_tiles * channel_tiles); }
  VTC_HD constexpr int64_t first_pixel(int64_t t) const {
    return t % (pixel_tiles * channel_tiles) / channel_tiles * kTilePixels;
  }
  VTC_HD constexpr int64_t first_channel(int64_t t) const {
    return t % channel_tiles * kTileChannels;
  }
};

// 256 threads, one tile a block, up to the grid-stride cap.
VTC_HD constexpr Launch channel_tiles_launch(const Index<4>& extent) {
  const int64_t tiles = ChannelTiles(extent).count();
  return Launch{{unsigned(clamp64(tiles, 1, kMaxGridStrideBlocks)), 1, 1}, {256, 1, 1}, 0};
}

} // namespace vtc::kernels
