// The copy kernel: a data-movement node that stays physical runs as one generic copy, its
// output stored dense and its input read through the op's read-side mapping (or, for a
// scatter, the data copied and the updates written through the write-side mapping).
#pragma once

#include <string>

#include "codegen/accessor_emitter.h"

namespace vtc {

// Whether node `n` has a copy kernel (a mapping for its read or write side); the others run
// on the reference interpreter (a run-time pad value, a reducing scatter, an empty tensor).
bool generates_copy(const Node& n);

// The statements of the copy kernel of `n` (which generates_copy accepts).
std::string copy_body(const Node& n, AccessorEmitter& g);

} // namespace vtc
