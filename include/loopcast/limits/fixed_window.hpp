// loopcast — the fixed window: the count resets at multiples of the period from the anchor
// (simulated time 0, or the Unix epoch plus an offset), or, anchored at first use, a window opens
// at the first charge, closes one period later whatever happened inside it, and the next one opens
// at the first charge after that (a subscription plan's rolling 5-hour "session").
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
      : limit_(c.limit), period_s_(c.period_s), eps_(1e-9 * std::max(1.0, c.limit)),
        first_use_(opens_at_first_use(c.anchor)), anchor_kind_(c.anchor), start_unix_s_(start_unix_s) {
    if (c.anchor == window_anchor::epoch) anchor_ = -std::fmod(start_unix_s - c.anchor_offset_s, c.period_s);
  }

  double wait_for(double q, double t) noexcept {
    roll(t);
    if (count_ + q <= limit_ + eps_) return 0.0;
    return window_end(t) - t;
  }
  /// Until the window holds nothing (the oversize rule `debt` admits then).
  double wait_until_empty(double t) noexcept {
    roll(t);
    return count_ <= eps_ ? 0.0 : window_end(t) - t;
  }
  std::uint64_t charge(double q, double t, double /*t_release*/) noexcept {
    roll(t);
    open_at(t);
    count_ += q;
    return 0;
  }
  /// A refund counts only while the original charge is in the current window.
  void adjust(double delta, double t, double t_admit, std::uint64_t /*ticket*/) noexcept {
    roll(t);
    if (delta > 0) {
      open_at(t);
      count_ += delta;
    } else if (first_use_ ? open_ && t_admit >= start_ : window_index(t) == window_index(t_admit)) {
      count_ = std::max(0.0, count_ + delta);
    }
  }
  double used(double t) noexcept {
    roll(t);
    return count_;
  }
  /// From t on the limit is `limit`; what the open window counted stays counted.
  void set_limit(double limit, double t, double /*period_s*/) noexcept {
    roll(t);
    limit_ = limit;
    eps_ = 1e-9 * std::max(1.0, limit);
  }

private:
  std::int64_t window_index(double t) const noexcept {
    return static_cast<std::int64_t>(std::floor((t - anchor_) / period_s_));
  }
  double window_start(std::int64_t k) const noexcept { return anchor_ + static_cast<double>(k) * period_s_; }
  // When the window holding t closes (a window anchored at first use holds a count only while open).
  double window_end(double t) const noexcept {
    return first_use_ ? start_ + period_s_ : window_start(window_index(t) + 1);
  }
  // A window anchored at first use opens at the charge that finds none open (first_use_window_start).
  void open_at(double t) noexcept {
    if (first_use_ && !open_) {
      open_ = true;
      start_ = first_use_window_start(anchor_kind_, t, start_unix_s_);
    }
  }
  void roll(double t) noexcept {
    if (first_use_) {
      if (open_ && t >= start_ + period_s_) {
        open_ = false;
        count_ = 0;
      }
      return;
    }
    const auto k = window_index(t);
    if (k != window_) {
      window_ = k;
      count_ = 0;
    }
  }

  double limit_;
  double period_s_;
  double eps_;         // admission tolerance against rounding, in units
  bool first_use_;     // windows open at the first charge instead of on a grid
  window_anchor anchor_kind_;  // first use: at the charge, or at its whole UTC hour
  double start_unix_s_;  // Unix time of simulated time 0
  bool open_ = false;  // first use: whether a window is open
  double start_ = 0;   // first use: when the open window opened, simulated seconds
  double anchor_ = 0;  // grid: start of window 0, simulated seconds
  std::int64_t window_ = std::numeric_limits<std::int64_t>::min();
  double count_ = 0;   // units charged in the current window
};

} // namespace loopcast::limits
