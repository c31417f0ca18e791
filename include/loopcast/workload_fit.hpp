// loopcast — workloads learned from recorded sessions (`loopcast fit-workload`).
//
// fit_workload reads the top-level sessions of the logs (subagents are counted, not fitted) and
// writes each quantity of workload.hpp as a quantile table of what was recorded:
//   turns          requests per session, compaction requests excluded;
//   task_tokens    the first prompt minus the system prompt, where the system prompt is the
//                  smallest first prompt of any session (the part every session starts with);
//   tool results   per turn band (1, 2, 3–4, 5–8, … doubling; a band of fewer than 50 samples is
//                  merged into the one before): prompt n+1 − prompt n − output n (− reasoning n
//                  when it stays in context), floored at 0, divided by the session's scale;
//   session scale  the median over a session's turns (4 or more) of its tool result over its
//                  band's median; σ is the spread of its logarithm (half the P16–P84 width) and ρ
//                  its correlation with the normal score of the session's turns;
//   output, reasoning, tool_time_s (the agent's own time between requests) as recorded;
//   compaction     a prompt under half the previous one (or a request the log marks as a
//                  compaction): at_fraction is the median prompt before it over the window, the
//                  summary the prompt after it minus the session's first prompt;
//   cache breaks   (logs with exact prefixes only) a prompt whose cached prefix stops more than
//                  two 64-token blocks short of the previous prompt: their rate per request and
//                  the share of the previous prompt they keep.
#pragma once

#include "loopcast/prices.hpp"
#include "loopcast/session.hpp"
#include "loopcast/trace.hpp"
#include "loopcast/workload.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loopcast {

struct workload_fit_options {
  std::string name = "fitted";
  std::string model_pattern;               ///< only sessions whose first request's model matches
  std::int64_t context_window_tokens = 0;  ///< 0: the largest prompt seen, rounded up to 1,024 tokens
  std::int64_t max_tokens = 32000;         ///< max_tokens of the generated requests
  int quantile_points = 40;                ///< points of each quantile table (besides the tails)
};

struct workload_fit {
  workload w;
  std::size_t traces = 0, sessions = 0, requests = 0;  ///< what was fitted (top-level sessions)
  std::size_t subagent_sessions = 0, subagent_requests = 0;  ///< seen, not fitted
  std::size_t growth_samples = 0, shrinking_turns = 0;  ///< tool results measured; of them, below 0
  std::size_t compactions = 0, cache_breaks = 0, break_candidates = 0;
  std::size_t breaks_after_compaction = 0, candidates_after_compaction = 0;  ///< of those, once compacted
  std::size_t timed_delays = 0;             ///< agent times measured
  std::vector<std::string> models;          ///< models of the fitted sessions, most requests first
  std::vector<std::string> notes;
};

/// Fits a workload to the logs' top-level sessions. Throws trace_error when no session matches or
/// fewer than 2 requests follow one another (nothing to learn growth from).
workload_fit fit_workload(const std::vector<recorded_trace>& traces, const workload_fit_options& opt = {});

/// What validate_workload compares between real and synthetic sessions.
struct session_shape {
  double requests = 0;            ///< requests of the session (compactions included)
  std::vector<double> growth;     ///< prompt n+1 − prompt n within a context, tokens
  std::vector<double> prompts;    ///< prompt tokens of each request
  double cost_usd = 0;            ///< at the given prices, with every earlier prefix cached
};

/// A recorded session's shape: cache reads as recorded (kv-cache-tester: an ideal cache).
session_shape shape_of(const recorded_session& s, const price_sheet& prices);
/// A synthetic session's shape: each prompt's prefix shared with the previous one is read from
/// the cache, the rest is input.
session_shape shape_of(const session_script& s, const price_sheet& prices);

} // namespace loopcast
