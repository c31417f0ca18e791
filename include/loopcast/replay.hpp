// loopcast — what the recorded sessions would have done elsewhere: keep the recorded token
// sequence, prefix structure and agent (tool/think) times; re-time every request with a target's
// speed, limits, retry policy and prices (docs/replay.md). What the logs say is stats.hpp; a speed
// model fitted to them, speed_fit.hpp.
#pragma once

#include "loopcast/context.hpp"
#include "loopcast/metrics.hpp"
#include "loopcast/names.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/price_book.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/trace.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loopcast {

/// How recorded sessions are fitted to one target (replay_options carries the user's choices).
struct session_shaping {
  std::int64_t max_tokens_override = 0;   ///< > 0: every request's max_tokens
  std::int64_t agent_max_tokens = 16384;  ///< when the recording has none (the client/agent preset's)
  std::int64_t max_output_tokens = 0;     ///< the target model's maximum output (0: no cap)
  std::int64_t window_tokens = 0;         ///< the target's context window (0: no policy applies)
  context_policy policy = context_policy::fail;
  double compact_at = default_compact_at;
  /// > 0: the agent compacts when the last request's prompt + output (as replayed) reaches
  /// window − this, instead of at compact_at × window on the next prompt (a client's rule).
  std::int64_t compact_reserve_tokens = 0;
  std::int64_t summary_tokens = default_summary_tokens;
  /// A model map's patterns, in order: each request's route segment (request_spec::segment) is the
  /// first that matches its model (model_matches); empty: every request in segment 0.
  std::vector<std::string> model_patterns;
};

/// Recorded sessions as simulator input. session_plan pointers refer into `scripts`: keep the
/// object where it is (it is neither copyable nor movable once plans() has been taken).
struct replay_sessions {
  std::vector<session_script> scripts;
  std::vector<double> start_s;        ///< each session's first send, s after the earliest
  std::vector<std::uint32_t> family;  ///< sessions of one trace share its prefix lineages
  std::int32_t compactions = 0;       ///< compaction requests the context policy inserted
  std::int32_t truncations = 0;       ///< requests the context policy shortened
  std::vector<std::int32_t> script_compactions, script_truncations;  ///< the same per script
  std::vector<session_plan> plans(std::uint64_t seed) const;
};

/// Builds the scripts: prompts, outputs and reasoning as recorded; each request sent after the
/// agent time the log records before it (else recorded send − previous recorded end, or −
/// previous send when that request has no recorded end); recorded durations kept for `recorded`
/// speed. max_tokens = the override, else the recording's, else the agent's, capped at the
/// target's maximum output, and never below what the request generated. With a window, the
/// context policy applies (docs/replay.md). Throws trace_error for a totals-only log.
replay_sessions make_replay_sessions(const std::vector<recorded_trace>& traces, const session_shaping& shape);
/// The recorded sequence as it is (no window, no cap; agent max_tokens as given).
replay_sessions make_replay_sessions(const std::vector<recorded_trace>& traces, std::int64_t default_max_tokens);

/// The client preset that replays the logs when none is given: the agent that wrote the first log
/// of a known agent (Claude Code and kv-cache-tester traces: "claude-code"; Codex: "codex";
/// opencode: "opencode"), else "opencode".
std::string default_client_for(const std::vector<recorded_trace>& traces);

/// The recorded run, measured like a simulated one.
struct recorded_run {
  double wall_s = 0;                       ///< first send to last end
  std::size_t requests = 0;
  token_counts tokens;
  double cost_usd = unknown_time;          ///< recorded, when every request has a cost; else priced
  bool cost_priced = false;                ///< cost_usd is priced at each request's model, not recorded
  /// Models no price list knows: cost_usd leaves their requests out (partial), or is NaN when no
  /// request could be priced.
  std::vector<std::string> unpriced_models;
  request_metrics metrics;
};
recorded_run measure_recorded(const std::vector<recorded_trace>& traces, const model_price_book* prices = nullptr);

