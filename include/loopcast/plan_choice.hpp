// loopcast — "which plan should I be on?": the recorded sessions replayed, with their recorded
// agent time and durations, on each subscription plan of their agent and on the pay-as-you-go API;
// per option what a month costs, how long a week is spent waiting for a plan's reset, and how late
// the work would finish (docs/plans.md, "Which plan").
#pragma once

#include "loopcast/plan_fit.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/retry.hpp"
#include "loopcast/target.hpp"
#include "loopcast/trace.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace loopcast {

/// Where a candidate's caps come from (the weakest of its buckets': assumed before fitted before given).
enum class plan_caps_source : std::uint8_t {
  assumed,  ///< no published figure and nothing in the logs: an assumption (replayed at ½ and 2× too)
  fitted,   ///< from the user's own walls or measured percentages (fit_plan), scaled by the plans' stated ratio
  given,    ///< set by the user (--limit): replayed as given
  none      ///< the option has no cap to assume (the API: its tiers' published limits)
};

/// One option to replay the sessions on: a model map (the first pattern a request's model matches
/// takes it; a plan's one pattern "*" puts every model in its shared buckets).
struct plan_candidate {
  std::string label;                          ///< "Claude Max (5x)"
  std::vector<std::pair<std::string, target>> targets;  ///< (model pattern, target), in order
  /// The same at the low and the high end of the caps' uncertainty (empty: no interval to run).
  std::vector<std::pair<std::string, target>> low, high;
  /// At a wall: empty, the person waits for the reset; else the refused request goes at once to
  /// these (a plan's extra usage, billed at API list prices) and the plan is tried again after it.
  std::vector<target> spill;
  std::string spills_from;  ///< with a spill: the label of the plan alone (a row identical to it is left out)
  /// The work runs on another vendor's model (Cerebras Code: zai-glm-4.7): the same tokens, not the
  /// same answers; the verdict then also names the best option on the logs' own models.
  std::string other_model;
  plan_caps_source caps = plan_caps_source::none;
  std::string caps_note;                      ///< what the caps are and why
};

/// The agents whose logs `plans` compares, each with its own plans.
enum class plan_agent : std::uint8_t {
  claude_code,  ///< Claude Pro / Max (5x) / Ultra (Max 20x), and Anthropic's API
  codex         ///< ChatGPT Plus / Pro 5x / Pro 20x, and OpenAI's API
};

/// What is known about the caps, besides the presets.
struct plan_caps_input {
  /// Caps fitted from the same logs (fit_plan): each window an account's walls or percentages
  /// measured is that account's plan's cap; the other plans get it times their stated ratio.
  const plan_fit* fit = nullptr;
  /// The plan the fitted account was on: a label or a word of one ("pro", "max", "ultra"; "plus",
  /// "pro 5x", "pro 20x"). Empty: the login method the logs name, else Max (Claude) or Plus (Codex).
  std::string home_plan;
  /// Sets the user's own caps on the presets as loaded (the CLI's --limit): a bucket it sets is "given".
  std::function<void(std::span<target* const>)> set_given;
  /// The API option's prices per recorded model (Codex: a target per model of the logs, priced at
  /// that model's list price); null: the presets' own.
  const model_price_book* prices = nullptr;
  std::vector<std::string> models;  ///< the models the logs name
  /// Assumed caps (and fitted ones without an interval) are replayed at these multiples too.
  double assumed_low = 0.5, assumed_high = 2;
  /// Each plan also as "PLAN + extra usage": at its wall a request spills to the API (billed at
  /// the list price of the plan's own model, tier 4) instead of waiting.
  bool overflow = true;
};

/// The options for one agent's logs: its plans, each with caps from the user (given), else from the
/// user's own fitted walls and percentages scaled by the plans' published ratios (fitted), else
/// an assumption (docs/plans.md); and the API pay-as-you-go. Throws config_error when a preset
/// does not load, std::invalid_argument for a home plan that names none of the agent's plans.
std::vector<plan_candidate> plan_candidates(const preset_library& lib, plan_agent agent, const plan_caps_input& in = {});

