// loopcast — how close replays come to what was recorded, measured out of sample.
//
// validate_speed replays held-out recorded sessions on a target (or per-model targets fitted on
// other logs) with no limits, and compares each timed request's simulated duration (send to
// end) with the recorded one. With a target whose speed has noise, it replays several seeds:
// the prediction is the per-request median, and the P10–P90 prediction interval of the seeds
// (quantiles at positions p·(n+1), which hold a new draw 80% of the time for any number of
// seeds) is the interval whose coverage of the recorded durations is reported.
#pragma once

#include "loopcast/replay.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loopcast {

struct trace_validation {
  std::string file;
  std::size_t requests = 0;           ///< timed requests compared
  double ape_p50 = unknown_time;      ///< |simulated − recorded| / recorded, median over requests
  double ape_p90 = unknown_time;
  double bias_p50 = unknown_time;     ///< (simulated − recorded) / recorded, median (signed)
  double total_error = unknown_time;  ///< Σ simulated / Σ recorded − 1 (API time of the trace)
  double ks = unknown_time;           ///< Kolmogorov–Smirnov distance of the two duration samples
  double coverage = unknown_time;     ///< share of recorded durations inside the simulated P10–P90 (noise only)
  double cache_share_diff = unknown_time;  ///< simulated − recorded cache-read share of prompt tokens
  double total_recorded_s = unknown_time;  ///< the recorded API time of the compared requests
  double total_p10_s = unknown_time;       ///< the seeds' P10–P90 of the simulated API time (noise only)
  double total_p90_s = unknown_time;
};

/// One model's requests over every held-out log.
struct model_validation {
  std::string model;
  std::size_t requests = 0;
  double ape_p50 = unknown_time;   ///< median over the requests of |simulated − recorded| / recorded
  double coverage = unknown_time;  ///< share of recorded durations inside the simulated P10–P90 (noise only)
};

struct validation_summary {
  std::size_t traces = 0, requests = 0;
  double ape_p50_median = unknown_time;      ///< median over traces of the per-trace median APE
  double ape_p50_p90 = unknown_time;         ///< P90 over traces of the per-trace median APE
  double bias_median = unknown_time;
  double total_error_abs_median = unknown_time;  ///< median over traces of |total_error|
  double total_error_abs_max = unknown_time;
  double ks_median = unknown_time;
  double coverage = unknown_time;            ///< over all requests
  double total_coverage = unknown_time;      ///< share of logs whose recorded API time is inside the seeds' P10–P90
  double cache_share_diff_median = unknown_time;
  std::size_t ttft_requests = 0;             ///< requests that record a first-token time …
  double ttft_ape_median = unknown_time;     ///< … and the median |error| of the simulated one (median over seeds)
};

struct validation_result {
  std::vector<trace_validation> traces;
  std::vector<model_validation> models;      ///< by model name
  validation_summary summary;
  std::vector<std::string> notes;            ///< which speeds were used, for which models
  std::int32_t seeds = 1;
};

struct validation_options {
  std::uint64_t seed = 1;
  std::int32_t seeds = 20;                   ///< replays per trace when the speed has noise
};

/// P10, P50, P90 of a sample; NaN without samples.
struct spread {
  double p10 = unknown_time, p50 = unknown_time, p90 = unknown_time;
};

/// One quantity compared between real and synthetic sessions.
struct shape_measure {
  std::string name;          ///< "requests per session", "context growth per request", "prompt tokens per request", "cost per session"
  std::string unit;          ///< "requests", "tokens", "USD"
  double ks = unknown_time;  ///< Kolmogorov–Smirnov distance of the real and synthetic samples
  spread real, synthetic;
};

/// validate_workload's answer (`loopcast validate --workload`).
struct workload_validation {
  std::size_t real_sessions = 0, synthetic_sessions = 0;
  std::vector<shape_measure> measures;
  double cost_spread_ratio = unknown_time;  ///< synthetic (P90 − P10) / real (P90 − P10) of the cost per session
  std::vector<std::string> notes;
};

/// Compares a workload's synthetic sessions (seeds seed … seed + sessions − 1) with the held-out
/// logs' top-level sessions (workload_fit.hpp's session_shape): KS distances of session length,
/// context growth, prompt size and cost per session at `prices`, and the cost spreads.
workload_validation validate_workload(const std::vector<recorded_trace>& held_out, const workload& w,
                                      const price_sheet& prices, std::int32_t sessions = 1000, std::uint64_t seed = 1);

/// Replays each held-out trace on `on` (no limits are removed: give targets without buckets).
validation_result validate_replay(const std::vector<recorded_trace>& held_out, const model_map& on,
                                  const validation_options& opt = {});

/// A target whose speed alone is validated: its limits removed, its window at least 10^7 tokens,
/// a client that never retries; without `noise`, a point estimate: its speed noise's spreads off
/// (its median factor kept).
model_map validation_target(target tgt, bool noise = true);

/// The speeds fitted on `fit_on`: one target per model with at least `min_requests` usable
/// requests (routed by exact model name), and a pooled one for every other model. Each has no
/// limits, a cache that holds everything (64-token blocks, no expiry) and a 10^7-token window.
model_map fitted_targets(const std::vector<recorded_trace>& fit_on, std::size_t min_requests = 30,
                             bool noise = true, std::vector<std::string>* notes = nullptr);

} // namespace loopcast
