// loopcast — what the recorded sessions say, and what they would have done elsewhere.
//
//   stats   the reference article's measurement on real logs: throughput percentiles with the
//           definitions and filters of DESIGN.md §8, per model, overall and per context bin
//   replay  keep the recorded token sequence, prefix structure and agent (tool/think) times;
//           re-time every request with a target's speed, limits, retry policy and prices
//   fit     least-squares speed model (overhead, prefill, cached tokens, decode) from the logs
#pragma once

#include "loopcast/metrics.hpp"
#include "loopcast/prices.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/trace.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loopcast {

// ---- stats ---------------------------------------------------------------------------------

/// Requests whose prompt lies in [lo_tokens, hi_tokens).
struct context_bin {
  std::string label;  ///< "<20K", "20-50K", "50-100K", ">100K"
  std::int64_t lo_tokens = 0, hi_tokens = 0;
  std::size_t requests = 0;
  request_metrics metrics;
};

struct stats_group {
  std::string model;              ///< a model name, or "all"
  std::size_t requests = 0;
  token_counts tokens;
  request_metrics metrics;
  double recorded_cost_usd = unknown_time;  ///< sum of recorded costs; NaN unless every request has one
  double priced_cost_usd = unknown_time;    ///< priced with the given price sheet; NaN without one
  std::vector<context_bin> bins;
};

struct trace_stats {
  std::vector<stats_group> groups;   ///< one per model (sorted by name), then "all"
  bool has_ttft = false;             ///< decode throughput and prefill share are measured
  std::vector<const recorded_trace*> totals_only;  ///< logs with per-task totals only
};

/// The bins used by stats: <20K, 20–50K, 50–100K, >100K prompt tokens.
std::vector<context_bin> default_context_bins();
/// Requests as metric samples (t_first_token NaN where the log has none).
std::vector<request_sample> samples_of(const recorded_trace& t);
trace_stats compute_trace_stats(const std::vector<recorded_trace>& traces, const price_sheet* prices = nullptr);

// ---- replay --------------------------------------------------------------------------------

/// Recorded sessions as simulator input. session_plan pointers refer into `scripts`: keep the
/// object where it is (it is neither copyable nor movable once plans() has been taken).
struct replay_sessions {
  std::vector<session_script> scripts;
  std::vector<double> start_s;        ///< each session's first send, s after the earliest
  std::vector<std::uint32_t> family;  ///< sessions of one trace share its prefix lineages
  std::vector<session_plan> plans(std::uint64_t seed) const;
};

/// Builds the scripts: prompts, outputs and reasoning as recorded; each request sent after the
/// agent time the log records before it (else recorded send − previous recorded end); max_tokens =
/// max(default_max_tokens, generated). Throws trace_error for a totals-only log.
replay_sessions make_replay_sessions(const std::vector<recorded_trace>& traces, std::int64_t default_max_tokens);

/// The recorded run, measured like a simulated one.
struct recorded_run {
  double wall_s = 0;                       ///< first send to last end
  std::size_t requests = 0;
  token_counts tokens;
  double cost_usd = unknown_time;          ///< recorded, when every request has a cost
  request_metrics metrics;
};
recorded_run measure_recorded(const std::vector<recorded_trace>& traces);

struct replay_result {
  recorded_run recorded;
  std::vector<option_result> options;      ///< option_result::option points into the given options
};

struct replay_options {
  std::uint64_t seed = 1;
  std::int64_t default_max_tokens = 16384;
  double start_unix_s = 0;                 ///< for time-of-day prices; 0 = the log's own clock if absolute
  bool record_attempts = true;
};

replay_result run_replay(const std::vector<recorded_trace>& traces, const std::vector<scenario_option>& options,
                         const replay_options& opt = {});

// ---- fit -----------------------------------------------------------------------------------

struct speed_fit {
  speed_model model;
  std::size_t samples = 0;
  bool used_ttft = false;          ///< TTFT and decode fitted separately (the log has TTFT)
  double r_squared = 0;            ///< of request durations
  percentiles abs_rel_error;       ///< |predicted − recorded| / recorded request duration
  std::vector<std::string> notes;  ///< e.g. terms dropped because they came out negative
};

/// Least squares (Eigen) of each request's duration on
///   1, u, u·(k + u/2), k, m, m·(c + m/2)
/// (u uncached prompt tokens after k cached ones, m generated at context c): exactly the
/// speed_model with a linear prefill curve, a per-cached-token cost and a linear decode curve.
/// Negative coefficients are dropped and the rest refitted (the model stays physical). With TTFT
/// in the logs, TTFT is fitted on (1, u, u·(k+u/2), k) and decode time on (m, m·(c+m/2)).
/// Throws error with fewer than 5 usable requests.
speed_fit fit_speed_model(const std::vector<recorded_trace>& traces);

} // namespace loopcast
