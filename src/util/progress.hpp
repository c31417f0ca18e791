// A task's progress, reported to the process-wide handler (progress.hpp). Internal to loopcast.
#pragma once

#include "loopcast/progress.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string_view>

namespace loopcast::detail {

/// The installed handler, or nullptr.
const progress_handler* current_progress_handler() noexcept;

/// Counts units of one task from any thread and reports at most every 100 ms, and once at the end.
class progress_task {
public:
  /// An inactive task (part of a larger one that reports) reports nothing.
  progress_task(std::string_view task, std::uint64_t total, bool active = true)
      : handler_(active ? current_progress_handler() : nullptr), task_(task), total_(total), start_(clock::now()) {}
  progress_task(const progress_task&) = delete;
  progress_task& operator=(const progress_task&) = delete;
  ~progress_task() { report(true); }

  void advance(std::uint64_t n = 1) {
    if (!handler_) return;
    done_.fetch_add(n, std::memory_order_relaxed);
    const auto now = clock::now().time_since_epoch().count();
    auto last = last_report_.load(std::memory_order_relaxed);
    if (now - last < interval_ticks() || !last_report_.compare_exchange_strong(last, now)) return;
    report(false);
  }

private:
  using clock = std::chrono::steady_clock;
  static clock::rep interval_ticks() noexcept {
    return std::chrono::duration_cast<clock::duration>(std::chrono::milliseconds(100)).count();
  }
  void report(bool finished) {
    if (!handler_) return;
    std::lock_guard lock(mutex_);
    progress_update u;
    u.task = task_;
    u.done = done_.load(std::memory_order_relaxed);
    u.total = total_;
    u.elapsed_s = std::chrono::duration<double>(clock::now() - start_).count();
    u.finished = finished;
    try {
      (*handler_)(u);
    } catch (...) {  // a handler's failure must not stop the work
    }
  }

  const progress_handler* handler_;
  std::string_view task_;
  std::uint64_t total_;
  clock::time_point start_;
  std::atomic<std::uint64_t> done_{0};
  std::atomic<clock::rep> last_report_{0};
  std::mutex mutex_;
};

} // namespace loopcast::detail
