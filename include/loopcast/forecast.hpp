// loopcast — the next wall of a running session: when its target's buckets (or a subscription
// plan's windows) will next refuse it (docs/watch.md), and how often such forecasts held the truth.
//
// The forecast is a replay. The log so far is replayed on the target as `loopcast replay --speed
// recorded` replays it: each request at its recorded times, its prompt split by the target's
// prefix cache, charged on the target's buckets as the target charges it (cache included), the
// context policy of the agent applied at the target's window. Each draw then continues the session
// that sent last with requests resampled from its own recent ones — each one's prompt growth,
// output, reasoning, agent time and duration, together — and replays the whole until a bucket
// refuses a request (the client gives up at the first 429) or the horizon passes. The forecast is
// the P10 / P50 / P90 of the time from the last send to that refusal over the draws. With
// each_window, the draws go on past that wall (the client waits for the window to reset) and give
// each bucket's own first refusal too.
//
// Work is bounded: a forecast simulates at most `work_budget` requests over all its draws. A draw
// the budget stops before a wall or the horizon is censored (the wall is later than it got), never
// counted as "no wall": a quantile it can move is reported as a lower bound.
#pragma once

#include "loopcast/retry.hpp"
#include "loopcast/target.hpp"
#include "loopcast/trace.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace loopcast {

struct forecast_options {
  std::uint64_t seed = 1;
  std::int32_t draws = 200;             ///< continuations drawn, 1 to 100,000
  double horizon_s = 7 * 86400.0;       ///< how far ahead a draw looks for a refusal, up to 366 days
  /// The recent requests a continuation resamples from.
  std::int32_t recent_requests = 20;
  /// Consecutive recent requests a continuation takes at a time (a block bootstrap: bursts and
  /// pauses keep their order).
  std::int32_t block_requests = 1;
  /// The spread of each draw's pace: its agent times are multiplied by exp(σ·z), z standard normal
  /// drawn once per draw (the session may speed up or slow down as a whole). 20 requests and σ 2
  /// were chosen by cross-validation on the public traces (docs/watch.md, "Backtest").
  double pace_sigma = 2.0;
  /// Requests replayed over all draws, recorded and continued (each draw replays the log so far; a
  /// compaction the agent inserts counts with the request it precedes).
  std::int64_t work_budget = 20'000'000;
  /// The agent that wrote the log: its max_tokens and compaction point shape the replay (empty: a
  /// 32,000-token max_tokens and compaction at 83% of the window, Claude Code's).
  std::optional<retry_policy> agent;
  /// Each bucket's own wall too (bucket_now::wall): a draw goes on past its first wall — the
  /// session waits for the window that refused it to reset, as a user of a plan does, and
  /// continues at its pace — until every bucket has refused it once, the horizon passes or its
  /// share of the work budget is spent.
  bool each_window = true;
};

/// P10 / P50 / P90 of a time over the draws (infinite: beyond the horizon); a quantile that draws
/// the work budget stopped could move is a lower bound (its flag).
struct wall_quantiles {
  double p10_s = std::numeric_limits<double>::infinity();
  double p50_s = std::numeric_limits<double>::infinity();
  double p90_s = std::numeric_limits<double>::infinity();
  bool p10_at_least = false, p50_at_least = false, p90_at_least = false;
  double hit_share = 0;  ///< draws in which the wall came within the horizon
};

struct bucket_now {
  std::string name;
  double used = 0;       ///< units in use just after the last request's send, as the target counts them
  double limit = 0;
  double period_s = 0;
  /// From the last send until the bucket holds nothing again: for a plan's window, when it resets
  /// (the next window opens with the next use); for a token bucket, when it has drained. 0: it
  /// is empty (an expired window holds nothing of the sessions before it).
  double resets_in_s = 0;
  /// Seconds from the last send to this bucket's first refusal, over the draws, the session waiting
  /// out the other windows' walls (forecast_options::each_window; none when the forecast made no
  /// draws or was not asked for it).
  std::optional<wall_quantiles> wall;
};

struct wall_forecast {
  std::string log;
  std::int64_t requests = 0;          ///< requests replayed so far
  double last_send_s = 0;             ///< the last request's send, s on the log's clock
  bool absolute_clock = false;        ///< times are Unix seconds
  std::vector<bucket_now> buckets;
  /// The first recorded request the target would have refused: its send time and the bucket. The
  /// session is then at the wall: every quantile is 0.
  std::optional<double> refused_at_s;
  std::string refused_by;
  double gap_s = 0;                   ///< mean time between sends over the requests resampled
  double growth_per_request = 0;      ///< mean prompt growth per request over them, tokens
  std::int32_t steps = 0;             ///< the recent requests resampled (0: no pace to go on from)
  /// Seconds from the last send to the next refusal: P10, P50, P90 over the draws (infinite:
  /// beyond the horizon). A quantile that a censored draw could move is a lower bound (its flag).
  double p10_s = std::numeric_limits<double>::infinity();
  double p50_s = std::numeric_limits<double>::infinity();
  double p90_s = std::numeric_limits<double>::infinity();
  bool p10_at_least = false, p50_at_least = false, p90_at_least = false;
  double hit_share = 0;               ///< draws that met a refusal within the horizon
  /// The bucket of the draw whose wall is nearest the P50 (the headline's time and bucket come
  /// from the same draws); "" when none, or when the P50 is beyond the horizon.
  std::string bucket;
  /// Each bucket that refused first in some draw: the share of all draws it did so in, largest first.
  std::vector<std::pair<std::string, double>> first_by;
  double requests_p50 = 0;            ///< requests sent before the refusal, median over those draws
  std::int32_t draws = 0;
  std::int32_t draws_censored = 0;    ///< draws the work budget stopped before a wall or the horizon
  double censored_at_s = std::numeric_limits<double>::infinity();  ///< the earliest such stop, s after the last send
  std::int64_t requests_simulated = 0;
  /// Each draw's wall, s after the last send (infinite: none within the horizon; a censored draw at
  /// where it stopped), in draw order: what a score of the forecast reads.
  std::vector<double> draws_s;
};

