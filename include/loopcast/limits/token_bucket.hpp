// loopcast — the token bucket: capacity = limit, refilled continuously at limit/period per second,
// full at the start. A charge takes units now; a wait is the time the refill needs.
#pragma once

#include "loopcast/limits/bucket_config.hpp"

#include <algorithm>
#include <cstdint>

namespace loopcast::limits {

/// Charges at most the capacity (bucket.hpp applies the oversize rule to larger ones).
class token_bucket {
public:
  explicit token_bucket(const bucket_config& c, double /*start_unix_s*/ = 0) noexcept
      : limit_(c.limit), level_(c.limit), rate_(c.limit / c.period_s), eps_(1e-9 * std::max(1.0, c.limit)) {}

  // Reads (wait_for, wait_until_empty, used) do not change the bucket: the level at t is worked
  // out from the last charge or adjustment, so that a run's levels depend only on its charges,
  // never on how often the bucket was asked (a 429 storm asks it on every attempt).
  double wait_for(double q, double t) const noexcept {
    const double level = level_at(t);
    if (level >= q - eps_) return 0.0;
    return (q - level) / rate_;
  }
  /// Until the bucket is full again (the oversize rule `debt` admits then).
  double wait_until_empty(double t) const noexcept {
    const double level = level_at(t);
    return level >= limit_ - eps_ ? 0.0 : (limit_ - level) / rate_;
  }
  std::uint64_t charge(double q, double t, double /*t_release*/) noexcept {
    refill(t);
    level_ -= q;
    return 0;
  }
  void adjust(double delta, double t, double /*t_admit*/, std::uint64_t /*ticket*/) noexcept {
    refill(t);
    level_ = std::min(limit_, level_ - delta);
  }
  double used(double t) const noexcept { return limit_ - level_at(t); }

private:
  // level + rate·(t − t_last), capped at the capacity.
  double level_at(double t) const noexcept {
    return t > t_last_ ? std::min(limit_, level_ + rate_ * (t - t_last_)) : level_;
  }
  void refill(double t) noexcept {
    if (t > t_last_) {
      level_ = level_at(t);
      t_last_ = t;
    }
  }

  double limit_;
  double level_;       // available units
  double rate_;        // refill rate, units per second
  double eps_;         // admission tolerance against rounding, in units
  double t_last_ = 0;  // time of the last refill
};

} // namespace loopcast::limits
