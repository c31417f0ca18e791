// loopcast — synthetic agentic sessions (docs/model.md §7).
//
// The agent loop: the first request carries the system prompt (tools included) and the task.
// Each turn the model writes output (and reasoning), the tool runs for tool_time_s, its result
// is appended, and the whole, larger conversation is sent again. Tool results are front-loaded
// (agents read big files early): turn n's result is multiplied by
//     1 + (front_load_factor − 1) · exp(−(n − 1) / front_load_decay_turns).
// Tool run times ramp up the other way (reads early, tests and builds later): turn n's tool time
// is multiplied by 1 + (tool_time_ramp_factor − 1) · (1 − exp(−(n − 1) / tool_time_ramp_turns)).
// Reasoning stays in the context only if reasoning_in_context. When the next prompt would reach
// compaction.at_fraction of the context window, a compaction request is sent first: it reads
// the whole history and writes a summary (summary_tokens of output); the history is then replaced
// by the summary, after the system prompt and the task.
#pragma once

#include "loopcast/distributions.hpp"
#include "loopcast/session.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace loopcast {

struct compaction_rule {
  bool enabled = false;
  double at_fraction = 0.8;    ///< compact when the prompt would reach this fraction of the window
  distribution summary_tokens = fixed_dist{4000};  ///< summary length (output of the compaction request), in tokens
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

struct workload {
  std::string name;
  std::int64_t system_prompt_tokens = 0;  ///< system prompt and tool definitions (shared by sessions), in tokens
  std::int64_t task_tokens = 0;           ///< the initial user message, in tokens
  std::int32_t turns = 1;                 ///< agent turns (requests other than compaction)
  distribution output_tokens = fixed_dist{200};     ///< visible output per turn, in tokens
  distribution reasoning_tokens = fixed_dist{0};    ///< thinking per turn, in tokens
  distribution tool_result_tokens = fixed_dist{1000};  ///< tool result appended per turn, in tokens
  double front_load_factor = 1;           ///< multiplier of the first turn's tool result
  double front_load_decay_turns = 1;      ///< e-folding of that multiplier, in turns
  distribution tool_time_s = fixed_dist{1};         ///< tool run time per turn, in seconds
  double tool_time_ramp_factor = 1;       ///< multiplier the tool time tends to over the session
  double tool_time_ramp_turns = 1;        ///< e-folding of the ramp, in turns
  bool reasoning_in_context = false;
  std::int64_t max_tokens = 16384;        ///< max_tokens of every request; output+reasoning are capped to it
  std::int64_t context_window_tokens = 131072;  ///< the agent's configured window
  compaction_rule compaction;
  std::optional<task_contract> contract;  ///< for compare; generation ignores it
};

/// Generates one session of the workload. A pure function of (workload, seed).
session_script generate_session(const workload& w, std::uint64_t seed);

} // namespace loopcast
