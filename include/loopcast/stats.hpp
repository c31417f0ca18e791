// loopcast — what the recorded sessions say: the reference article's measurement on real logs
// (throughput percentiles with the definitions and filters of docs/model.md §8, per model,
// overall and per context bin), tokens and cost per model, day, week, month, session, project or
// plan block (docs/output.md).
#pragma once

#include "loopcast/metrics.hpp"
#include "loopcast/names.hpp"
#include "loopcast/price_book.hpp"
#include "loopcast/prices.hpp"
#include "loopcast/trace.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loopcast {

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
  machine,  ///< the machine its log was copied from (recorded_trace::machine; "this machine" when not said)
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
                                    enum_entry{stats_grouping::machine, "machine"},
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

/// The project of a log (`stats --by project`): its recorded cwd, else Claude Code's folder name
/// decoded ("-home-u-app" is /home/u/app), else its folder's name; "(no cwd in the log)" for a Codex
/// rollout without a cwd in its dated folder.
std::string project_of(const recorded_trace& t);

/// The bins used by stats: <20K, 20–50K, 50–100K, >100K prompt tokens.
std::vector<context_bin> default_context_bins();
/// Requests as metric samples (t_first_token NaN where the log has none).
std::vector<request_sample> samples_of(const recorded_trace& t);
trace_stats compute_trace_stats(const std::vector<recorded_trace>& traces, const stats_options& opt);
/// Prices every request with one sheet (nullptr: unpriced).
trace_stats compute_trace_stats(const std::vector<recorded_trace>& traces, const price_sheet* prices = nullptr);

} // namespace loopcast
