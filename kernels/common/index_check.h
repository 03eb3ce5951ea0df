// Run-time index checks: the record a failed check leaves for the host, the bounds an index
// tensor is checked against, and the per-element test both targets' check kernels run
// (kernels/cpu/index_check.h, kernels/cuda/index_check.h). The generated code passes the
// record as buf[Program::status_slot()]; on a device, kernels that run after a check return
// at once when it has failed (run_failed), so nothing reads through a bad index and no
// output or donated buffer is written after it.
#pragma once

#include "accessor.h"

namespace vtc::kernels {

// Zero while every check has passed; a failed check fills it once (the first failure).
struct IndexFailure {
  int64_t failed; // 1 after a failure
  int64_t step;   // the check's step in the program
  int64_t value;  // the index found
  int64_t flat;   // its row-major position in the index tensor
};

// The sizes an index tensor's elements must lie in [-size, size) of: size[0] for every
// element (NB == 1), or size[c] for elements whose last coordinate is c (index tuples).
template <int NB> struct IndexBounds { int64_t size[NB]; };

template <int NB>
VTC_HD inline bool index_in_range(int64_t v, int64_t flat, const IndexBounds<NB>& b) {
  const int64_t size = b.size[NB == 1 ? 0 : flat % NB];
  return v >= -size && v < size;
}

// The multi-index of row-major position `flat` in `shape`.
template <int R> VTC_HD inline Index<R> unflatten_index(int64_t flat, const Index<R>& shape) {
  Index<R> i{};
  for (int d = R - 1; d >= 0; --d) {
    i[d] = flat % shape[d];
    flat /= shape[d];
  }
  return i;
}

// Whether a check of this run has failed (the record at `status`, read by every kernel that
// runs after one).
VTC_HD inline bool run_failed(const void* status) {
  return static_cast<const IndexFailure*>(status)->failed != 0;
}

} // namespace vtc::kernels
