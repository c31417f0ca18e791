// loopcast — what a simulation records.
//
// Times are simulated seconds since the simulation's start. The per-attempt timeline and the
// per-bucket charge log are optional (Monte Carlo runs skip them); the per-request samples, the
// session summaries and the first 429 are always recorded.
#pragma once

#include "loopcast/names.hpp"
#include "loopcast/engine.hpp"
#include "loopcast/power.hpp"
#include "loopcast/route.hpp"
#include "loopcast/tokens.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopcast {

enum class attempt_status : std::uint8_t {
  ok,                ///< admitted and served
  rate_limited,      ///< HTTP 429: not admitted, nothing consumed
  too_large,         ///< larger than a bucket's whole capacity: can never be admitted
  context_overflow   ///< prompt + generated exceed the target's context window
};
template <>
struct enum_names<attempt_status> {
  static constexpr std::array table{enum_entry{attempt_status::ok, "ok"},
                                    enum_entry{attempt_status::rate_limited, "rate_limited"},
                                    enum_entry{attempt_status::too_large, "too_large"},
                                    enum_entry{attempt_status::context_overflow, "context_overflow"}};
};

enum class session_outcome : std::uint8_t {
  completed,           ///< every request was served
  died_after_retries,  ///< the client gave up on a 429 (or, never giving up, was refused 10^6 times in a row)
  request_too_large,   ///< a request can never be admitted
  context_overflow,    ///< a request does not fit the target's window
  cut_off              ///< still running when the run's attempt budget ran out (sim_options::max_attempts)
};
template <>
struct enum_names<session_outcome> {
  static constexpr std::array table{enum_entry{session_outcome::completed, "completed"},
                                    enum_entry{session_outcome::died_after_retries, "died_after_retries"},
                                    enum_entry{session_outcome::request_too_large, "request_too_large"},
                                    enum_entry{session_outcome::context_overflow, "context_overflow"},
                                    enum_entry{session_outcome::cut_off, "cut_off"}};
};

/// One attempt to send one request (a retry is another attempt of the same request).
struct attempt_record {
  std::uint32_t session = 0;
  std::int32_t request = 0;     ///< 1-based index of the request within its session
  std::int32_t turn = 0;        ///< agent turn (see request_spec::turn)
  std::int32_t attempt = 0;     ///< 0 for the first try, n for the n-th retry
  attempt_status status = attempt_status::ok;
  bool compaction = false;
  std::int16_t refused_by = -1; ///< index of the bucket with the longest wait, -1 if none
  std::uint8_t target = 0;      ///< a route's target that took it (0 on one target)
  double t_send = 0;            ///< when it was sent, s
  double t_first_token = 0;     ///< first token (ok only), s
  double t_end = 0;             ///< generation ended (ok) or the refusal (otherwise), s
  double retry_after_s = -1;    ///< provider's retry_after on a 429, s; -1 if none
  double wait_s = 0;            ///< what the client waited before its next attempt, s
  token_counts tokens;          ///< as served (ok) or as it would have been (refused)
  double cost_usd = 0;          ///< billed cost of this attempt (0 unless ok)
};
/// The columns of an attempt (numpy; a token_counts member is its six classes).
template <>
struct record_fields<attempt_record> {
  static constexpr std::tuple list{
      field{"session", &attempt_record::session, ""},
      field{"request", &attempt_record::request, ""},
      field{"turn", &attempt_record::turn, ""},
      field{"attempt", &attempt_record::attempt, ""},
      field{"status", &attempt_record::status, ""},
      field{"compaction", &attempt_record::compaction, ""},
      field{"refused_by", &attempt_record::refused_by, ""},
      field{"target", &attempt_record::target, ""},
      field{"t_send", &attempt_record::t_send, "s"},
      field{"t_first_token", &attempt_record::t_first_token, "s"},
      field{"t_end", &attempt_record::t_end, "s"},
      field{"retry_after_s", &attempt_record::retry_after_s, "s"},
      field{"wait_s", &attempt_record::wait_s, "s"},
      field{"tokens", &attempt_record::tokens, "tokens"},
      field{"cost_usd", &attempt_record::cost_usd, "USD"}};
};

/// One served request, for the metrics of docs/model.md §8.
struct request_sample {
  std::uint32_t session = 0;
  double t_send = 0, t_first_token = 0, t_end = 0;  ///< s
  std::int64_t prompt = 0, cache_read = 0, generated = 0;  ///< tokens
};
/// The columns of a served request (numpy).
template <>
struct record_fields<request_sample> {
  static constexpr std::tuple list{
      field{"session", &request_sample::session, ""},
      field{"t_send", &request_sample::t_send, "s"},
      field{"t_first_token", &request_sample::t_first_token, "s"},
      field{"t_end", &request_sample::t_end, "s"},
      field{"prompt", &request_sample::prompt, "tokens"},
      field{"cache_read", &request_sample::cache_read, "tokens"},
      field{"generated", &request_sample::generated, "tokens"}};
};

