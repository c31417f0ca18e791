// `loopcast replay`: the recorded run and each option side by side (text and JSON).
#include "loopcast/report.hpp"
#include "loopcast/version.hpp"

#include "report/common.hpp"
#include "report/documents.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include "loopcast/random.hpp"

namespace loopcast {

using detail::grouped;
using detail::nan_or;
using detail::tps_or_na;
using detail::usd_or_na;
using json = nlohmann::ordered_json;

using detail::write_import_summary;
using detail::logs_header_json;

namespace {

// "$1.2345", or "$1.2345 partial" when the option did not complete (its total covers only what
// was served before it stopped).
std::string cell_usd(const option_result& o, double x) {
  const auto [served, total] = detail::requests_served_of(o.sim);
  return usd_or_na(x) + (served < total ? " partial" : "");
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

// The side-by-side table: a row is the recorded cell, then one cell per option.
struct replay_table {
  std::ostream& os;
  const replay_result& r;
  template <class Cell>
  void row(const std::string& name, const std::string& recorded, Cell per_option) const {
    fmt::print(os, "  {:<22} {:>32}", name, recorded);
    for (const auto& o : r.options) fmt::print(os, " {:>32}", per_option(o));
    fmt::print(os, "\n");
  }
};

// Subscription plans: how far the plan's caps let this pace go over a month (metrics.hpp).
void write_plan_rows(const replay_table& table) {
  const auto& r = table.r;
  if (std::none_of(r.options.begin(), r.options.end(), [](const option_result& o) { return view_of(*o.option).plan != nullptr; }))
    return;
  std::map<const option_result*, std::optional<plan_cost>> costs;  // once per option, for three rows
  for (const auto& o : r.options)
    costs[&o] = view_of(*o.option).plan ? plan_cost_of(o.sim, o.option->first()) : std::nullopt;
  auto plan = [&](const option_result& o, auto cell) {
    if (!view_of(*o.option).plan) return std::string("-");
    const auto& c = costs.at(&o);
    return c ? cell(*c) : std::string("no task completed");
  };
  table.row("plan: tasks a month", "-", [&](const option_result& o) {
    return plan(o, [](const plan_cost& c) { return detail::grouped(c.tasks_per_month); });
  });
  table.row("plan: $ per task", "-", [&](const option_result& o) {
    return plan(o, [](const plan_cost& c) { return fmt::format("${:.4f}", c.usd_per_task); });
  });
  table.row("plan: limited by", "-", [&](const option_result& o) {
    return plan(o, [](const plan_cost& c) { return c.limited_by; });
  });
}

// Routes (docs/routing.md): requests served by each target in order, and the cache spills lost.
void write_route_rows(const replay_table& table) {
  const auto& r = table.r;
  if (std::none_of(r.options.begin(), r.options.end(), [](const option_result& o) { return !o.sim.route.empty(); })) return;
  table.row("route: served", "-", [](const option_result& o) {
    std::string cell;
    for (const auto& t : o.sim.route) cell += fmt::format("{}{}", cell.empty() ? "" : " / ", t.requests_served);
    return o.sim.route.empty() ? std::string("-") : cell;
  });
  table.row("route: lost cache", "-", [](const option_result& o) {
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

// Below the table: how the recorded column was priced, routes by model, notes, why options stopped.
void write_replay_footer(std::ostream& os, const replay_result& r) {
  const auto& rec = r.recorded;
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
} // namespace

void write_replay_text(std::ostream& os, const std::vector<recorded_trace>& traces, const replay_result& r,
                       const logs_listing& listing) {
  fmt::print(os, "loopcast {} — replay (speed: {}; context policy: {})\n", version_string, to_string(r.speed),
             to_string(r.policy));
  const auto& rec = r.recorded;
  const replay_table table{os, r};
  auto row = [&](const std::string& name, const std::string& recorded, auto per_option) { table.row(name, recorded, per_option); };
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
      usd_or_na(rec.cost_usd) + (rec.cost_priced ? (rec.unpriced_models.empty() ? " priced" : " priced, partial") : "");
  row("cost", rec_cost, [](const option_result& o) { return cell_usd(o, o.sim.cost_usd); });
  row("$ per hour", std::isnan(rec.cost_usd) || rec.wall_s <= 0 ? "n/a" : fmt::format("${:.2f}", rec.cost_usd / (rec.wall_s / 3600)),
      [](const option_result& o) {
        if (o.sim.wall_s <= 0) return std::string("n/a");
        const auto [served, total] = detail::requests_served_of(o.sim);
        return fmt::format("${:.2f}{}", detail::usd_per_hour(o.sim), served < total ? " partial" : "");
      });
  write_plan_rows(table);
  write_route_rows(table);
  auto eff = [](const request_metrics& m) {
    return m.effective_tps.count == 0 ? std::string("n/a")
                                      : fmt::format("{:.0f} / {:.0f}", m.effective_tps.p50, m.effective_tps.p90);
  };
  row("effective P50 / P90", eff(rec.metrics), [&](const option_result& o) { return eff(o.metrics); });
  auto hit = [](double x) { return std::isnan(x) ? std::string("—") : fmt::format("{:.1f}%", 100 * x); };
  row("cache hit rate", hit(rec.metrics.cache_hit_rate), [&](const option_result& o) { return hit(o.metrics.cache_hit_rate); });

  write_replay_footer(os, r);
  write_logs_summary(os, traces, listing);
}

namespace detail {
nlohmann::ordered_json replay_doc(const std::vector<recorded_trace>& traces, const replay_result& r) {
  json j = logs_header_json(traces);
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

} // namespace loopcast
