// loopcast — what a rate-limit bucket counts and how it charges a request (docs/model.md §3).
//
// A provider tier has a set of buckets. Each bucket counts one quantity (requests, requests in
// flight, or a set of token classes) over a period with one algorithm, and charges a request's
// generated tokens by one charging rule. Plain data, validated when a preset is loaded; the
// state of a bucket during a simulation is in bucket.hpp.
#pragma once

#include "loopcast/names.hpp"
#include "loopcast/tokens.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace loopcast {

enum class bucket_algorithm : std::uint8_t {
  token_bucket,    ///< capacity = limit, refilled continuously at limit/period per second, starts full
  fixed_window,    ///< count resets at multiples of period from the anchor
  sliding_window,  ///< sum of charges in (t − period, t] plus the request must stay <= limit
  concurrency      ///< at most `limit` requests in flight
};
template <>
struct enum_names<bucket_algorithm> {
  static constexpr std::array table{
      enum_entry{bucket_algorithm::token_bucket, "token_bucket"}, enum_entry{bucket_algorithm::fixed_window, "fixed_window"},
      enum_entry{bucket_algorithm::sliding_window, "sliding_window"}, enum_entry{bucket_algorithm::concurrency, "concurrency"}};
};

enum class charging_rule : std::uint8_t {
  actual,               ///< true generated tokens charged at admission (an oracle)
  reserve_then_refund,  ///< max_tokens charged at admission, unused part refunded at completion
  reserve,              ///< max_tokens charged at admission, never refunded
  on_completion         ///< generated tokens charged when the request completes
};
template <>
struct enum_names<charging_rule> {
  static constexpr std::array table{
      enum_entry{charging_rule::actual, "actual"}, enum_entry{charging_rule::reserve_then_refund, "reserve_then_refund"},
      enum_entry{charging_rule::reserve, "reserve"}, enum_entry{charging_rule::on_completion, "on_completion"}};
};

enum class bucket_unit : std::uint8_t {
  requests,            ///< one unit per request
  tokens,              ///< the sum of the counted token classes
  concurrent_requests  ///< requests in flight (only with the concurrency algorithm)
};
template <>
struct enum_names<bucket_unit> {
  static constexpr std::array table{enum_entry{bucket_unit::requests, "requests"}, enum_entry{bucket_unit::tokens, "tokens"},
                                    enum_entry{bucket_unit::concurrent_requests, "concurrent_requests"}};
};

enum class window_anchor : std::uint8_t {
  session_start,  ///< fixed windows start at simulated time 0
  epoch,          ///< fixed windows are aligned to the Unix epoch (plus anchor_offset_s)
  first_use,      ///< a window opens at the first charge and lasts one period; the next opens at the
                  ///< first charge after it closed (a subscription's 5-hour "session")
  first_use_hour  ///< as first_use, but the window opens at the whole UTC hour of that charge (a
                  ///< first message at 03:05 opens a 5-hour window 03:00-08:00, as Claude's plans count)
};
/// Whether windows open at a first charge (first_use or first_use_hour) rather than on a grid.
constexpr bool opens_at_first_use(window_anchor a) noexcept {
  return a == window_anchor::first_use || a == window_anchor::first_use_hour;
}
/// When a first-use window opened by a charge at simulated time t begins, in simulated seconds
/// (t itself, or its whole UTC hour for first_use_hour; `start_unix_s`: Unix time of t = 0).
inline double first_use_window_start(window_anchor a, double t, double start_unix_s) noexcept {
  return a == window_anchor::first_use_hour ? std::floor((start_unix_s + t) / 3600.0) * 3600.0 - start_unix_s : t;
}
template <>
struct enum_names<window_anchor> {
  static constexpr std::array table{enum_entry{window_anchor::session_start, "session_start"},
                                    enum_entry{window_anchor::epoch, "epoch"},
                                    enum_entry{window_anchor::first_use, "first_use"},
                                    enum_entry{window_anchor::first_use_hour, "first_use_hour"}};
};

