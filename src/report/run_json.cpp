// The machine-readable result (`loopcast run --json`); schema in docs/output.md.
#include "loopcast/report.hpp"
#include "loopcast/version.hpp"

#include "report/common.hpp"
#include "report/documents.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>

namespace loopcast {

using json = nlohmann::ordered_json;

namespace detail {

std::string today_utc() {
  const std::chrono::year_month_day ymd{std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now())};
  return fmt::format("{:04d}-{:02d}-{:02d}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}

// A route's policy and what each of its targets did, with its share of the requests and tokens
// served; null for an option on one target.
json route_json(const scenario_option& o, const simulation_result& r) {
  if (!o.routed()) return nullptr;
  const auto& p = o.routing;
  json targets = json::array();
  std::int64_t served = 0, tokens = 0;
  for (const auto& t : r.route) {
    served += t.requests_served;
    tokens += t.tokens.total();
  }
  for (const auto& t : r.route) {
    auto x = fields_json(t);
    x["request_share"] = nan_or(served > 0 ? static_cast<double>(t.requests_served) / static_cast<double>(served) : NAN);
    x["token_share"] = nan_or(tokens > 0 ? static_cast<double>(t.tokens.total()) / static_cast<double>(tokens) : NAN);
    targets.push_back(std::move(x));
  }
  return {{"spill_after_s", std::isinf(p.spill_after_s) ? json("never") : json(p.spill_after_s)},
          {"cooldown_after_fails", p.cooldown_after_fails},
          {"cooldown_window_s", p.cooldown_window_s},
          {"cooldown_s", p.cooldown_s},
          {"targets", targets}};
}

json option_json(const option_result& o) {
  const auto v = view_of(*o.option);
  const auto limits = o.option->buckets();
  const auto& r = o.sim;
  const auto& m = o.metrics;
  json j;
  j["label"] = o.label;
  j["target"] = {{"name", v.name}, {"type", to_string(v.kind)},
                 {"provider", v.provider}, {"tier", v.tier}, {"model", v.model},
                 {"source", v.origin.source}, {"read_on", v.origin.read_on}, {"verified", v.origin.verified}};
  j["client"] = o.option->client.name;
  j["outcome"] = detail::overall_outcome(r);
  int served = 0, attempts = 0, limited = 0;
  double stall = 0;
  json sessions = json::array();
  for (const auto& s : r.sessions) {
    served += s.requests_served;
    attempts += s.attempts;
    limited += s.rate_limited;
    stall += s.stall_s;
    auto js = fields_json(s);
    js["stall_share"] = session_stall_share(s);
    js["rate_429"] = session_rate_429(s);
    sessions.push_back(std::move(js));
  }
  j["requests"] = served;
  j["attempts"] = attempts;
  j["rate_limited"] = limited;
  j["stall_s"] = stall;
  j["start_unix_s"] = r.start_unix_s != 0 ? json(r.start_unix_s) : json(nullptr);  // the clock of t = 0
  j["wall_s"] = r.wall_s;
  j["busy_s"] = r.busy_s;
  j["cut_off_s"] = r.cut_off ? json(r.cut_off_s) : json(nullptr);  // the attempt budget stopped the run there
  if (r.first_429) {
    const auto& f = *r.first_429;
    json buckets = json::array();
    for (std::size_t b = 0; b < f.buckets.size(); ++b) {
      const double limit = limits[b].limit;
      buckets.push_back({{"name", limits[b].name}, {"limit", limit}, {"used", f.buckets[b].used},
                         {"used_pct", 100 * f.buckets[b].used / limit}, {"window_demand", f.buckets[b].window_demand},
                         {"window_demand_pct", 100 * f.buckets[b].window_demand / limit}});
    }
    j["first_429"] = {{"session", f.session + 1}, {"request", f.request}, {"time_s", f.time_s},
                      {"bucket", limits[static_cast<std::size_t>(f.bucket)].name},
                      {"retry_after_s", f.retry_after_s}, {"buckets", buckets}};
    j["sent_before_first_429"] = tokens_json(f.sent_before);
  } else {
    j["first_429"] = nullptr;
    j["sent_before_first_429"] = nullptr;
  }
  j["tokens"] = tokens_json(r.tokens);
  j.update(metrics_json(m));
  j["cost_usd"] = r.cost_usd;
  j["token_cost_usd"] = r.token_cost_usd;
  j["cache_storage_usd"] = r.cache_storage_usd;
  json by_class;
  for (auto c : all_token_classes) by_class[std::string(to_string(c))] = r.cost_by_class_usd[static_cast<std::size_t>(c)];
  j["cost_by_class_usd"] = by_class;
  j["usd_per_hour"] = r.wall_s > 0 ? json(detail::usd_per_hour(r)) : json(nullptr);
  j["usd_per_1k_generated"] = r.tokens.generated() > 0 ? json(detail::usd_per_1k_generated(r)) : json(nullptr);
  if (r.energy) {
    j["energy_kwh"] = r.energy->energy_kwh;
    j["electricity_usd"] = r.energy->electricity_usd;
    j["amortisation_usd"] = r.energy->amortisation_usd;
  } else {
    j["energy_kwh"] = nullptr;
  }
  if (v.plan) {
    const auto c = plan_cost_of(r, o.option->first());
    const auto field = [&](double plan_cost::*f) { return c ? json((*c).*f) : json(nullptr); };
    j["plan"] = {{"name", v.plan->name},
                 {"monthly_fee_usd", v.plan->monthly_fee_usd},
                 {"fee_share_usd", plan_fee_share(*v.plan, r.wall_s)},
                 {"tasks_per_month", field(&plan_cost::tasks_per_month)},
                 {"usd_per_task", field(&plan_cost::usd_per_task)},
                 {"usd_per_hour", field(&plan_cost::usd_per_hour)},
                 {"limited_by", c ? json(c->limited_by) : json(nullptr)},
                 {"limited_share", field(&plan_cost::limited_share)}};
  } else {
    j["plan"] = nullptr;
  }
  json buckets = json::array();
  const auto loads = bucket_loads(r, limits);
  for (std::size_t k = 0; k < r.buckets.size(); ++k) {
    const auto& b = r.buckets[k];
    const auto load = [&](double bucket_load::*field) { return k < loads.size() && loads[k] ? json((*loads[k]).*field) : json(nullptr); };
    buckets.push_back({{"name", b.name}, {"limit", b.limit}, {"period_s", b.period_s}, {"peak_demand", b.peak_demand},
                       {"peak_demand_pct", 100 * b.peak_demand / b.limit}, {"peak_window_start_s", b.peak_window_start_s},
                       {"refusals", b.refusals}, {"charged", b.charged},
                       {"offered_per_period", load(&bucket_load::offered_per_period)},
                       {"offered_load", load(&bucket_load::ratio)}, {"min_span_s", load(&bucket_load::min_span_s)}});
  }
  j["buckets"] = buckets;
  j["sessions"] = sessions;
  if (r.engine) {
    const auto& e = *r.engine;
    const auto& cfg = *v.engine;
    j["engine"] = {{"name", cfg.name}, {"max_sequences", cfg.max_sequences}, {"peak_sequences", e.peak_sequences},
                   {"peak_queue", e.peak_queue}, {"queue_wait_s", e.queue_wait_s}, {"peak_kv_tokens", e.peak_kv_tokens},
                   {"peak_kv_gb", e.peak_kv_gb}, {"kv_pool_gb", cfg.memory.kv_pool_gb}, {"vram_gb", e.vram_gb},
                   {"gpu_gb", cfg.memory.gpu_gb}};
  } else {
    j["engine"] = nullptr;
  }
  j["fleet"] = fields_json(compute_fleet_metrics(r));
  j["route"] = route_json(*o.option, r);
  return j;
}

} // namespace detail

using detail::option_json;
using detail::tokens_json;

namespace detail {
nlohmann::ordered_json scenario_doc(const scenario_result& res) {
  const auto& s = *res.scn;
  json j;
  j["schema_version"] = 1;
  j["loopcast_version"] = version_string;
  json fleet = json::array();
  for (const auto& g : s.fleet) {
    if (g.arrivals) {
      const auto& a = *g.arrivals;
      fleet.push_back({{"label", g.label}, {"workload", g.wl.name},
                       {"arrivals", {{"people", a.people}, {"sessions_per_day", a.sessions_per_day},
                                     {"hours", {a.day_start_h, a.day_end_h}}, {"time_zone", a.time_zone}, {"days", a.days}}}});
      continue;
    }
    fleet.push_back({{"label", g.label}, {"workload", g.wl.name}, {"sessions", g.sessions}, {"start_s", g.start_s},
                     {"stagger_s", g.stagger_s}});
  }
  j["scenario"] = {{"name", s.name}, {"description", s.description}, {"seed", res.seed},
                   {"sessions", has_arrivals(s) ? static_cast<std::int32_t>(res.scripts.size()) : fleet_size(s)},
                   {"fleet", fleet}};
  json scripts = json::array();
  for (const auto& sc : res.scripts) {
    const auto sum = detail::summarize_script(sc);
    scripts.push_back({{"requests", sum.requests}, {"compactions", sum.compactions},
                       {"first_context_tokens", sum.first_context}, {"last_context_tokens", sum.last_context},
                       {"max_context_tokens", sum.max_context}});
  }
  j["workload_sessions"] = scripts;
  json options = json::array();
  for (const auto& o : res.options) options.push_back(option_json(o));
  j["options"] = options;
  const auto cmp = detail::find_comparison(res);
  if (cmp.cloud >= 0) {
    const auto& c = res.options[static_cast<std::size_t>(cmp.cloud)];
    const auto& l = res.options[static_cast<std::size_t>(cmp.local)];
    auto ratio = [](double a, double b) -> json { return b > 0 ? json(a / b) : json(nullptr); };
    j["comparison"] = {{"cloud", c.label}, {"local", l.label},
                       {"effective_tps_p50_ratio", ratio(c.metrics.effective_tps.p50, l.metrics.effective_tps.p50)},
                       {"decode_tps_p50_ratio", ratio(c.metrics.decode_tps.p50, l.metrics.decode_tps.p50)},
                       {"wall_ratio", ratio(c.sim.wall_s, l.sim.wall_s)},
                       {"cost_ratio", ratio(c.sim.cost_usd, l.sim.cost_usd)},
                       {"usd_per_hour_ratio", ratio(detail::usd_per_hour(c.sim), detail::usd_per_hour(l.sim))}};
  } else {
    j["comparison"] = nullptr;
  }
  return j;
}
} // namespace detail

std::string to_json(const scenario_result& res, int indent) {
  return detail::dump(detail::scenario_doc(res), indent);
}

} // namespace loopcast
