// loopcast — rate-limit buckets (docs/model.md §3).
//
// A provider tier has a set of buckets. Each bucket counts one quantity (requests, requests in
// flight, or a set of token classes) over a period with one algorithm, and charges a request's
// generated tokens by one charging rule. A request is admitted iff every bucket can take its
// charge now; otherwise it gets a 429 with retry_after = the largest of the per-bucket waits
// (each bucket's wait is monotone: once admissible without other traffic, it stays so).
// A charge larger than a bucket's whole capacity is handled by the bucket's oversize rule:
// refused outright ("request too large"), refused with a 429 on every attempt, or admitted once
// the bucket is full, driving its level below zero (a debt that refill repays).
#pragma once

#include "loopcast/tokens.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace loopcast {

enum class bucket_algorithm : std::uint8_t {
  token_bucket,    ///< capacity = limit, refilled continuously at limit/period per second, starts full
  fixed_window,    ///< count resets at multiples of period from the anchor
  sliding_window,  ///< sum of charges in (t − period, t] plus the request must stay <= limit
  concurrency      ///< at most `limit` requests in flight
};

enum class charging_rule : std::uint8_t {
  actual,               ///< true generated tokens charged at admission (an oracle)
  reserve_then_refund,  ///< max_tokens charged at admission, unused part refunded at completion
  reserve,              ///< max_tokens charged at admission, never refunded
  on_completion         ///< generated tokens charged when the request completes
};

enum class bucket_unit : std::uint8_t {
  requests,            ///< one unit per request
  tokens,              ///< the sum of the counted token classes
  concurrent_requests  ///< requests in flight (only with the concurrency algorithm)
};

enum class window_anchor : std::uint8_t {
  session_start,  ///< fixed windows start at simulated time 0
  epoch           ///< fixed windows are aligned to the Unix epoch (plus anchor_offset_s)
};

/// What a bucket does with a charge larger than its whole capacity (e.g. max_tokens 32,000 on an
/// 8,000 output-tokens-per-minute bucket). Chosen per provider from evidence (docs/presets.md).
enum class oversize_rule : std::uint8_t {
  refuse,        ///< never admitted: the request fails at once (HTTP 400-like, request_too_large)
  rate_limited,  ///< a 429 on every attempt (retry_after = the period): the client retries until it gives up
  debt           ///< admitted when the bucket is full; the level goes negative and refill repays it
};

/// Configuration of one bucket. Plain data; validated when loaded.
struct bucket_config {
  std::string name;                   ///< e.g. "total_tpm"
  double limit = 0;                   ///< capacity, in units (requests or tokens)
  double period_s = 60;               ///< period, in seconds (ignored by concurrency)
  bucket_unit unit = bucket_unit::tokens;
  class_set classes;                  ///< counted token classes (unit == tokens)
  bucket_algorithm algorithm = bucket_algorithm::token_bucket;
  charging_rule charging = charging_rule::actual;  ///< how generated tokens are charged
  bool count_rejected = false;        ///< a refused request still costs one unit (unit == requests)
  window_anchor anchor = window_anchor::session_start;  ///< fixed_window only
  double anchor_offset_s = 0;         ///< fixed_window with epoch anchor: windows start at epoch + offset (s)
  oversize_rule oversize = oversize_rule::refuse;  ///< a charge above the whole capacity
};

/// Names for the enums, as used in presets.
std::string_view to_string(bucket_algorithm) noexcept;
std::string_view to_string(charging_rule) noexcept;
std::string_view to_string(bucket_unit) noexcept;
std::string_view to_string(window_anchor) noexcept;
std::string_view to_string(oversize_rule) noexcept;

/// What a bucket charges a request at admission and at completion, in units.
struct bucket_charge {
  double at_admission = 0;   ///< charged when admitted (checked against the bucket)
  double at_completion = 0;  ///< charged (> 0) or refunded (< 0) at completion
};

/// The charge of a request with `tokens` (the true counts) and `max_tokens` on bucket `b`.
/// For the reservation rules the reserve is max_tokens (which covers output + reasoning).
inline bucket_charge charge_for(const bucket_config& b, const token_counts& tokens,
                                std::int64_t max_tokens) noexcept {
  if (b.unit != bucket_unit::tokens) return {1.0, 0.0};
  const double prompt = static_cast<double>(b.classes.prompt_part(tokens));
  if (!b.classes.counts_generated()) return {prompt, 0.0};
  const double generated = static_cast<double>(b.classes.generated_part(tokens));
  const double reserve = static_cast<double>(max_tokens);
  switch (b.charging) {
  case charging_rule::actual: return {prompt + generated, 0.0};
  case charging_rule::reserve_then_refund:
    return {prompt + reserve, -std::max(0.0, reserve - generated)};
  case charging_rule::reserve: return {prompt + reserve, 0.0};
  case charging_rule::on_completion: return {prompt, generated};
  }
  return {prompt, 0.0};
}

