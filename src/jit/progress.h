// Progress of a long step (importing, choosing a strategy, compiling) as one line on stderr,
// rewritten in place while the step runs: "vtc: compiling kernels 12/40, 9.3 s". Only when
// enabled and stderr is a terminal, so logs and pipes see nothing; the line is cleared when
// the reporter is destroyed. The elapsed time ticks on a thread of its own, so a stage with
// no count (one compiler run) still shows that it is alive. Safe to call from several
// threads (parts compiled side by side report their count).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace vtc::jit {

class Progress {
public:
  explicit Progress(bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool active() const { return active_; }
  // Starts a stage: its name, and how many items it has (0: uncounted).
  void stage(const std::string& name, size_t total = 0);
  // `done` of the stage's items are finished.
  void count(size_t done);

private:
  void draw(); // under mutex_
  void tick();

  bool active_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::string stage_;
  size_t done_ = 0, total_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::thread ticker_;
};

} // namespace vtc::jit
