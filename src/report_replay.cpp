// Reports of `loopcast stats`, `replay` and `fit`.
#include "loopcast/random.hpp"
#include "loopcast/report.hpp"
#include "loopcast/validate.hpp"
#include "loopcast/version.hpp"

#include "report_common.hpp"
#include "report_json.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <ostream>

namespace loopcast {

using detail::grouped;
using detail::nan_or;
using json = nlohmann::ordered_json;

namespace {

std::string usd(double x) { return std::isnan(x) ? std::string("n/a") : fmt::format("${:.4f}", x); }
std::string tps(const percentiles& p, double v) { return p.count == 0 ? std::string("n/a") : fmt::format("{:.0f}", v); }

void write_import_summary(std::ostream& os, const std::vector<recorded_trace>& traces) {
  for (const auto& t : traces) {
    const auto& s = t.summary;
    fmt::print(os, "  {} ({}): {} requests from {} records", t.file, to_string(t.format), s.requests, s.records_read);
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
json header_json(const std::vector<recorded_trace>& traces) {
  json j;
  j["schema_version"] = 1;
  j["loopcast_version"] = version_string;
  json logs = json::array();
  for (const auto& t : traces) logs.push_back(import_json(t));
  j["logs"] = logs;
  return j;
}

} // namespace

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
  if (!std::isnan(g.priced_cost_usd)) return usd(g.priced_cost_usd) + (g.unpriced_requests > 0 ? "*" : "");
  return usd(g.recorded_cost_usd);
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

} // namespace

void write_stats_text(std::ostream& os, const std::vector<recorded_trace>& traces, const trace_stats& st,
                      std::size_t width) {
  fmt::print(os, "loopcast {} — stats of {} log{}\n", version_string, traces.size(), traces.size() == 1 ? "" : "s");
  write_import_summary(os, traces);
  if (st.repeated_responses > 0)
    fmt::print(os, "  each response counted once: {} logged again in another file (a resumed or copied session) "
                   "left out\n", st.repeated_responses);
  for (const auto* t : st.totals_only)
    fmt::print(os, "  {}: per-task totals only: {} API calls, {} tokens sent, {} received, cost {} (no per-request "
                   "throughput can be derived)\n",
               t->file, t->totals->api_calls, grouped(static_cast<double>(t->totals->tokens_sent)),
               grouped(static_cast<double>(t->totals->tokens_received)), usd(t->totals->cost_usd));
  for (const auto& p : st.pricing)
    fmt::print(os, "  prices: {} as {} ({})\n", p.model, p.priced_as, p.source);
  if (!st.unpriced_models.empty())
    fmt::print(os, "  not priced (no price list knows these models; give --price-list FILE): {}; totals that lack "
                   "them are partial (*)\n",
               fmt::join(st.unpriced_models, ", "));
  if (!st.undated.empty())
    fmt::print(os, "  left out: {} log{} on a relative clock (no dates to filter or group by): {}\n", st.undated.size(),
               st.undated.size() == 1 ? "" : "s", fmt::join(st.undated, ", "));
  if (st.filtered_out > 0) fmt::print(os, "  left out: {} requests outside --since/--until\n", st.filtered_out);
  if (is_period(st.by)) fmt::print(os, "  times in {}\n", st.timezone);
  if (st.by != stats_grouping::model || std::any_of(st.groups.begin(), st.groups.end(), [](const auto& g) { return !g.models.empty(); }))
    write_stats_table(os, st, width);  // one line per group (ccusage-style), then the whole in detail
  for (const auto& g : st.groups) {
    if (st.by != stats_grouping::model && g.name != "all") continue;
    const auto& m = g.metrics;
    fmt::print(os, "\n== {} ==  {} requests ({} kept for throughput; dropped: {} with < 50 output tokens, {} outside 0.2-3600 s, "
                   "{} without recorded timing)\n",
               g.name, g.requests, m.samples.kept, m.samples.dropped_short_output, m.samples.dropped_duration,
               m.samples.dropped_no_timing);
    fmt::print(os, "  effective tok/s   P10 {} · P25 {} · P50 {} · P75 {} · P90 {}\n", tps(m.effective_tps, m.effective_tps.p10),
               tps(m.effective_tps, m.effective_tps.p25), tps(m.effective_tps, m.effective_tps.p50),
               tps(m.effective_tps, m.effective_tps.p75), tps(m.effective_tps, m.effective_tps.p90));
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
                 usd(g.ttl_priced_cost_usd));
    fmt::print(os, "  tokens            input {} · cache read {} · cache write {} · cache write 1h {} · output {} · "
                   "reasoning {}\n",
               count(g.tokens.input), count(g.tokens.cache_read), count(g.tokens.cache_write),
               count(g.tokens.cache_write_1h), count(g.tokens.output), count(g.tokens.reasoning));
    std::string partial;
    if (g.unpriced_requests > 0 && !std::isnan(g.priced_cost_usd))
      partial = fmt::format(", partial: {} request{} of unpriced models left out", g.unpriced_requests,
                            g.unpriced_requests == 1 ? "" : "s");
    fmt::print(os, "  cost              recorded {} · priced {}{}\n", usd(g.recorded_cost_usd), usd(g.priced_cost_usd),
               g.priced_from.empty() && partial.empty() ? std::string()
                                                         : " (" + (g.priced_from.empty() ? "" : "prices of " + g.priced_from) + partial + ")");
    fmt::print(os, "  {:<9} {:>8} {:>14} {:>12}\n", "context", "requests", "effective P50", "decode P50");
    for (const auto& b : g.bins)
      fmt::print(os, "  {:<9} {:>8} {:>14} {:>12}\n", b.label, b.requests, tps(b.metrics.effective_tps, b.metrics.effective_tps.p50),
                 tps(b.metrics.decode_tps, b.metrics.decode_tps.p50));
  }
}

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

nlohmann::ordered_json stats_doc(const std::vector<recorded_trace>& traces, const trace_stats& st) {
  json j = header_json(traces);
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

std::string stats_to_json(const std::vector<recorded_trace>& traces, const trace_stats& st, int indent) {
  return detail::dump(detail::stats_doc(traces, st), indent);
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

namespace {

// "$1.2345", or "$1.2345 partial" when the option did not complete (its total covers only what
// was served before it stopped).
std::string cell_usd(const option_result& o, double x) {
  const auto [served, total] = detail::requests_served_of(o.sim);
  return usd(x) + (served < total ? " partial" : "");
}

json stop_json(const option_result& o) {
  const auto e = detail::explain_stop(o);
  const auto [served, total] = detail::requests_served_of(o.sim);
  json j;
  j["complete"] = e.stopped == 0;
  j["requests_served"] = served;
  j["requests_total"] = total;
  if (e.stopped == 0) {
    j["stop"] = nullptr;
    return j;
  }
  j["stop"] = {{"sessions_stopped", e.stopped}, {"session", e.session + 1}, {"outcome", to_string(e.outcome)},
               {"request", e.request}, {"time_s", e.time_s},
               {"bucket", e.bucket.empty() ? json(nullptr) : json(e.bucket)}, {"need", e.need}, {"capacity", e.capacity},
               {"explanation", e.what}, {"what_would_change_it", e.fix}};
  return j;
}

} // namespace

void write_replay_text(std::ostream& os, const std::vector<recorded_trace>& traces, const replay_result& r) {
  fmt::print(os, "loopcast {} — replay (speed: {}; context policy: {})\n", version_string, to_string(r.speed),
             to_string(r.policy));
  write_import_summary(os, traces);
  const auto& rec = r.recorded;
  auto row = [&](const std::string& name, const std::string& recorded, auto per_option) {
    fmt::print(os, "  {:<22} {:>32}", name, recorded);
    for (const auto& o : r.options) fmt::print(os, " {:>32}", per_option(o));
    fmt::print(os, "\n");
  };
  fmt::print(os, "\n  {:<22} {:>32}", "", "recorded");
  for (const auto& o : r.options) fmt::print(os, " {:>32}", o.label.size() > 32 ? o.label.substr(0, 31) + "~" : o.label);
  fmt::print(os, "\n");
  row("wall clock", fmt::format("{:.1f} s", rec.wall_s), [](const option_result& o) { return fmt::format("{:.1f} s", o.sim.wall_s); });
  row("requests served", fmt::format("{}", rec.requests), [](const option_result& o) {
    const auto [n, total] = detail::requests_served_of(o.sim);
    return fmt::format("{} of {}", n, total);
  });
  row("outcome", "-", [](const option_result& o) { return detail::overall_outcome(o.sim); });
  std::size_t k = 0;
  row("compactions added", "-", [&](const option_result&) {
    const auto& sh = r.shaping.at(k++);
    return r.policy == context_policy::truncate ? fmt::format("{} truncated", sh.truncations)
                                                : fmt::format("{}", sh.compactions);
  });
  row("429s", "n/a", [](const option_result& o) {
    int n = 0;
    for (const auto& s : o.sim.sessions) n += s.rate_limited;
    return fmt::format("{}", n);
  });
  row("first 429", "n/a", [](const option_result& o) {
    if (!o.sim.first_429) return std::string("none");
    return fmt::format("{:.1f} s {}", o.sim.first_429->time_s,
                       o.sim.buckets[static_cast<std::size_t>(o.sim.first_429->bucket)].name);
  });
  row("stall", "n/a", [](const option_result& o) {
    double s = 0;
    for (const auto& x : o.sim.sessions) s += x.stall_s;
    return fmt::format("{:.1f} s", s);
  });
  const std::string rec_cost =
      usd(rec.cost_usd) + (rec.cost_priced ? (rec.unpriced_models.empty() ? " priced" : " priced, partial") : "");
  row("cost", rec_cost, [](const option_result& o) { return cell_usd(o, o.sim.cost_usd); });
  row("$ per hour", std::isnan(rec.cost_usd) || rec.wall_s <= 0 ? "n/a" : fmt::format("${:.2f}", rec.cost_usd / (rec.wall_s / 3600)),
      [](const option_result& o) {
        if (o.sim.wall_s <= 0) return std::string("n/a");
        const auto [served, total] = detail::requests_served_of(o.sim);
        return fmt::format("${:.2f}{}", detail::usd_per_hour(o.sim), served < total ? " partial" : "");
      });
  // Subscription plans: how far the plan's caps let this pace go over a month (metrics.hpp).
  if (std::any_of(r.options.begin(), r.options.end(), [](const option_result& o) { return view_of(*o.option).plan != nullptr; })) {
    std::map<const option_result*, std::optional<plan_cost>> costs;  // once per option, for three rows
    for (const auto& o : r.options)
      costs[&o] = view_of(*o.option).plan ? plan_cost_of(o.sim, o.option->first()) : std::nullopt;
    auto plan = [&](const option_result& o, auto cell) {
      if (!view_of(*o.option).plan) return std::string("-");
      const auto& c = costs.at(&o);
      return c ? cell(*c) : std::string("no task completed");
    };
    row("plan: tasks a month", "-", [&](const option_result& o) {
      return plan(o, [](const plan_cost& c) { return detail::grouped(c.tasks_per_month); });
    });
    row("plan: $ per task", "-", [&](const option_result& o) {
      return plan(o, [](const plan_cost& c) { return fmt::format("${:.4f}", c.usd_per_task); });
    });
    row("plan: limited by", "-", [&](const option_result& o) {
      return plan(o, [](const plan_cost& c) { return c.limited_by; });
    });
  }
  // Routes (docs/routing.md): requests served by each target in order, and the cache spills lost.
  if (std::any_of(r.options.begin(), r.options.end(), [](const option_result& o) { return !o.sim.route.empty(); })) {
    row("route: served", "-", [](const option_result& o) {
      std::string cell;
      for (const auto& t : o.sim.route) cell += fmt::format("{}{}", cell.empty() ? "" : " / ", t.requests_served);
      return o.sim.route.empty() ? std::string("-") : cell;
    });
    row("route: lost cache", "-", [](const option_result& o) {
      if (o.sim.route.empty()) return std::string("-");
      std::int64_t spilled = 0, lost = 0;
      double lost_usd = 0;
      for (const auto& t : o.sim.route) {
        spilled += t.spilled_in;
        lost += t.lost_cache_tokens;
        lost_usd += t.lost_cache_usd;
      }
      return fmt::format("{} tok ${:.4f} ({} spill{})", detail::grouped(static_cast<double>(lost)), lost_usd, spilled,
                         spilled == 1 ? "" : "s");
    });
  }
  auto eff = [](const request_metrics& m) {
    return m.effective_tps.count == 0 ? std::string("n/a")
                                      : fmt::format("{:.0f} / {:.0f}", m.effective_tps.p50, m.effective_tps.p90);
  };
  row("effective P50 / P90", eff(rec.metrics), [&](const option_result& o) { return eff(o.metrics); });
  auto hit = [](double x) { return std::isnan(x) ? std::string("—") : fmt::format("{:.1f}%", 100 * x); };
  row("cache hit rate", hit(rec.metrics.cache_hit_rate), [&](const option_result& o) { return hit(o.metrics.cache_hit_rate); });

  if (rec.cost_priced && !rec.unpriced_models.empty())
    fmt::print(os, "\n  The logs record no cost: the recorded column prices each request at its own model, except "
                   "those of {} (no price list knows them; give --price-list FILE): partial.\n",
               fmt::join(rec.unpriced_models, ", "));
  else if (rec.cost_priced)
    fmt::print(os, "\n  The logs record no cost: the recorded column prices each request at its own model.\n");
  else if (std::isnan(rec.cost_usd) && !rec.unpriced_models.empty())
    fmt::print(os, "\n  Recorded cost n/a: no prices for {} (give --price-list FILE).\n", fmt::join(rec.unpriced_models, ", "));
  // Options that route models to targets (a single "* → target" is just the target).
  bool header_routes = false;
  for (std::size_t i = 0; i < r.options.size(); ++i) {
    const auto& routes = r.shaping[i].routes;
    if (routes.size() == 1 && routes[0].rfind("* ", 0) == 0) continue;
    if (!header_routes) fmt::print(os, "\n  Routes by model\n");
    header_routes = true;
    fmt::print(os, "  {}: {}\n", r.options[i].label, fmt::join(routes, "; "));
  }
  for (std::size_t i = 0; i < r.options.size(); ++i)
    for (const auto& n : r.shaping[i].notes) fmt::print(os, "  note ({}): {}\n", r.options[i].label, n);
  bool header = false;
  for (const auto& o : r.options) {
    const auto e = detail::explain_stop(o);
    if (e.stopped == 0) continue;
    if (!header) {
      fmt::print(os, "\n  Why options stopped (their totals are partial: only what was served before the stop)\n");
      header = true;
    }
    const auto [served, total] = detail::requests_served_of(o.sim);
    fmt::print(os, "  {}: {} after {} of {} requests ({} session{} stopped)\n    {}\n    what would change it: {}\n",
               o.label, to_string(e.outcome), served, total, e.stopped, e.stopped == 1 ? "" : "s", e.what, e.fix);
  }
}

namespace detail {
nlohmann::ordered_json replay_doc(const std::vector<recorded_trace>& traces, const replay_result& r) {
  json j = header_json(traces);
  j["speed"] = to_string(r.speed);
  j["context_policy"] = to_string(r.policy);
  json rec;
  rec["wall_s"] = r.recorded.wall_s;
  rec["requests"] = r.recorded.requests;
  rec["tokens"] = detail::tokens_json(r.recorded.tokens);
  rec["cost_usd"] = nan_or(r.recorded.cost_usd);
  rec["cost_priced"] = r.recorded.cost_priced;
  rec["cost_partial"] = r.recorded.cost_priced && !r.recorded.unpriced_models.empty();
  rec["unpriced_models"] = r.recorded.unpriced_models;
  rec.update(detail::metrics_json(r.recorded.metrics));
  j["recorded"] = rec;
  json options = json::array();
  for (std::size_t i = 0; i < r.options.size(); ++i) {
    const auto& o = r.options[i];
    json x = detail::option_json(o);
    x.update(stop_json(o));
    x["compactions_added"] = r.shaping[i].compactions;
    x["truncations"] = r.shaping[i].truncations;
    x["routes"] = r.shaping[i].routes;
    x["route_notes"] = r.shaping[i].notes;
    options.push_back(x);
  }
  j["options"] = options;
  return j;
}
} // namespace detail

std::string replay_to_json(const std::vector<recorded_trace>& traces, const replay_result& r, int indent) {
  return detail::dump(detail::replay_doc(traces, r), indent);
}

namespace detail {
nlohmann::ordered_json fit_to_target_doc(const speed_fit& f, const std::string& name,
                                         const std::vector<recorded_trace>& traces, const fit_preset_options& opt) {
  auto curve = [](const speed_curve& c) {
    const auto& l = std::get<linear_curve>(c);
    return json{{"kind", "linear"}, {"a_s_per_token", l.a_s}, {"b_s_per_token_per_position", l.b_s_per_token}};
  };
  std::vector<std::string> files;
  std::int64_t window = 0;
  for (const auto& t : traces) {
    files.push_back(t.file);
    for (const auto& s : t.sessions)
      for (const auto& r : s.requests) window = std::max(window, r.tokens.total());
  }
  json j;
  j["kind"] = "target";
  j["name"] = name;
  j["description"] = fmt::format("Speed fitted by `loopcast fit` to {} requests (R² {:.3f}, median |error| {:.1f}%)", f.samples,
                                 f.r_squared, 100 * f.abs_rel_error.p50);
  j["type"] = "local";
  j["provider"] = "fitted";
  j["tier"] = "fitted";
  j["model"] = f.models.size() == 1 ? f.models.front() : name;
  j["source"] = files;
  j["read_on"] = detail::today_utc();
  j["verified"] = false;
  json notes = json::array({"Only the speed is fitted. Add limits, cache rules and prices (or power) before relying on costs.",
                            fmt::format("Residuals |predicted - recorded| / recorded: P10 {:.3f}, P50 {:.3f}, P90 {:.3f}.",
                                        f.abs_rel_error.p10, f.abs_rel_error.p50, f.abs_rel_error.p90)});
  for (const auto& n : f.notes) notes.push_back(n);
  j["notes"] = notes;
  // The logs do not record the model's window. The agent compacts at about 83% of it (Claude
  // Code; docs/replay.md), and it did not compact below the largest recorded prompt: the smallest
  // window consistent with that, rounded up to 1,024 tokens.
  auto needed = static_cast<std::int64_t>(std::ceil(static_cast<double>(std::max<std::int64_t>(window, 1)) /
                                                    default_compact_at / 1024.0)) * 1024;
  if (opt.context_window_tokens > 0) {
    needed = opt.context_window_tokens;
  } else {
    notes.push_back(fmt::format("context_window_tokens {} is assumed: the smallest window (in 1,024s) at which an agent "
                                "compacting at {:.0f}% would not have compacted before the largest recorded request ({} "
                                "tokens). Set the model's real window (--context-window).", needed,
                                100 * default_compact_at, window));
  }
  j["notes"] = notes;
  j["context_window_tokens"] = needed;
  j["limits"] = {{"sends_retry_after", false}, {"buckets", json::array()}};
  j["cache"] = {{"enabled", true}, {"block_tokens", 1}, {"min_tokens", 0}, {"ttl_s", 86400}, {"write_charged", false}};
  j["speed"] = {{"overhead_s", f.model.overhead_s}, {"prefill", curve(f.model.prefill)},
                {"cached_token_s", f.model.cached_token_s}, {"decode", curve(f.model.decode)}};
  if (opt.noise && f.noise_sigma > 0) {
    j["speed"]["noise"] = {{"kind", "lognormal"}, {"median", f.noise_median},
                           {"p90", f.noise_median * std::exp(z90 * f.noise_sigma)}};
    notes.push_back(fmt::format("speed.noise: each request's time is multiplied by a log-normal factor (median {:.3f}, "
                                "log-space spread {:.3f}) fitted to the residuals, drawn from the seed",
                                f.noise_median, f.noise_sigma));
    j["notes"] = notes;
  }
  j["power"] = {{"load_power_w", 0}, {"idle_power_w", 0}, {"usd_per_kwh", 0}};
  return j;
}
} // namespace detail

std::string fit_to_target_json(const speed_fit& f, const std::string& name, const std::vector<recorded_trace>& traces,
                               const fit_preset_options& opt) {
  return detail::dump(detail::fit_to_target_doc(f, name, traces, opt), 2);
}

namespace detail {
nlohmann::ordered_json validation_doc(const validation_result& r) {
  const auto& sm = r.summary;
  json j;
  j["schema_version"] = 1;
  j["loopcast_version"] = version_string;
  j["seeds"] = r.seeds;
  j["notes"] = r.notes;
  json traces = json::array();
  for (const auto& v : r.traces)
    traces.push_back({{"file", v.file}, {"requests", v.requests}, {"ape_p50", nan_or(v.ape_p50)}, {"ape_p90", nan_or(v.ape_p90)},
                      {"bias_p50", nan_or(v.bias_p50)}, {"total_error", nan_or(v.total_error)}, {"ks", nan_or(v.ks)},
                      {"cache_share_diff", nan_or(v.cache_share_diff)}});
  j["traces"] = traces;
  j["summary"] = {{"traces", sm.traces}, {"requests", sm.requests}, {"ape_p50_median", nan_or(sm.ape_p50_median)},
                  {"ape_p50_p90", nan_or(sm.ape_p50_p90)}, {"bias_median", nan_or(sm.bias_median)},
                  {"total_error_abs_median", nan_or(sm.total_error_abs_median)},
                  {"total_error_abs_max", nan_or(sm.total_error_abs_max)}, {"ks_median", nan_or(sm.ks_median)},
                  {"coverage_p10_p90", nan_or(sm.coverage)}, {"cache_share_diff_median", nan_or(sm.cache_share_diff_median)}};
  return j;
}
} // namespace detail

std::string validation_to_json(const validation_result& r, int indent) {
  return detail::dump(detail::validation_doc(r), indent);
}

} // namespace loopcast
