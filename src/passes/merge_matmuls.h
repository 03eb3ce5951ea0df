// Sibling matrix products merged: MatMul nodes that multiply the same value by constant
// weights [K, N_i] of one dtype become one MatMul by the weights side by side, [K, N_1 + ...],
// and a Split of its result along the last axis back into the original values. A decode step
// then streams its q, k and v weights (or its gate and up weights) in one kernel instead of
// paying a product's launch, ramp and split-K sums for each; the Split's pieces are views the
// strategy can make virtual. The products' order of summation may change with the merged shape
// (the reference interpreter and the other targets' tolerances cover it); every strategy sees
// the same merged graph, so strategies still agree bit for bit.
//
// The cuda target applies it (Target::prepare_graph) to the products it admits: small weights
// (the attention's projections, whose fixed costs per product are a large share of their time
// at decode sizes) and products of one row (kernels/cuda/NOTES.md, "Sibling products merged
// again").
#pragma once

#include <functional>

#include "ir/graph.h"

namespace vtc {

// Returns the number of groups merged: groups of two or more products that `admit` (every
// product when empty) accepts.
int merge_sibling_matmuls(Graph& g, const std::function<bool(const Node&)>& admit = {});

} // namespace vtc
