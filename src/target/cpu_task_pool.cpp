// The shared task pool of generated cpu code (see cpu_task_pool.h).
#include "target/cpu_task_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#ifdef _OPENMP
#include <omp.h>
#endif

namespace vtc {

namespace {

thread_local int requested_threads = 0; // set_threads of this host thread
thread_local bool in_task = false;      // this thread is running a pool task

// How long an idle worker watches for the next loop before it sleeps: a model's steps come
// microseconds apart, and a sleeping worker takes a system call to wake.
constexpr auto kSpin = std::chrono::microseconds(2000);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int default_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return int(std::max(1u, std::thread::hardware_concurrency()));
#endif
}

// Marks the calling thread as inside a task for its lifetime (nested loops then run serially).
struct InTask {
  bool before = in_task;
  InTask() { in_task = true; }
  ~InTask() { in_task = before; }
};

// The answering side of a measurement of the cores' round trip: each value 2i + 1 of `flag`
// (i from `from` on) answered with 2i + 2, until the flag turns negative.
void answer_hand_offs(std::atomic<int>& flag, int from) {
  for (int i = from;; ++i) {
    int seen;
    while ((seen = flag.load(std::memory_order_acquire)) != 2 * i + 1 && seen >= 0)
      cpu_relax();
    if (seen < 0) return;
    flag.store(2 * i + 2, std::memory_order_release);
  }
}

} // namespace

CpuTaskPool& CpuTaskPool::instance() {
  // Never destroyed: workers may still be asleep on it when the process exits.
  static CpuTaskPool* pool = new CpuTaskPool();
  return *pool;
}

CpuTaskPool::CpuTaskPool() {
  api_.self = this;
  api_.threads = [](void* self) { return static_cast<CpuTaskPool*>(self)->threads(); };
  api_.run = [](void* self, int64_t n, void (*task)(void*, int64_t), void* ctx) {
    static_cast<CpuTaskPool*>(self)->run(n, task, ctx);
  };
}

double CpuTaskPool::core_round_trip_seconds() {
  static const double seconds = [] {
    if (std::thread::hardware_concurrency() < 2) return 0.0;
    // Batches of hand-offs, the least batch's time a trip; given up after kBudget (the other
    // thread waiting for a core held by another process: then splitting pays least, and the
    // trips so far give a long time a trip).
    constexpr int kBatches = 5, kTrips = 200;
    constexpr auto kBudget = std::chrono::milliseconds(5);
    alignas(64) std::atomic<int> flag{0};
    std::thread other([&] { answer_hand_offs(flag, 0); });
    const auto begin = std::chrono::steady_clock::now();
    double best = 1e-3;
    int trip = 0;
    for (int b = 0; b < kBatches; ++b) {
      const auto start = std::chrono::steady_clock::now();
      int done = 0;
      for (; done < kTrips; ++done, ++trip) {
        flag.store(2 * trip + 1, std::memory_order_release);
        while (flag.load(std::memory_order_acquire) != 2 * trip + 2)
          cpu_relax();
        if ((done & 15) == 15 && std::chrono::steady_clock::now() - begin > kBudget) break;
      }
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      if (done > 0) best = std::min(best, took.count() / done);
      if (done < kTrips) break;
    }
    flag.store(-1, std::memory_order_release);
    other.join();
    return best;
  }();
  return seconds;
}

