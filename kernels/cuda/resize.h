// Nearest-neighbour upsampling by integer factors (ONNX Resize, mode nearest, asymmetric
// coordinates, floor): out[i] = in[i / factor] in every dimension. One thread per output
// element, grid-stride (neighbouring threads write neighbouring elements); values are moved,
// never computed (load then store, as the copy kernel's element path).
#pragma once

#include "elementwise.h"

namespace vtc::kernels {

template <int R> struct UpsampleShape {
  int64_t extent[R > 0 ? R : 1]; // output
  int64_t factor[R > 0 ? R : 1];
};

template <int R> VTC_HD constexpr Launch upsample_nearest_launch(const UpsampleShape<R>& s) {
  int64_t n = 1;
  for (int k = 0; k < R; ++k)
    n *= s.extent[k];
  return Launch{{unsigned(clamp64(cdiv(n, 256), 1, kMaxGridStrideBlocks)), 1, 1}, {256, 1, 1}, 0};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

template <class Out, class In, int R>
__device__ void upsample_nearest(Out out, In in, UpsampleShape<R> s) {
  static_assert(R >= 1 && Out::rank == R && In::rank == R, "upsample_nearest: rank R operands");
  int64_t count = 1;
  for (int k = 0; k < R; ++k)
    count *= s.extent[k];
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < count; t += stride) {
    Index<R> o, i;
    int64_t rest = t;
    for (int k = R - 1; k >= 0; --k) {
      o[k] = rest % s.extent[k];
      rest /= s.extent[k];
      i[k] = o[k] / s.factor[k];
    }
    out.store(o, in.load(i));
  }
}

} // namespace vtc::kernels

#endif
