// The half-minute report of `loopcast run`.
#include "loopcast/report.hpp"
#include "loopcast/version.hpp"

#include "report/common.hpp"
#include "util/text.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <map>
#include <ostream>

#include <cmath>

namespace loopcast {

using detail::grouped;

namespace {

std::string pct(double part, double whole) {
  return whole > 0 ? fmt::format("{:.0f}%", 100.0 * part / whole) : "-";
}

std::string by_class(const token_counts& t) {
  return fmt::format("input {}, cache read {}, cache write {}, output {}, reasoning {}", grouped(static_cast<double>(t.input)),
                     grouped(static_cast<double>(t.cache_read)), grouped(static_cast<double>(t.cache_write)),
                     grouped(static_cast<double>(t.output)), grouped(static_cast<double>(t.reasoning)));
}

// Sum of the sessions' own durations (first send to end), s.
double session_time(const simulation_result& r) {
  double t = 0;
  for (const auto& s : r.sessions) t += s.end_s - s.start_s;
  return t;
}

// The time a local target served: the run's busy time, or on a route its first local target's.
double local_busy_s(const option_result& o) {
  for (std::size_t k = 0; k < o.sim.route.size(); ++k)
    if (o.option->targets[k].power) return o.sim.route[k].busy_s;
  return o.sim.busy_s;
}

// A route's policy and what each of its targets did.
void write_route(std::ostream& os, const option_result& o) {
  const auto& p = o.option->routing;
  const auto& route = o.sim.route;
  const std::string spill = std::isinf(p.spill_after_s) ? std::string("never spill (wait as the client would)")
                            : p.spill_after_s == 0      ? std::string("spill on every 429")
                                                   : fmt::format("spill when a 429's retry-after exceeds {:g} s", p.spill_after_s);
  const std::string cool = p.cooldown_after_fails == 0
                               ? std::string("no cooldown")
                               : fmt::format("a target cools down for {:g} s after {} 429{} within {:g} s", p.cooldown_s,
                                             p.cooldown_after_fails, p.cooldown_after_fails == 1 ? "" : "s",
                                             p.cooldown_window_s);
  fmt::print(os, "  Route       {}; {}\n", spill, cool);
  std::int64_t served = 0;
  for (const auto& t : route) served += t.requests_served;
  fmt::print(os, "              {:<36} {:>8} {:>6} {:>6} {:>8} {:>10} {:>10} {:>9}  {}\n", "target", "served", "share", "429s",
             "spilled", "stalled s", "cooldowns", "cost $", "lost cache");
  // "spilled": attempts it took from an earlier target; "lost cache": prompt tokens it billed in
  // full that the target the request left had cached.
  for (const auto& t : route)
    fmt::print(os, "              {:<36} {:>8} {:>6} {:>6} {:>8} {:>10.1f} {:>10} {:>9.4f}  {}\n", t.target,
               t.requests_served, pct(static_cast<double>(t.requests_served), static_cast<double>(served)), t.rate_limited,
               t.spilled_in, t.stall_s, t.cooldowns, t.cost_usd,
               t.lost_cache_tokens == 0 ? std::string("none")
               : t.lost_cache_usd == 0  ? fmt::format("{} tokens", grouped(static_cast<double>(t.lost_cache_tokens)))
                                        : fmt::format("{} tokens, ${:.4f}", grouped(static_cast<double>(t.lost_cache_tokens)),
                                                      t.lost_cache_usd));
}

// The option's heading, and a word when the attempt budget stopped its run.
void write_heading(std::ostream& os, const option_result& o, const option_view& v) {
  const auto& r = o.sim;
  fmt::print(os, "\n== {}: {} ({}), client {} ==\n", o.label, v.name,
             !o.option->routed() ? fmt::format("{} {} {}", v.provider, v.tier, v.model)
                                 : fmt::format("a route of {} targets", o.option->targets.size()),
             o.option->client.name);
  if (r.cut_off) {
    std::int64_t attempts = 0, stopped = 0;
    for (const auto& s : r.sessions) {
      attempts += s.attempts;
      stopped += s.outcome == session_outcome::cut_off;
    }
    fmt::print(os, "  CUT OFF     at {:.1f} s, when the run reached its attempt budget ({} attempts): {} running "
                   "session{} stopped there, so the figures below cover only what happened before\n",
               r.cut_off_s, grouped(static_cast<double>(attempts)), stopped, stopped == 1 ? "" : "s");
  }
}

// The first 429, and every bucket's level then.
void write_first_429(std::ostream& os, const simulation_result& r, const std::vector<bucket_config>& limits) {
  if (limits.empty()) {
    fmt::print(os, "  Limits      none (local engine)\n");
  } else if (!r.first_429) {
    fmt::print(os, "  First 429   none\n");
  } else {
    const auto& f = *r.first_429;
    const auto& sb = f.sent_before;
    fmt::print(os, "  First 429   request {} at {:.1f} s{}, refused by {} (retry after {:.1f} s)\n", f.request, f.time_s,
               r.sessions.size() > 1 ? fmt::format(" of session {}", f.session + 1) : std::string{},
               limits[static_cast<std::size_t>(f.bucket)].name, f.retry_after_s);
    fmt::print(os, "              sent before it: {} tokens, {} of them cache reads ({})\n",
               grouped(static_cast<double>(sb.total())), pct(static_cast<double>(sb.cache_read), static_cast<double>(sb.total())),
               by_class(sb));
    std::size_t width = 16;  // a route's buckets are named TARGET:BUCKET
    for (const auto& cfg : limits) width = std::max(width, cfg.name.size());
    fmt::print(os, "              {:<{}} {:>12} {:>19} {:>19} {:>19}\n", "bucket", width, "limit", "in use at 429",
               "demand last period", "peak, any period");
    for (std::size_t b = 0; b < limits.size(); ++b) {
      const auto& cfg = limits[b];
      const auto& snap = f.buckets[b];
      const auto& sum = r.buckets[b];
      fmt::print(os, "              {:<{}} {:>12} {:>12} {:>6} {:>12} {:>6} {:>12} {:>6}\n", cfg.name, width, grouped(cfg.limit),
                 grouped(snap.used), pct(snap.used, cfg.limit), grouped(snap.window_demand),
                 pct(snap.window_demand, cfg.limit), grouped(sum.peak_demand), pct(sum.peak_demand, cfg.limit));
    }
  }
}

// What the client did, the outcome and the fleet's figures. Returns the requests served and scripted.
std::pair<int, int> write_outcome(std::ostream& os, const option_result& o, const std::vector<bucket_config>& limits) {
  const auto& r = o.sim;
  int limited = 0, served = 0, total = 0;
  double stall = 0;
  for (const auto& s : r.sessions) {
    limited += s.rate_limited;
    served += s.requests_served;
    total += s.requests_total;
    stall += s.stall_s;
  }
  std::int64_t spilled = 0;
  for (const auto& t : r.route) spilled += t.spilled_in;
  if (!limits.empty())
    fmt::print(os, "  Client      {} 429{} answered by {}waiting {:.1f} s in all ({} of the sessions' time)\n", limited,
               limited == 1 ? "" : "s",
               !o.option->routed() ? std::string() : fmt::format("spilling to the next target ({}) or ", spilled),
               stall, pct(stall, session_time(r)));
  if (r.sessions.size() == 1) {
    fmt::print(os, "  Outcome     {}: {} of {} requests served in {:.1f} s ({:.2f} min)\n", detail::overall_outcome(r),
               served, total, r.wall_s, r.wall_s / 60.0);
  } else {
    std::map<std::string_view, int> counts;
    for (const auto& s : r.sessions) ++counts[to_string(s.outcome)];
    std::string summary;
    for (const auto& [name, n] : counts) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, name);
    fmt::print(os, "  Outcome     {} sessions: {}; {} of {} requests served in {:.1f} s ({:.2f} min)\n",
               r.sessions.size(), summary, served, total, r.wall_s, r.wall_s / 60.0);
    if (r.sessions.size() <= 8)
      for (std::size_t i = 0; i < r.sessions.size(); ++i) {
        const auto& s = r.sessions[i];
        fmt::print(os, "              session {}: {} at {:.1f} s, {} of {} requests, {} 429{}, stalled {:.1f} s\n", i + 1,
                   to_string(s.outcome), s.end_s, s.requests_served, s.requests_total, s.rate_limited,
                   s.rate_limited == 1 ? "" : "s", s.stall_s);
      }
  }

