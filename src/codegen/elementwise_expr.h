// C++ expressions for the elementwise ops a fused kernel computes in its prologues and
// epilogues, over operand expressions already converted to compute values (float, double
// for f64, int64 for integers and bool). The helpers they call are in the dialect's
// preamble, which every generated translation unit starts with; math functions are named
// vtc_math::f, which is namespace std on cpu and kernels/cuda/math.h on cuda.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace vtc {

// The storage type name of a dtype in generated code ("float", "vtc::kernels::half", ...).
const char* cpp_storage_type(DType t);

// The expression computing `node`'s output from `args` (one per present input, in order),
// or nullopt when the CPU code generator has no expression for this op or attribute.
std::optional<std::string> elementwise_expr(const Node& node, const std::vector<std::string>& args);
// Whether elementwise_expr has an expression for `node` (its op and attributes).
bool has_elementwise_expr(const Node& node);

} // namespace vtc
