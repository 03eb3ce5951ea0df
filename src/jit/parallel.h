// Items worked on side by side: `work(i)` for every i < items on up to `threads` threads (0:
// one per core; the calling thread is one of them). The first exception thrown stops the
// items not yet started and is rethrown once every thread has finished.
#pragma once

#include <cstddef>
#include <functional>

namespace vtc::jit {

void run_in_parallel(size_t items, unsigned threads, const std::function<void(size_t)>& work);

} // namespace vtc::jit
