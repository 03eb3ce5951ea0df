// Nearest-neighbour upsampling by integer factors (ONNX Resize, mode nearest, asymmetric
// coordinates, floor): out[i] = in[i / factor] in every dimension. An output row (the last
// dimension) is its input row with every value repeated `factor` times: the input row is
// loaded as one run, expanded in a local buffer and stored as one run — the values are moved,
// never computed, so they are those of an element-by-element copy.
#pragma once

#include <cstdint>

#include "elementwise.h"
#include "parallel.h"
#include "stage.h"

namespace vtc::kernels {

template <Accessor Out, Accessor In, int R>
void upsample_nearest(const Out& out, const In& in, const Index<R>& out_shape,
                      const Index<R>& factor) {
  static_assert(R >= 1 && Out::rank == R && In::rank == R);
  Index<R> in_shape{};
  int64_t copies = 1; // output rows written from each input row
  for (int d = 0; d < R; ++d) {
    if (out_shape[d] <= 0 || factor[d] <= 0) return;
    in_shape[d] = (out_shape[d] + factor[d] - 1) / factor[d];
    if (d + 1 < R) copies *= factor[d];
  }
  using C = compute_t<In>;
  const int64_t w = out_shape[R - 1], f = factor[R - 1], w_in = in_shape[R - 1];
  const int64_t rows = detail::outer_count(in_shape);
  // About 8k values a chunk, each row counted 32 more for its loads and stores.
  parallel_chunks(rows, std::max<int64_t>(1, 8192 / (w * copies + 32)),
                  [&](int64_t r0, int64_t r1) {
                    C* src = scratch<C, 0>(w_in);
                    C* row = scratch<C, 1>(w);
                    Index<R> i = detail::row_index(in_shape, r0); // advanced row by row below
                    for (int64_t r = r0; r < r1; ++r) {
                      load_run(in, i, w_in, src);
                      if (f == 2) {
                        for (int64_t x = 0; x < w / 2; ++x)
                          row[2 * x] = row[2 * x + 1] = src[x];
                        if (w % 2) row[w - 1] = src[w / 2];
                      } else {
                        for (int64_t x = 0, j = 0, k = 0; x < w; ++x) { // j = x / f, k = x % f
                          row[x] = src[j];
                          if (++k == f) k = 0, ++j;
                        }
                      }
                      // Every output row o with o[d] / factor[d] == i[d] (d < R-1), o[d] <
                      // out_shape[d].
                      for (int64_t c = 0; c < copies; ++c) {
                        Index<R> o{};
                        bool inside = true;
                        for (int64_t d = R - 2, rest = c; d >= 0; --d) {
                          o[d] = i[d] * factor[d] + rest % factor[d];
                          rest /= factor[d];
                          inside = inside && o[d] < out_shape[d];
                        }
                        if (inside) store_run(out, o, w, row);
                      }
                      for (int64_t d = R - 2; d >= 0 && ++i[d] == in_shape[d]; --d)
                        i[d] = 0;
                    }
                  });
}

} // namespace vtc::kernels
