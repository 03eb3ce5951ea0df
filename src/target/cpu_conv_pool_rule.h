// Which Conv + MaxPool pairs the cpu target runs as one kernel (kernels/cpu/conv_max_pool.h,
// which never writes the convolution's output): the target's answer to fusion's
// FuseOptions::max_pool_tail.
#pragma once

#include "ir/graph.h"
#include "passes/fusion.h"

namespace vtc {

// Whether the cpu target fuses `max_pool` into the kernel of `conv`: f32 2-D convolutions the
// row kernel takes (a stem: few values per output), on a host with AVX-512 (generated code is
// compiled for the host, and the row kernel needs it; elsewhere the two stay apart), pooled
// without ceil mode at a column stride of 1 or 2.
bool cpu_fuses_max_pool(const Node& conv, const Node& max_pool);

// Fusion as the cpu target runs it (cpu_fuses_max_pool among the options).
FuseOptions cpu_fuse_options();

} // namespace vtc
