// Which tensors the cpu target holds channels-last. Between two convolutions of a CNN a
// tensor in NCHW makes the first store each register of 16 output channels element by element
// (16 planes apart) and the second stage its input planes with their padding; held as
// [n, h, w, c] (kernels/cpu/conv_nhwc.h), a position's 16 channels are one vector store
// through the epilogue and one contiguous copy into the next convolution's staging. A tensor
// that only convolutions with channels-last kernels touch (one writes it through its
// epilogue; the others read it as their input or in their epilogue) lies so. Every kernel's
// arithmetic is the same chain as in NCHW, so every strategy's bits stay the same; only where
// the elements lie changes.
#pragma once

#include "lower/program.h"

namespace vtc {

// Whether conv kernel k has a channels-last form on cpu (conv2d_nhwc, depthwise_nhwc): a 2-D
// f32 convolution, groups 1 or depthwise (one output channel an input channel), no max
// pooling fused at its end, not one that runs the Winograd kernel (its bits are its own: the
// same kernel must run under every layout).
bool cpu_conv_takes_channels_last(const Kernel& k);

// Whether kernel k is a max pooling with a channels-last form on cpu (max_pool2d_nhwc): a 2-D
// f32 MaxPool alone, without its indices output.
bool cpu_pool_takes_channels_last(const Kernel& k);

// Marks in p.storage.channels_last every physical intermediate 4-D tensor written by exactly
// one such convolution or max pooling and read by such kernels only (a convolution's input or
// an operand of its epilogue, a pooling's input), no mapping reading it, where it pays: planes
// of at most 16 positions, or larger ones whose convolutions are wider than 1x1 with at least
// 64 multiply-adds a position (1x1 and depthwise ones run faster in NCHW there; a stem's
// output read by its max pooling is stored a vector of channels at a time instead of element
// by element). $VTC_CPU_HOLD_CHANNELS_LAST "0" holds none (to
// compare); $VTC_CPU_CHANNELS_LAST_PLANE and $VTC_CPU_CHANNELS_LAST_MIN_K set the two limits.
void choose_cpu_channels_last(Program& p);

} // namespace vtc
