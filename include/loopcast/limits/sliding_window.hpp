// loopcast — the sliding window: the charges in (t − period, t] plus the request must stay within
// the limit. The log of charges reuses its storage, so a warm window allocates nothing.
#pragma once

#include "loopcast/limits/bucket_config.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace loopcast::limits {

/// Charges at most the capacity (bucket.hpp applies the oversize rule to larger ones).
class sliding_window {
public:
  explicit sliding_window(const bucket_config& c, double /*start_unix_s*/ = 0)
      : limit_(c.limit), period_s_(c.period_s), eps_(1e-9 * std::max(1.0, c.limit)) {}

  double wait_for(double q, double t) noexcept {
    expire(t);
    double sum = sum_;
    if (sum + q <= limit_ + eps_) return 0.0;
    for (std::size_t i = head_; i < log_.size(); ++i) {
      sum -= log_[i].amount;
      if (sum + q <= limit_ + eps_) return log_[i].t + period_s_ - t;
    }
    return 0.0;  // unreachable: an empty window admits any q <= limit
  }
  /// Until the window holds nothing (the oversize rule `debt` admits then).
  double wait_until_empty(double t) noexcept {
    expire(t);
    if (sum_ <= eps_) return 0.0;
    for (std::size_t i = log_.size(); i-- > head_;)
      if (log_[i].amount > 0) return log_[i].t + period_s_ - t;
    return 0.0;
  }
  /// From t on the limit is `limit`; the charges in the window stay in it.
  void set_limit(double limit, double /*t*/, double /*period_s*/) noexcept {
    limit_ = limit;
    eps_ = 1e-9 * std::max(1.0, limit);
  }
  /// The ticket is the charge's sequence number, which a refund uses to find it.
  std::uint64_t charge(double q, double t, double /*t_release*/) {
    expire(t);
    if (head_ > 0 && head_ * 2 >= log_.size()) compact();
    log_.push_back({t, q});
    sum_ += q;
    return base_seq_ + log_.size() - 1;
  }
  /// A late charge enters the window at t; a refund lowers its own charge while that is in it.
  void adjust(double delta, double t, double /*t_admit*/, std::uint64_t ticket) {
    expire(t);
    if (delta > 0) {
      log_.push_back({t, delta});
      sum_ += delta;
    } else if (ticket >= base_seq_ + head_ && ticket < base_seq_ + log_.size()) {
      auto& e = log_[ticket - base_seq_];
      const double r = std::min(e.amount, -delta);
      e.amount -= r;
      sum_ -= r;
    }
  }
  double used(double t) noexcept {
    expire(t);
    return sum_;
  }

private:
  struct entry {
    double t;
    double amount;
  };
  // Drop charges at or before t − period (the window is (t − period, t]).
  void expire(double t) noexcept {
    while (head_ < log_.size() && log_[head_].t + period_s_ <= t) {
      sum_ -= log_[head_].amount;
      ++head_;
    }
    if (head_ == log_.size()) sum_ = 0.0;  // no drift once empty
  }
  void compact() noexcept {
    log_.erase(log_.begin(), log_.begin() + static_cast<std::ptrdiff_t>(head_));
    base_seq_ += head_;
    head_ = 0;
  }

  double limit_;
  double period_s_;
  double eps_;                  // admission tolerance against rounding, in units
  std::vector<entry> log_;      // charges, oldest first
  std::size_t head_ = 0;        // first live entry
  std::uint64_t base_seq_ = 0;  // sequence number of log_[0]
  double sum_ = 0;              // sum of live entries
};

} // namespace loopcast::limits
