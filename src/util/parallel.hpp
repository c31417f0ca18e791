// Runs fn(i) for i in [0, n) on a few threads — or fn(i, worker), worker in [0, worker_count(n,
// threads)), for a caller that keeps scratch storage per worker: once (parallel_for), or loop after
// loop on threads that stay up (worker_pool). Internal to loopcast.
//
// Work is handed out one index at a time from an atomic counter, so callers that write result i
// into slot i get the same output whatever the thread count. The first exception thrown by fn
// is rethrown on the calling thread once every worker has stopped.
#pragma once

#include "loopcast/interrupt.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
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

/// Worker threads that stay up from one parallel loop to the next: a caller that runs many short
/// loops one after another (solve's evaluations) pays for starting its threads once. Its run(n, fn)
/// is parallel_for's loop; one run at a time, from the thread that made the pool. Between runs a
/// helper (and, at a run's end, the caller) polls for a short while before it sleeps: waking a
/// sleeping thread costs tens of microseconds on a virtual machine, as much as a short seed.
class worker_pool {
public:
  /// `workers` workers in all: the calling thread and workers − 1 helpers. A helper that cannot be
  /// started (a process limit) is not an error: the ones that did start, and the caller, share the
  /// work, and the results are the same.
  explicit worker_pool(std::size_t workers) {
    helpers_.reserve(workers > 0 ? workers - 1 : 0);
    for (std::size_t w = 1; w < workers; ++w) {
      try {
        helpers_.emplace_back([this, w] { serve(w); });
      } catch (const std::system_error&) {
        break;
      }
    }
  }
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;
  ~worker_pool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : helpers_) t.join();
  }

  /// The workers that run (at least 1): fn's worker index is below this.
  std::size_t workers() const noexcept { return helpers_.size() + 1; }

  /// fn(i) or fn(i, worker) for i in [0, n), on every worker; returns once all are done, and
  /// rethrows the first exception fn threw (the indices not started by then are skipped).
  template <class F>
  void run(std::size_t n, F&& fn) {
    auto call = [&fn](std::size_t i, std::size_t worker) {
      if constexpr (std::is_invocable_v<F&, std::size_t, std::size_t>) fn(i, worker);
      else fn(i);
    };
    if (helpers_.empty() || n <= 1) {
      for (std::size_t i = 0; i < n; ++i) {
        throw_if_interrupted();
        call(i, 0);
      }
      return;
    }
    using call_t = decltype(call);
    {
      std::lock_guard lock(mutex_);
      job_ = &call;
      job_call_ = [](void* job, std::size_t i, std::size_t worker) { (*static_cast<call_t*>(job))(i, worker); };
      n_ = n;
      next_.store(0, std::memory_order_relaxed);
      failed_.store(false, std::memory_order_relaxed);
      error_ = nullptr;
      busy_.store(helpers_.size());
      generation_.fetch_add(1);  // (after the job: a helper that sees it, polling, sees the job)
    }
    wake_.notify_all();
    work(0);
    if (!poll([this] { return busy_.load() == 0; })) {
      std::unique_lock lock(mutex_);
      done_.wait(lock, [this] { return busy_.load() == 0; });
    }
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

private:
  // Whether ready() became true within about poll_for (checking the clock every 64 tries).
  template <class Ready>
  static bool poll(Ready ready) noexcept {
    static constexpr auto poll_for = std::chrono::microseconds(200);
    const auto until = std::chrono::steady_clock::now() + poll_for;
    for (unsigned k = 1;; ++k) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if (k % 64 == 0 && std::chrono::steady_clock::now() > until) return false;
    }
  }

  void serve(std::size_t worker) {
    std::uint64_t seen = 0;
    for (;;) {
      if (!poll([&] { return generation_.load() != seen || stop_.load(); })) {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
      }
      if (stop_.load()) return;
      seen = generation_.load();
      work(worker);
      if (busy_.fetch_sub(1) == 1) {  // the last helper: the caller may be asleep
        std::lock_guard lock(mutex_);
        done_.notify_one();
      }
    }
  }

  void work(std::size_t worker) {
    for (;;) {
      const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= n_ || failed_.load(std::memory_order_relaxed)) return;
      try {
        throw_if_interrupted();  // (before each index: seeds, sweep points, evaluations, files)
        job_call_(job_, i, worker);
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        failed_ = true;
      }
    }
  }

  std::vector<std::thread> helpers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<bool> stop_{false};              // (set under mutex_, for wake_)
  std::atomic<std::uint64_t> generation_{0};   // one more per run: a helper that sees it has work
  std::atomic<std::size_t> busy_{0};           // helpers still working on this run
  // This run's job (written before generation_ moves, read by the helpers after they see it move).
  void* job_ = nullptr;
  void (*job_call_)(void*, std::size_t, std::size_t) = nullptr;
  std::size_t n_ = 0;
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;                   // (under mutex_)
};

/// One parallel loop on worker_count(n, threads) workers (a pool made for it).
template <class F>
void parallel_for(std::size_t n, unsigned threads, F&& fn) {
  worker_pool pool(worker_count(n, threads));
  pool.run(n, std::forward<F>(fn));
}

} // namespace loopcast::detail
