// The cuda check of a run-time index tensor (see ../common/index_check.h): one block of 256
// threads scans the tensor (index tensors are small: positions, token ids, gather tables);
// the first element out of range in row-major order, whichever thread finds it, is recorded
// in the device record, which later kernels test, and in host memory the device can write,
// which the executor reads after the run. A passing check writes nothing.
#pragma once

#include "../common/index_check.h"
#include "common.h"

namespace vtc::kernels {

VTC_HD constexpr Launch check_indices_launch() {
  return Launch{{1, 1, 1}, {256, 1, 1}, 0};
}

} // namespace vtc::kernels

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc::kernels {

// status: the device record; host_status: the record in mapped host memory. Launch:
// check_indices_launch.
template <int R, int NB, class A>
__device__ inline void check_indices(const A& indices, const Index<R>& shape,
                                     const IndexBounds<NB>& bounds, void* status, void* host_status,
                                     int64_t step) {
  __shared__ unsigned long long first;
  int64_t n = 1;
  for (int d = 0; d < R; ++d)
    n *= shape[d];
  if (threadIdx.x == 0) first = ~0ull;
  __syncthreads();
  int64_t mine = -1, value = 0;
  for (int64_t f = threadIdx.x; f < n; f += blockDim.x) {
    const int64_t v = int64_t(indices.load(unflatten_index(f, shape)));
    if (!index_in_range(v, f, bounds)) {
      mine = f;
      value = v;
      break;
    }
  }
  if (mine >= 0) atomicMin(&first, static_cast<unsigned long long>(mine));
  __syncthreads();
  if (mine >= 0 && static_cast<unsigned long long>(mine) == first) {
    const IndexFailure record{1, step, value, mine};
    *static_cast<IndexFailure*>(status) = record;
    *static_cast<IndexFailure*>(host_status) = record;
    __threadfence_system();
  }
}

} // namespace vtc::kernels

#endif
