// Unary elementwise nodes moved below the Transpose that alone consumes them, where the
// transposed value goes on (through more unary elementwise nodes) to a matrix product:
//
//   Relu -> Cast -> Transpose -> MatMul   becomes   Transpose -> Relu -> Cast -> MatMul
//
// An elementwise node is fused into a compute kernel as a prologue only when the kernel reads
// its value directly (fusion.h); a Transpose in between left it a kernel of its own that wrote
// its whole result (EfficientViT's linear attention casts k to f32 and transposes it for
// k^T v: the cast wrote 16.8 MB that the product read back). Moved below, the nodes join the
// product's prologue and the Transpose, now of the narrower input, is left to the strategy.
// Applying a unary function per element commutes with permuting the elements, so the graph
// computes the same bits.
#pragma once

#include "ir/graph.h"

namespace vtc {

// Returns the number of unary nodes moved.
int sink_unary_below_transposes(Graph& g);

} // namespace vtc
