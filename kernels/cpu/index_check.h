// The cpu check of a run-time index tensor (see ../common/index_check.h): every element in
// row-major order, the first one out of range recorded. The executor looks at the record
// after the step and stops the run there.
#pragma once

#include "../common/index_check.h"

namespace vtc::kernels {

template <int R, int NB, class A>
inline void check_indices(const A& indices, const Index<R>& shape, const IndexBounds<NB>& bounds,
                          void* status, int64_t step) {
  int64_t n = 1;
  for (int d = 0; d < R; ++d)
    n *= shape[d];
  for (int64_t f = 0; f < n; ++f) {
    const int64_t v = int64_t(indices.load(unflatten_index(f, shape)));
    if (index_in_range(v, f, bounds)) continue;
    *static_cast<IndexFailure*>(status) = IndexFailure{1, step, v, f};
    return;
  }
}

} // namespace vtc::kernels
