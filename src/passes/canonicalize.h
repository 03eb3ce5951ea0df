// Canonicalisation after import: Identity (and inference-mode Dropout without a mask output)
// removed by rewiring their uses; inference BatchNormalization with constant parameters
// rewritten as a per-channel multiply-add (fused later into the producing kernel); unary
// elementwise nodes moved below a Transpose on the way to a matrix product
// (sink_elementwise.h); then dead code removed. Constant folding and shape inference already
// happened in the importer.
#pragma once

#include "ir/graph.h"

namespace vtc {

// Returns the number of nodes removed or rewritten.
int canonicalize(Graph& g);

} // namespace vtc
