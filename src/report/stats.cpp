// `loopcast stats`: text (one table line per group, then the whole in detail), JSON and CSV.
#include "loopcast/report.hpp"
#include "loopcast/stats.hpp"
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

namespace loopcast {

using detail::grouped;
using detail::nan_or;
using detail::tps_or_na;
using detail::usd_or_na;
using json = nlohmann::ordered_json;
using detail::logs_header_json;
using detail::write_import_summary;

namespace {

// A name cut from the left to `width` characters ("…" and its end): a project's path keeps its
// last folders, a block its time.
std::string cut_left(const std::string& name, std::size_t width) {
  std::size_t chars = 0;  // UTF-8 aware: count code points
  for (const char c : name) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  if (width == 0 || chars <= width) return name;
  std::size_t drop = chars - (width - 1), i = 0;
  while (drop > 0 && i < name.size()) {
    ++i;
    while (i < name.size() && (static_cast<unsigned char>(name[i]) & 0xC0) == 0x80) ++i;
    --drop;
  }
  return "…" + name.substr(i);
}

std::size_t display_width(const std::string& s) {
  std::size_t chars = 0;
  for (const char c : s) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return chars;
}

// The cost a table shows: priced (marked * when partial), else recorded.
std::string cost_cell(const stats_group& g) {
  if (!std::isnan(g.priced_cost_usd)) return usd_or_na(g.priced_cost_usd) + (g.unpriced_requests > 0 ? "*" : "");
  return usd_or_na(g.recorded_cost_usd);
}

std::string count(std::int64_t n) { return grouped(static_cast<double>(n)); }

void write_stats_table(std::ostream& os, const trace_stats& st, std::size_t width) {
  // The name column fits the longest name, cut from the left when the line would not fit.
  constexpr std::size_t rest = 9 + 13 + 13 + 13 + 14 + 12 + 12 + 2;  // the other columns
  std::size_t name_w = display_width(std::string(to_string(st.by)));
  for (const auto& g : st.groups) {
    name_w = std::max(name_w, display_width(g.name));
    for (const auto& m : g.models) name_w = std::max(name_w, display_width(m.name) + 4);
  }
  if (width > 0 && name_w + rest > width) name_w = std::max<std::size_t>(12, width > rest ? width - rest : 12);
  auto pad = [&](const std::string& name) {
    const auto cut = cut_left(name, name_w);
    return cut + std::string(name_w - std::min(name_w, display_width(cut)), ' ');
  };
  auto row = [&](const std::string& name, const stats_group& g) {
    fmt::print(os, "  {} {:>8} {:>12} {:>12} {:>12} {:>13} {:>11} {:>11}\n", pad(name), g.requests, count(g.tokens.input),
               count(g.tokens.cache_write), count(g.tokens.cache_write_1h), count(g.tokens.cache_read),
               count(g.tokens.generated()), cost_cell(g));
  };
  const auto by = st.by == stats_grouping::block ? std::string("block (5 h, from)") : std::string(to_string(st.by));
  fmt::print(os, "\n  {} {:>8} {:>12} {:>12} {:>12} {:>13} {:>11} {:>11}\n", pad(by), "requests", "input",
             "cache write", "write 1h", "cache read", "generated", "cost");
  for (const auto& g : st.groups) {
    row(g.name, g);
    for (const auto& m : g.models) row("  └ " + m.name, m);
  }
}

void write_stats_detail(std::ostream& os, const trace_stats& st);

} // namespace

void write_stats_text(std::ostream& os, const std::vector<recorded_trace>& traces, const trace_stats& st,
                      std::size_t width, const logs_listing& listing) {
  // The answer first: the table, the whole in detail; then what priced it and what the logs held.
  fmt::print(os, "loopcast {} — stats of {} log{}\n", version_string, traces.size(), traces.size() == 1 ? "" : "s");
  if (is_period(st.by)) fmt::print(os, "  times in {}\n", st.timezone);
  write_stats_table(os, st, width);  // one line per group (ccusage-style), then the whole in detail
  write_stats_detail(os, st);
  fmt::print(os, "\n");
  if (st.repeated_responses > 0)
    fmt::print(os, "  each response counted once: {} logged again in another file (a subagent echoed in its parent, a "
                   "resumed or copied session) "
                   "left out\n", grouped(static_cast<double>(st.repeated_responses)));
  for (const auto* t : st.totals_only)
    fmt::print(os, "  {}: per-task totals only: {} API calls, {} tokens sent, {} received, cost {} (no per-request "
                   "throughput can be derived)\n",
               t->file, t->totals->api_calls, grouped(static_cast<double>(t->totals->tokens_sent)),
               grouped(static_cast<double>(t->totals->tokens_received)), usd_or_na(t->totals->cost_usd));
  for (const auto& p : st.pricing)
    fmt::print(os, "  prices: {} as {} ({})\n", p.model, p.priced_as, p.source);
  if (!st.unpriced_models.empty())
    fmt::print(os, "  not priced (no price list knows these models; give --price-list FILE): {}; totals that lack "
                   "them are partial (*)\n",
               fmt::join(st.unpriced_models, ", "));
  if (!st.undated.empty())
    fmt::print(os, "  left out: {} log{} on a relative clock (no dates to filter or group by): {}\n", st.undated.size(),
               st.undated.size() == 1 ? "" : "s", fmt::join(st.undated, ", "));
  if (st.filtered_out > 0)
    fmt::print(os, "  left out: {} outside --since/--until\n", detail::count_of(static_cast<long long>(st.filtered_out), "request"));
  write_logs_summary(os, traces, listing);
}

namespace {
void write_stats_detail(std::ostream& os, const trace_stats& st) {
  for (const auto& g : st.groups) {
    if (g.name != "all") continue;
    const auto& m = g.metrics;
    fmt::print(os, "\n== {} ==  {} ({} kept for throughput; dropped: {} with < 50 output tokens, {} outside 0.2-3600 s, "
                   "{} without recorded timing)\n",
               g.name, detail::count_of(static_cast<long long>(g.requests), "request"), m.samples.kept, m.samples.dropped_short_output, m.samples.dropped_duration,
               m.samples.dropped_no_timing);
    fmt::print(os, "  effective tok/s   P10 {} · P25 {} · P50 {} · P75 {} · P90 {}\n", tps_or_na(m.effective_tps, m.effective_tps.p10),
               tps_or_na(m.effective_tps, m.effective_tps.p25), tps_or_na(m.effective_tps, m.effective_tps.p50),
               tps_or_na(m.effective_tps, m.effective_tps.p75), tps_or_na(m.effective_tps, m.effective_tps.p90));
    if (m.decode_tps.count > 0)
      fmt::print(os, "  decode tok/s      P50 {:.0f} · prefill share P50 {:.0f}% · TTFT P50 {:.2f} s\n", m.decode_tps.p50,
                 100 * m.prefill_share.p50, m.ttft_s.p50);
    else
      fmt::print(os, "  decode tok/s      n/a (the log records no first-token times)\n");
    fmt::print(os, "  context           P50 {} tokens · context/output {} · cache hit rate {} (ideal prefix reuse)\n",
               m.context_tokens.count == 0 ? std::string("—") : grouped(m.context_tokens.p50),
               std::isnan(m.context_output_ratio) ? std::string("—") : fmt::format("{:.0f}×", m.context_output_ratio),
               std::isnan(m.cache_hit_rate) ? std::string("—") : fmt::format("{:.1f}%", 100 * m.cache_hit_rate));
    if (st.cache_ttl_s > 0)
      fmt::print(os, "  provider cache    {} s TTL, {}-token blocks: hit rate {} · priced {}\n", st.cache_ttl_s,
                 st.cache_block_tokens,
                 std::isnan(g.ttl_cache_hit_rate) ? std::string("—") : fmt::format("{:.1f}%", 100 * g.ttl_cache_hit_rate),
                 usd_or_na(g.ttl_priced_cost_usd));
    fmt::print(os, "  tokens            input {} · cache read {} · cache write {} · cache write 1h {} · output {} · "
                   "reasoning {}\n",
               count(g.tokens.input), count(g.tokens.cache_read), count(g.tokens.cache_write),
               count(g.tokens.cache_write_1h), count(g.tokens.output), count(g.tokens.reasoning));
    std::string partial;
    if (g.unpriced_requests > 0 && !std::isnan(g.priced_cost_usd))
      partial = fmt::format(", partial: {} request{} of unpriced models left out", g.unpriced_requests,
                            g.unpriced_requests == 1 ? "" : "s");
    fmt::print(os, "  cost              recorded {} · priced {}{}\n", usd_or_na(g.recorded_cost_usd), usd_or_na(g.priced_cost_usd),
               g.priced_from.empty() && partial.empty() ? std::string()
                                                         : " (" + (g.priced_from.empty() ? "" : "prices of " + g.priced_from) + partial + ")");
    fmt::print(os, "  {:<9} {:>8} {:>14} {:>12}\n", "context", "requests", "effective P50", "decode P50");
    for (const auto& b : g.bins)
      fmt::print(os, "  {:<9} {:>8} {:>14} {:>12}\n", b.label, b.requests, tps_or_na(b.metrics.effective_tps, b.metrics.effective_tps.p50),
                 tps_or_na(b.metrics.decode_tps, b.metrics.decode_tps.p50));
  }
}

} // namespace

namespace detail {
namespace {
json stats_group_json(const trace_stats& st, const stats_group& g, bool top) {
  json x;
  x["group"] = g.name;
  if (st.by == stats_grouping::model || !top) x["model"] = g.name;
  if (is_period(st.by) && top) {
    x["start_unix"] = nan_or(g.start_unix);
    x["end_unix"] = nan_or(g.end_unix);
  }
  x["requests"] = g.requests;
  x["tokens"] = detail::tokens_json(g.tokens);
  x.update(detail::metrics_json(g.metrics));
  x["recorded_cost_usd"] = nan_or(g.recorded_cost_usd);
  x["priced_cost_usd"] = nan_or(g.priced_cost_usd);
  x["priced_partial"] = g.unpriced_requests > 0 && !std::isnan(g.priced_cost_usd);
  x["unpriced_requests"] = g.unpriced_requests;
  x["priced_from"] = g.priced_from.empty() ? json(nullptr) : json(g.priced_from);
  if (st.cache_ttl_s > 0)
    x["provider_cache"] = {{"ttl_s", st.cache_ttl_s}, {"block_tokens", st.cache_block_tokens},
                           {"cache_hit_rate", nan_or(g.ttl_cache_hit_rate)}, {"priced_cost_usd", nan_or(g.ttl_priced_cost_usd)}};
  if (top) {
    json bins = json::array();
    for (const auto& b : g.bins) {
      json y = {{"label", b.label}, {"lo_tokens", b.lo_tokens}, {"requests", b.requests}};
      y["hi_tokens"] = b.hi_tokens == std::numeric_limits<std::int64_t>::max() ? json(nullptr) : json(b.hi_tokens);
      y.update(detail::metrics_json(b.metrics));
      bins.push_back(y);
    }
    x["context_bins"] = bins;
  }
  if (!g.models.empty()) {
    json models = json::array();
    for (const auto& m : g.models) models.push_back(stats_group_json(st, m, false));
    x["models"] = models;
  }
  return x;
}
} // namespace

nlohmann::ordered_json stats_doc(const std::vector<recorded_trace>& traces, const trace_stats& st,
                                 const logs_listing& listing) {
  json j = logs_header_json(traces, &listing);
  j["by"] = std::string(to_string(st.by));
  j["timezone"] = st.timezone;
  j["undated"] = st.undated;
  j["filtered_out"] = st.filtered_out;
  j["repeated_responses"] = st.repeated_responses;
  json pricing = json::array();
  for (const auto& p : st.pricing) pricing.push_back({{"model", p.model}, {"priced_as", p.priced_as}, {"source", p.source}});
  j["pricing"] = pricing;
  json groups = json::array();
  for (const auto& g : st.groups) groups.push_back(stats_group_json(st, g, true));
  j["groups"] = groups;
  j["unpriced_models"] = st.unpriced_models;
  return j;
}
} // namespace detail

std::string stats_to_json(const std::vector<recorded_trace>& traces, const trace_stats& st, int indent,
                          const logs_listing& listing) {
  return detail::dump(detail::stats_doc(traces, st, listing), indent);
}

void write_stats_csv(std::ostream& os, const trace_stats& st) {
  auto num = [](double x) { return std::isnan(x) ? std::string() : fmt::format("{}", x); };
  const bool breakdown = std::any_of(st.groups.begin(), st.groups.end(), [](const auto& g) { return !g.models.empty(); });
  fmt::print(os, "{}{}{},requests,input,cache_read,cache_write,cache_write_1h,output,reasoning,recorded_cost_usd,"
                 "priced_cost_usd,unpriced_requests,effective_tps_p50,context_tokens_p50,cache_hit_rate\n",
             to_string(st.by), is_period(st.by) ? ",start_unix,end_unix" : "", breakdown ? ",model" : "");
  auto row = [&](const stats_group& top, const stats_group& g, const std::string& model) {
    const auto& m = g.metrics;
    fmt::print(os, "{}{}{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", detail::csv_field(top.name),
               is_period(st.by) ? "," + num(top.start_unix) + "," + num(top.end_unix) : std::string(),
               breakdown ? "," + detail::csv_field(model) : std::string(), g.requests, g.tokens.input,
               g.tokens.cache_read, g.tokens.cache_write, g.tokens.cache_write_1h, g.tokens.output, g.tokens.reasoning,
               num(g.recorded_cost_usd), num(g.priced_cost_usd), g.unpriced_requests,
               m.effective_tps.count ? num(m.effective_tps.p50) : std::string(),
               m.context_tokens.count ? num(m.context_tokens.p50) : std::string(), num(m.cache_hit_rate));
  };
  for (const auto& g : st.groups) {
    row(g, g, "*");
    for (const auto& m : g.models) row(g, m, m.name);
  }
}

} // namespace loopcast