struct session_result {
  session_outcome outcome = session_outcome::completed;
  std::int32_t requests_total = 0;      ///< requests in the script
  std::int32_t requests_served = 0;
  std::int32_t attempts = 0;
  std::int32_t rate_limited = 0;        ///< 429s received
  double start_s = 0, end_s = 0;        ///< first send, end of the last served request (or death), s
  double stall_s = 0;                   ///< time spent waiting after 429s, s
  token_counts tokens;                  ///< served tokens
  double cost_usd = 0;
  // Where a session that did not complete stopped (outcome != completed).
  std::int32_t stop_request = 0;        ///< 1-based request that stopped it (0: completed)
  std::int16_t stop_bucket = -1;        ///< the refusing bucket (request_too_large, died_after_retries)
  double stop_need = 0;                 ///< what the request needed: the bucket's charge, or its tokens (context_overflow)
  double stop_capacity = 0;             ///< the bucket's limit, or the target's context window
  bool stop_never_admitted = false;     ///< the request could never have been admitted (above a capacity)
};
/// The columns of a session (numpy): where a stopped session stopped is not among them.
template <>
struct record_fields<session_result> {
  static constexpr std::tuple list{
      field{"outcome", &session_result::outcome, ""},
      field{"requests_total", &session_result::requests_total, ""},
      field{"requests_served", &session_result::requests_served, ""},
      field{"attempts", &session_result::attempts, ""},
      field{"rate_limited", &session_result::rate_limited, ""},
      field{"start_s", &session_result::start_s, "s"},
      field{"end_s", &session_result::end_s, "s"},
      field{"stall_s", &session_result::stall_s, "s"},
      field{"tokens", &session_result::tokens, "tokens"},
      field{"cost_usd", &session_result::cost_usd, "USD"}};
};

/// A bucket's state when the first 429 happened.
struct bucket_snapshot {
  double used = 0;           ///< units in use (see bucket::used)
  double window_demand = 0;  ///< sum of charges in the period before the 429, units
};

struct first_429_info {
  std::uint32_t session = 0;
  std::int32_t request = 0;  ///< 1-based index of the refused request in its session
  double time_s = 0;
  std::int16_t bucket = -1;  ///< the bucket that refused (longest wait), an index into the target's limits
  std::string bucket_name;   ///< its name
  double retry_after_s = -1;
  token_counts sent_before;  ///< tokens served (all sessions) before the 429
  std::vector<bucket_snapshot> buckets;
};

/// One net charge to a bucket (admission charge plus refund or late charge), in units.
struct charge_event {
  double t;
  double amount;
};

/// One operation on a bucket, recorded with the timeline so that the bucket's level can be
/// replayed at any time (limits/level_curve.hpp): a charge (at admission, or of a refused attempt a bucket
/// counts), or the refund or late charge at a request's end of the charge at index `ref`.
struct bucket_op {
  double t;
  double q;                ///< units; a refund is negative
  double t_release;        ///< a charge: when its request ends (concurrency buckets)
  std::size_t ref;         ///< an adjustment: the index in bucket_ops of the charge it adjusts
  std::uint16_t bucket;    ///< index in buckets
  bool adjust;             ///< false: a charge
};

struct bucket_summary {
  std::string name;
  double limit = 0;
  double period_s = 0;
  double peak_demand = 0;        ///< largest sum of charges in any window of length period_s, units
  double peak_window_start_s = 0;
  double refusals = 0;           ///< 429s where this bucket had the longest wait
  double charged = 0;            ///< units the served requests were charged in all, net of refunds
};

/// What a Monte Carlo row's medians are selected from (sim_options::request_rows false), in the
/// order the requests were served: each served request's time to first token when it has one, and
/// its effective speed when it passes the throughput filters (metrics.hpp, add_median_samples).
struct median_samples {
  std::vector<double> effective_tps;
  std::vector<double> ttft_s;
};

struct simulation_result {
  std::vector<attempt_record> attempts;        ///< when recorded
  std::vector<double> bucket_levels;           ///< attempts.size() × buckets.size(): used units at each attempt
  std::vector<std::vector<charge_event>> charges;  ///< per bucket, when recorded
  std::vector<bucket_op> bucket_ops;           ///< with the timeline: every bucket operation, in time order
  double start_unix_s = 0;                     ///< Unix time of t = 0 (windows anchored at the epoch)
  std::vector<request_sample> requests;        ///< every served request (sim_options::request_rows)
  median_samples medians_from;                 ///< without request rows: what their medians need
  std::vector<session_result> sessions;
  std::vector<bucket_summary> buckets;
  std::optional<first_429_info> first_429;
  token_counts tokens;                         ///< served, all sessions
  double cost_by_class_usd[token_class_count] = {};
  double token_cost_usd = 0;                   ///< priced tokens, request fees and cache storage
  double cache_storage_usd = 0;                ///< explicit cache storage (part of token_cost_usd)
  double wall_s = 0;                           ///< first send to last end
  double busy_s = 0;                           ///< time with at least one request in flight
  std::optional<energy_cost> energy;           ///< local targets
  std::optional<engine_stats> engine;          ///< targets with an engine
  double cost_usd = 0;                         ///< token cost + energy cost, or a plan's fee share
  std::vector<route_share> route;              ///< a route's targets in order (empty on one target)
  /// The run stopped at its attempt budget (sim_options::max_attempts), at time cut_off_s: the
  /// sessions still running ended cut_off, and what they had not been served is not in the totals.
  bool cut_off = false;
  double cut_off_s = 0;
  /// 429s (and requests refused outright) in each hour from t = 0: hour h is [3600 h, 3600 (h + 1)).
  std::vector<std::uint32_t> hourly_429;
  /// Hours of operation: the hours whose middle lies in one of sim_options::operation_windows_s, or
  /// without windows every hour from t = 0 to the last end; and how many of them had a 429.
  std::int32_t operation_hours = 0;
  std::int32_t hours_with_429 = 0;
};

} // namespace loopcast
