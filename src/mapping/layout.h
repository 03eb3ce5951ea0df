// Mapping builders for the layouts every rule is made of: reshape (row-major reinterpretation),
// transpose (permuted axes), strided windows (Slice, Split) and offsets (Concat, Pad). Each
// returns the index expressions of a base over given virtual variables, so a rule can build
// its read side and its write side from the same function with the roles swapped.
#pragma once

#include <vector>

#include "mapping/mapping.h"

namespace vtc {

// Row-major flat position of `vars` in `shape`: Σ vars[d]·stride[d].
IndexExpr flatten_index(const std::vector<IndexExpr>& vars, const Shape& shape);
// The multi-index of `flat` in `shape` (row-major): (flat floordiv stride[d]) mod shape[d].
std::vector<IndexExpr> unflatten_index(IndexExpr flat, const Shape& shape);
// Reinterpreting a tensor of shape `from` as `to` (equal numel): the `to` index of `vars`.
std::vector<IndexExpr> reshape_index(const std::vector<IndexExpr>& vars, const Shape& from,
                                     const Shape& to);
// The virtual tensor of shape `shape` that is `base` reinterpreted (numel must match).
Mapping reshape_mapping(const Shape& shape, const Base* base);
// y = transpose(x, perm): y[i] = x[j] with j[perm[d]] = i[d].
Mapping transpose_read(const Base* x, const std::vector<int64_t>& perm);
// x virtual of y = transpose(x, perm): x[j] lands at y[i] with i[d] = j[perm[d]].
Mapping transpose_write(const Base* x, const Base* y, const std::vector<int64_t>& perm);

} // namespace vtc
