// Helpers shared by the report writers. Internal to loopcast.
#pragma once

#include "loopcast/report/logs.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/trace.hpp"

#include <nlohmann/json.hpp>

#include "util/text.hpp"

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace loopcast::detail {

/// The outcome of an option over all its sessions: the common outcome, or "mixed".
std::string overall_outcome(const simulation_result& r);
/// Compactions and the first and largest context of a script.
struct script_summary {
  std::size_t requests = 0, compactions = 0;
  std::int64_t first_context = 0, max_context = 0, last_context = 0;
};
script_summary summarize_script(const session_script& s);

/// Cost per hour of wall clock, USD; 0 when the wall clock is 0.
double usd_per_hour(const simulation_result& r);
/// USD per 1,000 generated (output + reasoning) tokens.
double usd_per_1k_generated(const simulation_result& r);

/// Why an option did not complete, where the user looks: the first session that stopped, the
/// request, the bucket or window with its numbers, and what would change it. Empty when every
/// session completed.
struct stop_explanation {
  std::size_t stopped = 0;        ///< sessions that did not complete
  std::uint32_t session = 0;      ///< the first of them (0-based)
  session_outcome outcome = session_outcome::completed;
  std::int32_t request = 0;       ///< 1-based request in that session
  double time_s = 0;
  std::string bucket;             ///< the refusing bucket ("" for a context overflow)
  double need = 0, capacity = 0;  ///< units (tokens or requests)
  std::string what;               ///< e.g. "request 1 reserves 16,384 output tokens + … > otpm 8,000"
  std::string fix;                ///< e.g. "--max-tokens 8000, or a tier with a larger otpm"
};
stop_explanation explain_stop(const option_result& o);
/// Served and scripted requests over all sessions.
std::pair<std::int64_t, std::int64_t> requests_served_of(const simulation_result& r);

/// "$1.2345", or "n/a" for NaN (a cost not recorded or not priced).
std::string usd_or_na(double x);
/// A throughput percentile as a whole number, or "n/a" without samples.
std::string tps_or_na(const percentiles& p, double v);
/// Each log's import summary: its requests and records, what was skipped and why, its first issues.
void write_import_summary(std::ostream& os, const std::vector<recorded_trace>& traces);
/// What a set of logs held, summed over its files (write_logs_summary, the JSON's "read").
struct logs_tally {
  std::int64_t files = 0, requests = 0, sessions = 0;
  /// Files with no request, by why: every response in another file, limit messages only, records
  /// but no API response, nothing at all.
  std::int64_t copies = 0, limit_only = 0, no_response = 0, empty = 0;
  std::int64_t repeated = 0;                                ///< responses another file already held
  std::map<std::string, std::int64_t> lines_skipped;        ///< records skipped, by reason
};
logs_tally tally_logs(const std::vector<recorded_trace>& traces);
/// The schema version, loopcast's version and each log's import summary (what every report of logs
/// begins with in JSON).
/// With a listing: the files passed over ("not_logs") and the sums of write_logs_summary ("read").
nlohmann::ordered_json logs_header_json(const std::vector<recorded_trace>& traces, const logs_listing* listing = nullptr);

/// Index of the first cloud and the first local option, or -1.
struct comparison_pair {
  int cloud = -1, local = -1;
};
comparison_pair find_comparison(const scenario_result& r);

} // namespace loopcast::detail
