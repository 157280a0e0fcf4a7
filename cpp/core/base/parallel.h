// Runs independent tasks on up to `threads` threads. Builds without thread support (the single-thread WebAssembly
// module, where std::thread cannot start) define KA_NO_THREADS and run the tasks in order.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#ifndef KA_NO_THREADS
#include <thread>
#endif

namespace ka {

// Calls task(t) for t in [0, count), each exactly once; tasks are taken in order by whichever thread is free.
template <class Task>
void parallel_for(int64_t count, int32_t threads, Task&& task) {
#ifndef KA_NO_THREADS
  if (threads > 1 && count > 1) {
    std::atomic<int64_t> next{0};
    const auto worker = [&] {
      for (int64_t t; (t = next.fetch_add(1)) < count;) task(t);
    };
    std::vector<std::thread> pool;
    for (int32_t n = 1; n < threads && n < count; ++n) pool.emplace_back(worker);
    worker();
    for (auto& thread : pool) thread.join();
    return;
  }
#endif
  (void)threads;
  for (int64_t t = 0; t < count; ++t) task(t);
}

}  // namespace ka
