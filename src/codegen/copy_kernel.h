// The copy kernel: a data-movement node that stays physical runs as one generic copy, its
// output stored dense and its input read through the op's read-side mapping (or, for a
// scatter, the data copied and the updates written through the write-side mapping).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/accessor_emitter.h"
#include "codegen/kernel_call.h"

namespace vtc {

// Whether node `n` has a copy kernel (a mapping for its read or write side); the others run
// on the reference interpreter (a run-time pad value, a reducing scatter, an empty tensor).
bool generates_copy(const Node& n);

// out[i] = in[i] for every index i of `shape`, in the kernel library of `dialect`: the generic
// copy, and the fused elementwise kernel when `in` computes its values.
KernelCall copy_call(const Dialect& dialect, const Acc& out, const Shape& shape, const Acc& in);

// The dimension before the last along which `in`, a read mapping over `shape`, runs where it
// does not run along the last (a transpose: the cuda dialect copies it with copy_transposed,
// through shared-memory tiles); nullopt when the generic copy serves.
std::optional<int> transposed_dimension(const Mapping& in, const Shape& shape, int64_t elem_bytes);

// The calls of the copy kernel of `n` (which generates_copy accepts).
std::vector<KernelCall> copy_calls(const Node& n, AccessorEmitter& g);

} // namespace vtc
