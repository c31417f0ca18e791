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

  double wait_for(double q, double t) noexcept {
    refill(t);
    if (level_ >= q - eps_) return 0.0;
    return (q - level_) / rate_;
  }
  /// Until the bucket is full again (the oversize rule `debt` admits then).
  double wait_until_empty(double t) noexcept {
    refill(t);
    return level_ >= limit_ - eps_ ? 0.0 : (limit_ - level_) / rate_;
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
  double used(double t) noexcept {
    refill(t);
    return limit_ - level_;
  }

private:
  // level += rate·(t − t_last), capped at the capacity.
  void refill(double t) noexcept {
    if (t > t_last_) {
      level_ = std::min(limit_, level_ + rate_ * (t - t_last_));
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