  if (r.sessions.size() > 1) {
    const fleet_metrics f = compute_fleet_metrics(r);
    fmt::print(os, "  Fleet       P(session dies) {:.1f}%; 429 rate {:.1f}% of attempts; stall share {:.1f}%\n",
               100 * f.p_session_dies, 100 * f.rate_429, 100 * f.stall_share);
    fmt::print(os, "              {:.1f} tasks per hour; {:.1f} requests/s; {:.0f} output+reasoning tok/s; {}\n",
               f.tasks_per_hour, f.requests_per_s, f.output_tps,
               std::isnan(f.usd_per_task) ? std::string("no task completed, so no $ per task")
                                          : fmt::format("${:.4f} per task", f.usd_per_task));
  }
  return {served, total};
}

// The bucket that stretches the work most, if any: a wall that no client can wait out.
void write_load(std::ostream& os, const simulation_result& r, const std::vector<bucket_config>& limits) {
  const auto loads = bucket_loads(r, limits);
  std::size_t over = loads.size();
  for (std::size_t b = 0; b < loads.size(); ++b)
    if (loads[b] && loads[b]->min_span_s > loads[b]->span_s &&
        (over == loads.size() || loads[b]->min_span_s > loads[over]->min_span_s))
      over = b;
  if (over < loads.size()) {
    const auto& l = *loads[over];
    const auto& cfg = limits[over];
    fmt::print(os, "  Load        {} offered {:.1f}× its capacity ({} {} per {:.0f} s against {}): work of {:.1f} s without "
                   "waiting needs at least {:.1f} s\n",
               cfg.name, l.ratio, grouped(l.offered_per_period), to_string(cfg.unit), cfg.period_s, grouped(cfg.limit),
               l.span_s, l.min_span_s);
  }
}

void write_engine(std::ostream& os, const simulation_result& r, const option_view& v) {
  if (r.engine) {
    const auto& e = *r.engine;
    const auto& cfg = *v.engine;
    fmt::print(os, "  Engine      {}: at most {} of {} sequences at once, {} queued at most (waited {:.1f} s in all)\n",
               cfg.name, e.peak_sequences, cfg.max_sequences, e.peak_queue, e.queue_wait_s);
    fmt::print(os, "              KV cache peak {} tokens = {:.2f} GB of a {:.2f} GB pool; VRAM {:.1f} of {:.0f} GB\n",
               grouped(static_cast<double>(e.peak_kv_tokens)), e.peak_kv_gb, cfg.memory.kv_pool_gb, e.vram_gb,
               cfg.memory.gpu_gb);
  }
}

void write_speed(std::ostream& os, const request_metrics& m) {
  fmt::print(os, "  Speed       effective P10/P50/P90 {:.0f} / {:.0f} / {:.0f} tok/s; decode P50 {:.0f} tok/s\n",
             m.effective_tps.p10, m.effective_tps.p50, m.effective_tps.p90, m.decode_tps.p50);
  fmt::print(os, "              prefill share P50 {:.0f}%; TTFT P50/P90 {:.2f} / {:.2f} s; {} samples kept, {} dropped\n",
             100 * m.prefill_share.p50, m.ttft_s.p50, m.ttft_s.p90, m.samples.kept,
             m.samples.dropped_short_output + m.samples.dropped_duration);
}

// The cost by token class, the energy, the plan's fee, and the total.
void write_costs(std::ostream& os, const option_result& o, const option_view& v, int served, int total) {
  const auto& r = o.sim;
  if (v.prices || o.option->routed()) {
    const auto& c = r.cost_by_class_usd;
    const auto k = [](token_class x) { return static_cast<std::size_t>(x); };
    fmt::print(os, "  Cost        ${:.4f} in tokens: input ${:.4f}, cache read ${:.4f}, cache write ${:.4f}{}, output ${:.4f}, "
                   "reasoning ${:.4f}{}\n", r.token_cost_usd, c[k(token_class::input)], c[k(token_class::cache_read)],
               c[k(token_class::cache_write)],
               c[k(token_class::cache_write_1h)] > 0 ? fmt::format(", cache write 1h ${:.4f}", c[k(token_class::cache_write_1h)])
                                                     : std::string(),
               c[k(token_class::output)], c[k(token_class::reasoning)],
               r.cache_storage_usd > 0 ? fmt::format(", cache storage ${:.4f}", r.cache_storage_usd) : std::string());
  }
  if (r.energy) {
    const auto& p = *v.power;
    fmt::print(os, "  Energy      {:.4f} kWh = ${:.4f} ({:.0f} W serving, {:.0f} W idle, ${}/kWh; busy {:.0f} s of {:.0f} s)",
               r.energy->energy_kwh, r.energy->electricity_usd, p.load_power_w, p.idle_power_w, p.usd_per_kwh,
               local_busy_s(o), r.wall_s);
    if (r.energy->amortisation_usd > 0) fmt::print(os, "; hardware ${:.4f}", r.energy->amortisation_usd);
    fmt::print(os, "\n");
  }
  if (v.plan) {
    const auto& p = *v.plan;
    fmt::print(os, "  Plan        {}, ${:g}/month: this run's share ${:.4f} ({:.0f} s of a {:.1f}-hour month)\n", p.name,
               p.monthly_fee_usd, plan_fee_share(p, r.wall_s), r.wall_s, plan_month_s / 3600);
    if (const auto c = plan_cost_of(r, o.option->first()))
      fmt::print(os, "              repeated all month, at most {} tasks fit (limited by {}{}): ${:.4f} per task, ${:.2f} per "
                     "hour of this work\n",
                 grouped(c->tasks_per_month), c->limited_by,
                 c->limited_by == "wall clock" ? std::string() : fmt::format(", {:.1f}% of the wall clock's", 100 * c->limited_share),
                 c->usd_per_task, c->usd_per_hour);
    else
      fmt::print(os, "              no task completed: no cost per task\n");
  }
  fmt::print(os, "  Total       ${:.4f}; ${:.2f} per hour; ${:.4f} per 1K output+reasoning tokens{}\n", r.cost_usd,
             detail::usd_per_hour(r), detail::usd_per_1k_generated(r),
             served < total ? fmt::format(" — partial: {} of {} requests served", served, total) : std::string());
}


void write_option(std::ostream& os, const option_result& o) {
  const auto v = view_of(*o.option);
  const auto limits = o.option->buckets();
  write_heading(os, o, v);
  write_first_429(os, o.sim, limits);
  const auto [served, total] = write_outcome(os, o, limits);
  if (!o.sim.route.empty()) write_route(os, o);
  write_load(os, o.sim, limits);
  write_engine(os, o.sim, v);
  write_speed(os, o.metrics);
  write_costs(os, o, v, served, total);
}

} // namespace

