// loopcast — synthetic agentic sessions (docs/model.md §7).
//
// The agent loop: the first request carries the system prompt (tools included) and the task.
// Each turn the model writes output (and reasoning), the tool runs for tool_time_s, its result
// is appended, and the whole, larger conversation is sent again. Tool results are front-loaded
// (agents read big files early): turn n's result is multiplied by
//     1 + (front_load_factor − 1) · exp(−(n − 1) / front_load_decay_turns).
// Tool run times ramp up the other way (reads early, tests and builds later): turn n's tool time
// is multiplied by 1 + (tool_time_ramp_factor − 1) · (1 − exp(−(n − 1) / tool_time_ramp_turns)).
// Reasoning stays in the context only if reasoning_in_context; the visible output unless
// output_in_context is false (fitted workloads fold it into the measured tool results). When the next prompt would reach
// compaction.at_fraction of the context window, a compaction request is sent first: it reads
// the whole history and writes a summary (summary_tokens of output); the history is then replaced
// by the summary, after the system prompt and the task.
//
// Workloads fitted to real sessions (`loopcast fit-workload`, workload_fit.hpp) also use: a
// number of turns and a task size drawn per session; tool results drawn from the band of the
// turn's index (tool_result_bands, replacing tool_result_tokens and the front-load curve); one
// scale per session multiplying all its tool results, log-normal and correlated with the number
// of turns (a Gaussian copula: the session draws z, its turns are the turns distribution's
// quantile at Φ(z), its scale exp(σ·(ρz + √(1−ρ²)·z′))); and cache breaks, a request whose prompt
// keeps only a fraction of the previous prompt as its prefix (an edited earlier message, a
// reordered tool list): the rest is new to the cache, though the context does not shrink.
#pragma once

#include "loopcast/distributions.hpp"
#include "loopcast/session.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loopcast {

struct compaction_rule {
  bool enabled = false;
  double at_fraction = 0.8;    ///< compact when the prompt would reach this fraction of the window
  distribution summary_tokens = fixed_dist{4000};  ///< summary length (output of the compaction request), in tokens
  /// Share of sessions that run in a larger window than the others: they compact only at
  /// late_fraction of the window (fitted workloads: sessions seen growing far past the point where
  /// the rest compact, e.g. a 1M-token beta window beside 200K ones). When it is above 0, a
  /// session whose first prompt passes half the at_fraction threshold is such a session too.
  double late_share = 0;
  double late_fraction = 0.95;
};

/// What a task needs from an option (docs/model.md §9's task types); a clause that is not set is not
/// checked. Used by compare (include/loopcast/compare.hpp).
struct task_contract {
  std::string task;                            ///< e.g. "code completion"
  std::optional<double> ttft_p50_max_s, ttft_p90_max_s;
  std::optional<double> effective_tps_p50_min;
  std::optional<double> wall_per_task_max_s;   ///< mean session duration
  std::optional<double> usd_per_task_max;
  std::optional<double> stall_share_max;
  bool must_complete = true;                   ///< no session may die
  std::int32_t sessions = 1;                   ///< how many run at once in this task type
  double stagger_s = 0;
};

/// Tool results of the turns from `from_turn` until the next band's.
struct turn_band {
  std::int32_t from_turn = 1;
  distribution tokens = fixed_dist{1000};  ///< tool result appended per turn, in tokens
};

/// One log-normal scale per session on all its tool results, correlated with its number of turns.
struct session_scale_rule {
  double sigma = 0;              ///< standard deviation of the scale's logarithm (0: no scale)
  double turns_correlation = 0;  ///< ρ between the log scale and the turns' normal score, in [−1, 1]
};

/// Requests whose prompt does not extend the previous one.
struct cache_break_rule {
  double probability = 0;                        ///< per request after a session's first
  distribution kept_fraction = fixed_dist{0};    ///< share of the previous prompt kept as prefix, in [0, 1]
  /// Per request once the session has compacted (< 0: `probability`): after a compaction the
  /// client rebuilds its prompt, and real sessions break their cache more often then (the
  /// training corpus: 1.8% of requests before a session's first compaction, 3.4% after it).
  double after_compaction_probability = -1;
};

struct workload {
  std::string name;
  std::int64_t system_prompt_tokens = 0;  ///< system prompt and tool definitions (shared by sessions), in tokens
  distribution task_tokens = fixed_dist{0};  ///< the initial user message, in tokens (capped so the
                                             ///< first prompt stays under half the compaction threshold)
  distribution turns = fixed_dist{1};     ///< agent turns per session (requests other than compaction), rounded
  std::int32_t max_turns = 0;             ///< the most turns a session has; 0: the distribution's top (or P99.9)
  distribution output_tokens = fixed_dist{200};     ///< visible output per turn, in tokens
  distribution reasoning_tokens = fixed_dist{0};    ///< thinking per turn, in tokens
  distribution tool_result_tokens = fixed_dist{1000};  ///< tool result appended per turn, in tokens
  double front_load_factor = 1;           ///< multiplier of the first turn's tool result
  double front_load_decay_turns = 1;      ///< e-folding of that multiplier, in turns
  std::vector<turn_band> tool_result_bands;  ///< when set: tool results by turn index (no front load)
  session_scale_rule session_scale;
  double task_turns_correlation = 0;      ///< ρ between the task's and the turns' normal scores (copula)
  cache_break_rule cache_breaks;
  distribution tool_time_s = fixed_dist{1};         ///< tool run time per turn, in seconds
  double tool_time_ramp_factor = 1;       ///< multiplier the tool time tends to over the session
  double tool_time_ramp_turns = 1;        ///< e-folding of the ramp, in turns
  bool reasoning_in_context = false;
  bool output_in_context = true;
  std::int64_t max_tokens = 16384;        ///< max_tokens of every request; output+reasoning are capped to it
  std::int64_t context_window_tokens = 131072;  ///< the agent's configured window
  compaction_rule compaction;
  std::optional<task_contract> contract;  ///< for compare; generation ignores it
};

/// Generates one session of the workload. A pure function of (workload, seed).
session_script generate_session(const workload& w, std::uint64_t seed);

/// Generates many sessions of one workload (a fleet, Monte Carlo): what does not depend on the seed
/// — each distribution's log-normal spread and, for the first `tabulated_turns` turns, the
/// front-load and tool-time ramp factors — is worked out once. Each script is bit-identical to
/// generate_session(w, seed). Refers to w: keep it alive while the generator is used. Calls may run
/// concurrently.
class session_generator {
public:
  explicit session_generator(const workload& w, std::int32_t tabulated_turns = 0);
  session_script operator()(std::uint64_t seed) const;
  /// The same script, written into `out` (whatever it held is replaced; its storage is reused).
  void operator()(std::uint64_t seed, session_script& out) const;

private:
  double front(std::int32_t turn) const;  // the tool result's front-load factor at turn (from 1)
  double ramp(std::int32_t turn) const;   // the tool time's ramp factor at turn (from 1)

  const workload* w_;
  std::int32_t turns_cap_;                // turns_cap(w), which for a distribution of turns is a quantile
  sampler output_, reasoning_, tool_, tool_time_, summary_;
  std::vector<sampler> bands_;            // one per w.tool_result_bands entry
  std::vector<double> front_, ramp_;      // per turn, turn 1 at index 0
};

/// The most turns a session of `w` can have: max_turns when set, else the top of its turns
/// distribution (its P99.9 when it has none), at least 1 and at most 10^6.
std::int32_t turns_cap(const workload& w);

} // namespace loopcast
