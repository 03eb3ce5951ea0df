// The cost of one parallel loop of trivial tasks on the cpu target's task pool
// (src/target/cpu_task_pool.h) against an OpenMP region doing the same: what a step of
// generated code pays to spread its tasks over the threads and gather them again. Run it
// quiet and loaded (another process on the cores) to see the difference a loop that does not
// wait for late threads makes.
#include <benchmark/benchmark.h>

#include <omp.h>

#include <atomic>

#include "target/cpu_task_pool.h"

namespace {

std::atomic<int64_t> sink{0};

void touch(void*, int64_t t) {
  sink.fetch_add(t, std::memory_order_relaxed);
}

void BM_TaskPoolLoop(benchmark::State& state) {
  const int threads = int(state.range(0)), tasks = int(state.range(1));
  vtc::CpuTaskPool::set_threads(threads);
  for (auto _ : state)
    vtc::CpuTaskPool::instance().run(tasks, &touch, nullptr);
  vtc::CpuTaskPool::set_threads(0);
}
BENCHMARK(BM_TaskPoolLoop)->ArgsProduct({{2}, {2, 8}})->UseRealTime();

void BM_OpenMPLoop(benchmark::State& state) {
  const int threads = int(state.range(0)), tasks = int(state.range(1));
  for (auto _ : state) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int t = 0; t < tasks; ++t)
      touch(nullptr, t);
  }
}
BENCHMARK(BM_OpenMPLoop)->ArgsProduct({{2}, {2, 8}})->UseRealTime();

} // namespace