/// Forecasts the next refusal of the trace's sessions on `tgt` (every bucket's limit must be set).
/// Throws trace_error when the trace holds no request, std::invalid_argument for options out of
/// range or a log too long for the work budget, simulation_error for a limit left unset.
wall_forecast forecast_next_wall(const recorded_trace& trace, const target& tgt, const forecast_options& opt = {});

/// The first `requests` requests of a trace by send time (every session cut at that instant): the
/// log as it stood then.
recorded_trace cut_trace(const recorded_trace& trace, std::size_t requests);

// ---- backtest ------------------------------------------------------------------------------

struct backtest_options {
  forecast_options forecast;
  std::vector<double> cuts = {0.25, 0.5, 0.75};  ///< where each log is cut: shares of its requests
  /// Buckets whose limit is set per log: `share` × the most the whole log's replay held in the
  /// bucket's first window (with share < 1 the log meets that wall).
  std::vector<std::pair<std::string, double>> caps;
  /// Each window's own wall scored too (forecast_options::each_window): its truth is the bucket's
  /// first refusal in a replay of the whole log whose client waits for each window to reset.
  bool each_window = false;
};
/// One bucket's own wall in one forecast, against the truth.
struct window_score {
  std::string bucket;
  double truth_s = 0;                 ///< from the last send before the cut to the bucket's first refusal
  double p10_s = 0, p50_s = 0, p90_s = 0;
  bool covered = false;
  double p50_error = 0;               ///< |P50 − truth| / truth (the horizon stands in for an infinite P50)
};
/// One bucket's own walls over the backtest.
struct window_summary {
  std::string bucket;
  std::int32_t forecasts = 0;
  double coverage = std::numeric_limits<double>::quiet_NaN();
  double median_p50_error = std::numeric_limits<double>::quiet_NaN();
};

/// One forecast against what the rest of the log did.
struct backtest_row {
  std::string log;
  double cut_share = 0;
  std::int64_t requests = 0;          ///< requests before the cut
  double truth_s = 0;                 ///< from the last send before the cut to the refusal in the whole log's replay
  std::string truth_bucket;
  double p10_s = 0, p50_s = 0, p90_s = 0;  ///< the forecast's (infinite: beyond the horizon)
  bool censored = false;              ///< a quantile is a lower bound (the work budget)
  bool covered = false;               ///< truth within [P10, P90]
  bool missed = false;                ///< the forecast saw no wall (P50 beyond the horizon) where the log met one
  double p50_error = 0;               ///< |P50 − truth| / truth (the horizon stands in for an infinite P50)
  double crps = 0;                    ///< CRPS of the draws' logarithms against the truth's (times in s)
  double baseline_s = 0;              ///< the straight-line burn rate's wall
  double baseline_error = 0;          ///< |baseline − truth| / truth
  double baseline_crps = 0;           ///< the baseline's (a point: |ln baseline − ln truth|)
  /// With backtest_options::each_window: the buckets whose wall the whole log met after the cut.
  std::vector<window_score> windows;
};

struct backtest_result {
  std::vector<backtest_row> rows;
  std::vector<std::string> notes;     ///< cuts left out and why (the wall before the cut, none in the log)
  std::int32_t forecasts = 0;
  double coverage = std::numeric_limits<double>::quiet_NaN();      ///< share of rows covered; NaN without rows
  std::int32_t missed = 0;
  double median_p50_error = std::numeric_limits<double>::quiet_NaN();
  double mean_crps = std::numeric_limits<double>::quiet_NaN();
  double median_baseline_error = std::numeric_limits<double>::quiet_NaN();
  double mean_baseline_crps = std::numeric_limits<double>::quiet_NaN();
  std::vector<window_summary> windows;  ///< with backtest_options::each_window, per bucket
};

/// Cuts each log at `cuts`, forecasts from what came before and compares with the replay of the
/// whole log on `tgt` (its wall, measured from the same last send), beside a straight-line burn-rate
/// baseline: each window bucket's use so far in its current window, extended at the rate it grew
/// there, to its limit (docs/watch.md, "Backtest").
backtest_result backtest_forecasts(const std::vector<recorded_trace>& traces, const target& tgt,
                                   const backtest_options& opt);

/// The continuous ranked probability score of an ensemble against the outcome y: mean |x − y| −
/// mean |x − x'| / 2 over its members (infinite members are taken at `cap`).
double ensemble_crps(std::vector<double> members, double y, double cap = std::numeric_limits<double>::infinity());

} // namespace loopcast
