// Helpers shared by the data-movement op files (ops_movement*.cpp): element copies by bytes,
// row-major iteration over multi-indices, reading index tensors with range checks, the
// scatter reductions, and one way to read integer-list operands (an input or an attribute of
// older opsets) that works the same in shape inference and in evaluation.
#pragma once

#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "vtc/error.h" // before op_registry.h, which uses vtc::Error

namespace vtc::movement {

void register_view_ops(OpTable& t);  // Reshape, Flatten, Squeeze, Unsqueeze, Identity, ...
void register_slice_ops(OpTable& t); // Slice, Split, Concat, Pad
void register_index_ops(OpTable& t); // Gather*, Scatter*

// Reads the integer list carried by input `i` (nullopt when the input is absent). Shape
// inference reads constants (throwing NeedsConstantInput otherwise); evaluation reads the
// input tensors. Lets each op compute its parameters with one function for both.
using IntsOf = std::function<std::optional<std::vector<int64_t>>(size_t)>;
IntsOf ints_of(const InferInputs& in);
IntsOf ints_of(const std::vector<const Tensor*>& inputs);

// The integer list of attribute `key` when present, else that of input `i` (nullopt when
// neither is given): the form of operands that moved from attributes to inputs.
std::optional<std::vector<int64_t>> attr_or_input(const Node& node, const std::string& key,
                                                  const IntsOf& ints, size_t i);

// Checks the number of inputs (the first `min_in` present, at most `max_in`) and outputs.
void check_arity(const InferInputs& in, size_t min_in, size_t max_in, size_t n_out);
// Checks that input i is an index tensor (i32 or i64).
void check_index_dtype(const InferInputs& in, size_t i);
// Normalises axes against `rank` (negative count from the back); rejects repeats.
std::vector<int64_t> normalize_axes(const Node& node, std::vector<int64_t> axes, int64_t rank);

// The one-line error of an index `v` outside [-dim, dim) for axis `axis` of size `dim`, the
// same on the reference interpreter and on compiled targets:
//   "Gather 'g': index 40 out of range [-32, 31] for axis 0 of size 32"
std::string index_out_of_range(const Node& node, int64_t v, int64_t dim, int64_t axis);

// Element `flat` of an index tensor, made non-negative against `dim`; throws naming the node,
// the value and the valid range when it is outside [-dim, dim).
int64_t checked_index(const Node& node, const Tensor& indices, int64_t flat, int64_t dim,
                      int64_t axis);

// Copies one element (dtype_size bytes) from src[si] to dst[di]; both have the same dtype.
inline void copy_element(Tensor& dst, int64_t di, const Tensor& src, int64_t si) {
  size_t n = dtype_size(dst.dtype());
  std::memcpy(dst.raw() + size_t(di) * n, src.raw() + size_t(si) * n, n);
}

// Flat row-major offset of a multi-index given the strides.
inline int64_t offset_of(const Shape& idx, const Shape& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d)
    off += idx[d] * strides[d];
  return off;
}

// Calls fn(idx, flat) for every multi-index of `shape` in row-major order.
template <typename Fn> void for_each_index(const Shape& shape, Fn&& fn) {
  int64_t n = shape_numel(shape);
  Shape idx(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    fn(static_cast<const Shape&>(idx), flat);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Fills every element of `out` from src[src_of(out_idx)]: the gather form of a data-movement op.
template <typename Fn> void fill_from(Tensor& out, const Tensor& src, Fn&& src_of) {
  for_each_index(out.shape(), [&](const Shape& idx, int64_t flat) {
    copy_element(out, flat, src, src_of(idx));
  });
}

enum class Reduction { none, add, mul, max, min };
// The `reduction` attribute of ScatterND / ScatterElements ("none" when absent).
Reduction parse_reduction(const Node& node);
// dst[di] = reduce(dst[di], src[si]); both tensors have the same dtype.
void combine_element(Reduction r, Tensor& dst, int64_t di, const Tensor& src, int64_t si);

} // namespace vtc::movement