void write_text_report(std::ostream& os, const scenario_result& res) {
  const auto& s = *res.scn;
  fmt::print(os, "loopcast {} — scenario {}\n", version_string, s.name);
  if (!s.description.empty()) fmt::print(os, "{}\n", s.description);
  const auto arrivals = [](const fleet_group& g) {
    const auto& a = *g.arrivals;
    const auto clock = [](double h) {
      const auto m = static_cast<int>(std::lround(h * 60));
      return fmt::format("{:02}:{:02}", m / 60, m % 60);
    };
    return fmt::format("{} {} × {:g} sessions a day each, {}–{} {}, {}", a.people, a.people == 1 ? "person" : "people",
                       a.sessions_per_day, clock(a.day_start_h), clock(a.day_end_h), a.time_zone,
                       detail::count_of(a.days, "day"));
  };
  const auto ran = static_cast<std::int32_t>(res.scripts.size());
  if (s.fleet.size() == 1) {
    const auto& g = s.fleet.front();
    if (g.arrivals)
      fmt::print(os, "\nWorkload {}: {} ({} in this run), seed {}\n", g.wl.name, arrivals(g), detail::count_of(ran, "session"), res.seed);
    else
      fmt::print(os, "\nWorkload {}: {}, seed {}\n", g.wl.name, detail::count_of(g.sessions, "session"), res.seed);
  } else {
    fmt::print(os, "\nFleet of {} in {} groups, seed {}\n", detail::count_of(has_arrivals(s) ? ran : fleet_size(s), "session"),
               s.fleet.size(), res.seed);
    for (const auto& g : s.fleet)
      if (g.arrivals)
        fmt::print(os, "  {:<11} {}: {}\n", g.label, g.wl.name, arrivals(g));
      else
        fmt::print(os, "  {:<11} {} × {}, starting at {:.0f} s, {:.0f} s apart\n", g.label, g.sessions, g.wl.name,
                   g.start_s, g.stagger_s);
  }
  if (!res.scripts.empty()) {
    const auto sum = detail::summarize_script(res.scripts.front());
    fmt::print(os, "  Context     session 1: {} requests ({} compaction{}); context {} → {} tokens (largest {})\n",
               sum.requests, sum.compactions, sum.compactions == 1 ? "" : "s", grouped(static_cast<double>(sum.first_context)),
               grouped(static_cast<double>(sum.last_context)), grouped(static_cast<double>(sum.max_context)));
  }
  for (const auto& o : res.options) {
    if (view_of(*o.option).prices || !o.option->buckets().empty())
      fmt::print(os, "  Cache       {}: {} of prompt tokens were cache reads; context/output ratio {}\n", o.label,
                 std::isnan(o.metrics.cache_hit_rate) ? std::string("—") : fmt::format("{:.1f}%", 100 * o.metrics.cache_hit_rate),
                 std::isnan(o.metrics.context_output_ratio) ? std::string("—")
                                                            : fmt::format("{:.0f}×", o.metrics.context_output_ratio));
  }
  for (const auto& o : res.options) write_option(os, o);

  const auto cmp = detail::find_comparison(res);
  if (cmp.cloud >= 0) {
    const auto& c = res.options[static_cast<std::size_t>(cmp.cloud)];
    const auto& l = res.options[static_cast<std::size_t>(cmp.local)];
    fmt::print(os, "\n== {} vs {} ==\n", c.label, l.label);
    auto ratio = [](double a, double b) { return b > 0 ? fmt::format("{:.2f}×", a / b) : std::string("-"); };
    fmt::print(os, "  effective throughput P50 {} · decode P50 {} · wall clock {} · cost {} · $ per hour {}\n",
               ratio(c.metrics.effective_tps.p50, l.metrics.effective_tps.p50),
               ratio(c.metrics.decode_tps.p50, l.metrics.decode_tps.p50), ratio(c.sim.wall_s, l.sim.wall_s),
               ratio(c.sim.cost_usd, l.sim.cost_usd), ratio(detail::usd_per_hour(c.sim), detail::usd_per_hour(l.sim)));
  }
}

} // namespace loopcast
