// loopcast — a subscription plan's caps learnt robustly from real accounts, and a backtest of the
// walls they forecast (docs/plans.md, "Caps from real accounts"; docs/validation.md).
//
// Real logs are messy: several accounts in one tree, requests that never touched the plan (Google
// Vertex, a relay, another vendor's model), usage on other machines, streaming partial output
// counts. So a cap is not "the interval consistent with every observation" (plan_inference's
// bounds, which one stray window empties) but an estimate: each window that says how much the cap
// holds is one sample, and the cap is their robust centre.
//   - A Claude wall with a stated reset (walls.hpp): its 5-hour window opened at reset − 5 h, so the
//     account's plan usage logged from then to the wall is one sample of the cap (100 points).
//   - A window with measured percentages (Codex's used_percent, Claude Code's statusline): the
//     usage logged between its first and last snapshot, over the points it rose (at least 5),
//     times 100.
// Per counting rule (cache reads at 0, 0.02, 0.1 or 1; Opus at 1 or 0.75; Haiku at 1 or 0.2 of the
// others) the samples' logs give a median (the cap), a spread (1.4826 × the median absolute
// deviation: per-window noise, lognormal σ) and outliers: a wall with under 0.4 of the cap logged
// (usage elsewhere) or a sample more than 3 σ from the centre. The best rule is the one whose
// inliers spread least. Where the samples fall in two groups more than 1.65× apart, they are two
// plan levels, or, when one group came wholly before the other, a change point (a plan or rule
// change, dated).
#pragma once

