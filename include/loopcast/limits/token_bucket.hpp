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
      : r_{c.limit, c.limit, c.limit / c.period_s, 1e-9 * std::max(1.0, c.limit), 0.0} {}

  /// What the bucket's reads depend on, by value: its level at its last charge or adjustment. The
  /// reads (wait_for, wait_until_empty, used) work the level at t out from it, so they do not change
  /// the bucket, and a run's levels depend only on its charges, never on how often the bucket was
  /// asked (a 429 storm asks it on every attempt). Until the next charge or adjustment, a reading
  /// taken now answers as the bucket would, to the bit (a herd's batch keeps one per bucket).
  struct reading {
    double limit;
    double level;   // available units at t_last
    double rate;    // refill rate, units per second
    double eps;     // admission tolerance against rounding, in units
    double t_last;  // time of the last refill

    /// level + rate·(t − t_last), capped at the capacity.
    double level_at(double t) const noexcept { return t > t_last ? std::min(limit, level + rate * (t - t_last)) : level; }
    double wait_for(double q, double t) const noexcept {
      const double l = level_at(t);
      if (l >= q - eps) return 0.0;
      return (q - l) / rate;
    }
    /// Until the bucket is full again (the oversize rule `debt` admits then).
    double wait_until_empty(double t) const noexcept {
      const double l = level_at(t);
      return l >= limit - eps ? 0.0 : (limit - l) / rate;
    }
  };
  const reading& read() const noexcept { return r_; }

  double wait_for(double q, double t) const noexcept { return r_.wait_for(q, t); }
  double wait_until_empty(double t) const noexcept { return r_.wait_until_empty(t); }
  std::uint64_t charge(double q, double t, double /*t_release*/) noexcept {
    refill(t);
    r_.level -= q;
    return 0;
  }
  void adjust(double delta, double t, double /*t_admit*/, std::uint64_t /*ticket*/) noexcept {
    refill(t);
    r_.level = std::min(r_.limit, r_.level - delta);
  }
  double used(double t) const noexcept { return r_.limit - r_.level_at(t); }
  /// From t on the capacity is `limit`, refilled at limit/period: what was used stays used (the
  /// level moves by the change in capacity, below zero when the new capacity is under what is used).
  void set_limit(double limit, double t, double period_s) noexcept {
    refill(t);
    r_.level += limit - r_.limit;
    r_.limit = limit;
    r_.rate = limit / period_s;
    r_.eps = 1e-9 * std::max(1.0, limit);
  }

private:
  void refill(double t) noexcept {
    if (t > r_.t_last) {
      r_.level = r_.level_at(t);
      r_.t_last = t;
    }
  }

  reading r_;
};

} // namespace loopcast::limits
