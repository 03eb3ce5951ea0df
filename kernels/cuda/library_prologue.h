// The prologue of a channels-last library convolution (cuDNN on the cuda target): its input
// [n, c, h, w], read through the input's accessor (a physical NCHW buffer, a caller's bound
// buffer, or a virtual tensor: a Concat's pieces, a Split's view), stored dense [n, h, w, c]
// into the staging buffer the library then reads. It replaces the library's own transpose
// (cudnnTransformTensor of a dense NCHW buffer), which needs a physical input whose address is
// fixed when the call is queued; this kernel reads addresses from the buffer table every run.
// A block turns a tile of pixels by channels around through shared memory (channel_tiles.h,
// the tile fitted to the channel count): each thread loads 8 adjacent pixels of a row of one
// channel (one 16-byte load where the accessor allows it, one division for the 8), then stores
// 8 channels of one pixel as one 16-byte vector, adjacent threads taking a pixel's adjacent
// channel groups so that a warp's stores fill whole lines. Values are moved as bits: the staged
// input is the input exactly. Launch: channel_tiles_launch.
#pragma once

#include "channel_tiles.h"
#include "common.h"

namespace vtc::kernels {

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

// staged[n, h, w, c] = in[n, c, h, w] for every index of [n, c, h, w] = `extent`; `staged` is
// dense and aligned to 16 bytes. 16-bit elements (the channels-last convolutions' f16 and bf16).
template <class In, class T>
__device__ void library_prologue_nhwc(In in, T* staged, Index<4> extent) {
  static_assert(In::rank == 4, "library_prologue_nhwc: a 4-D input");
  static_assert(sizeof(T) == 2, "library_prologue_nhwc: 16-bit elements");
  using namespace cuda;
  using Value = portable::remove_cvref_t<decltype(in.load(Index<4>{}))>;
  constexpr bool as_bits = same_type<Value, T>; // else converted through float, as stored
  // A tile row (one channel) is TP + 2 values: an odd number of 4-byte words, so the store
  // phase's reads of 8 rows 8 apart for each of a warp's pixels fall in different banks (at
  // most 2 a bank), where rows of a multiple of 16 bytes would put all 8 in one.
  constexpr int V = 8, Pad = 2;
  __shared__ __align__(16) unsigned short tile[kTileElements + Pad * kTileChannels];
  const int64_t channels = extent[1], width = extent[3], pixels = extent[2] * extent[3];
  const ChannelTiles tiles(extent);
  const int TC = int(tiles.tile_channels), TP = int(tiles.tile_pixels), row = TP + Pad;
  const int groups = TP * TC / V, tid = int(threadIdx.x);
  for (int64_t t = blockIdx.x; t < tiles.count(); t += gridDim.x) {
    const int64_t n = tiles.image(t), p0 = tiles.first_pixel(t), c0 = tiles.first_channel(t);
    // Load: group g is 8 adjacent pixels of one channel (a warp: 256 adjacent pixels of one
    // channel, 128 of each of 2 or 64 of each of 4, as the tile is shaped), zeros past the
    // tensor.
    for (int g = tid; g < groups; g += int(blockDim.x)) {
      const int cl = g / (TP / V), pl = g % (TP / V) * V;
      const int64_t c = c0 + cl, p = p0 + pl;
      unsigned words[V / 2] = {};
      if (c < channels && p < pixels) {
        int64_t h = p / width, w = p % width;
        bool loaded = false;
        if constexpr (as_bits && vector_capable<In, V>) {
          const Index<4> i{n, c, h, w};
          if (w % V == 0 && w + V <= width && vector_at<V>(in, i)) {
            load_words(in.ptr(i), words);
            loaded = true;
          }
        }
        for (int u = 0; u < V && !loaded && p + u < pixels; ++u) {
          const auto v = in.load(Index<4>{n, c, h, w});
          unsigned bits;
          if constexpr (as_bits)
            bits = element_bits(v) & 0xffffu;
          else
            bits = element_bits(from_compute<T>(float(v))) & 0xffffu;
          words[u / 2] |= bits << (16 * (u % 2));
          if (++w == width) {
            w = 0;
            ++h;
          }
        }
      }
      unsigned* at = reinterpret_cast<unsigned*>(tile + cl * row + pl); // 4-byte aligned
#pragma unroll
      for (int k = 0; k < V / 2; ++k)
        at[k] = words[k];
    }
    __syncthreads();
    // Store: group g is 8 adjacent channels of one pixel, one 16-byte vector where whole; a
    // pixel's groups go to adjacent threads (a warp stores 4 whole pixels of 64 channels).
    for (int g = tid; g < groups; g += int(blockDim.x)) {
      const int pl = g / (TC / V), cl = g % (TC / V) * V;
      const int64_t p = p0 + pl, c = c0 + cl;
      if (p >= pixels || c >= channels) continue;
      T* dst = staged + (n * pixels + p) * channels + c;
      if (c + V <= channels && aligned_to(dst, 16)) {
        unsigned w[V / 2];
#pragma unroll
        for (int k = 0; k < V / 2; ++k)
          w[k] = unsigned(tile[(cl + 2 * k) * row + pl]) |
                 (unsigned(tile[(cl + 2 * k + 1) * row + pl]) << 16);
        store_words(dst, w);
      } else {
        for (int u = 0; u < V && c + u < channels; ++u)
          dst[u] = element_of_bits<T>(tile[(cl + u) * row + pl]);
      }
    }
    __syncthreads();
  }
}

#endif

} // namespace vtc::kernels
