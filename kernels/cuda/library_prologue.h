// The prologue of a channels-last library convolution (cuDNN on the cuda target): its input
// [n, c, h, w], read through the input's accessor (a physical NCHW buffer, a caller's bound
// buffer, or a virtual tensor: a Concat's pieces, a Split's view), stored dense [n, h, w, c]
// into the staging buffer the library then reads. It replaces the library's own transpose
// (cudnnTransformTensor of a dense NCHW buffer), which needs a physical input whose address is
// fixed when the call is queued; this kernel reads addresses from the buffer table every run.
// A block turns a tile of 64 pixels by 64 channels around through shared memory: a warp loads
// 32 adjacent pixels of a channel, then each thread stores 8 channels of one pixel as one
// 16-byte vector. Values are moved as bits: the staged input is the input exactly.
// Launch: channel_tiles_launch (channel_tiles.h).
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
  constexpr int V = 8;
  constexpr int TP = int(kTilePixels), TC = int(kTileChannels);
  __shared__ unsigned short tile[TC][TP + 2];
  const int64_t channels = extent[1], width = extent[3], pixels = extent[2] * extent[3];
  const ChannelTiles tiles(extent);
  const int tid = int(threadIdx.x);
  for (int64_t t = blockIdx.x; t < tiles.count(); t += gridDim.x) {
    const int64_t n = tiles.image(t), p0 = tiles.first_pixel(t), c0 = tiles.first_channel(t);
    // Load: element e is pixel e % TP of channel e / TP (a warp: 32 adjacent pixels).
    for (int e = tid; e < TP * TC; e += int(blockDim.x)) {
      const int pl = e % TP, cl = e / TP;
      const int64_t p = p0 + pl, c = c0 + cl;
      unsigned short bits = 0;
      if (p < pixels && c < channels) {
        const auto v = in.load(Index<4>{n, c, p / width, p % width});
        if constexpr (same_type<portable::remove_cvref_t<decltype(v)>, T>)
          bits = static_cast<unsigned short>(element_bits(v)); // as stored: the same bits
        else
          bits = static_cast<unsigned short>(element_bits(from_compute<T>(float(v))));
      }
      tile[cl][pl] = bits;
    }
    __syncthreads();
    // Store: group g is 8 adjacent channels of one pixel, one 16-byte vector where whole.
    for (int g = tid; g < TP * TC / V; g += int(blockDim.x)) {
      const int pl = g % TP, cl = g / TP * V;
      const int64_t p = p0 + pl, c = c0 + cl;
      if (p >= pixels || c >= channels) continue;
      T* dst = staged + (n * pixels + p) * channels + c;
      if (c + V <= channels && aligned_to(dst, 16)) {
        unsigned w[V / 2];
#pragma unroll
        for (int k = 0; k < V / 2; ++k)
          w[k] = unsigned(tile[cl + 2 * k][pl]) | (unsigned(tile[cl + 2 * k + 1][pl]) << 16);
        store_words(dst, w);
      } else {
        for (int u = 0; u < V && c + u < channels; ++u)
          dst[u] = element_of_bits<T>(tile[cl + u][pl]);
      }
    }
    __syncthreads();
  }
}

#endif

} // namespace vtc::kernels
