// loopcast — the state of one preset-configured bucket during a simulation.
//
// A `bucket` holds one of the built-in algorithms (a std::variant) and applies the bucket's
// oversize rule: a charge larger than the whole capacity is refused for good (`refuse`,
// `rate_limited`: wait_for returns never_admitted) or admitted once the bucket is empty (`debt`:
// the level goes below zero and refill repays it). Each wait is monotone: once a charge is
// admissible without other traffic, it stays so — except where the limit itself changes: a bucket
// whose configuration has limit steps (a plan's dated rule that changes within the run) takes the
// new limit when an operation first asks at or after the step's time, as of that time, so its state
// depends on the times asked, never on how often. Operations allocate nothing once warm.
#pragma once

#include "loopcast/limits/bucket_config.hpp"
#include "loopcast/limits/bucket_law.hpp"
#include "loopcast/limits/concurrency.hpp"
#include "loopcast/limits/fixed_window.hpp"
#include "loopcast/limits/sliding_window.hpp"
#include "loopcast/limits/token_bucket.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <variant>

namespace loopcast {

class bucket {
public:
  /// Kept for callers of earlier versions; the same value as never_admitted.
  static constexpr double never = never_admitted;

  /// A fixed window anchored at the epoch needs the Unix time of simulated t = 0.
  explicit bucket(bucket_config cfg, double start_unix_s = 0)
      : cfg_(std::move(cfg)), state_(make(cfg_, start_unix_s)), oversize_above_(oversize_above(cfg_, cfg_.limit)),
        debt_(cfg_.oversize == oversize_rule::debt), start_unix_s_(start_unix_s) {
    if (!cfg_.limit_steps.empty()) next_step_t_ = cfg_.limit_steps.front().at_unix_s - start_unix_s_;
  }

  const bucket_config& config() const noexcept { return cfg_; }

  /// Seconds to wait from t until a charge of q could be admitted (0 = now, never_admitted = a
  /// charge above the capacity that the oversize rule does not admit).
  double wait_for(double q, double t) noexcept {
    if (t >= next_step_t_) [[unlikely]] step_to(t);
    return std::visit([this, q, t](auto& s) noexcept { return wait_in(s, q, t, oversize_above_, debt_); }, state_);
  }

  /// A token bucket's reads by value (limits::token_bucket::reading) with its oversize rule: until
  /// the bucket's next charge or adjustment, reading.wait_for(q, t) is wait_for(q, t), to the bit,
  /// without the dispatch on the algorithm (a herd's batch asks its buckets once per 429).
  struct token_reading {
    limits::token_bucket::reading state;
    double oversize_above;  // a larger charge follows the oversize rule
    bool debt;              // ... which is debt (else never admitted)
    double wait_for(double q, double t) const noexcept { return wait_in(state, q, t, oversize_above, debt); }
  };
  /// For a bucket whose algorithm is bucket_algorithm::token_bucket and whose limit does not change
  /// while the reading is used (no limit_steps_ahead()).
  token_reading read_token_bucket() const noexcept {
    return {std::get_if<limits::token_bucket>(&state_)->read(), oversize_above_, debt_};
  }

  /// Charges q units at time t; `t_release` is when the request completes (concurrency only).
  /// Returns the ticket adjust() takes.
  std::uint64_t charge(double q, double t, double t_release) {
    if (t >= next_step_t_) [[unlikely]] step_to(t);
    return std::visit([=](auto& s) { return s.charge(q, t, t_release); }, state_);
  }

  /// Adds `delta` units at completion time t of a request admitted at t_admit with `ticket`: a
  /// refund when negative (only while the original charge is still counted), a late charge when
  /// positive.
  void adjust(double delta, double t, double t_admit, std::uint64_t ticket) {
    if (delta == 0.0) return;
    if (t >= next_step_t_) [[unlikely]] step_to(t);
    std::visit([=](auto& s) { s.adjust(delta, t, t_admit, ticket); }, state_);
  }

  /// Units in use at time t, in the bucket's unit: limit − available for a token bucket, the
  /// window's count for the window algorithms, requests in flight for concurrency.
  double used(double t) noexcept {
    if (t >= next_step_t_) [[unlikely]] step_to(t);
    return std::visit([t](auto& s) noexcept { return s.used(t); }, state_);
  }

  /// Whether a step of the limit is still to come.
  bool limit_steps_ahead() const noexcept { return next_step_t_ < std::numeric_limits<double>::infinity(); }

private:
  // Takes every limit step due at or before t, each as of its own time.
  void step_to(double t) noexcept {
    const auto& steps = cfg_.limit_steps;
    while (step_ < steps.size() && steps[step_].at_unix_s - start_unix_s_ <= t) {
      const double at = std::max(0.0, steps[step_].at_unix_s - start_unix_s_);
      const double limit = steps[step_].limit;
      std::visit([&](auto& s) noexcept { s.set_limit(limit, at, cfg_.period_s); }, state_);
      oversize_above_ = oversize_above(cfg_, limit);
      ++step_;
    }
    next_step_t_ = step_ < steps.size() ? steps[step_].at_unix_s - start_unix_s_ : std::numeric_limits<double>::infinity();
  }

  // A charge above the capacity follows the oversize rule (never admitted, or debt: admitted once
  // the bucket is full); a concurrency limit has none (oversize_above is infinite).
  template <class State>
  static double wait_in(State& s, double q, double t, double oversize_above, bool debt) noexcept {
    if (q > oversize_above) return debt ? s.wait_until_empty(t) : never_admitted;
    return s.wait_for(q, t);
  }

  using state = std::variant<limits::token_bucket, limits::fixed_window, limits::sliding_window, limits::concurrency>;
  static state make(const bucket_config& c, double start_unix_s) {
    switch (c.algorithm) {
    case bucket_algorithm::fixed_window: return limits::fixed_window(c, start_unix_s);
    case bucket_algorithm::sliding_window: return limits::sliding_window(c, start_unix_s);
    case bucket_algorithm::concurrency: return limits::concurrency(c, start_unix_s);
    case bucket_algorithm::token_bucket: break;
    }
    return limits::token_bucket(c, start_unix_s);
  }

  // The capacity and the admission tolerance against rounding (infinite for a concurrency limit).
  static double oversize_above(const bucket_config& c, double limit) noexcept {
    if (c.algorithm == bucket_algorithm::concurrency) return std::numeric_limits<double>::infinity();
    return limit + 1e-9 * std::max(1.0, limit);
  }

  bucket_config cfg_;
  state state_;
  double oversize_above_;
  bool debt_;              // the oversize rule is debt
  double start_unix_s_;    // Unix time of simulated t = 0 (the limit steps are in Unix time)
  double next_step_t_ = std::numeric_limits<double>::infinity();  // the next limit step, simulated s
  std::size_t step_ = 0;   // limit steps taken
};
static_assert(bucket_law<bucket>);

} // namespace loopcast
