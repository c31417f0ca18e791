// loopcast — the fixed window: the count resets at multiples of the period from the anchor
// (simulated time 0, or the Unix epoch plus an offset).
#pragma once

#include "loopcast/limits/bucket_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace loopcast::limits {

/// Charges at most the capacity (bucket.hpp applies the oversize rule to larger ones).
class fixed_window {
public:
  explicit fixed_window(const bucket_config& c, double start_unix_s = 0) noexcept
      : limit_(c.limit), period_s_(c.period_s), eps_(1e-9 * std::max(1.0, c.limit)) {
    if (c.anchor == window_anchor::epoch) anchor_ = -std::fmod(start_unix_s - c.anchor_offset_s, c.period_s);
  }

  double wait_for(double q, double t) noexcept {
    roll(t);
    if (count_ + q <= limit_ + eps_) return 0.0;
    return window_start(window_index(t) + 1) - t;
  }
  /// Until the window holds nothing (the oversize rule `debt` admits then).
  double wait_until_empty(double t) noexcept {
    roll(t);
    return count_ <= eps_ ? 0.0 : window_start(window_index(t) + 1) - t;
  }
  std::uint64_t charge(double q, double t, double /*t_release*/) noexcept {
    roll(t);
    count_ += q;
    return 0;
  }
  /// A refund counts only while the original charge is in the current window.
  void adjust(double delta, double t, double t_admit, std::uint64_t /*ticket*/) noexcept {
    roll(t);
    if (delta > 0) count_ += delta;
    else if (window_index(t) == window_index(t_admit)) count_ = std::max(0.0, count_ + delta);
  }
  double used(double t) noexcept {
    roll(t);
    return count_;
  }

private:
  std::int64_t window_index(double t) const noexcept {
    return static_cast<std::int64_t>(std::floor((t - anchor_) / period_s_));
  }
  double window_start(std::int64_t k) const noexcept { return anchor_ + static_cast<double>(k) * period_s_; }
  void roll(double t) noexcept {
    const auto k = window_index(t);
    if (k != window_) {
      window_ = k;
      count_ = 0;
    }
  }

  double limit_;
  double period_s_;
  double eps_;         // admission tolerance against rounding, in units
  double anchor_ = 0;  // start of window 0, simulated seconds
  std::int64_t window_ = std::numeric_limits<std::int64_t>::min();
  double count_ = 0;   // units charged in the current window
};

} // namespace loopcast::limits
