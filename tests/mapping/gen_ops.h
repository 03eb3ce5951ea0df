// Random data-movement nodes for the property tests: for each op with a rule, a generator that
// picks random valid attributes and index operands for a given data input (or makes its own).
#pragma once

#include <string>
#include <vector>

#include "harness.h"

namespace vtc::test {

// Every op name that has a data-movement rule and a generator.
const std::vector<std::string>& generated_ops();

// A random `op` node whose data input is `x` (a fresh input of a suitable random shape when x is
// null). With `writable`, attributes are chosen so that the write side exists where the op
// allows it at all (full-range slices, non-negative pads, constant injective gathers, x as the
// updates of a scatter). Returns nullptr when x's shape does not suit the op.
Node* random_op(Builder& b, const std::string& op, Value* x, bool writable);

// A random shape of rank [min_rank, max_rank] with dims in [1, max_dim].
Shape random_shape(Builder& b, int min_rank, int max_rank, int64_t max_dim);

} // namespace vtc::test
