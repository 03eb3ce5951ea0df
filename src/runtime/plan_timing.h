// The device time of a compiled program, measured the way bench/gpu times peers: every input
// and output bound in device memory (inputs zeroed, a donated input's output in its buffer),
// a few warm-up runs, then the median of CUDA-event times over timed runs. The profiled choice
// of the greedy plan on cuda (Session) compares programs by it.
#pragma once

#include "lower/program.h"
#include "runtime/program_runner.h"

namespace vtc {

struct PlanTiming {
  int warmup = 3;
  int runs = 15;
};

// Milliseconds: the median of `t.runs` runs of `runner` (a device runner of `program`).
double median_device_ms(ProgramRunner& runner, const Program& program, const PlanTiming& t = {});

} // namespace vtc
