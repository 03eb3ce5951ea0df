// Shared pieces of the elementwise op family (ops_elementwise*.cpp): numpy broadcasting of
// element indices, the one-rounding stores that turn an exact double or int64 result into any
// vtc dtype, attribute parameters read as doubles, and the dtype checks every rule uses.
// Float results are computed in double and rounded once to the output dtype; integer results are
// computed in int64 and wrap (two's complement) to the output width, as numpy and C do.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "ops/op_registry.h"

namespace vtc::elementwise {

// For each element of a tensor of shape `out` (row-major), the flat index of the element of a
// tensor of shape `in` that numpy broadcasting reads. `in` must broadcast to `out`.
std::vector<int64_t> broadcast_index(const Shape& out, const Shape& in);

// Stores the exact value `v` into element i of `t`, rounding once to t's dtype. Integer dtypes
// get Cast's conversion: truncation toward zero (NaN gives 0, the int64 range saturates), then
// wrap to the width; bool gets v != 0.
void store_f64(Tensor& t, int64_t i, double v);
// Stores the integer `v` into element i of `t`: rounded once to a float dtype, wrapped to an
// integer width, v != 0 for bool.
void store_i64(Tensor& t, int64_t i, int64_t v);

// An attribute of an elementwise op read as a double: a numeric attribute with its default, or,
// when `choices` is not empty, a string attribute read as the index of its value in `choices`.
// A NaN default (kRequired) marks a required attribute.
struct AttrSpec {
  AttrSpec(const char* name, double fallback, std::vector<const char*> choices = {})
      : name(name), fallback(fallback), choices(std::move(choices)) {}
  const char* name;
  double fallback;
  std::vector<const char*> choices;
};
inline constexpr double kRequired = std::numeric_limits<double>::quiet_NaN();
using Params = std::array<double, 3>;
// Reads up to three attributes in `specs` order; throws naming the node for a missing required
// attribute or a string value that is not one of the choices.
Params read_params(const Node& node, const std::vector<AttrSpec>& specs);

// Which dtypes an elementwise rule accepts.
enum class Domain {
  floats,   // f32, f16, bf16, f64
  numeric,  // floats and integers
  integers, // i64, i32, i8, u8
  boolean,  // bool only
  any,      // every dtype
};
bool in_domain(DType t, Domain d);
const char* domain_name(Domain d);
// Throws naming the node, op and input when input i's dtype is outside `d`.
void check_domain(const InferInputs& in, size_t i, Domain d);
// Throws naming the node when it does not have between `lo` and `hi` inputs or not exactly one
// output.
void check_arity(const InferInputs& in, size_t lo, size_t hi);

// Registration of the unary ops (ops_elementwise_unary.cpp) and of the broadcasting binary,
// variadic and select ops (ops_elementwise_binary.cpp).
void register_unary_ops(OpTable& t);
void register_binary_ops(OpTable& t);

} // namespace vtc::elementwise
