// loopcast — "which plan should I be on?": the recorded sessions replayed, with their recorded
// agent time and durations, on each subscription plan and on the pay-as-you-go API; per option
// what a month costs and how long a week is spent waiting for a plan's reset (docs/plans.md,
// "Which plan").
#pragma once

#include "loopcast/presets.hpp"
#include "loopcast/retry.hpp"
#include "loopcast/target.hpp"
#include "loopcast/trace.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loopcast {

/// Where a candidate's caps come from.
enum class plan_caps_source : std::uint8_t {
  assumed,  ///< no published figure: an assumption (replayed at low, middle and high caps)
  given,    ///< set by the user (--limit): replayed as given
  none      ///< the option has no cap to assume (the API: its tiers' published limits)
};

/// One option to replay the sessions on: a model map (the first pattern a request's model matches
/// takes it; a plan's one pattern "*" puts every model in its shared buckets).
struct plan_candidate {
  std::string label;                          ///< "Claude Max 5x"
  std::vector<std::pair<std::string, target>> targets;  ///< (model pattern, target), in order
  plan_caps_source caps = plan_caps_source::none;
  std::string caps_note;                      ///< what the caps are and why
};

/// The options for Claude Code logs: Claude Pro, Max 5x and Max 20x with assumed caps (their
/// published ratio 1 : 5 : 20 to a base of 1,000,000 counted tokens per 5 hours and 10,000,000 a
/// week for Max 5x, docs/plans.md), and the API pay-as-you-go (tier 4) with a target per family.
/// Throws config_error when a preset does not load.
std::vector<plan_candidate> claude_plan_candidates(const preset_library& lib);

struct plan_choice_options {
  retry_policy client;                ///< the agent (claude-code: waits out a plan's reset)
  double max_blocked_hours_week = 2;  ///< the verdict's limit on waiting for resets
  double cap_low = 0.5, cap_high = 2;  ///< assumed caps are replayed at these multiples too
  std::uint64_t seed = 1;
};

/// A wait for a plan's reset: from the refusal to the admission after it, any session.
struct reset_wait {
  double start_unix_s = 0;
  double hours = 0;
  std::string bucket;  ///< the window that refused ("five_hour", "weekly")
};

struct plan_choice_row {
  std::string label;
  std::string targets;               ///< the presets replayed, "PATTERN=TARGET, …" or one name
  bool plan = false;                 ///< a subscription (fee) rather than a metered API
  double fee_usd_month = 0;          ///< a plan's fee
  double metered_usd_month = 0;      ///< the API's tokens priced, scaled to a month
  double usd_month = 0;              ///< fee + metered
  double blocked_hours_week = 0;     ///< waiting for resets a week of the replayed span (middle caps)
  double blocked_low = 0, blocked_high = 0;  ///< the least and most of the middle, half and twice the caps (assumed)
  std::int32_t walls = 0;            ///< waits (merged across sessions)
  std::vector<reset_wait> first_walls;  ///< the first few, in time order
  std::int32_t sessions_cut = 0;     ///< sessions that did not finish
  std::int32_t sessions = 0;
  plan_caps_source caps = plan_caps_source::none;
  std::string caps_note;
  bool within_limit = false;         ///< blocked_hours_week ≤ the options' limit
};

struct plan_choice {
  double span_days = 0;      ///< the recorded sessions' first send to last end (at least a day)
  std::int64_t requests = 0;
  std::vector<plan_choice_row> rows;  ///< cheapest first among those within the limit, then the rest by blocked hours
  std::string verdict;       ///< one sentence
  std::vector<std::string> notes;
};

/// Replays `traces` on every candidate (replay speed `recorded`: only the limits and the prices
/// change anything) and ranks them. Throws trace_error for logs without dated requests.
plan_choice choose_plan(const std::vector<recorded_trace>& traces, const std::vector<plan_candidate>& candidates,
                        const plan_choice_options& o = {});

} // namespace loopcast
