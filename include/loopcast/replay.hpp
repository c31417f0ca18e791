// loopcast — what the recorded sessions say, and what they would have done elsewhere.
//
//   stats   the reference article's measurement on real logs: throughput percentiles with the
//           definitions and filters of docs/model.md §8, per model, overall and per context bin
//   replay  keep the recorded token sequence, prefix structure and agent (tool/think) times;
//           re-time every request with a target's speed, limits, retry policy and prices
//   fit     least-squares speed model (overhead, prefill, cached tokens, decode) from the logs
#pragma once

#include "loopcast/names.hpp"
#include "loopcast/context.hpp"
#include "loopcast/metrics.hpp"
#include "loopcast/price_book.hpp"
#include "loopcast/prices.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/trace.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loopcast {

// ---- stats ---------------------------------------------------------------------------------

/// Requests whose prompt lies in [lo_tokens, hi_tokens).
struct context_bin {
  std::string label;  ///< "<20K", "20-50K", "50-100K", ">100K"
  std::int64_t lo_tokens = 0, hi_tokens = 0;
  std::size_t requests = 0;
  request_metrics metrics;
};

/// What `stats` groups requests by.
enum class stats_grouping : std::uint8_t {
  model,    ///< the request's model
  day,      ///< the local day of its send (YYYY-MM-DD in stats_options::timezone)
  week,     ///< the local week of its send, Monday to Sunday (named by its Monday, YYYY-MM-DD)
  month,    ///< the local month of its send (YYYY-MM)
  session,  ///< its top-level session (a subagent counts with its parent)
  project,  ///< the folder the agent ran in (the log's cwd, else decoded from its log's folder)
  block     ///< the 5-hour window a Claude plan counts it in (stats_block_hours): across all logs, a
            ///< window opens at the hour of the first request after the last window closed
};
template <>
struct enum_names<stats_grouping> {
  static constexpr std::array table{enum_entry{stats_grouping::model, "model"},
                                    enum_entry{stats_grouping::day, "day"},
                                    enum_entry{stats_grouping::week, "week"},
                                    enum_entry{stats_grouping::month, "month"},
                                    enum_entry{stats_grouping::session, "session"},
                                    enum_entry{stats_grouping::project, "project"},
                                    enum_entry{stats_grouping::block, "block"}};
};
/// Whether a grouping is by time (logs on a relative clock are left out of it).
constexpr bool is_period(stats_grouping g) noexcept {
  return g == stats_grouping::day || g == stats_grouping::week || g == stats_grouping::month ||
         g == stats_grouping::block;
}
/// The length of a plan's usage window that `--by block` groups by, in hours.
inline constexpr double stats_block_hours = 5;

struct stats_group {
  std::string name;               ///< the group: a model, period, session or project (stats_options::by), or "all"
  double start_unix = unknown_time;  ///< a period's first instant (Unix s); NaN for other groupings
  double end_unix = unknown_time;    ///< … and the instant after its last
  std::size_t requests = 0;
  token_counts tokens;
  request_metrics metrics;
  double recorded_cost_usd = unknown_time;  ///< sum of recorded costs; NaN unless every request has one
  /// The requests priced at their own model, summed; NaN when none could be priced. Partial when
  /// unpriced_requests > 0 (their models are in trace_stats::unpriced_models).
  double priced_cost_usd = unknown_time;
  std::size_t unpriced_requests = 0;
  std::string priced_from;                  ///< the presets or list entries that priced it ("" when not priced)
  /// With a provider cache of stats_options::cache_ttl_s: the hit rate and the cost it gives.
  double ttl_cache_hit_rate = unknown_time;
  double ttl_priced_cost_usd = unknown_time;
  std::vector<context_bin> bins;
  std::vector<stats_group> models;          ///< with stats_options::breakdown: the models within the group
};

/// Which prices priced a model.
struct stats_pricing {
  std::string model;     ///< as the logs name it
  std::string priced_as; ///< the preset or price-list entry
  std::string source;    ///< the book's source and its date ("LiteLLM price map (bundled), 2026-07-24")
};

struct trace_stats {
  stats_grouping by = stats_grouping::model;
  std::string timezone;              ///< the zone of days, weeks, months and blocks
  std::vector<stats_group> groups;   ///< one per group (sorted by name), then "all"
  std::vector<std::string> undated;  ///< logs on a relative clock left out by --since/--until or a period grouping
  std::size_t filtered_out = 0;      ///< requests outside [since, until)
  bool has_ttft = false;             ///< decode throughput and prefill share are measured
  std::vector<const recorded_trace*> totals_only;  ///< logs with per-task totals only
  std::vector<std::string> unpriced_models;        ///< models the price book does not know
  std::vector<stats_pricing> pricing;              ///< where each priced model's prices come from
  std::int64_t repeated_responses = 0;             ///< responses dropped as counted in another file
  double cache_ttl_s = 0;            ///< the TTL of the ttl_* figures (0: not computed)
  std::int64_t cache_block_tokens = 0;
};

