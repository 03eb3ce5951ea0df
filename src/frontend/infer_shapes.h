// Shape inference and constant folding over a whole Graph, in topological order.
#pragma once

#include <cstddef>

#include "ir/graph.h"

namespace vtc {

// Infers the type of every node output from its inputs with the op table, evaluating nodes
// whose inputs are all constants (outputs up to `fold_limit_bytes`) and replacing them by
// constants; then removes dead nodes. Throws vtc::Error naming the node on an unsupported op
// or inconsistent shapes, and NeedsConstantInput when a shape depends on a non-constant.
void infer_shapes(Graph& g, size_t fold_limit_bytes);

} // namespace vtc
