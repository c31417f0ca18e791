// loopcast — Monte Carlo over seeds: how a scenario's outcome is distributed, and how sure we are.
//
// Each seed draws new sessions (and new client jitter); each option runs them. Per option the
// runs give P10/P50/P90 of time to the first 429, stall share, cost per task, tasks per hour and
// wall clock, each with a distribution-free confidence interval (order statistics: the interval
// [x_(l), x_(u)] covers the true quantile with probability >= confidence, from the binomial
// distribution), the mean with a Student-t interval, and probabilities (a 429 within the horizon,
// a session dying) with Clopper–Pearson intervals. Boost.Math computes the distributions.
//
// Seeds are scenario.seed + 0, 1, 2, … With a target precision, seeds are added in doubling
// batches until the interval of the chosen metric's mean is narrower than precision × |mean| for
// every option, or max_seeds is reached (the result says which).
#pragma once

#include "loopcast/names.hpp"
#include "loopcast/scenario.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace loopcast {

/// An estimate and its confidence interval. NaN bounds: too few samples for this confidence.
struct estimate {
  double value = 0;
  double lo = 0;
  double hi = 0;
};
template <>
struct record_fields<estimate> {
  static constexpr std::tuple list{field{"value", &estimate::value, ""}, field{"lo", &estimate::lo, ""},
                                   field{"hi", &estimate::hi, ""}};
};

/// Distribution-free interval for the q-quantile of the sorted samples (value: numpy's linear
/// interpolation). Infinite samples are allowed (a censored time: "no 429 happened").
estimate quantile_interval(std::span<const double> sorted, double q, double confidence);
/// Sample mean with a Student-t interval (NaN bounds for fewer than 2 samples).
estimate mean_interval(std::span<const double> samples, double confidence);
/// Proportion k / n with a Clopper–Pearson (exact) interval.
estimate proportion_interval(std::int64_t k, std::int64_t n, double confidence);

struct metric_distribution {
  std::size_t count = 0;       ///< finite or censored samples used (NaN samples are left out)
  estimate p10, p50, p90;
  estimate mean;               ///< over the finite samples only
};
template <>
struct record_fields<metric_distribution> {
  static constexpr std::tuple list{
      field{"count", &metric_distribution::count, ""}, field{"p10", &metric_distribution::p10, ""},
      field{"p50", &metric_distribution::p50, ""}, field{"p90", &metric_distribution::p90, ""},
      field{"mean", &metric_distribution::mean, ""}};
};

/// Sorts a copy and summarises it; NaN samples are dropped.
metric_distribution describe_samples(std::vector<double> samples, double confidence);

enum class mc_metric : std::uint8_t { usd_per_task, stall_share, tasks_per_hour, wall_s };
template <>
struct enum_names<mc_metric> {
  static constexpr std::array table{enum_entry{mc_metric::usd_per_task, "usd_per_task"},
                                    enum_entry{mc_metric::stall_share, "stall_share"},
                                    enum_entry{mc_metric::tasks_per_hour, "tasks_per_hour"},
                                    enum_entry{mc_metric::wall_s, "wall_s"}};
};

struct montecarlo_options {
  std::int32_t seeds = 100;          ///< runs when precision == 0
  double precision = 0;              ///< target relative half-width of the metric's mean (0: off)
  mc_metric metric = mc_metric::usd_per_task;
  std::int32_t max_seeds = 10000;    ///< with a precision: stop here even if not reached
  double confidence = 0.95;
  double horizon_s = 3600;           ///< "a 429 within the horizon"
  unsigned threads = 1;              ///< 0: one per hardware thread
};

struct option_distribution {
  std::string label;
  std::int32_t runs = 0;
  std::int32_t runs_cut_off = 0;   ///< runs stopped by the scenario's attempt budget (their sessions cut off)
  /// Runs that met a wall within the horizon / runs: a 429, or a request no bucket can ever admit
  /// (request_too_large; a provider answers it with a 429 too).
  estimate p_429_within;
  estimate p_refused_within;       ///< runs with such a request refused within the horizon / runs
  estimate p_session_dies;         ///< sessions that did not complete / sessions, over all runs
  /// Hours of operation with at least one 429 (or refused request) / hours of operation, over all
  /// runs (run_summary::hours_with_429): P(at least one 429 in an hour), in steady state for a
  /// team's working hours (arrivals). Its interval treats the hours as independent.
  estimate p_429_per_hour;
  double stall_hours_per_hour = 0; ///< hours lost to waiting per hour of operation, over all runs (NaN: none)
  metric_distribution first_429_s; ///< the first wall (429 or refused request); runs without one count as +infinity
  metric_distribution stall_share;
  metric_distribution usd_per_task;  ///< runs where no task completed are left out
  metric_distribution tasks_per_hour;
  metric_distribution wall_s;
  double relative_half_width = 0;  ///< of the chosen metric's mean (NaN when its mean is 0 or unknown)
};
template <>
struct record_fields<option_distribution> {
  static constexpr std::tuple list{
      field{"label", &option_distribution::label, ""},
      field{"runs", &option_distribution::runs, ""},
      field{"runs_cut_off", &option_distribution::runs_cut_off, ""},
      field{"p_429_within_horizon", &option_distribution::p_429_within, ""},
      field{"p_refused_within_horizon", &option_distribution::p_refused_within, ""},
      field{"p_session_dies", &option_distribution::p_session_dies, ""},
      field{"p_429_per_hour", &option_distribution::p_429_per_hour, ""},
      field{"stall_hours_per_hour", &option_distribution::stall_hours_per_hour, ""},
      field{"first_429_s", &option_distribution::first_429_s, "s"},
      field{"stall_share", &option_distribution::stall_share, ""},
      field{"usd_per_task", &option_distribution::usd_per_task, "USD"},
      field{"tasks_per_hour", &option_distribution::tasks_per_hour, "1/h"},
      field{"wall_s", &option_distribution::wall_s, "s"},
      field{"relative_half_width", &option_distribution::relative_half_width, ""}};
};

/// The distribution of one of the metrics a precision target can follow.
const metric_distribution& distribution_of(const option_distribution& d, mc_metric m) noexcept;

struct montecarlo_result {
  std::vector<run_summary> rows;   ///< seed-major, as run_seeds
  std::vector<option_distribution> options;
  montecarlo_options settings;
  std::int32_t seeds = 0;
  bool precision_reached = true;   ///< false when max_seeds stopped a precision target
};

/// Summarises rows of run_seeds (seeds × options).
std::vector<option_distribution> summarize_runs(const scenario& s, std::span<const run_summary> rows,
                                                const montecarlo_options& opt);

/// Throws simulation_error for invalid settings (no seeds, confidence outside (0, 1), …).
montecarlo_result run_montecarlo(const scenario& s, const montecarlo_options& opt);

} // namespace loopcast