struct stats_options {
  /// Prices each request at its own model (nullptr: no pricing). `price_all` instead prices
  /// every request with one sheet (the old --price TARGET).
  const model_price_book* prices = nullptr;
  const price_sheet* price_all = nullptr;
  double cache_ttl_s = 0;              ///< > 0: also replay a provider cache with this TTL
  std::int64_t cache_block_tokens = 1; ///< its block size, in tokens
  stats_grouping by = stats_grouping::model;
  bool breakdown = false;              ///< each group also split by model (stats_group::models)
  /// The IANA time zone of days, weeks, months and block labels ("" = the machine's: $TZ, else
  /// /etc/localtime, else UTC). An unknown zone is std::invalid_argument.
  std::string timezone;
  /// Only requests sent in [since_unix, until_unix) count (Unix seconds; NaN: no bound). With a
  /// bound, logs on a relative clock are left out and listed in trace_stats::undated.
  double since_unix = unknown_time, until_unix = unknown_time;
};

/// The IANA name of a time zone ("" = the machine's); std::invalid_argument for an unknown one.
std::string time_zone_name(const std::string& timezone);

/// The first instant of a local date (YYYY-MM-DD or YYYYMMDD), `days_after` days on, in an IANA
/// time zone ("" = the machine's), as Unix seconds: what --since and --until mean (--until D is
/// the start of the day after D). Throws std::invalid_argument for a malformed or impossible date
/// or an unknown zone, naming `option`.
double local_day_start(const std::string& option, const std::string& date, const std::string& timezone,
                       int days_after = 0);

/// The bins used by stats: <20K, 20–50K, 50–100K, >100K prompt tokens.
std::vector<context_bin> default_context_bins();
/// Requests as metric samples (t_first_token NaN where the log has none).
std::vector<request_sample> samples_of(const recorded_trace& t);
trace_stats compute_trace_stats(const std::vector<recorded_trace>& traces, const stats_options& opt);
/// Prices every request with one sheet (nullptr: unpriced).
trace_stats compute_trace_stats(const std::vector<recorded_trace>& traces, const price_sheet* prices = nullptr);

// ---- replay --------------------------------------------------------------------------------

/// How recorded sessions are fitted to one target (replay_options carries the user's choices).
struct session_shaping {
  std::int64_t max_tokens_override = 0;   ///< > 0: every request's max_tokens
  std::int64_t agent_max_tokens = 16384;  ///< when the recording has none (the client/agent preset's)
  std::int64_t max_output_tokens = 0;     ///< the target model's maximum output (0: no cap)
  std::int64_t window_tokens = 0;         ///< the target's context window (0: no policy applies)
  context_policy policy = context_policy::fail;
  double compact_at = default_compact_at;
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

// ---- fit -----------------------------------------------------------------------------------

struct speed_fit {
  speed_model model;               ///< without noise (noise_median / noise_sigma below)
  double noise_median = 1;         ///< the residual recorded / predicted time: its median …
  double noise_sigma = 0;          ///< … and log-space spread ((P90 − P10) of the log ratio / 2·z0.9)
  std::vector<std::string> models; ///< the models whose requests were fitted
  std::size_t samples = 0;
  bool used_ttft = false;          ///< TTFT and decode fitted separately (the log has TTFT)
  double r_squared = 0;            ///< of request durations
  percentiles abs_rel_error;       ///< |predicted − recorded| / recorded request duration
  std::vector<std::string> notes;  ///< e.g. terms dropped because they came out negative
};

/// Least squares (Eigen) of each request's duration on
///   1, u, u·(k + u/2), k, m, m·(c + m/2)
/// (u uncached prompt tokens after k cached ones, m generated at context c): exactly the
/// speed_model with a linear prefill curve, a per-cached-token cost and a linear decode curve.
/// Negative coefficients are dropped and the rest refitted (the model stays physical). With TTFT
/// in the logs, TTFT is fitted on (1, u, u·(k+u/2), k) and decode time on (m, m·(c+m/2)).
/// Throws error with fewer than 5 usable requests.
speed_fit fit_speed_model(const std::vector<recorded_trace>& traces);
/// Only the requests whose model matches `model_pattern` (a glob; "" or "*": every model).
speed_fit fit_speed_model(const std::vector<recorded_trace>& traces, const std::string& model_pattern);
/// The models of the logs with the requests each could fit (duration and output > 0).
std::vector<std::pair<std::string, std::size_t>> fittable_models(const std::vector<recorded_trace>& traces);

} // namespace loopcast
