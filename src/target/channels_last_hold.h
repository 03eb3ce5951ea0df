// The tensors a target holds channels-last ([n, c, h, w] lying in memory as [n, h, w, c]:
// StorageMap::channels_last), by one rule over the program's steps that each target fills in
// with the kernels it has for such tensors (cuda_layouts.h, cpu_layouts.h).
#pragma once

#include <functional>

#include "lower/program.h"

namespace vtc {

// Whether step s may touch value v held channels-last: as its one writer (`writes`) or as a
// reader.
using TakesChannelsLast = std::function<bool(const StepInfo& s, const Value* v, bool writes)>;

// Marks in p.storage.channels_last every physical intermediate 4-D tensor alone in its buffer
// that no mapping reads, written by exactly one step and read by at least one, every one of
// which `takes` it.
void hold_channels_last(Program& p, const TakesChannelsLast& takes);

} // namespace vtc
