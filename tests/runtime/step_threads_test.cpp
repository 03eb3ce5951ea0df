// Threads per step (runtime/step_threads.h): a step estimated below a number of round trips
// between cores (few where they share a cache, many where not) runs on one thread, larger
// ones on the requested count; with no measurable round trip (one core) nothing is held back,
// and $VTC_SPLIT_ALL_STEPS=1 splits every step.
#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime/step_threads.h"

namespace vtc {
namespace {

Program steps_of(std::vector<int64_t> flops) {
  Program p;
  for (int64_t f : flops) {
    StepInfo s;
    s.flops = f;
    s.bytes = 0;
    p.steps.push_back(s);
  }
  return p;
}

TEST(StepThreads, SmallStepsRunOnOneThreadWhereCoresAreFarApart) {
  if (std::getenv("VTC_SPLIT_ALL_STEPS")) GTEST_SKIP() << "VTC_SPLIT_ALL_STEPS is set";
  // 1.2 MFLOP: 12 us; 14 MFLOP: 140 us; 390 ns round trips: split from 100 us on.
  const Program p = steps_of({1'200'000, 14'000'000, 0});
  EXPECT_DOUBLE_EQ(estimated_step_seconds(p.steps[0]), 12e-6);
  EXPECT_EQ(step_threads(p, 2, 390e-9), (std::vector<int>{1, 2, 1}));
  // Cores that share a cache (60 ns): split from 0.48 us on.
  EXPECT_EQ(step_threads(p, 2, 60e-9), (std::vector<int>{2, 2, 1}));
  const Program q = steps_of({40'000, 60'000});
  EXPECT_EQ(step_threads(q, 2, 60e-9), (std::vector<int>{1, 2}));
  EXPECT_DOUBLE_EQ(least_split_seconds(60e-9), 8 * 60e-9);
  EXPECT_DOUBLE_EQ(least_split_seconds(390e-9), 256 * 390e-9);
  // One core, or the pool's default count (0) for the large ones.
  EXPECT_EQ(step_threads(p, 0, 0), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(step_threads(p, 0, 390e-9), (std::vector<int>{1, 0, 1}));
  setenv("VTC_SPLIT_ALL_STEPS", "1", 1);
  EXPECT_EQ(step_threads(p, 2, 390e-9), (std::vector<int>{2, 2, 2}));
  unsetenv("VTC_SPLIT_ALL_STEPS");
}

// A plan follows the round trip: the same one keeps it, another plans again (a lower one
// measured by another program's run splits the small steps a far first measurement held, a
// higher one holds them again).
TEST(StepThreads, PlanFollowsTheRoundTrip) {
  if (std::getenv("VTC_SPLIT_ALL_STEPS")) GTEST_SKIP() << "VTC_SPLIT_ALL_STEPS is set";
  const Program p = steps_of({1'200'000, 14'000'000, 0});
  StepPlan plan(p, 2, 2e-6);
  EXPECT_EQ(plan.threads, (std::vector<int>{1, 1, 1}));
  EXPECT_FALSE(plan.follow(p, 2, 2e-6));
  EXPECT_TRUE(plan.follow(p, 2, 60e-9));
  EXPECT_EQ(plan.round_trip_seconds, 60e-9);
  EXPECT_EQ(plan.threads, (std::vector<int>{2, 2, 1}));
  EXPECT_FALSE(plan.follow(p, 2, 60e-9));
  // And back where the cores move apart again.
  EXPECT_TRUE(plan.follow(p, 2, 2e-6));
  EXPECT_EQ(plan.threads, (std::vector<int>{1, 1, 1}));
}

} // namespace
} // namespace vtc
