// Tiles of pixels by channels over an [n, c, h, w] extent: the unit of work of the kernels that
// turn a tensor between NCHW and NHWC through shared memory (library_epilogue_nhwc after a
// channels-last library convolution, library_prologue_nhwc before one). A tile holds
// kTileElements values: 64 channels by 64 pixels, or 32, 16 or 8 channels by 128, 256 or 512
// pixels where the tensor has fewer channels (fitted_tile_channels), so that narrow tensors fill
// the tile too. A block takes one tile a round, tiles in the order (n, pixel tile, channel
// tile), up to the grid-stride cap.
#pragma once

#include "common.h"

namespace vtc::kernels {

inline constexpr int64_t kTilePixels = 64, kTileChannels = 64;
inline constexpr int64_t kTileElements = kTilePixels * kTileChannels;

// The channels of a tile shaped by the channel count: the count rounded up to a power of two
// from 8 to kTileChannels (the pixels are kTileElements over it, a multiple of 64).
VTC_HD constexpr int64_t fitted_tile_channels(int64_t channels) {
  int64_t c = 8;
  while (c < channels && c < kTileChannels)
    c *= 2;
  return c;
}

// The tiles of an extent: their shape and count, and tile t's image and first pixel and channel.
struct ChannelTiles {
  int64_t tile_channels = kTileChannels, tile_pixels = kTilePixels;
  int64_t images = 0, pixel_tiles = 0, channel_tiles = 0;

  VTC_HD constexpr explicit ChannelTiles(const Index<4>& extent)
      : tile_channels(fitted_tile_channels(extent[1])), tile_pixels(kTileElements / tile_channels),
        images(extent[0]), pixel_tiles(cdiv(extent[2] * extent[3], tile_pixels)),
        channel_tiles(cdiv(extent[1], tile_channels)) {}
  VTC_HD constexpr int64_t count() const { return images * pixel_tiles * channel_tiles; }
  VTC_HD constexpr int64_t image(int64_t t) const { return t / (pixel_tiles * channel_tiles); }
  VTC_HD constexpr int64_t first_pixel(int64_t t) const {
    return t % (pixel_tiles * channel_tiles) / channel_tiles * tile_pixels;
  }
  VTC_HD constexpr int64_t first_channel(int64_t t) const {
    return t % channel_tiles * tile_channels;
  }
};

// 256 threads, one tile a block, up to the grid-stride cap.
VTC_HD constexpr Launch channel_tiles_launch(const Index<4>& extent) {
  const ChannelTiles tiles(extent);
  return Launch{{unsigned(clamp64(tiles.count(), 1, kMaxGridStrideBlocks)), 1, 1}, {256, 1, 1}, 0};
}

} // namespace vtc::kernels
