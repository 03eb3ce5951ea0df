// Text form of a Graph, stable enough for golden tests: one line per input, constant, node
// and output, values shown with their types, attributes sorted by name.
#pragma once

#include <string>

#include "ir/graph.h"

namespace vtc {

std::string print_graph(const Graph& g);
// One node as printed inside print_graph: "%y: f32[2,3] = Transpose(%x) {perm=[1,0]}".
std::string print_node(const Node& n);
std::string print_attribute(const Attribute& a);

} // namespace vtc
