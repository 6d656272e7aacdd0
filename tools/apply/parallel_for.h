#ifndef FLEETPLAN_TOOLS_APPLY_PARALLEL_FOR_H_
#define FLEETPLAN_TOOLS_APPLY_PARALLEL_FOR_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace fleetplan {

// Runs fn(0..count-1) on up to `threads` threads; an index is handed out
// only while `keep_going()` holds.
template <typename Fn, typename Pred>
void ParallelFor(size_t count, int threads, Fn fn, Pred keep_going) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    while (keep_going()) {
      size_t i = next.fetch_add(1);
      if (i >= count) return;
      fn(i);
    }
  };
  size_t n = std::min<size_t>(count, std::max(threads, 1));
  std::vector<std::thread> pool;
  for (size_t i = 0; i < n; ++i) pool.emplace_back(worker);
  for (std::thread& thread : pool) thread.join();
}

// Runs fn(0..count-1) on up to `threads` threads, every index.
template <typename Fn>
void ParallelFor(size_t count, int threads, Fn fn) {
  ParallelFor(count, threads, fn, [] { return true; });
}

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_PARALLEL_FOR_H_
