// The memory planner: buffers whose lifetimes are disjoint share memory, buffers live at the
// same time never share an address (all pairs, on random programs), offsets are aligned, the
// plan is deterministic, and only intermediates are planned.
#include <gtest/gtest.h>
#include <random>

#include "runtime/memory_plan.h"
#include "vtc/error.h"

namespace vtc {
namespace {

// A program of `steps` steps over intermediates of the given byte sizes (as u8 tensors);
// buffer i is written by step first[i] and read by step last[i].
Program chain(const std::vector<int64_t>& bytes, const std::vector<int>& first,
              const std::vector<int>& last, int steps) {
  Program p;
  p.steps.resize(size_t(steps));
  for (size_t i = 0; i < bytes.size(); ++i) {
    p.buffers.push_back(
        {"b" + std::to_string(i), {DType::u8, {bytes[i]}}, BufferRole::intermediate, nullptr, -1});
    p.steps[size_t(first[i])].writes.push_back(int(i));
    if (last[i] != first[i]) p.steps[size_t(last[i])].reads.push_back(int(i));
  }
  return p;
}

bool addresses_overlap(const MemoryPlan& plan, size_t a, size_t b) {
  return plan.offsets[a] < plan.offsets[b] + plan.sizes[b] &&
         plan.offsets[b] < plan.offsets[a] + plan.sizes[a];
}

TEST(MemoryPlan, DisjointLifetimesShareMemory) {
  // b0 lives in steps 0..1, b1 in 1..2, b2 in 2..3: b0 and b2 can share.
  Program p = chain({1000, 1000, 1000}, {0, 1, 2}, {1, 2, 3}, 4);
  MemoryPlan plan = plan_memory(p);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
  EXPECT_EQ(plan.peak_bytes, 2 * 1024);
  EXPECT_EQ(plan.total_intermediate_bytes, 3 * 1024);
}

TEST(MemoryPlan, WrittenAndNeverReadIsStillAllocatedForItsStep) {
  // b1 is written by step 1 and never read; b0 is live across step 1, so they must not share.
  Program p = chain({256, 256}, {0, 1}, {2, 1}, 3);
  MemoryPlan plan = plan_memory(p);
  EXPECT_EQ(plan.lifetimes[1].first_step, 1);
  EXPECT_EQ(plan.lifetimes[1].last_step, 1);
  EXPECT_EQ(plan.sizes[1], 256);
  EXPECT_FALSE(addresses_overlap(plan, 0, 1));
  EXPECT_EQ(plan.peak_bytes, 512);
}

TEST(MemoryPlan, BestFitTakesTheSmallestGapThatHolds) {
  // Placed largest first: A [0,4096) and C [6144,7680) die after step 0; B [4096,6144) and
  // E [7680,8704) live to step 5. D (1024, steps 1..5) fits both the 4096-byte gap at 0 and
  // the 1536-byte gap at 6144: best fit takes the smaller.
  Program p = chain({4096, 2048, 1536, 1024, 1024}, {0, 0, 0, 0, 1}, {0, 5, 0, 5, 5}, 6);
  MemoryPlan plan = plan_memory(p);
  EXPECT_EQ(plan.offsets[0], 0);
  EXPECT_EQ(plan.offsets[1], 4096);
  EXPECT_EQ(plan.offsets[2], 6144);
  EXPECT_EQ(plan.offsets[3], 7680);
  EXPECT_EQ(plan.offsets[4], 6144);
  EXPECT_EQ(plan.peak_bytes, 8704);
}

TEST(MemoryPlan, OnlyIntermediatesAreInTheArena) {
  Program p = chain({128, 128, 128}, {0, 0, 1}, {1, 1, 2}, 3);
  p.buffers[0].role = BufferRole::input;
  p.buffers[2].role = BufferRole::output;
  MemoryPlan plan = plan_memory(p);
  EXPECT_EQ(plan.offsets[0], -1);
  EXPECT_EQ(plan.offsets[2], -1);
  EXPECT_EQ(plan.offsets[1], 0);
  EXPECT_EQ(plan.peak_bytes, 128);
}

TEST(MemoryPlan, UntouchedIntermediateNeedsNoMemory) {
  Program p = chain({128}, {0}, {1}, 2);
  p.buffers.push_back({"unused", {DType::f32, {1000}}, BufferRole::intermediate, nullptr, -1});
  MemoryPlan plan = plan_memory(p);
  EXPECT_FALSE(plan.lifetimes[1].used());
  EXPECT_EQ(plan.sizes[1], 0);
  EXPECT_EQ(plan.peak_bytes, 128);
}

TEST(MemoryPlan, BadBufferIdIsAnError) {
  Program p = chain({128}, {0}, {1}, 2);
  p.steps[1].reads.push_back(7);
  try {
    plan_memory(p);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("buffer 7"), std::string::npos) << e.what();
  }
}

TEST(MemoryPlan, RandomProgramsNeverOverlapLiveBuffers) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    int steps = 1 + int(rng() % 30);
    int n = 1 + int(rng() % 40);
    std::vector<int64_t> bytes;
    std::vector<int> first, last;
    for (int i = 0; i < n; ++i) {
      bytes.push_back(int64_t(rng() % 5000));
      int a = int(rng() % unsigned(steps)), b = int(rng() % unsigned(steps));
      first.push_back(std::min(a, b));
      last.push_back(std::max(a, b));
    }
    Program p = chain(bytes, first, last, steps);
    MemoryPlan plan = plan_memory(p);
    int64_t largest = 0, sum = 0;
    for (size_t i = 0; i < size_t(n); ++i) {
      EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0);
      EXPECT_GE(plan.sizes[i], bytes[i]);
      EXPECT_LE(plan.offsets[i] + plan.sizes[i], plan.peak_bytes);
      largest = std::max(largest, plan.sizes[i]);
      sum += plan.sizes[i];
      for (size_t j = i + 1; j < size_t(n); ++j) {
        if (!plan.lifetimes[i].overlaps(plan.lifetimes[j]) || !plan.sizes[i] || !plan.sizes[j])
          continue;
        ASSERT_FALSE(addresses_overlap(plan, i, j))
            << "trial " << trial << ": b" << i << " and b" << j << " are live together";
      }
    }
    // No plan beats the largest buffer; none is worse than no reuse at all.
    EXPECT_GE(plan.peak_bytes, largest);
    EXPECT_LE(plan.peak_bytes, sum);
    // Deterministic: the same program gives the same plan.
    MemoryPlan again = plan_memory(p);
    EXPECT_EQ(again.offsets, plan.offsets);
    EXPECT_EQ(again.peak_bytes, plan.peak_bytes);
  }
}

} // namespace
} // namespace vtc
