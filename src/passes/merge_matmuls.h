// Sibling matrix products merged: MatMul nodes that multiply the same value by constant
// weights [K, N_i] of one dtype become one MatMul by the weights side by side, [K, N_1 + ...],
// and a Split of its result along the last axis back into the original values. A decode step
// then streams its q, k and v weights (or its gate and up weights) in one kernel instead of
// paying a product's launch, ramp and split-K sums for each; the Split's pieces are views the
// strategy can make virtual. The products' order of summation may change with the merged shape
// (the reference interpreter and the other targets' tolerances cover it); every strategy sees
// the same merged graph, so strategies still agree bit for bit.
//
// Not applied in the pipeline yet: measured on the H200 the merged products moved the RMSNorm
// (and the gated activation) into computed A operands of gemv_tc, which stages A a tile at a
// time on the critical path, and the decoder layers got 4-17 % slower (kernels/cuda/NOTES.md).
#pragma once

#include "ir/graph.h"

namespace vtc {

// Returns the number of groups merged.
int merge_sibling_matmuls(Graph& g);

} // namespace vtc