/// What a bucket does with a charge larger than its whole capacity (e.g. max_tokens 32,000 on an
/// 8,000 output-tokens-per-minute bucket). Chosen per provider from evidence (docs/presets.md).
enum class oversize_rule : std::uint8_t {
  refuse,        ///< never admitted: the request fails at once (HTTP 400-like, request_too_large)
  rate_limited,  ///< a 429 on every attempt (retry_after = the period): the client retries until it gives up
  debt           ///< admitted when the bucket is full; the level goes negative and refill repays it
};
template <>
struct enum_names<oversize_rule> {
  static constexpr std::array table{enum_entry{oversize_rule::refuse, "refuse"},
                                    enum_entry{oversize_rule::rate_limited, "rate_limited"},
                                    enum_entry{oversize_rule::debt, "debt"}};
};

/// From Unix time `at_unix_s` on, a bucket's limit is `limit` (a plan's rule that changes within a
/// run: target_at in target.hpp turns a preset's dated limits into these steps).
struct limit_step {
  double at_unix_s = 0;
  double limit = 0;
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
  /// Each unit charged counts `weight` units against the limit: a subscription plan's weight for
  /// the target's model (a heavier model uses the allowance faster).
  double weight = 1;
  /// unit == tokens: each counted class's tokens count × its weight (e.g. cache reads at 0.1).
  std::array<double, token_class_count> class_weights{1, 1, 1, 1, 1, 1};  ///< cache_write_1h: cache_write's
  /// The source publishes no figure for this limit ("limit": null in a preset): it must be set
  /// (a scenario option's "limits", --limit, Target.with_bucket_limit) before a run; `limit` is 0.
  bool limit_unpublished = false;
  /// Later limits, in time order: from each step's time on, the bucket's limit is the step's (a run
  /// that crosses a dated rule change meets it when it happens; `limit` holds before the first).
  std::vector<limit_step> limit_steps;

  /// The limit in force at Unix time `unix_s`.
  double limit_at(double unix_s) const noexcept {
    double l = limit;
    for (const auto& s : limit_steps)
      if (unix_s >= s.at_unix_s) l = s.limit;
    return l;
  }
  double class_weight(token_class c) const noexcept { return class_weights[static_cast<std::size_t>(counted_as(c))]; }
  /// Every weight is 1: a charge is a whole number of units.
  bool unweighted() const noexcept {
    return weight == 1 && class_weights == std::array<double, token_class_count>{1, 1, 1, 1, 1, 1};
  }
};

/// What a bucket charges a request at admission and at completion, in units.
struct bucket_charge {
  double at_admission = 0;   ///< charged when admitted (checked against the bucket)
  double at_completion = 0;  ///< charged (> 0) or refunded (< 0) at completion
};

/// The charge of a request with `tokens` (the true counts) and `max_tokens` on bucket `b`, in
/// weighted units. For the reservation rules the reserve is max_tokens (which covers output +
/// reasoning, weighted alike: presets refuse other weights with a reservation).
inline bucket_charge charge_for(const bucket_config& b, const token_counts& tokens,
                                std::int64_t max_tokens) noexcept {
  if (b.unit != bucket_unit::tokens) return {b.weight, 0.0};
  double prompt = 0, generated = 0, reserve = static_cast<double>(max_tokens);
  if (b.unweighted()) {  // whole-token sums, as most buckets count
    prompt = static_cast<double>(b.classes.prompt_part(tokens));
    generated = static_cast<double>(b.classes.generated_part(tokens));
  } else {
    auto part = [&](token_class c) {
      return b.classes.contains(c) ? b.class_weight(c) * static_cast<double>(tokens[c]) : 0.0;
    };
    prompt = b.weight * (part(token_class::input) + part(token_class::cache_read) + part(token_class::cache_write) +
                         part(token_class::cache_write_1h));
    generated = b.weight * (part(token_class::output) + part(token_class::reasoning));
    reserve *= b.weight * b.class_weight(b.classes.contains(token_class::output) ? token_class::output
                                                                                 : token_class::reasoning);
  }
  if (!b.classes.counts_generated()) return {prompt, 0.0};
  switch (b.charging) {
  case charging_rule::actual: return {prompt + generated, 0.0};
  case charging_rule::reserve_then_refund:
    return {prompt + reserve, -std::max(0.0, reserve - generated)};
  case charging_rule::reserve: return {prompt + reserve, 0.0};
  case charging_rule::on_completion: return {prompt, generated};
  }
  return {prompt, 0.0};
}

} // namespace loopcast