enum class replay_speed : std::uint8_t {
  target,   ///< the target's speed model (and engine)
  recorded  ///< each request keeps its recorded duration: only the limits and the cache change anything
};
template <>
struct enum_names<replay_speed> {
  static constexpr std::array table{enum_entry{replay_speed::target, "target"},
                                    enum_entry{replay_speed::recorded, "recorded"}};
};

/// What the requests of the models matching `pattern` run on (a glob: '*' matches any run of
/// characters; "*" matches every model): an option, one target or a route.
struct model_map_entry {
  std::string pattern;
  scenario_option option;
};

/// A column of a replay: one option for every request, or one per model. Each request runs on the
/// option of the first pattern its model matches, inside its session (docs/replay.md).
struct model_map {
  std::string label;
  std::vector<model_map_entry> entries;  ///< the first matching pattern wins
};

/// `--on` as written, before any preset loads: each pattern with its chain of target references
/// (a preset name or a .json path; two or more make a route), and a route file's stem.
struct model_map_spec {
  struct entry {
    std::string pattern;
    std::vector<std::string> targets;
  };
  std::vector<entry> entries;  ///< in the spec's order (the first matching pattern wins)
  std::string file_label;      ///< the route file's stem; empty for a spec on the command line
};

/// The grammar of `--on`, shared by the CLI and Python: TARGET, 'TARGET>TARGET…',
/// 'PATTERN=TARGET,PATTERN=TARGET…', or a .json file {"PATTERN": "TARGET", …}. Throws
/// std::invalid_argument naming the spec for a malformed one, config_error for a bad route file.
model_map_spec split_model_map(const std::string& spec);

/// `--on` as the command line takes it, into a model map: TARGET, 'TARGET>TARGET…' (a route, with
/// `routing`), 'PATTERN=TARGET,PATTERN=TARGET…', or a .json file {"PATTERN": "TARGET", …}; each
/// TARGET a preset name or a .json path. `no_limits` drops the targets' buckets. Throws
/// std::invalid_argument for a malformed spec and config_error for a target that does not load.
model_map parse_model_map(const std::string& spec, const preset_library& lib, const retry_policy& client,
                          const route_policy& routing = {}, bool no_limits = false);

struct replay_options {
  std::uint64_t seed = 1;
  std::int64_t max_tokens = 0;             ///< > 0: every request's max_tokens (else recording, then client)
  std::int64_t default_max_tokens = 16384; ///< when neither the recording nor the client gives one
  double start_unix_s = 0;                 ///< for time-of-day prices; 0 = the log's own clock if absolute
  bool record_attempts = true;
  replay_speed speed = replay_speed::target;
  context_policy policy = context_policy::compact;
  double compact_at = 0;                   ///< fraction of the target's window; 0 = the client's, else 0.83
  std::int64_t summary_tokens = 0;         ///< 0 = the client's, else 4,000
  const model_price_book* recorded_prices = nullptr;  ///< prices the recorded run when it records no cost
  /// Each option's run stops after this many attempts, 429s included (sim_options::max_attempts):
  /// its running sessions are cut off and its totals partial.
  std::uint64_t max_attempts = default_attempt_budget;
};

/// What a replay option's context policy did.
struct replay_shaping_summary {
  std::int32_t compactions = 0;            ///< compaction requests inserted
  std::int32_t truncations = 0;            ///< requests shortened
  std::vector<std::string> routes;         ///< "pattern → target" per route used
  std::vector<std::string> notes;          ///< e.g. sessions whose models route to different targets
};

struct replay_result {
  recorded_run recorded;
  std::vector<option_result> options;      ///< option_result::option: what each ran (routes merged)
  std::vector<replay_shaping_summary> shaping;  ///< per option
  context_policy policy = context_policy::compact;
  replay_speed speed = replay_speed::target;
};

replay_result run_replay(const std::vector<recorded_trace>& traces, const std::vector<model_map>& targets,
                         const replay_options& opt = {});
/// Every session on each option.
replay_result run_replay(const std::vector<recorded_trace>& traces, const std::vector<scenario_option>& options,
                         const replay_options& opt = {});

} // namespace loopcast
