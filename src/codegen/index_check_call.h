// The call of an index-check step: the indices read through their storage's accessor, their
// shape and bounds, and the run-status record at buf[status_slot] (on cuda also the host
// record at buf[status_slot + 1]), spelled for the dialect's kernel library.
#pragma once

#include "codegen/accessor_emitter.h"
#include "codegen/kernel_call.h"
#include "lower/program.h"

namespace vtc {

// The check of step `step` of a program whose status slot is `status_slot`.
KernelCall index_check_call(const StepInfo& step, size_t step_index, int status_slot,
                            AccessorEmitter& g);

} // namespace vtc