/// The state of one bucket during a simulation. Time is simulated seconds since the start.
/// Operations are noexcept and allocate nothing once warm (the sliding window's log and the
/// concurrency heap reuse their storage).
class bucket {
public:
  static constexpr double never = std::numeric_limits<double>::infinity();

  explicit bucket(bucket_config cfg, double start_unix_s = 0)
      : cfg_(std::move(cfg)), level_(cfg_.limit), rate_(cfg_.limit / cfg_.period_s),
        eps_(1e-9 * std::max(1.0, cfg_.limit)) {
    if (cfg_.algorithm == bucket_algorithm::fixed_window && cfg_.anchor == window_anchor::epoch)
      anchor_ = -std::fmod(start_unix_s - cfg_.anchor_offset_s, cfg_.period_s);
    if (cfg_.algorithm == bucket_algorithm::concurrency)
      heap_.reserve(static_cast<std::size_t>(std::min(cfg_.limit, 1.0e6)));
  }

  const bucket_config& config() const noexcept { return cfg_; }

  /// Seconds to wait from t until a charge of q could be admitted (0 = now, `never` = a charge
  /// above the capacity that the oversize rule does not admit).
  double wait_for(double q, double t) noexcept {
    if (q > cfg_.limit + eps_ && cfg_.algorithm != bucket_algorithm::concurrency) {
      if (cfg_.oversize != oversize_rule::debt) return never;
      return wait_until_full(t);
    }
    switch (cfg_.algorithm) {
    case bucket_algorithm::token_bucket: {
      refill(t);
      if (level_ >= q - eps_) return 0.0;
      return (q - level_) / rate_;
    }
    case bucket_algorithm::fixed_window: {
      roll(t);
      if (count_ + q <= cfg_.limit + eps_) return 0.0;
      return window_start(window_index(t) + 1) - t;
    }
    case bucket_algorithm::sliding_window: {
      expire(t);
      double sum = log_sum_;
      if (sum + q <= cfg_.limit + eps_) return 0.0;
      for (std::size_t i = head_; i < log_.size(); ++i) {
        sum -= log_[i].amount;
        if (sum + q <= cfg_.limit + eps_) return log_[i].t + cfg_.period_s - t;
      }
      return 0.0;  // unreachable: an empty window admits any q <= limit
    }
    case bucket_algorithm::concurrency: {
      if (cfg_.limit < 1.0 - eps_) return never;
      release(t);
      if (static_cast<double>(heap_.size()) + 1.0 <= cfg_.limit + eps_) return 0.0;
      return heap_.front() - t;  // the earliest in-flight request ends then
    }
    }
    return 0.0;
  }

  /// Charges q units at time t. `t_release` is when the request completes (concurrency only).
  void charge(double q, double t, double t_release) noexcept {
    switch (cfg_.algorithm) {
    case bucket_algorithm::token_bucket: refill(t); level_ -= q; break;
    case bucket_algorithm::fixed_window: roll(t); count_ += q; break;
    case bucket_algorithm::sliding_window:
      expire(t);
      if (head_ > 0 && head_ * 2 >= log_.size()) compact();
      log_.push_back({t, q});
      log_sum_ += q;
      break;
    case bucket_algorithm::concurrency:
      release(t);
      heap_.push_back(t_release);
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
      break;
    }
  }

  /// Adds `delta` units at completion time t of a request admitted at t_admit: a refund when
  /// negative (only while the original charge is still counted), a late charge when positive.
  /// `admit_seq` is the sequence number charge() returned through last_charge_seq().
  void adjust(double delta, double t, double t_admit, std::uint64_t admit_seq) noexcept {
    if (delta == 0.0) return;
    switch (cfg_.algorithm) {
    case bucket_algorithm::token_bucket:
      refill(t);
      level_ = std::min(cfg_.limit, level_ - delta);
      break;
    case bucket_algorithm::fixed_window:
      roll(t);
      if (delta > 0) count_ += delta;
      else if (window_index(t) == window_index(t_admit)) count_ = std::max(0.0, count_ + delta);
      break;
    case bucket_algorithm::sliding_window:
      expire(t);
      if (delta > 0) {
        log_.push_back({t, delta});
        log_sum_ += delta;
      } else if (admit_seq >= base_seq_ + head_ && admit_seq < base_seq_ + log_.size()) {
        auto& e = log_[admit_seq - base_seq_];
        const double r = std::min(e.amount, -delta);
        e.amount -= r;
        log_sum_ -= r;
      }
      break;
    case bucket_algorithm::concurrency: break;
    }
  }

