// Which run-time indices a node reads through a mapping's load() (Gather, GatherElements,
// GatherND, ScatterND, ScatterElements, Scatter) and the dims they index: the checks lowering
// puts before the first step that could read through them, so that an index out of range is
// the reference interpreter's error instead of a wrapped or out-of-bounds access. Constant
// indices are checked here, once, when the program is lowered.
#pragma once

#include <cstdint>
#include <functional>
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

// Whether `v`'s elements are checked to lie in [-size, size) by a check that runs before any
// step could read `v`: answered by `checked` for the indices an earlier check covers.
using CheckedRange = std::function<bool(const Value* v, int64_t size)>;

// Whether every element of `check`'s indices is already known in range, so that the check can
// be left out: constants in range, values of indices an earlier check covers against the same
// size reached through ops that only move elements (Reshape, Unsqueeze, Squeeze, Flatten,
// Expand, Identity, Concat), and index tuples assembled by a Concat along their last axis,
// each part against the sizes of the coordinates it holds (a KV-cache update's (batch, head,
// position) built from a constant grid and the position a rotary Gather already checked).
bool indices_known_in_range(const IndexCheck& check, const CheckedRange& checked);

} // namespace vtc
