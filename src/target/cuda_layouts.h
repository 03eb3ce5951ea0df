// Which tensors the cuda target holds channels-last. cuDNN's tensor-core convolutions read and
// write NHWC; an NCHW tensor between two of them is transposed before the second (a kernel a
// call, 3-4 us each at batch 1), and the first's epilogue turns its NHWC product around through
// shared memory to store it NCHW. A tensor that only such convolutions touch (one writes it
// through its epilogue, the others read it as their input) can instead lie in memory as
// [n, h, w, c]: the epilogue stores it in the product's own order and the readers take it as
// it is. A stem on conv2d_direct (kernels/cuda/conv_direct.h) may be the writer too: it stores 8
// channels of a pixel as one vector where they lie side by side. Its values and every kernel's
// arithmetic stay the same, so every strategy's bits do too; only where the elements lie
// changes.
#pragma once

#include "lower/program.h"

namespace vtc {

// Marks in p.storage.channels_last every physical intermediate 4-D tensor that is written by
// exactly one step, a cuDNN channels-last convolution's epilogue or a conv2d_direct kernel, and
// read only as the input of cuDNN channels-last convolutions, no mapping reading it.
// $VTC_CUDA_HOLD_CHANNELS_LAST "0" holds none (to compare).
void choose_channels_last(Program& p);

} // namespace vtc
