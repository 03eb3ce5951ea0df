// The epilogue of a convolution a library computed (cuDNN on the cuda target): the raw product,
// dense [n, c, h, w] in a scratch buffer, read back in groups of 8 consecutive elements of a
// row (one 16-byte load where aligned), then stored through the output writer, which adds the
// bias, applies the fused chain and stores through the output's mapping (store_floats: one
// vector store where the writer allows). Launch: library_epilogue_launch.
#pragma once

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

#endif

} // namespace vtc::kernels
