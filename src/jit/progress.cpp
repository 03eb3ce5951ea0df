// The line is redrawn with a carriage return and an erase-to-end-of-line, every 250 ms and on
// every change.
#include "jit/progress.h"

#include <cstdio>
#include <unistd.h>

namespace vtc::jit {

Progress::Progress(bool enabled) : active_(enabled && isatty(STDERR_FILENO)) {
  if (!active_) return;
  start_ = std::chrono::steady_clock::now();
  ticker_ = std::thread([this] { tick(); });
}

Progress::~Progress() {
  if (!active_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  ticker_.join();
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

void Progress::stage(const std::string& name, size_t total) {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  stage_ = name;
  total_ = total;
  done_ = 0;
  start_ = std::chrono::steady_clock::now();
  draw();
}

void Progress::count(size_t done) {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = done;
  draw();
}

void Progress::draw() {
  if (stage_.empty()) return;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (total_ > 0)
    std::fprintf(stderr, "\r\033[Kvtc: %s %zu/%zu, %.1f s", stage_.c_str(), done_, total_, seconds);
  else
    std::fprintf(stderr, "\r\033[Kvtc: %s, %.1f s", stage_.c_str(), seconds);
  std::fflush(stderr);
}

void Progress::tick() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(250));
    if (!stop_) draw();
  }
}

} // namespace vtc::jit
