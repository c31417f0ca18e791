// loopcast — metrics with the exact definitions of docs/model.md §8.
//
//   effective throughput = (output + reasoning) / (t_end − t_send) of the attempt that succeeded;
//                          kept only if output + reasoning >= 50 and 0.2 s <= duration <= 3600 s
//   decode throughput    = (output + reasoning) / (t_end − t_first_token)
//   prefill share        = (t_first_token − t_send) / (t_end − t_send)
//   TTFT                 = t_first_token − t_send;  TPOT = (t_end − t_first_token) / (tokens − 1)
//   context/output ratio = prompt / (output + reasoning);  cache hit rate = cache_read / prompt
// Decode throughput, prefill share and TPOT use the same kept samples as effective throughput,
// among those that record their first token (t_first_token is NaN in logs without TTFT). A
// request without an end time (t_end NaN) counts only in the token ratios.
// Percentiles interpolate linearly between order statistics (numpy's default).
#pragma once

#include "loopcast/results.hpp"
#include "loopcast/target.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace loopcast {

struct percentiles {
  double p10 = 0, p25 = 0, p50 = 0, p75 = 0, p90 = 0;
  std::size_t count = 0;  ///< samples (0: every field is 0, and reports write null)
};
template <>
struct record_fields<percentiles> {
  static constexpr std::tuple list{field{"p10", &percentiles::p10, ""}, field{"p25", &percentiles::p25, ""},
                                   field{"p50", &percentiles::p50, ""}, field{"p75", &percentiles::p75, ""},
                                   field{"p90", &percentiles::p90, ""}, field{"count", &percentiles::count, ""}};
};

/// Quantile q in [0, 1] of sorted values (at least one), linear between the order statistics at
/// rank q·(n − 1) (numpy's "linear"); right also where some values are +infinity.
inline double sorted_quantile(std::span<const double> sorted, double q) noexcept;
/// Percentile q in [0, 1] of the values (sorted in place). 0 for no values.
inline double percentile(std::vector<double>& values, double q);
inline percentiles summarize(std::vector<double> values);

/// Throughput filters of docs/model.md §8.
inline constexpr std::int64_t min_generated_tokens = 50;
inline constexpr double min_duration_s = 0.2;
inline constexpr double max_duration_s = 3600.0;

/// Which served requests the throughput statistics kept, and why the others were dropped.
struct metric_samples {
  std::size_t kept = 0;
  std::size_t dropped_short_output = 0;  ///< output + reasoning < 50
  std::size_t dropped_duration = 0;      ///< outside [0.2 s, 3600 s]
  std::size_t dropped_no_timing = 0;     ///< the log has no end time for the request
};
template <>
struct record_fields<metric_samples> {
  static constexpr std::tuple list{field{"kept", &metric_samples::kept, ""},
                                   field{"dropped_short_output", &metric_samples::dropped_short_output, ""},
                                   field{"dropped_duration", &metric_samples::dropped_duration, ""},
                                   field{"dropped_no_timing", &metric_samples::dropped_no_timing, ""}};
};

struct request_metrics {
  percentiles effective_tps;     ///< tokens per second
  percentiles decode_tps;        ///< tokens per second
  percentiles prefill_share;     ///< fraction
  percentiles ttft_s;
  percentiles tpot_s;
  percentiles latency_s;         ///< end-to-end, every served request
  percentiles context_tokens;    ///< prompt per served request
  metric_samples samples;
  double context_output_ratio = 0;  ///< total prompt / total generated; NaN when nothing was generated
  double cache_hit_rate = 0;        ///< total cache_read / total prompt; NaN without prompt tokens
};
template <>
struct record_fields<request_metrics> {
  static constexpr std::tuple list{
      field{"effective_tps", &request_metrics::effective_tps, "tokens/s"},
      field{"decode_tps", &request_metrics::decode_tps, "tokens/s"},
      field{"prefill_share", &request_metrics::prefill_share, ""},
      field{"ttft_s", &request_metrics::ttft_s, "s"},
      field{"tpot_s", &request_metrics::tpot_s, "s"},
      field{"latency_s", &request_metrics::latency_s, "s"},
      field{"context_tokens", &request_metrics::context_tokens, "tokens"},
      field{"samples", &request_metrics::samples, ""},
      field{"context_output_ratio", &request_metrics::context_output_ratio, ""},
      field{"cache_hit_rate", &request_metrics::cache_hit_rate, ""}};
};

inline request_metrics compute_request_metrics(std::span<const request_sample> requests);

/// Only the medians a Monte Carlo row keeps (same filters, same values as compute_request_metrics),
/// by selection instead of sorting. A median without samples (no request kept by the throughput
/// filters; none served) is NaN, where compute_request_metrics gives a count of 0.
struct request_medians {
  double effective_tps_p50 = std::numeric_limits<double>::quiet_NaN();
  double ttft_p50_s = std::numeric_limits<double>::quiet_NaN();
};
inline request_medians compute_request_medians(std::span<const request_sample> requests);
/// What a served request adds to the values the medians are selected from: its time to first
/// token when it has one, and its effective speed when it passes the throughput filters.
inline void add_median_samples(const request_sample& r, std::vector<double>& eff, std::vector<double>& ttft) {
  const double duration = r.t_end - r.t_send;
  if (std::isnan(duration)) return;
  if (!std::isnan(r.t_first_token)) ttft.push_back(r.t_first_token - r.t_send);
  if (r.generated < min_generated_tokens || duration < min_duration_s || duration > max_duration_s) return;
  eff.push_back(static_cast<double>(r.generated) / duration);
}
/// The medians of a run's median_samples (their order changes).
inline request_medians compute_request_medians(median_samples& samples);

