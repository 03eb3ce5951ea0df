// Resize in every mode and coordinate transformation ONNX defines, over tap tables: the code
// generator computes, for each dimension and output coordinate, the input indices read and their
// weights (ops/resize_taps.h, the reference interpreter's own rules) and passes them here as
// constant arrays. An output element is the sum, in double, over every combination of one tap
// per dimension (the last dimension's taps fastest) of the product of their weights (in
// dimension order) times the input element, skipping combinations of weight 0: the reference's
// arithmetic in its order, then rounded to the compute type (float for f16 and bf16) and stored. A
// coordinate marked outside (tf_crop_and_resize beyond the roi) gives `extrapolation`.
#pragma once

#include <algorithm>
#include <cstdint>

#include "elementwise.h"
#include "parallel.h"

namespace vtc::kernels {

// One dimension's taps: output coordinate o reads index[o * taps + j] with weight
// weight[o * taps + j], j < taps (weight 0 where o has fewer taps); outside, when not null,
// marks the coordinates whose outputs are the extrapolation value.
struct ResampleAxis {
  int64_t taps = 1;
  const int64_t* index = nullptr;
  const double* weight = nullptr;
  const bool* outside = nullptr;
};

template <Accessor Out, Accessor In, int R>
void resample(const Out& out, const In& in, const Index<R>& out_shape,
              const ResampleAxis (&axes)[R], double extrapolation) {
  static_assert(R >= 1 && Out::rank == R && In::rank == R);
  using C = compute_t<In>;
  const int64_t w = out_shape[R - 1], rows = detail::outer_count(out_shape);
  if (w <= 0 || rows <= 0) return;
  int64_t combos = 1;
  for (int d = 0; d < R; ++d)
    combos *= axes[d].taps;
  // About 4k taps a chunk.
  parallel_chunks(rows, std::max<int64_t>(1, 4096 / (w * combos + 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      Index<R> o = detail::row_index(out_shape, r);
      for (int64_t x = 0; x < w; ++x) {
        o[R - 1] = x;
        bool outside = false;
        for (int d = 0; d < R; ++d)
          outside = outside || (axes[d].outside && axes[d].outside[o[d]]);
        double acc = extrapolation;
        if (!outside) {
          acc = 0;
          int64_t pick[R] = {};
          for (bool more = true; more;) {
            double weight = 1;
            Index<R> i{};
            for (int d = 0; d < R; ++d) {
              const int64_t k = o[d] * axes[d].taps + pick[d];
              weight *= axes[d].weight[k];
              i[d] = axes[d].index[k];
            }
            if (weight != 0) acc += weight * double(in.load(i));
            more = false;
            for (int d = R - 1; d >= 0; --d) {
              if (++pick[d] < axes[d].taps) {
                more = true;
                break;
              }
              pick[d] = 0;
            }
          }
        }
        out.store(o, C(acc));
      }
    }
  });
}

} // namespace vtc::kernels
