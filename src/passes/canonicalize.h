// Canonicalisation after import: Identity (and inference-mode Dropout without a mask output)
// removed by rewiring their uses; inference BatchNormalization with constant parameters
// rewritten as a per-channel multiply-add (fused later into the producing kernel); then dead
// code removed. Constant folding and shape inference already happened in the importer.
#pragma once

#include "ir/graph.h"

namespace vtc {

// Returns the number of nodes removed or rewritten.
int canonicalize(Graph& g);

} // namespace vtc
