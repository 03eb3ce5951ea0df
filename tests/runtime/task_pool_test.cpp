// The task pool generated cpu code runs on (src/target/cpu_task_pool.h): every task runs once,
// a loop whose workers do not come is finished by its caller, the cores' round trip measured
// again only ever lowers the least, nested loops run serially, a
// task's exception reaches the caller, and concurrent callers each finish; kernels/cpu/
// parallel.h's loops go through the pool once it is bound.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/cpu/parallel.h"
#include "target/cpu_task_pool.h"

namespace vtc {
namespace {

struct Counts {
  std::vector<std::atomic<int>> hits;
  explicit Counts(int64_t n) : hits(size_t(n)) {}
  static void task(void* ctx, int64_t t) { static_cast<Counts*>(ctx)->hits[size_t(t)]++; }
};

TEST(TaskPoolTest, EveryTaskRunsOnce) {
  CpuTaskPool& pool = CpuTaskPool::instance();
  CpuTaskPool::set_threads(4);
  for (int64_t n : {2, 3, 17, 1000}) {
    for (int round = 0; round < 50; ++round) {
      Counts c(n);
      pool.run(n, &Counts::task, &c);
      for (int64_t t = 0; t < n; ++t)
        ASSERT_EQ(c.hits[size_t(t)].load(), 1) << "task " << t << " of " << n;
    }
  }
  CpuTaskPool::set_threads(0);
}

struct Threads {
  std::mutex m;
  std::set<std::thread::id> ids;
  std::chrono::milliseconds each{0};
  static void task(void* ctx, int64_t) {
    auto* self = static_cast<Threads*>(ctx);
    if (self->each.count()) std::this_thread::sleep_for(self->each);
    std::lock_guard<std::mutex> lock(self->m);
    self->ids.insert(std::this_thread::get_id());
  }
};

TEST(TaskPoolTest, ALoopWhoseWorkersDoNotComeIsFinishedByItsCaller) {
  CpuTaskPool& pool = CpuTaskPool::instance();
  CpuTaskPool::set_threads(2);
  pool.hold_workers(true); // as if the workers' cores were taken by another process
  Threads seen;
  const auto start = std::chrono::steady_clock::now();
  pool.run(200, &Threads::task, &seen);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  pool.hold_workers(false);
  EXPECT_EQ(seen.ids, std::set<std::thread::id>{std::this_thread::get_id()});
  EXPECT_LT(ms, 1000.0);
  // Workers that come share the tasks: loops of 40 tasks of 1 ms leave them time to wake
  // (a few loops, for a host whose other processes hold the cores a while).
  Threads shared;
  shared.each = std::chrono::milliseconds(1);
  for (int round = 0; round < 20 && shared.ids.size() < 2; ++round)
    pool.run(40, &Threads::task, &shared);
  EXPECT_EQ(shared.ids.size(), 2u);
  CpuTaskPool::set_threads(0);
}

// Measuring the cores' round trip again through the pool's own worker: gives up within its
// budget where the worker does not come (its cores taken) and then keeps the recent value;
// measures nothing on one thread or before the interval has passed.
TEST(TaskPoolTest, RoundTripRemeasuredThroughThePoolsWorker) {
  CpuTaskPool& pool = CpuTaskPool::instance();
  CpuTaskPool::set_threads(2);
  pool.remeasure_round_trip(0);
  const double recent = pool.recent_round_trip_seconds();
  EXPECT_GT(recent, 0);
  pool.hold_workers(true);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(pool.remeasure_round_trip(0));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  pool.hold_workers(false);
  EXPECT_LT(ms, 100.0);
  EXPECT_EQ(pool.recent_round_trip_seconds(), recent);
  for (int round = 0; round < 5; ++round) {
    const double before = pool.recent_round_trip_seconds();
    const bool changed = pool.remeasure_round_trip(0);
    const double after = pool.recent_round_trip_seconds();
    EXPECT_GT(after, 0);
    EXPECT_EQ(changed, after != before);
  }
  // An interval not yet passed, one thread: no measurement.
  pool.remeasure_round_trip(0);
  EXPECT_FALSE(pool.remeasure_round_trip(1e9));
  CpuTaskPool::set_threads(1);
  EXPECT_FALSE(pool.remeasure_round_trip(0));
  CpuTaskPool::set_threads(0);
}

// The recent round trip is the least of the last few measurements: a long one (a core taken)
// is outweighed by a short one beside it, and a change of cores is followed once the short
// ones have left the window.
TEST(TaskPoolTest, RecentLeastKeepsTheLeastOfTheLastFew) {
  RecentLeast<3> r;
  EXPECT_EQ(r.least(), -1);
  r.add(300e-9);
  EXPECT_EQ(r.least(), 300e-9);
  r.add(60e-9);
  r.add(2e-6);
  EXPECT_EQ(r.least(), 60e-9);
  r.add(320e-9);
  EXPECT_EQ(r.least(), 60e-9);
  r.add(330e-9);
  EXPECT_EQ(r.least(), 320e-9);
  r.add(55e-9);
  EXPECT_EQ(r.least(), 55e-9);
}

TEST(TaskPoolTest, NestedLoopsRunOnTheirTasksThread) {
  CpuTaskPool& pool = CpuTaskPool::instance();
  CpuTaskPool::set_threads(2);
  struct Nested {
    std::atomic<int> serial{0}, total{0};
    static void inner(void* ctx, int64_t) { static_cast<Nested*>(ctx)->total++; }
    static void outer(void* ctx, int64_t) {
      auto* self = static_cast<Nested*>(ctx);
      if (CpuTaskPool::instance().threads() == 1) self->serial++;
      CpuTaskPool::instance().run(5, &inner, ctx);
    }
  } nested;
  pool.run(8, &Nested::outer, &nested);
  EXPECT_EQ(nested.serial.load(), 8);
  EXPECT_EQ(nested.total.load(), 40);
  CpuTaskPool::set_threads(0);
}

TEST(TaskPoolTest, ATasksExceptionReachesTheCaller) {
  CpuTaskPool& pool = CpuTaskPool::instance();
  CpuTaskPool::set_threads(2);
  auto throws = [](void*, int64_t t) {
    if (t == 7) throw std::runtime_error("task 7 failed");
  };
  EXPECT_THROW(pool.run(16, throws, nullptr), std::runtime_error);
  Counts c(16); // the pool is usable afterwards
  pool.run(16, &Counts::task, &c);
  for (auto& h : c.hits)
    EXPECT_EQ(h.load(), 1);
  CpuTaskPool::set_threads(0);
}

TEST(TaskPoolTest, ConcurrentCallersEachFinish) {
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int k = 0; k < 3; ++k)
    callers.emplace_back([&] {
      CpuTaskPool::set_threads(2);
      for (int round = 0; round < 300; ++round) {
        Counts c(9);
        CpuTaskPool::instance().run(9, &Counts::task, &c);
        for (auto& h : c.hits)
          wrong += h.load() != 1;
      }
    });
  for (auto& t : callers)
    t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(TaskPoolTest, KernelLoopsRunOnTheBoundPool) {
  kernels::bound_task_pool() = CpuTaskPool::instance().api();
  CpuTaskPool::set_threads(2);
  EXPECT_EQ(kernels::max_threads(), 2);
  std::vector<std::atomic<int>> hits(1000);
  std::atomic<int> inner_threads{0};
  kernels::parallel_chunks(1000, 10, [&](int64_t b, int64_t e) {
    inner_threads = kernels::max_threads();
    for (int64_t i = b; i < e; ++i)
      hits[size_t(i)]++;
  });
  for (auto& h : hits)
    EXPECT_EQ(h.load(), 1);
  EXPECT_EQ(inner_threads.load(), 1); // a task's own loops are serial
  {
    kernels::SerialScope serial(true);
    EXPECT_EQ(kernels::max_threads(), 1);
  }
  kernels::bound_task_pool() = nullptr;
  CpuTaskPool::set_threads(0);
}

} // namespace
} // namespace vtc
