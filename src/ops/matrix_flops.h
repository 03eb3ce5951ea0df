// The arithmetic of a node that runs on a matrix unit where the hardware has one: MatMul,
// Gemm and Conv, as 2 x (multiply-adds). The GPU benchmark's floor divides a program's sum of
// these by the measured matrix rate; reports print them beside each step's time.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace vtc {

// 2 x output elements x the reduction length (MatMul: A's last dimension; Gemm: K; Conv:
// input channels per group x the kernel's taps); 0 for every other op.
int64_t matrix_flops(const Node& n);

} // namespace vtc
