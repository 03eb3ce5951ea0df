// Threading and scratch memory for the CPU kernel templates. Kernels split their work into
// tasks whose results do not depend on which thread runs them or in what order, so the
// schedule changes speed only, never bits. Generated code runs its tasks on the task pool the
// host binds when it loads the object (vtc_bind_task_pool; vtc's is src/target/cpu_task_pool.h:
// a loop ends when its tasks are done, not when every thread has arrived); code with no pool
// bound (kernel tests and benchmarks) uses OpenMP. Each thread keeps its own 64-byte-aligned
// scratch buffers (packed GEMM panels, row buffers), reused from call to call. The headers are
// meant for -fopenmp (as generated code is compiled); without it and without a pool they still
// compile and everything runs on the calling thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace vtc::kernels {

// A pool of threads lent by the host: threads(self) is how many threads a loop started on the
// calling thread may use (1 inside one of the pool's tasks), run(self, n, task, ctx) calls
// task(ctx, t) for every t < n and returns when all are done.
struct TaskPoolApi {
  void* self;
  int (*threads)(void* self);
  void (*run)(void* self, int64_t n, void (*task)(void* ctx, int64_t t), void* ctx);
};

// The pool this object's kernels run on (null: OpenMP).
inline const TaskPoolApi*& bound_task_pool() {
  static const TaskPoolApi* pool = nullptr;
  return pool;
}

// How many SerialScopes this thread is inside (0: kernels may use every thread).
inline int& serial_depth() {
  thread_local int depth = 0;
  return depth;
}

// Work below this many flops runs on the calling thread: starting the other threads and
// joining them costs about 2 us (two cores of an AVX-512 host: a chain of 16x16x16 products
// takes 3.5 us a step on two threads, 1.3 us on one), more than such work gains.
inline constexpr double kParallelMinFlops = 4e5;

// While alive (and `serial`), parallel_for and max_threads on this thread run serially.
struct SerialScope {
  bool on;
  explicit SerialScope(bool serial) : on(serial) { serial_depth() += on; }
  ~SerialScope() { serial_depth() -= on; }
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;
};

inline int max_threads() {
  if (const TaskPoolApi* pool = bound_task_pool())
    return serial_depth() > 0 ? 1 : pool->threads(pool->self);
#ifdef _OPENMP
  return omp_in_parallel() || serial_depth() > 0 ? 1 : omp_get_max_threads();
#else
  return 1;
#endif
}

// Runs fn(t) for t in [0, n) over the threads: on the bound pool, a contiguous range a thread,
// what is left of one taken by threads that ran out of their own; under OpenMP, `dynamic` for
// coarse uneven tasks, static blocks otherwise. Serial when n is small, when already inside a
// parallel region or a pool's task, or inside a SerialScope.
template <typename F> void parallel_for(int64_t n, F&& fn, bool dynamic = false) {
  if (const TaskPoolApi* pool = bound_task_pool()) {
    if (n > 1 && serial_depth() == 0 && pool->threads(pool->self) > 1) {
      using Fn = std::remove_reference_t<F>;
      pool->run(
          pool->self, n, [](void* ctx, int64_t t) { (*static_cast<Fn*>(ctx))(t); },
          const_cast<void*>(static_cast<const void*>(std::addressof(fn))));
      return;
    }
    for (int64_t t = 0; t < n; ++t)
      fn(t);
    return;
  }
#ifdef _OPENMP
  if (n > 1 && !omp_in_parallel() && serial_depth() == 0 && omp_get_max_threads() > 1) {
    if (dynamic) {
#pragma omp parallel for schedule(dynamic, 1)
      for (int64_t t = 0; t < n; ++t)
        fn(t);
    } else {
#pragma omp parallel for schedule(static)
      for (int64_t t = 0; t < n; ++t)
        fn(t);
    }
    return;
  }
#endif
  for (int64_t t = 0; t < n; ++t)
    fn(t);
}

// Runs fn(begin, end) over contiguous chunks of [0, n), at least `grain` items a chunk, in a
// multiple of the thread count when there are more chunks than threads (3 chunks on 2
// threads would leave one thread idle for a third of the time).
template <typename F> void parallel_chunks(int64_t n, int64_t grain, F&& fn) {
  if (n <= 0) return;
  const int64_t threads = max_threads();
  int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(threads * 4, n / grain));
  if (chunks > threads) chunks = chunks / threads * threads;
  if (chunks <= 1) {
    fn(int64_t(0), n);
    return;
  }
  int64_t step = (n + chunks - 1) / chunks;
  chunks = (n + step - 1) / step;
  parallel_for(chunks, [&](int64_t c) { fn(c * step, std::min(n, (c + 1) * step)); });
}

// A per-thread growable buffer, 64-byte aligned. `slot` tells apart the buffers one kernel
// needs at the same time.
template <typename T, int Slot> T* scratch(int64_t count) {
  struct Buffer {
    void* p = nullptr;
    size_t bytes = 0;
    ~Buffer() { std::free(p); }
  };
  thread_local Buffer buf;
  size_t need = (size_t(count > 0 ? count : 1) * sizeof(T) + 63) / 64 * 64;
  if (need > buf.bytes) {
    std::free(buf.p);
    buf.p = std::aligned_alloc(64, need);
    if (!buf.p) throw std::bad_alloc();
    buf.bytes = need;
  }
  return static_cast<T*>(buf.p);
}

} // namespace vtc::kernels
