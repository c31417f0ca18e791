// Runs fn(i) for i in [0, n) on a few threads — or fn(i, worker), worker in [0, worker_count(n,
// threads)), for a caller that keeps scratch storage per worker. Internal to loopcast.
//
// Work is handed out one index at a time from an atomic counter, so callers that write result i
// into slot i get the same output whatever the thread count. The first exception thrown by fn
// is rethrown on the calling thread once every worker has stopped.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

namespace loopcast::detail {

/// 0 means one thread per hardware thread (at least 1).
inline unsigned resolve_threads(unsigned threads) noexcept {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? hw : 1;
}

/// How many workers parallel_for(n, threads, …) runs (at least 1).
inline std::size_t worker_count(std::size_t n, unsigned threads) noexcept {
  return std::max<std::size_t>(1, std::min<std::size_t>(resolve_threads(threads), n));
}

template <class F>
void parallel_for(std::size_t n, unsigned threads, F&& fn) {
  auto call = [&fn](std::size_t i, std::size_t worker) {
    if constexpr (std::is_invocable_v<F&, std::size_t, std::size_t>) fn(i, worker);
    else fn(i);
  };
  const std::size_t count = worker_count(n, threads);
  if (count <= 1) {
    for (std::size_t i = 0; i < n; ++i) call(i, 0);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&](std::size_t w) {
    for (;;) {
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= n || failed.load(std::memory_order_relaxed)) return;
      try {
        call(i, w);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(count - 1);
  // A thread that cannot be started (a process limit) is not an error: the threads that did
  // start, and this one, share the work, and the results are the same.
  for (std::size_t t = 1; t < count; ++t) {
    try {
      pool.emplace_back(worker, t);
    } catch (const std::system_error&) {
      break;
    }
  }
  worker(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

} // namespace loopcast::detail
