// The epilogue of a convolution a library computed (cuDNN or cuBLASLt on the cuda target): the
// raw product in a scratch buffer, stored through the output writer, which adds the bias,
// applies the fused chain and stores through the output's mapping (store_floats: one vector
// store where the writer allows).
// - library_epilogue: the raw product dense [n, c, h, w] (cuBLASLt), read back in groups of 8
//   consecutive elements of a row (one 16-byte load where aligned). Launch:
//   library_epilogue_launch.
// - library_epilogue_nhwc: the raw product dense [n, h, w, c] (cuDNN, whose tensor-core kernels
//   compute channels-last: handing it an NCHW output made it transpose the result in a kernel
//   of its own). A block turns a tile of pixels by channels (64 by 64, or more pixels by fewer
//   channels for narrow outputs) around through shared memory: 16-byte loads along the
//   channels, then 8 adjacent pixels of a channel stored as one vector. Launch:
//   channel_tiles_launch (channel_tiles.h).
// - library_epilogue_to_nhwc: the raw product dense [n, h, w, c] as above, into an output held
//   channels-last too (the program's choice where only channels-last convolutions read it): each
//   thread takes 8 channels of one pixel (one 16-byte load) and stores them through the output
//   as one vector where they lie side by side there (store_channels), else one by one.
//   Launch: library_epilogue_launch.
#pragma once

#include "channel_tiles.h"
#include "common.h"