/// What the sessions asked of a rate bucket against what it can give: the units the served
/// requests were charged, spread over the time the sessions would have taken without waiting
/// after 429s (from the first start to the latest end less that session's waits).
struct bucket_load {
  double span_s = 0;              ///< the work's time without the waits
  double offered_per_period = 0;  ///< units per period_s over span_s
  double ratio = 0;               ///< offered / limit; above 1 the bucket cannot keep up
  /// The least time in which the bucket admits all the charges: a full bucket (or window) of
  /// `limit` at once, then `limit` per period, (charged / limit − 1) × period; at least span_s.
  double min_span_s = 0;
};
/// One per bucket of `limits` (the run's buckets, as scenario_option::buckets() gives them); none
/// for a concurrency bucket (not a rate) or a run without time.
inline std::vector<std::optional<bucket_load>> bucket_loads(const simulation_result& r, std::span<const bucket_config> limits);

/// What a subscription plan costs at a run's pace and usage (plan.hpp, docs/plans.md). Repeating
/// the run all month, the plan admits at most
///   wall clock:  tasks × month / wall
///   bucket b:    tasks × (limit_b / charged_b) × (month / period_b)   (charged_b: what the run's
///                served requests used of b; each period's window filled once)
/// tasks a month; the least of these is `tasks_per_month` and the term that gives it `limited_by`.
struct plan_cost {
  double fee_share_usd = 0;     ///< the run's share of the fee (its cost_usd): fee × wall / month
  double tasks_per_month = 0;   ///< most tasks a month at this pace and usage
  double usd_per_task = 0;      ///< fee / tasks_per_month: the least a task costs on the plan
  double usd_per_hour = 0;      ///< fee / the hours of this work a month admits
  std::string limited_by;       ///< "wall clock" or the name of the bucket that caps the month
  double limited_share = 0;     ///< tasks_per_month / (tasks × month / wall): 1 when only time limits
};
/// None for a target without a plan or a run that completed no task.
inline std::optional<plan_cost> plan_cost_of(const simulation_result& r, const target& tgt);

/// A fleet's outcome (docs/model.md §8, for many sessions on one organisation's limits). A task is a
/// session; it is completed when every request of it was served.
///   429 rate      = 429s / attempts
///   stall share   = time waiting after 429s / the sessions' summed durations (first send to end)
///   P(dies)       = sessions not completed / sessions
///   tasks per hour = completed sessions / wall clock hours;  $ per task = cost / completed tasks
struct fleet_metrics {
  std::int32_t sessions = 0;
  std::int32_t completed = 0;
  std::int32_t died = 0;              ///< gave up after 429s, too large, or context overflow
  double p_session_dies = 0;
  std::int64_t attempts = 0;
  std::int64_t rate_limited = 0;      ///< 429s
  double rate_429 = 0;
  double stall_s = 0;                 ///< summed over sessions
  double stall_share = 0;
  double wall_s = 0;
  double tasks_per_hour = 0;          ///< 0 when the wall clock is 0
  double requests_per_s = 0;          ///< served requests per second of wall clock
  double output_tps = 0;              ///< generated tokens per second of wall clock
  double cost_usd = 0;
  double usd_per_hour = 0;            ///< 0 when the wall clock is 0
  double usd_per_task = 0;            ///< NaN when no task completed
};
template <>
struct record_fields<fleet_metrics> {
  static constexpr std::tuple list{
      field{"sessions", &fleet_metrics::sessions, ""},
      field{"completed", &fleet_metrics::completed, ""},
      field{"died", &fleet_metrics::died, ""},
      field{"p_session_dies", &fleet_metrics::p_session_dies, ""},
      field{"attempts", &fleet_metrics::attempts, ""},
      field{"rate_limited", &fleet_metrics::rate_limited, ""},
      field{"rate_429", &fleet_metrics::rate_429, ""},
      field{"stall_s", &fleet_metrics::stall_s, "s"},
      field{"stall_share", &fleet_metrics::stall_share, ""},
      field{"wall_s", &fleet_metrics::wall_s, "s"},
      field{"tasks_per_hour", &fleet_metrics::tasks_per_hour, "1/h"},
      field{"requests_per_s", &fleet_metrics::requests_per_s, "1/s"},
      field{"output_tps", &fleet_metrics::output_tps, "tokens/s"},
      field{"cost_usd", &fleet_metrics::cost_usd, "USD"},
      field{"usd_per_hour", &fleet_metrics::usd_per_hour, "USD/h"},
      field{"usd_per_task", &fleet_metrics::usd_per_task, "USD"}};
};

inline fleet_metrics compute_fleet_metrics(const simulation_result& r);

/// A session's 429 rate (429s / attempts) and stall share (stall / duration); 0 when undefined.
inline double session_rate_429(const session_result& s) noexcept;
inline double session_stall_share(const session_result& s) noexcept;

} // namespace loopcast

#include "loopcast/detail/metrics_impl.hpp"
