// The reference interpreter (target `ref`): runs a Graph node by node with each op's
// reference semantics from the op table. Deliberately simple; it is the oracle.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

namespace vtc {

using TensorMap = std::map<std::string, Tensor>;

// Runs `g` on `inputs` (one tensor per graph input, by name) and returns every graph output
// by name. Throws vtc::Error naming the input when one is missing or has the wrong type.
TensorMap run_reference(const Graph& g, const TensorMap& inputs);

// Evaluates a single node on the given input tensors (nullptr for omitted inputs).
std::vector<Tensor> eval_node(const Node& n, const std::vector<const Tensor*>& inputs);

} // namespace vtc