namespace {

// Hand-offs between the pool's caller (task 0) and its first worker (task 1): the worker
// marks its arrival (flag 2) and answers as answer_hand_offs; the caller counts trips in
// batches and keeps the least batch's time a trip. The caller gives up when the worker has
// not arrived within the budget (flag -1: the worker's task, run later or by the caller,
// returns at once).
struct HandOffs {
  alignas(64) std::atomic<int> flag{0};
  double best = 0;
  std::chrono::steady_clock::time_point deadline;
};

void hand_offs(void* ctx, int64_t t) {
  HandOffs& h = *static_cast<HandOffs*>(ctx);
  if (t == 1) {
    int expected = 0;
    if (h.flag.compare_exchange_strong(expected, 2, std::memory_order_acq_rel))
      answer_hand_offs(h.flag, 1);
    return;
  }
  while (h.flag.load(std::memory_order_acquire) != 2) {
    if (std::chrono::steady_clock::now() > h.deadline) {
      int expected = 0;
      if (h.flag.compare_exchange_strong(expected, -1, std::memory_order_acq_rel)) return;
    }
    cpu_relax();
  }
  constexpr int kBatches = 3, kTrips = 16;
  int trip = 1;
  for (int b = 0; b < kBatches && std::chrono::steady_clock::now() < h.deadline; ++b) {
    const auto start = std::chrono::steady_clock::now();
    for (int done = 0; done < kTrips; ++done, ++trip) {
      h.flag.store(2 * trip + 1, std::memory_order_release);
      while (h.flag.load(std::memory_order_acquire) != 2 * trip + 2)
        cpu_relax();
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    const double each = took.count() / kTrips;
    if (h.best == 0 || each < h.best) h.best = each;
  }
  h.flag.store(-1, std::memory_order_release);
}

} // namespace

bool CpuTaskPool::remeasure_round_trip(double interval) {
  if (threads() < 2) return false;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  if (double(now - last_remeasure_ns_.load()) < interval * 1e9) return false;
  std::unique_lock<std::mutex> lock(remeasure_mutex_, std::try_to_lock);
  if (!lock) return false;
  last_remeasure_ns_.store(now);
  if (recent_round_trip_.load() < 0) {
    measurements_.add(core_round_trip_seconds());
    recent_round_trip_.store(measurements_.least());
  }
  HandOffs h;
  h.deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(kRemeasureBudget));
  const int before = requested_threads;
  requested_threads = 2;
  run(2, hand_offs, &h);
  requested_threads = before;
  if (h.best <= 0) return false; // the worker did not come: nothing measured
  const double previous = recent_round_trip_.load();
  measurements_.add(h.best);
  recent_round_trip_.store(measurements_.least());
  return measurements_.least() != previous;
}

void CpuTaskPool::set_threads(int threads) {
  requested_threads = threads > 0 ? threads : 0;
}

int CpuTaskPool::threads() const {
  if (in_task) return 1;
  return requested_threads > 0 ? requested_threads : default_threads();
}

namespace {

// Pins the calling worker, slot `slot` of a pool of `threads` (the caller slot 0), to the
// slot-th processor this process may run on, where the pool spans all of them ($VTC_PIN_WORKERS
// "0" never, "1" always). A worker that slept through a pause between runs (another
// process's turn, a gap between requests) was at times woken onto its waker's processor, the
// two threads then sharing one core: in `vtc bench` with the peers' blocks between vtc's, two
// threads on two vCPUs, the RetinaNet head dynamo 0.265-0.269 ms unpinned against 0.213-0.263
// pinned (five pairs), ResNet ts 0.092 against 0.069 (medians of five). A pool on some of a
// machine's processors is left to the scheduler (other processes' pools would pile onto the
// same ones).
void pin_worker(int slot, int threads) {
#if defined(__linux__)
  const char* pin = std::getenv("VTC_PIN_WORKERS");
  if (pin && std::string(pin) == "0") return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  const int count = CPU_COUNT(&allowed);
  if (count < 2 || (threads < count && !(pin && std::string(pin) == "1"))) return;
  int wanted = slot % count;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (wanted-- == 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
      return;
    }
  }
#else
  (void)slot;
  (void)threads;
#endif
}

} // namespace

void CpuTaskPool::ensure_workers(int count) {
  if (worker_count_.load(std::memory_order_acquire) >= count) return;
  std::lock_guard<std::mutex> lock(spawn_mutex_);
  while (int(workers_.size()) < count) {
    const int slot = int(workers_.size()) + 1; // the caller is slot 0
    workers_.emplace_back([this, slot, count] {
      pin_worker(slot, count + 1);
      worker_loop(slot);
    });
    worker_count_.store(int(workers_.size()), std::memory_order_release);
  }
}

