// The threads generated cpu code runs its parallel loops on. Every generated object is bound
// to this one pool when it is loaded (vtc_bind_task_pool, kernels/cpu/parallel.h), so all the
// programs of a process share one set of workers.
//
// A parallel loop's tasks are split into one contiguous range per thread, as OpenMP's static
// schedule splits them (thread k takes the same part of every step, so what it wrote in one
// step is in its own cache for the next); each range is claimed from its counter, a quarter of
// what is left at a time, first by its own thread, then by any thread that has run out of its own.
// The thread that started the loop takes tasks like any worker, and the loop is over when every
// task is done, not when every worker has arrived. A worker that the operating system has not
// scheduled yet (another process holds its core) is simply not waited for: the caller and the
// workers that did arrive run its share. An OpenMP region's closing barrier waits for such a
// worker, a scheduler time slice (several ms) for a loop of a few us. Idle workers spin briefly
// for the next loop (a model's steps follow each other closely), then sleep until woken. Where
// the pool spans every processor the process may use, worker k is pinned to the k-th of them
// (woken after a pause, an unpinned one at times landed on its waker's core).
//
// One loop runs at a time: a loop started while another is running (a second session on
// another host thread) runs on its own thread. Tasks must not depend on which thread runs them
// (the kernels' contract); an exception thrown by a task is rethrown by the loop's caller once
// every task has finished.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/cpu/parallel.h"

namespace vtc {

// The least of the last N values given (-1 before any).
template <int N> class RecentLeast {
public:
  void add(double value) {
    values_[next_] = value;
    next_ = (next_ + 1) % N;
    count_ = count_ < N ? count_ + 1 : N;
  }
  double least() const {
    double least = -1;
    for (int i = 0; i < count_; ++i)
      if (least < 0 || values_[i] < least) least = values_[i];
    return least;
  }

private:
  double values_[N] = {};
  int next_ = 0, count_ = 0;
};

class CpuTaskPool {
public:
  // The process's pool (created on first use, its workers started as loops need them).
  static CpuTaskPool& instance();

  // The number of threads parallel loops started from the calling thread may use (the caller
  // included); 0 (the default) is OpenMP's default, omp_get_max_threads().
  static void set_threads(int threads);

  // Threads a loop started on the calling thread would use: 1 inside a task.
  int threads() const;

  // task(ctx, t) for every t in [0, n), on up to threads() threads.
  void run(int64_t n, void (*task)(void* ctx, int64_t t), void* ctx);

  // The time a cache line takes from one of this process's cores to another and back,
  // measured once (the least of a few batches of hand-offs between two threads); 0 on one
  // core.
  static double core_round_trip_seconds();
  // The round trip as it is now: the least of the last kRecentMeasurements measurements
  // (core_round_trip_seconds(), then remeasure_round_trip()'s). A measurement can only read
  // too long (the other thread waiting for a core another process holds), hence the least of
  // a few; a virtual machine's cores move between near and far apart within seconds (55 and
  // 330 ns on the development host), hence only recent ones.
  double recent_round_trip_seconds() const {
    const double recent = recent_round_trip_.load();
    return recent < 0 ? core_round_trip_seconds() : recent;
  }
  static constexpr int kRecentMeasurements = 3;
  // Measures the round trip again, between the calling thread and the pool's first worker
  // (the pair that runs a split step), where `interval` seconds have passed since the last
  // try: true when the recent round trip changed. At most kRemeasureBudget of the caller's
  // time; nothing where the caller may use one thread.
  bool remeasure_round_trip(double interval);
  static constexpr double kRemeasureBudget = 0.5e-3;
  // What generated code is bound to.
  const kernels::TaskPoolApi* api() const { return &api_; }

  // While held, workers take no task (as if never scheduled): loops run on their callers.
  void hold_workers(bool held) { held_.store(held); }

  CpuTaskPool(const CpuTaskPool&) = delete;
  CpuTaskPool& operator=(const CpuTaskPool&) = delete;

private:
  CpuTaskPool();
  void ensure_workers(int count);
  void worker_loop(int slot);
  void work(uint32_t job, int slot); // runs job's tasks, its own range first, until none is left

  kernels::TaskPoolApi api_{};
  std::mutex spawn_mutex_;
  std::vector<std::thread> workers_;
  std::atomic<int> worker_count_{0};

  // The running loop's ranges, one a thread. A range's claim holds the loop's number (high 32
  // bits) and its next unclaimed task (low 32 bits): a claim is one compare-and-swap, which
  // fails for a worker that looked at an earlier loop. task_ and ctx_ are read only after a
  // successful claim.
  static constexpr int kMaxThreads = 64;
  struct alignas(64) Range {
    std::atomic<uint64_t> claim{0};
    std::atomic<int64_t> end{0};
  };
  Range ranges_[kMaxThreads];
  std::atomic<int> ranges_used_{0};
  std::atomic<int> threads_used_{0}; // slots 0 (the caller) .. threads_used_ - 1 take part
  std::atomic<uint32_t> job_{0};     // the latest loop's number; workers wait on it
  std::atomic<int64_t> done_{0};
  void (*task_)(void*, int64_t) = nullptr;
  void* ctx_ = nullptr;
  std::atomic<bool> busy_{false};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> held_{false};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  std::mutex error_mutex_;
  std::atomic<double> recent_round_trip_{-1};
  std::atomic<int64_t> last_remeasure_ns_{0};
  std::mutex remeasure_mutex_;
  RecentLeast<kRecentMeasurements> measurements_; // under remeasure_mutex_
};

} // namespace vtc