struct plan_choice_options {
  /// The agent. At a plan's wall it waits for the reset however often it is refused (a person
  /// resumes when the window reopens); on the API its own retries apply.
  retry_policy client;
  double max_blocked_hours_week = 2;  ///< the verdict's limit on waiting for resets
  std::uint64_t seed = 1;
};

/// A wait for a plan's reset: from the refusal to the admission after it, any session.
struct reset_wait {
  double start_unix_s = 0;
  double hours = 0;
  std::string bucket;  ///< the window that refused ("five_hour", "weekly")
};

/// A project's share of what the windows that refused had counted (the spans before each wait).
struct wall_filler {
  std::string project;  ///< stats' project of its logs (the folder the agent worked in)
  double share = 0;     ///< of the counted tokens served in those spans
};

struct plan_choice_row {
  std::string label;
  std::string targets;               ///< the presets replayed, "PATTERN=TARGET, …" or one name
  bool plan = false;                 ///< a subscription (fee) rather than a metered API
  double fee_usd_month = 0;          ///< a plan's fee
  double metered_usd_month = 0;      ///< the API's tokens priced (a plan's: its extra usage), scaled to a month
  double usd_month = 0;              ///< fee + metered
  double usd_low = 0, usd_high = 0;  ///< the least and most of usd_month at the middle, low and high caps
  double blocked_hours_week = 0;     ///< waiting for resets a week of the replayed span (middle caps)
  double blocked_low = 0, blocked_high = 0;  ///< the least and most of the middle, low and high caps
  /// How much later than recorded the last session ended (work held back by the walls), days.
  double late_days = 0, late_low = 0, late_high = 0;
  /// The share of the recorded pace the plan keeps up with: the logs' span over the replay's
  /// (1: the work finishes on time; 0.1: it takes ten times as long), with its interval.
  double pace = 1, pace_low = 1, pace_high = 1;
  std::int32_t walls = 0;            ///< waits (merged across sessions)
  std::vector<reset_wait> waits_at;  ///< every one, in time order (the text shows the first five)
  /// Which projects filled the windows that refused: the counted tokens served in the window's
  /// period before each wait (once each), by project, largest first (middle caps).
  std::vector<wall_filler> filled_by;
  /// Quota left stranded: in the weekly windows in which the 5-hour window refused, the share of
  /// their weekly allowance that went unused (NaN: no such week, or no weekly and 5-hour windows).
  double stranded_share = std::numeric_limits<double>::quiet_NaN();
  std::int32_t stranded_weeks = 0;   ///< those weeks
  std::int32_t sessions_cut = 0;     ///< sessions that did not finish (a request no cap can take)
  std::int32_t sessions = 0;
  plan_caps_source caps = plan_caps_source::none;
  std::string caps_note;
  std::string other_model;           ///< as plan_candidate::other_model
  bool within_limit = false;         ///< blocked_hours_week ≤ the options' limit
};

struct plan_choice {
  std::string agent;         ///< "Claude Code", "Codex"
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

struct compare_plans_options {
  std::string home_plan;              ///< as plan_caps_input::home_plan
  double max_blocked_hours_week = 2;  ///< the verdict's limit
  std::string price_list;             ///< a LiteLLM or models.dev list for the API's prices ("" the bundled)
  /// Only the sessions whose first request was sent at or after this Unix time (NaN: all).
  double since_unix_s = std::numeric_limits<double>::quiet_NaN();
  /// Sets the user's caps on one agent's presets as loaded (plan_caps_input::set_given).
  std::function<void(plan_agent, std::span<target* const>)> set_given;
};

/// `loopcast plans`: the Claude Code logs compared on Claude's plans, the Codex logs on ChatGPT's,
/// each with caps fitted from its own logs (fit_plan) and its agent's client; one comparison per
/// agent that has requests, Claude Code first (`traces` by value: a caller that is done with its
/// logs moves them in, and they are not copied). Other agents' logs are counted in a note. Throws
/// trace_error when no log holds a Claude Code or Codex request, std::invalid_argument when none
/// starts at or after `since_unix_s`.
std::vector<plan_choice> compare_plans(std::vector<recorded_trace> traces, const preset_library& lib,
                                       const compare_plans_options& o = {});

} // namespace loopcast
