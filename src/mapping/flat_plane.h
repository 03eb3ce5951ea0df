// Flattening an image plane into one row. A kernel whose operands either span the plane
// [h, w] in their last two dimensions or are constant over it can run over [.., 1, h*w]
// instead: the same elements in the same order, so the same bits, with runs h times longer.
// A 1x1 convolution over a 7x7 plane then loads and stores one run of 49 values per channel
// instead of seven runs of 7, and its GEMM's B rows need no per-row index arithmetic.
#pragma once

#include <optional>

#include "mapping/mapping.h"
#include "vtc/tensor.h"

namespace vtc {

// How a value broadcast against a [.., h, w] result meets the plane.
enum class PlaneUse {
  spans,    // its last two dimensions are [h, w]
  constant, // the same element for every position of the plane (rank < 2 of size 1, or [.., 1, 1])
  partial,  // broadcast along one of h, w only: the plane cannot be flattened
};
PlaneUse plane_use(const Shape& shape, int64_t h, int64_t w);

// [.., h, w] -> [.., 1, h*w].
Shape flat_plane_shape(const Shape& shape);

// `m`, the mapping of the value `base` names (shape [.., h, w]), seen over the flattened
// shape; nullopt when the composition cannot be expressed or a plane is not one contiguous
// run of memory (flattening would then only add index arithmetic).
std::optional<Mapping> flatten_plane(const Mapping& m, const Base* base, int64_t elem_bytes);

} // namespace vtc
