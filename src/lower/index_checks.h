// Which run-time indices a node reads through a mapping's load() (Gather, GatherElements,
// GatherND, ScatterND, ScatterElements, Scatter) and the dims they index: the checks lowering
// puts before the first step that could read through them, so that an index out of range is
// the reference interpreter's error instead of a wrapped or out-of-bounds access. Constant
// indices are checked here, once, when the program is lowered.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lower/program.h"

namespace vtc {

// The check of node `n`'s index input, or nullopt when `n` reads no indices.
std::optional<IndexCheck> index_check_of(const Node& n);

// The error of element `flat` of the checked indices holding `value`.
std::string index_check_error(const IndexCheck& check, int64_t value, int64_t flat);

// Throws index_check_error for the first out-of-range element of constant indices.
void check_constant_indices(const IndexCheck& check);

} // namespace vtc
