// loopcast — the concurrency limit: at most `limit` requests in flight. A request's end must be
// known when it is admitted (it is, except under a local engine, which limits its own sequences).
#pragma once

#include "loopcast/limits/bucket_config.hpp"
#include "loopcast/limits/bucket_law.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace loopcast::limits {

class concurrency {
public:
  explicit concurrency(const bucket_config& c, double /*start_unix_s*/ = 0)
      : limit_(c.limit), eps_(1e-9 * std::max(1.0, c.limit)) {
    heap_.reserve(static_cast<std::size_t>(std::min(c.limit, 1.0e6)));
  }

  double wait_for(double /*q*/, double t) noexcept {
    if (limit_ < 1.0 - eps_) return never_admitted;
    release(t);
    if (static_cast<double>(heap_.size()) + 1.0 <= limit_ + eps_) return 0.0;
    return heap_.front() - t;  // the earliest in-flight request ends then
  }
  double wait_until_empty(double /*t*/) noexcept { return 0.0; }
  std::uint64_t charge(double /*q*/, double t, double t_release) {
    release(t);
    heap_.push_back(t_release);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
    return 0;
  }
  void adjust(double, double, double, std::uint64_t) noexcept {}
  /// From t on at most `limit` requests are in flight; those in flight stay.
  void set_limit(double limit, double /*t*/, double /*period_s*/) noexcept {
    limit_ = limit;
    eps_ = 1e-9 * std::max(1.0, limit);
  }
  double used(double t) noexcept {
    release(t);
    return static_cast<double>(heap_.size());
  }

private:
  void release(double t) noexcept {
    while (!heap_.empty() && heap_.front() <= t) {
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
      heap_.pop_back();
    }
  }

  double limit_;
  double eps_;
  std::vector<double> heap_;  // completion times of requests in flight (min-heap)
};

} // namespace loopcast::limits
