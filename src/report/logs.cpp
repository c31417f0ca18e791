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

logs_tally tally_logs(const std::vector<recorded_trace>& traces) {
  logs_tally a;
  for (const auto& t : traces) {
    ++a.files;
    const auto n = static_cast<std::int64_t>(t.request_count());
    a.requests += n;
    a.sessions += static_cast<std::int64_t>(t.sessions.size());
    if (n == 0 && !t.totals) {
      if (t.summary.skipped.contains(std::string(repeated_response_reason))) ++a.copies;
      else if (!t.walls.empty()) ++a.limit_only;
      else if (t.summary.records_read == 0) ++a.empty;
      else ++a.no_response;
    }
    for (const auto& [reason, k] : t.summary.skipped) {
      if (reason == repeated_response_reason) a.repeated += k;
      else a.lines_skipped[reason] += k;
    }
  }
  return a;
}

} // namespace loopcast::detail

namespace loopcast {

void write_logs_summary(std::ostream& os, const std::vector<recorded_trace>& traces, const logs_listing& listing) {
  using detail::grouped;
  const auto a = detail::tally_logs(traces);
  const auto files = a.files + static_cast<std::int64_t>(listing.notes.not_logs.size());
  auto many = [](std::int64_t n, const char* one, const char* more) {
    return fmt::format("{} {}", grouped(static_cast<double>(n)), n == 1 ? one : more);
  };
  fmt::print(os, "\n  read {}: {} in {}", many(files, "file", "files"), many(a.requests, "request", "requests"),
             many(a.sessions, "session", "sessions"));
  const auto without = a.copies + a.limit_only + a.empty + a.no_response;
  if (without > 0) {
    std::vector<std::string> why;
    if (a.copies > 0) why.push_back(fmt::format("{} whose responses another file holds", grouped(static_cast<double>(a.copies))));
    if (a.limit_only > 0) why.push_back(fmt::format("{} with limit messages only", grouped(static_cast<double>(a.limit_only))));
    if (a.no_response > 0) why.push_back(fmt::format("{} with no API response", grouped(static_cast<double>(a.no_response))));
    if (a.empty > 0) why.push_back(fmt::format("{} empty", grouped(static_cast<double>(a.empty))));
    fmt::print(os, "; {} with no request, skipped ({})", many(without, "file", "files"), fmt::join(why, ", "));
  }
  if (!listing.notes.not_logs.empty())
    fmt::print(os, "; {} no log, passed over (first: {})", many(static_cast<std::int64_t>(listing.notes.not_logs.size()), "file", "files"),
               listing.notes.not_logs.front().reason);
  fmt::print(os, "\n");
  std::vector<std::string> left;
  if (a.repeated > 0) left.push_back(fmt::format("{} logged again in another file", many(a.repeated, "response", "responses")));
  // The reasons lines were skipped, the commonest first.
  std::vector<std::pair<std::string, std::int64_t>> reasons(a.lines_skipped.begin(), a.lines_skipped.end());
  std::stable_sort(reasons.begin(), reasons.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < reasons.size() && i < 4; ++i)
    lines.push_back(fmt::format("{} × {}", grouped(static_cast<double>(reasons[i].second)), reasons[i].first));
  if (reasons.size() > 4) {
    std::int64_t rest = 0;
    for (std::size_t i = 4; i < reasons.size(); ++i) rest += reasons[i].second;
    lines.push_back(fmt::format("{} for {} other reasons", grouped(static_cast<double>(rest)), reasons.size() - 4));
  }
  if (!lines.empty()) left.push_back(fmt::format("records skipped: {}", fmt::join(lines, ", ")));
  if (!left.empty()) fmt::print(os, "  left out: {}\n", fmt::join(left, "; "));
  for (const auto& c : listing.notes.clock_offsets)
    if (std::abs(c.median_s) >= 0.5)  // (a copied file has the same times: nothing to say)
      fmt::print(os, "  clocks: {} logged {} that {} logged too, {:.1f} s {} (median)\n", c.machine.empty() ? "(no machine)" : c.machine,
               many(c.responses, "response", "responses"), c.against.empty() ? "(no machine)" : c.against,
               std::abs(c.median_s), c.median_s >= 0 ? "later" : "earlier");
  if (listing.each_file) {
    detail::write_import_summary(os, traces);
    for (const auto& n : listing.notes.not_logs) fmt::print(os, "  {}\n", n.reason);
  } else if (files > 1) {
    fmt::print(os, "  each file's import, with its skipped lines: --verbose (or --json)\n");
  }
}

} // namespace loopcast

namespace loopcast::detail {

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
json logs_header_json(const std::vector<recorded_trace>& traces, const logs_listing* listing) {
  json j;
  j["schema_version"] = 1;
  j["loopcast_version"] = version_string;
  const auto a = tally_logs(traces);
  json skipped = json::object();
  for (const auto& [reason, n] : a.lines_skipped) skipped[reason] = n;
  json not_logs = json::array();
  if (listing)
    for (const auto& n : listing->notes.not_logs) not_logs.push_back({{"file", n.file}, {"reason", n.reason}});
  j["read"] = {{"files", a.files + static_cast<std::int64_t>(not_logs.size())},
               {"requests", a.requests},
               {"sessions", a.sessions},
               {"files_without_requests",
                {{"copies", a.copies}, {"limit_messages_only", a.limit_only}, {"no_api_response", a.no_response}, {"empty", a.empty}}},
               {"not_logs", not_logs},
               {"repeated_responses", a.repeated},
               {"records_skipped", skipped}};
  if (listing && !listing->notes.clock_offsets.empty()) {
    json clocks = json::array();
    for (const auto& c : listing->notes.clock_offsets)
      clocks.push_back({{"machine", c.machine}, {"against", c.against}, {"responses", c.responses}, {"median_offset_s", c.median_s}});
    j["read"]["clock_offsets"] = clocks;
  }
  json logs = json::array();
  for (const auto& t : traces) logs.push_back(import_json(t));
  j["logs"] = logs;
  return j;
}

} // namespace loopcast::detail
