// How many threads each step of a cpu program runs on. Splitting a step over cores pays for
// the cache lines its threads then hand each other: its input, written by the previous step
// partly on another core, and its output, read the same way by the next. Where the cores
// share a cache that costs a few microseconds and the kernels' own limits decide
// (kernels/cpu/parallel.h); where they do not (two cores of a virtual machine on different
// dies: a cache line's round trip between them 390 ns against ~60 ns within a die), a step
// of a small model ran slower on two threads than on one (a 1.2 MFLOP convolution 12.5 ->
// 20.5 us, a 1.6 MFLOP 1x1 21.6 -> 50.7 us). A step whose estimated time on one thread is
// below kSplitRoundTrips round trips between the pool's cores runs on one.
#pragma once

#include <vector>

#include "lower/program.h"

namespace vtc {

// The estimated single-thread time below which a step runs on one thread, in cache-line
// round trips between two of the pool's cores (break-even measured on the far cores above:
// 3.6 MFLOP convolutions, ~40 us, equal on one and two threads; 14 MFLOP ones 1.28x faster).
inline constexpr double kSplitRoundTrips = 128;

// A step's estimated time on one core (its flops at 100 GFLOP/s and bytes at 10 GB/s: the
// rates of this project's cpu kernels on small tensors).
double estimated_step_seconds(const StepInfo& s);

// Per step of `p`: `threads` (0: the pool's default), or 1 where the step is too small to
// split given `round_trip_seconds` between cores ($VTC_SPLIT_ALL_STEPS=1: never 1, to compare).
std::vector<int> step_threads(const Program& p, int threads, double round_trip_seconds);

} // namespace vtc