  /// Sequence number of the most recent sliding-window charge (for adjust()).
  std::uint64_t last_charge_seq() const noexcept { return base_seq_ + log_.size() - 1; }

  /// Units in use at time t, in the bucket's unit: limit − available for a token bucket, the
  /// window's count for the window algorithms, requests in flight for concurrency.
  double used(double t) noexcept {
    switch (cfg_.algorithm) {
    case bucket_algorithm::token_bucket: refill(t); return cfg_.limit - level_;
    case bucket_algorithm::fixed_window: roll(t); return count_;
    case bucket_algorithm::sliding_window: expire(t); return log_sum_;
    case bucket_algorithm::concurrency: release(t); return static_cast<double>(heap_.size());
    }
    return 0.0;
  }

private:
  // Oversize rule `debt`: the wait until the bucket holds nothing (a token bucket at capacity, an
  // empty window).
  double wait_until_full(double t) noexcept {
    switch (cfg_.algorithm) {
    case bucket_algorithm::token_bucket:
      refill(t);
      return level_ >= cfg_.limit - eps_ ? 0.0 : (cfg_.limit - level_) / rate_;
    case bucket_algorithm::fixed_window:
      roll(t);
      return count_ <= eps_ ? 0.0 : window_start(window_index(t) + 1) - t;
    case bucket_algorithm::sliding_window:
      expire(t);
      if (log_sum_ <= eps_) return 0.0;
      for (std::size_t i = log_.size(); i-- > head_;)
        if (log_[i].amount > 0) return log_[i].t + cfg_.period_s - t;
      return 0.0;
    case bucket_algorithm::concurrency: return 0.0;
    }
    return 0.0;
  }

  struct entry {
    double t;
    double amount;
  };

  // Token bucket: level += rate·(t − t_last), capped at the capacity.
  void refill(double t) noexcept {
    if (t > t_last_) {
      level_ = std::min(cfg_.limit, level_ + rate_ * (t - t_last_));
      t_last_ = t;
    }
  }
  std::int64_t window_index(double t) const noexcept {
    return static_cast<std::int64_t>(std::floor((t - anchor_) / cfg_.period_s));
  }
  double window_start(std::int64_t k) const noexcept {
    return anchor_ + static_cast<double>(k) * cfg_.period_s;
  }
  void roll(double t) noexcept {
    const auto k = window_index(t);
    if (k != window_) {
      window_ = k;
      count_ = 0;
    }
  }
  // Sliding window: drop charges at or before t − period (the window is (t − period, t]).
  void expire(double t) noexcept {
    while (head_ < log_.size() && log_[head_].t + cfg_.period_s <= t) {
      log_sum_ -= log_[head_].amount;
      ++head_;
    }
    if (head_ == log_.size()) log_sum_ = 0.0;  // no drift once empty
  }
  void compact() noexcept {
    log_.erase(log_.begin(), log_.begin() + static_cast<std::ptrdiff_t>(head_));
    base_seq_ += head_;
    head_ = 0;
  }
  void release(double t) noexcept {
    while (!heap_.empty() && heap_.front() <= t) {
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
      heap_.pop_back();
    }
  }

  bucket_config cfg_;
  double level_;         // token bucket: available units
  double rate_;          // token bucket: refill rate, units per second
  double eps_;           // admission tolerance against rounding, in units
  double t_last_ = 0;    // token bucket: time of the last refill
  double anchor_ = 0;    // fixed window: start of window 0, simulated seconds
  std::int64_t window_ = std::numeric_limits<std::int64_t>::min();
  double count_ = 0;     // fixed window: units charged in the current window
  std::vector<entry> log_;      // sliding window: charges, oldest first
  std::size_t head_ = 0;        // sliding window: first live entry
  std::uint64_t base_seq_ = 0;  // sliding window: sequence number of log_[0]
  double log_sum_ = 0;          // sliding window: sum of live entries
  std::vector<double> heap_;    // concurrency: completion times of requests in flight (min-heap)
};

} // namespace loopcast