namespace vtc::kernels {

// 256 threads, one group of 8 elements per thread, up to the grid-stride cap.
VTC_HD constexpr Launch library_epilogue_launch(const Index<4>& extent) {
  const int64_t n = extent[0] * extent[1] * extent[2] * extent[3];
  const int64_t blocks = clamp64(cdiv(n, 256 * 8), 1, kMaxGridStrideBlocks);
  return Launch{{unsigned(blocks), 1, 1}, {256, 1, 1}, 0};
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

// out[i] = raw[i] for every i of [n, c, h, w] = `extent`, through out's store (the epilogue).
template <class Out, class T>
__device__ void library_epilogue(Out out, const T* raw, Index<4> extent) {
  static_assert(Out::rank == 4, "library_epilogue: a 4-D output");
  using namespace cuda;
  constexpr int V = 8;
  const int64_t w = extent[3];
  const int64_t per_row = cdiv(w, V);
  const int64_t rows = extent[0] * extent[1] * extent[2];
  const int64_t groups = rows * per_row;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += stride) {
    const int64_t row = g / per_row, c0 = g % per_row * V;
    Index<4> i = row_index<4>(extent.v, row);
    i[3] = c0;
    const T* p = raw + row * w + c0;
    const bool full = c0 + V <= w;
    float v[V];
    if (full && aligned_to(p, 16)) {
      unsigned words[V * sizeof(T) / 4];
      load_words(p, words);
#pragma unroll
      for (int u = 0; u < V; ++u)
        v[u] = to_compute(unpack<T>(words, u));
    } else {
#pragma unroll
      for (int u = 0; u < V; ++u)
        v[u] = c0 + u < w ? float(to_compute(p[u])) : 0.0f;
    }
    store_floats<V>(out, i, full && vector_at<V>(out, i), w, v);
  }
}

// Where value (channel c, pixel p) of a library_epilogue_nhwc tile lies in shared memory: rows
// of `row` floats a channel, and within each aligned run of 8 pixels the order rotated by p / 32,
// so that the store phase's lanes, each reading its own run of 8 pixels of one channel, read
// from 32 different banks (without the rotation the lanes of a channel, 8 floats apart, share
// 4 banks); the load phase's lanes, 8 channels of one pixel each, stay within 2 a bank.
VTC_HD inline int epilogue_tile_at(int c, int p, int row) {
  return c * row + (p & ~7) + ((p + (p >> 5)) & 7);
}

// out[n, c, h, w] = raw[n, h, w, c] for every index of [n, c, h, w] = `extent`, through out's
// store (the epilogue). Each value is stored once, as in library_epilogue, so the bits are the
// same whichever layout the library wrote. The tiles are fitted to the channel count
// (channel_tiles.h).
template <class Out, class T>
__device__ void library_epilogue_nhwc(Out out, const T* raw, Index<4> extent) {
  static_assert(Out::rank == 4, "library_epilogue_nhwc: a 4-D output");
  using namespace cuda;
  constexpr int V = 8;
  __shared__ float tile[kTileElements + kTileChannels]; // rows of TP + 1 floats
  const int64_t channels = extent[1], width = extent[3], pixels = extent[2] * extent[3];
  const ChannelTiles tiles(extent);
  const int TC = int(tiles.tile_channels), TP = int(tiles.tile_pixels), row = TP + 1;
  const int groups = TP * TC / V, tid = int(threadIdx.x);
  for (int64_t t = blockIdx.x; t < tiles.count(); t += gridDim.x) {
    const int64_t n = tiles.image(t), p0 = tiles.first_pixel(t), c0 = tiles.first_channel(t);
    // Load: group g is 8 channels of one pixel (16 bytes of a row of raw).
    for (int g = tid; g < groups; g += int(blockDim.x)) {
      const int pl = g / (TC / V), cl = g % (TC / V) * V;
      const int64_t p = p0 + pl, c = c0 + cl;
      const T* src = raw + (n * pixels + p) * channels + c;
      if (p < pixels && c + V <= channels && aligned_to(src, 16)) {
        unsigned words[V * sizeof(T) / 4];
        load_words(src, words);
#pragma unroll
        for (int u = 0; u < V; ++u)
          tile[epilogue_tile_at(cl + u, pl, row)] = to_compute(unpack<T>(words, u));
      } else {
#pragma unroll
        for (int u = 0; u < V; ++u)
          tile[epilogue_tile_at(cl + u, pl, row)] =
              p < pixels && c + u < channels ? float(to_compute(src[u])) : 0.0f;
      }
    }
    __syncthreads();
    // Store: group g is 8 adjacent pixels of one channel.
    for (int g = tid; g < groups; g += int(blockDim.x)) {
      const int cl = g / (TP / V), pl = g % (TP / V) * V;
      const int64_t c = c0 + cl, p = p0 + pl;
      if (c >= channels || p >= pixels) continue;
      float v[V];
#pragma unroll
      for (int u = 0; u < V; ++u)
        v[u] = tile[epilogue_tile_at(cl, pl + u, row)];
      const int64_t h = p / width, w = p % width;
      // Whole groups of a row as vectors (store_floats's contract: the group starts at a
      // multiple of V), else element by element.
      if (w % V == 0 && w + V <= width) {
        const Index<4> i{n, c, h, w};
        store_floats<V>(out, i, vector_at<V>(out, i), width, v);
      } else {
        for (int u = 0; u < V && p + u < pixels; ++u) {
          const float one[1] = {v[u]};
          store_floats<1>(out, Index<4>{n, c, (p + u) / width, (p + u) % width}, false, width, one);
        }
      }
    }
    __syncthreads();
  }
}

// out[n, c, h, w] = raw[n, h, w, c] for every index of [n, c, h, w] = `extent`, in raw's order,
// through out's store (the epilogue); each value stored once, as by the other two.
template <class Out, class T>
__device__ void library_epilogue_to_nhwc(Out out, const T* raw, Index<4> extent) {
  static_assert(Out::rank == 4, "library_epilogue_to_nhwc: a 4-D output");
  using namespace cuda;
  constexpr int V = 8;
  const int64_t channels = extent[1], height = extent[2], width = extent[3];
  const int64_t per_pixel = cdiv(channels, V);
  const int64_t groups = extent[0] * height * width * per_pixel;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += stride) {
    const int64_t p = g / per_pixel, c0 = g % per_pixel * V;
    const int64_t n = p / (height * width), h = p / width % height, w = p % width;
    const T* src = raw + p * channels + c0;
    const bool full = c0 + V <= channels;
    float v[V];
    if (full && aligned_to(src, 16)) {
      unsigned words[V * sizeof(T) / 4];
      load_words(src, words);
#pragma unroll
      for (int u = 0; u < V; ++u)
        v[u] = to_compute(unpack<T>(words, u));
    } else {
#pragma unroll
      for (int u = 0; u < V; ++u)
        v[u] = c0 + u < channels ? float(to_compute(src[u])) : 0.0f;
    }
    if (full && store_channels<V>(out, Index<4>{n, c0, h, w}, v)) continue;
#pragma unroll
    for (int u = 0; u < V; ++u)
      if (c0 + u < channels) {
        const float one[1] = {v[u]};
        store_floats<1>(out, Index<4>{n, c0 + u, h, w}, false, width, one);
      }
  }
}

#endif

} // namespace vtc::kernels
