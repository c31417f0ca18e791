// What every report of recorded logs begins with: each log's import summary (text and JSON),
// and the money and speed cells they share.
#include "loopcast/report.hpp"
#include "loopcast/version.hpp"

#include "report/common.hpp"
#include "report/documents.hpp"
#include "util/text.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <ostream>

namespace loopcast::detail {

using json = nlohmann::ordered_json;

std::string usd_or_na(double x) { return std::isnan(x) ? std::string("n/a") : fmt::format("${:.4f}", x); }
std::string tps_or_na(const percentiles& p, double v) { return p.count == 0 ? std::string("n/a") : fmt::format("{:.0f}", v); }

void write_import_summary(std::ostream& os, const std::vector<recorded_trace>& traces) {
  for (const auto& t : traces) {
    const auto& s = t.summary;
    fmt::print(os, "  {} ({}): {} from {}", t.file, to_string(t.format), detail::count_of(s.requests, "request"),
               detail::count_of(s.records_read, "record"));
    std::int64_t skipped = 0;
    for (const auto& [reason, n] : s.skipped) skipped += n;
    if (skipped > 0) {
      fmt::print(os, "; skipped {}:", skipped);
      bool first = true;
      for (const auto& [reason, n] : s.skipped) {
        fmt::print(os, "{} {} × {}", first ? "" : ",", n, reason);
        first = false;
      }
    }
    fmt::print(os, "\n");
    for (std::size_t i = 0; i < s.issues.size() && i < 5; ++i)
      fmt::print(os, "    {}:{}: {}\n", s.issues[i].file, s.issues[i].line, s.issues[i].reason);
    if (s.issues_total > 5) fmt::print(os, "    … {} more (all in --json)\n", s.issues_total - 5);
  }
}

json import_json(const recorded_trace& t) {
  json issues = json::array();
  for (const auto& i : t.summary.issues) issues.push_back({{"file", i.file}, {"line", i.line}, {"reason", i.reason}});
  json skipped = json::object();
  for (const auto& [reason, n] : t.summary.skipped) skipped[reason] = n;
  json j = {{"file", t.file}, {"format", to_string(t.format)}, {"sessions", t.sessions.size()},
            {"requests", t.summary.requests}, {"records_read", t.summary.records_read}, {"skipped", skipped},
            {"issues", issues}, {"issues_total", t.summary.issues_total}, {"has_ttft", t.has_ttft},
            {"has_prefix", t.has_prefix}};
  if (!t.rate_limits.empty()) {
    json snaps = json::array();
    for (const auto& r : t.rate_limits) snaps.push_back({{"t", r.t}, {"snapshot", json::parse(r.json)}});
    j["rate_limits"] = snaps;
  }
  if (t.totals)
    j["totals"] = {{"api_calls", t.totals->api_calls}, {"tokens_sent", t.totals->tokens_sent},
                   {"tokens_received", t.totals->tokens_received}, {"cost_usd", nan_or(t.totals->cost_usd)}};
  return j;
}

// The schema version, loopcast's version and what was imported from each log.
json logs_header_json(const std::vector<recorded_trace>& traces) {
  json j;
  j["schema_version"] = 1;
  j["loopcast_version"] = version_string;
  json logs = json::array();
  for (const auto& t : traces) logs.push_back(import_json(t));
  j["logs"] = logs;
  return j;
}

} // namespace loopcast::detail