#include "loopcast/limits_inference.hpp"
#include "loopcast/trace.hpp"

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace loopcast {

/// What a cap counts: input, cache writes, output and reasoning at 1, cache reads at `cache_read`,
/// and every token of an Opus or Haiku request scaled by `opus` or `haiku`.
struct cap_rule {
  double cache_read = 0, opus = 1, haiku = 1;
  /// "cache reads at 0", "cache reads at 0.1, Opus at 0.75, Haiku at 0.2".
  std::string name() const;
};

/// A request's output as a plan counts it: Claude Code often logs a streaming partial count (a few
/// tokens) instead of the final one. Where the logged count is under half of what the response's
/// characters predict (0.36 tokens per character for Opus, 0.47 for the others, measured where
/// logs hold both), the prediction; else the logged count.
double estimated_output_tokens(const recorded_request& q, const std::string& model);

/// One window's evidence about a cap.
struct cap_sample {
  std::string source;      ///< "file:line" of the wall, or the file whose snapshots measured the window
  double t0 = 0, t1 = 0;   ///< the span measured, Unix s: window start → wall, or first → last snapshot
  double resets_at = 0;    ///< when the window reopens, Unix s
  double points = 100;     ///< the percentage the span rose (100 for a wall)
  std::vector<double> usage;  ///< per rule of window_fit::rules: counted tokens logged in the span
  /// Under the best rule: the cap this sample says (100 × usage / points), and whether it was left out.
  double cap = std::numeric_limits<double>::quiet_NaN();
  bool outlier = false;
  std::string why;         ///< for an outlier: "0.31 of the cap logged: usage elsewhere?" or "4.2 σ above"
};

/// A counting rule's fit of one window's samples.
struct rule_fit {
  cap_rule rule;
  std::int32_t samples = 0, inliers = 0;
  double cap = std::numeric_limits<double>::quiet_NaN();  ///< the inliers' median, counted tokens
  /// About an 80% interval of the centre (the median's standard error, 1.2533 σ / √n, in logs).
  double cap_low = std::numeric_limits<double>::quiet_NaN(), cap_high = std::numeric_limits<double>::quiet_NaN();
  /// Where 80% of windows' caps fall (per-window noise): exp(median ± 1.2816 σ).
  double p10 = std::numeric_limits<double>::quiet_NaN(), p90 = std::numeric_limits<double>::quiet_NaN();
  double sigma = std::numeric_limits<double>::quiet_NaN();  ///< lognormal σ of the inliers (NaN: under 3)
  double explained = std::numeric_limits<double>::quiet_NaN();  ///< share of the samples that are inliers
};

/// Two groups of samples more than 1.65× apart.
struct plan_level {
  double cap = 0;          ///< the group's median, under the best rule
  std::int32_t samples = 0;
  double first_t = 0, last_t = 0;  ///< its samples' span, Unix s
};

/// One account's cap for one window.
struct window_fit {
  std::string account;
  std::string window;      ///< "5-hour", "weekly" or "N-minute"
  double period_s = 0;
  std::string evidence;    ///< "walls", "used_percent" (Codex) or "statusline"
  std::vector<rule_fit> rules;  ///< the rules tried, best first (smallest spread)
  std::string why_best;    ///< "its inliers spread least (σ 0.09; next: cache reads at 0.1, σ 0.31)"
  std::vector<cap_sample> samples;  ///< in time order, judged under the best rule
  std::vector<plan_level> levels;   ///< two when the samples split, else none
  /// When the levels are separated in time: the change (midway between them), Unix s; else NaN.
  double change_at = std::numeric_limits<double>::quiet_NaN();
  /// The best rule's cap counting the logged output counts (no estimate of partial ones).
  double cap_logged_output = std::numeric_limits<double>::quiet_NaN();
};

/// An account as the logs show it.
struct plan_account {
  std::string name;        ///< an email or login method (Claude /status), "codex: FOLDER" (the sessions folder), or "claude" when unnamed
  std::string plan;        ///< the login method when a log says it ("Claude Max account"), else ""
  std::int32_t logs = 0;
  std::int64_t requests = 0;   ///< plan requests (first party or not said)
  std::int64_t off_plan = 0;   ///< requests served elsewhere (Vertex, Bedrock, a relay, another vendor): not counted
  double off_plan_share = std::numeric_limits<double>::quiet_NaN();  ///< their share of the account's uncached input
  std::int32_t walls = 0, wall_copies = 0;  ///< distinct walls, and the lines that wrote them
  std::int64_t partial_outputs = 0;         ///< requests whose output count looked partial (estimated instead)
  double logged_output = 0, estimated_output = 0;  ///< those requests' output: as logged, and as estimated
  double first_t = 0, last_t = 0;
};

struct plan_fit {
  std::vector<plan_account> accounts;
  std::vector<window_fit> windows;  ///< per account, per window
  std::vector<plan_wall> walls;     ///< every distinct wall, of the accounts fitted
  std::vector<std::string> wall_accounts;  ///< the account of each wall
  std::vector<std::string> notes;
};

struct plan_fit_options {
  std::string account;  ///< only the accounts whose name contains this ("" every one)
};

/// Fits every account's caps (see the file's comment). Throws trace_error naming the first log when
/// no log is dated, and std::invalid_argument when `account` names none of the accounts found.
plan_fit fit_plan(std::span<const recorded_trace> traces, std::span<const statusline_snapshot> statusline = {},
                  const plan_fit_options& options = {});

/// How well forecasts made `lead` before the truth did, over the walls (or percentage windows)
/// of the logs. Statistics without samples are NaN.
struct backtest_scores {
  std::int32_t forecasts = 0;
  double median_abs_error_s = std::numeric_limits<double>::quiet_NaN();
  double within_15_min = std::numeric_limits<double>::quiet_NaN();
  double within_30_min = std::numeric_limits<double>::quiet_NaN();
  double coverage_p10_p90 = std::numeric_limits<double>::quiet_NaN();
  std::int32_t false_walls = 0;   ///< a wall forecast in a window that never had one
  std::int32_t missed_walls = 0;  ///< no wall forecast where one came
  std::int32_t quiet_windows = 0; ///< windows without a wall forecast at this lead
};
struct percent_scores {
  std::int32_t forecasts = 0;
  double median_abs_error_pp = std::numeric_limits<double>::quiet_NaN();
  double coverage_p10_p90 = std::numeric_limits<double>::quiet_NaN();
};
struct plan_backtest_lead {
  double lead_s = 0;
  backtest_scores walls, walls_baseline;        ///< Claude walls: the forecast, and burn rate at the fitted cap
  percent_scores percent, percent_baseline;     ///< measured percentages: tokens per point, and points per hour
};
struct plan_backtest {
  std::vector<plan_backtest_lead> leads;
  std::int32_t walls = 0, windows_with_percent = 0;  ///< the truths available
  std::vector<std::string> notes;                    ///< what could not be forecast, and why
};
struct plan_backtest_options {
  std::vector<double> leads_s{1800, 3600, 7200};
  std::int32_t draws = 400;
  std::uint64_t seed = 1;
  std::string account;
};
/// For each wall (and each window of measured percentages), using only the walls and windows that
/// came before it: the forecast from `lead` before the truth, and a baseline (docs/validation.md).
plan_backtest backtest_plan(std::span<const recorded_trace> traces, std::span<const statusline_snapshot> statusline = {},
                            const plan_backtest_options& options = {});

} // namespace loopcast
