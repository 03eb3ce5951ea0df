// The device time of a compiled program, measured the way bench/gpu times peers: every input
// and output bound in device memory (inputs zeroed, a donated input's output in its buffer),
// a few warm-up runs, then the median of CUDA-event times over timed runs; and, for the
// profiled choice of each node's implementation, every step's median time in runs with step
// timing on. The profiled choice of the greedy plan on cuda (Session) compares programs by
// them.
#pragma once

#include <vector>

#include "lower/program.h"
#include "runtime/program_runner.h"

namespace vtc {

struct PlanTiming {
  int warmup = 3;
  int runs = 15;
  // Runs with every step timed by CUDA events (PlanTimes::step_ms); 0: steps not timed.
  int step_runs = 0;
};

struct PlanTimes {
  double ms = 0;               // the median run, replayed as CUDA graphs
  std::vector<double> step_ms; // per step of the program: its median time (t.step_runs > 0)
};

// Milliseconds: the median of `t.runs` runs of `runner` (a device runner of `program`).
double median_device_ms(ProgramRunner& runner, const Program& program, const PlanTiming& t = {});

// The median run and, when t.step_runs > 0, every step's median over that many step-timed
// runs (runner a DeviceExecutor).
PlanTimes time_plan(ProgramRunner& runner, const Program& program, const PlanTiming& t);

} // namespace vtc
