// How many threads each step of a cpu program runs on. Splitting a step over cores pays for
// the cache lines its threads then hand each other: its input, written by the previous step
// partly on another core, and its output, read the same way by the next. Where the cores
// share a cache (a cache line's round trip between them ~55 ns) that costs well under a
// microsecond; where they do not (two cores of a virtual machine on different dies: 390 ns),
// a step of a small model ran slower on two threads than on one (a 1.2 MFLOP convolution
// 12.5 -> 20.5 us, a 1.6 MFLOP 1x1 21.6 -> 50.7 us). A step whose estimated time on one
// thread is below a number of round trips between the pool's cores runs on one: few where the
// cores share a cache, many where they do not.
#pragma once

#include <vector>

#include "lower/program.h"

namespace vtc {

// The estimated single-thread time below which a step runs on one thread, in cache-line
// round trips between two of the pool's cores. Cores farther apart than kSharedCacheRoundTrip
// take kSplitRoundTrips (break-even measured on the far cores above: 3.6 MFLOP convolutions,
// ~40 us, equal on one and two threads; 14 MFLOP ones 1.28x faster; in whole models on far
// cores, 330 ns, medians of 7-14 runs taken in far spells only, 128 -> 256 trips: SqueezeNet
// ts 0.890 -> 0.830 ms, SqueezeNet dynamo 0.853 -> 0.810, EfficientNet ts 0.233 -> 0.232,
// EfficientNet dynamo 0.222 -> 0.223; 512: SqueezeNet ts 0.857); nearer ones
// kSplitRoundTripsSharedCache (two threads, 55 ns round trips, one run's median, 8 against 128
// trips: the RetinaNet head dynamo 0.241 -> 0.208 ms, MobileNetV2 dynamo 0.180 -> 0.160,
// EfficientNet dynamo 0.197 -> 0.168, MobileViT ts 0.209 -> 0.167; 1 trip, every step split:
// the RetinaNet head 0.264).
inline constexpr double kSplitRoundTrips = 256;
inline constexpr double kSplitRoundTripsSharedCache = 8;
inline constexpr double kSharedCacheRoundTrip = 150e-9;
// Seconds between measurements of the round trip (CpuTaskPool::remeasure_round_trip, at the
// start of a run; each takes 3 batches of 16 hand-offs, about 3 us where the cores are near and
// 16 us where far). The plan follows the recent round trip both ways: this host's two vCPUs
// move between near (55 ns) and far (330 ns) within seconds, and SqueezeNet ts on two threads
// took 0.535-0.542 ms near on the near plan, 0.857-0.921 far on the far plan, and 0.948-0.984
// far on the near plan (one thread: 0.876-0.900). A plan kept from the least round trip ever
// measured ran the near plan in every far spell.
inline constexpr double kRemeasureInterval = 0.01;

// The least estimated single-thread time of a step split over cores `round_trip_seconds`
// apart.
double least_split_seconds(double round_trip_seconds);

// A step's estimated time on one core (its flops at 100 GFLOP/s and bytes at 10 GB/s: the
// rates of this project's cpu kernels on small tensors).
double estimated_step_seconds(const StepInfo& s);

// Per step of `p`: `threads` (0: the pool's default), or 1 where the step is too small to
// split given `round_trip_seconds` between cores ($VTC_SPLIT_ALL_STEPS=1: never 1, to compare).
std::vector<int> step_threads(const Program& p, int threads, double round_trip_seconds);

// A program's threads per step and the round trip they were planned for. An executor plans
// at construction and follows the pool's recent round trip at each run's start: programs
// share the pool, and a round trip measured by one program's run re-plans every program.
struct StepPlan {
  double round_trip_seconds = 0;
  std::vector<int> threads; // per step (step_threads)
  StepPlan(const Program& p, int threads, double round_trip_seconds);
  // Plans again for `round_trip_seconds` where it differs from the plan's: true when it did.
  bool follow(const Program& p, int threads, double round_trip_seconds);
};

} // namespace vtc