void CpuTaskPool::work(uint32_t job, int slot) {
  InTask inside;
  int64_t finished = 0; // told to the caller once, at the end: one shared write a thread
  const int used = ranges_used_.load(std::memory_order_relaxed);
  for (int k = 0; k < used; ++k) {
    Range& r = ranges_[(slot + k) % used];
    uint64_t s = r.claim.load(std::memory_order_acquire);
    for (;;) {
      const int64_t next = int64_t(uint32_t(s)), end = r.end.load(std::memory_order_relaxed);
      if (uint32_t(s >> 32) != job || next >= end) break;
      // A quarter of what is left at a time (at least one task): a long range of tiny tasks
      // costs few claims, and what is left stays for a thread that runs out of its own.
      const int64_t take = std::max<int64_t>(1, (end - next) / 4);
      if (!r.claim.compare_exchange_weak(s, s + uint64_t(take), std::memory_order_acq_rel,
                                         std::memory_order_acquire))
        continue;
      if (!failed_.load(std::memory_order_relaxed)) {
        try {
          for (int64_t t = next; t < next + take; ++t)
            task_(ctx_, t);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex_);
          if (!failed_.exchange(true)) error_ = std::current_exception();
        }
      }
      finished += take;
      s = r.claim.load(std::memory_order_acquire);
    }
  }
  if (finished) done_.fetch_add(finished, std::memory_order_acq_rel);
}

void CpuTaskPool::worker_loop(int slot) {
  uint32_t seen = job_.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t job = job_.load(std::memory_order_acquire);
    if (job != seen) {
      seen = job;
      if (!held_.load(std::memory_order_relaxed) &&
          slot < threads_used_.load(std::memory_order_relaxed))
        work(job, slot);
      continue;
    }
    const auto until = std::chrono::steady_clock::now() + kSpin;
    bool changed = false;
    while (!changed && std::chrono::steady_clock::now() < until) {
      for (int i = 0; i < 64 && !changed; ++i) {
        cpu_relax();
        changed = job_.load(std::memory_order_relaxed) != seen;
      }
    }
    if (changed) continue;
    // Announce the sleep before the last look, so that a loop published after that look
    // sees a sleeper and wakes it (both sides sequentially consistent).
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (job_.load(std::memory_order_seq_cst) == seen) job_.wait(seen, std::memory_order_seq_cst);
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
}

void CpuTaskPool::run(int64_t n, void (*task)(void*, int64_t), void* ctx) {
  const int want = threads();
  if (n <= 1 || want <= 1 || n >= (int64_t(1) << 31) ||
      busy_.exchange(true, std::memory_order_acquire)) {
    InTask inside;
    for (int64_t t = 0; t < n; ++t)
      task(ctx, t);
    return;
  }
  const int threads = std::min(want, kMaxThreads);
  ensure_workers(threads - 1);
  task_ = task;
  ctx_ = ctx;
  done_.store(0, std::memory_order_relaxed);
  failed_.store(false, std::memory_order_relaxed);
  error_ = nullptr;
  const uint32_t job = job_.load(std::memory_order_relaxed) + 1;
  const int used = int(std::min<int64_t>(threads, n));
  for (int i = 0; i < used; ++i) { // OpenMP's static split: range i is thread i's
    ranges_[i].end.store(n * (i + 1) / used, std::memory_order_relaxed);
    ranges_[i].claim.store(uint64_t(job) << 32 | uint64_t(n * i / used), std::memory_order_release);
  }
  ranges_used_.store(used, std::memory_order_relaxed);
  threads_used_.store(threads, std::memory_order_relaxed);
  job_.store(job, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) job_.notify_all();
  work(job, 0);
  while (done_.load(std::memory_order_acquire) < n)
    cpu_relax();
  std::exception_ptr error = failed_.load(std::memory_order_acquire) ? error_ : nullptr;
  busy_.store(false, std::memory_order_release);
  if (error) std::rethrow_exception(error);
}

} // namespace vtc
