#include "loopcast/scenario.hpp"

#include "loopcast/budget.hpp"
#include "loopcast/simulation.hpp"

#include "model/runs.hpp"
#include "util/progress.hpp"
#include "util/time_zone.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <limits>

namespace loopcast {

std::int32_t fleet_size(const scenario& s) noexcept {
  std::int32_t n = 0;
  for (const auto& g : s.fleet) n += g.sessions;
  return n;
}

bool has_arrivals(const scenario& s) noexcept {
  return std::any_of(s.fleet.begin(), s.fleet.end(), [](const fleet_group& g) { return g.arrivals.has_value(); });
}

// A run's size before its scripts exist: the turns of every session, plus a tenth for compactions.
// A cache break starts a lineage and adds a run to the session's runs, or copies its stack of them
// when it drops some (generate_session), so a workload that breaks often holds more of both.
run_size run_size_of(const scenario& s, bool record_attempts, bool record_charges) {
  run_size z;
  std::size_t buckets = 0;
  for (const auto& o : s.options) buckets = std::max(buckets, route_buckets(o.targets, false).size());
  double runs = 0, broken = 0;
  for (const auto& g : s.fleet) {
    z.sessions += g.sessions;
    const std::int64_t turns = static_cast<std::int64_t>(g.sessions) * turns_cap(g.wl);
    const std::int64_t requests = turns + (g.wl.compaction.enabled ? turns / 10 : 0);
    z.requests += requests;
    const auto& b = g.wl.cache_breaks;
    const double breaks = std::clamp(std::max(b.probability, b.after_compaction_probability), 0.0, 1.0);
    runs += static_cast<double>(requests) * (2 + 4 * breaks);
    broken += static_cast<double>(requests) * breaks;
  }
  if (z.requests > 0) z.runs_per_request = runs / static_cast<double>(z.requests);
  z.lineages = z.sessions * 2 + z.requests / 10 + static_cast<std::int64_t>(broken);
  z.buckets = static_cast<std::int64_t>(buckets);
  z.record_attempts = record_attempts;
  z.record_charges = record_charges;
  return z;
}

fleet_sessions generate_fleet(const scenario& s, std::uint64_t seed) {
  fleet_sessions out;
  generate_fleet(s, seed, out);
  return out;
}

std::int32_t arrival_cap(const arrival_rule& a) {
  const double expected = a.people * a.sessions_per_day * a.days;
  return static_cast<std::int32_t>(std::ceil(expected + 10 * std::sqrt(expected) + 20));
}

std::vector<std::pair<double, double>> arrival_windows(const fleet_group& g, double start_unix_s) {
  std::vector<std::pair<double, double>> w;
  if (!g.arrivals) return w;
  const auto& a = *g.arrivals;
  const detail::zone z(a.time_zone);
  const detail::civil_time first = z.local(start_unix_s);
  const double first_midnight = z.midnight(first.year, first.month, first.day);
  for (std::int32_t d = 0; d < a.days; ++d) {
    // Day d's date: the local date at noon, d days on (a DST change moves midnight by an hour).
    const detail::civil_time c = z.local(first_midnight + 86400.0 * d + 43200.0);
    const double midnight = z.midnight(c.year, c.month, c.day);
    const double from = std::max(0.0, midnight + 3600.0 * a.day_start_h - start_unix_s);
    const double until = midnight + 3600.0 * a.day_end_h - start_unix_s;
    if (until > from) w.emplace_back(from, until);
  }
  return w;
}

namespace {
// The windows of every group with arrivals, as a sorted union.
std::vector<std::pair<double, double>> operation_windows(const scenario& s) {
  std::vector<std::pair<double, double>> all;
  for (const auto& g : s.fleet) {
    const auto w = arrival_windows(g, s.start_unix_s);
    all.insert(all.end(), w.begin(), w.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<std::pair<double, double>> merged;
  for (const auto& x : all) {
    if (!merged.empty() && x.first <= merged.back().second) merged.back().second = std::max(merged.back().second, x.second);
    else merged.push_back(x);
  }
  return merged;
}

// The start times of a group's sessions in one run: a Poisson process at people × sessions a day
// over each working day's hours (at most `cap`; a count past it has a probability below 10^-20).
void arrival_times(const fleet_group& g, double start_unix_s, std::uint64_t seed, std::vector<double>& out) {
  const auto& a = *g.arrivals;
  const double per_s = a.people * a.sessions_per_day / (3600.0 * (a.day_end_h - a.day_start_h));
  rng r(seed);
  out.clear();
  const auto cap = static_cast<std::size_t>(g.sessions);
  for (const auto& [from, until] : arrival_windows(g, start_unix_s)) {
    double t = from;
    while (out.size() < cap) {
      t += -std::log1p(-uniform01(r)) / per_s;
      if (t >= until) break;
      out.push_back(t);
    }
  }
}
} // namespace

void generate_fleet(const scenario& s, std::uint64_t seed, fleet_sessions& out) {
  const auto n = static_cast<std::size_t>(fleet_size(s));
  out.scripts.resize(n);  // (the scripts it holds keep their storage)
  out.plans.clear();
  out.plans.reserve(n);
  std::uint64_t idx = 0;  // every script is in place: the plans' pointers stay valid
  std::vector<double> starts;
  for (std::uint32_t f = 0; f < s.fleet.size(); ++f) {
    const auto& g = s.fleet[f];
    if (g.arrivals) arrival_times(g, s.start_unix_s, derive_seed(seed, (3ULL << 32) + f), starts);
    const auto count = g.arrivals ? static_cast<std::int32_t>(starts.size()) : g.sessions;
    // A group of many sessions tabulates its per-turn factors once (up to 4,096 turns).
    const session_generator generate(g.wl, g.sessions > 1 ? 4096 : 0);
    for (std::int32_t k = 0; k < count; ++k, ++idx) {
      generate(derive_seed(seed, idx), out.scripts[idx]);
      const double start = g.arrivals ? starts[static_cast<std::size_t>(k)] : g.start_s + g.stagger_s * k;
      out.plans.push_back({&out.scripts[idx], start, derive_seed(seed, (1ULL << 32) + idx), f});
    }
  }
  out.scripts.resize(idx);  // arrivals: fewer than the most a run holds (the plans' pointers stay valid)
}

namespace detail {
sim_options simulation_options(const scenario& s, const run_options& opt) {
  sim_options so;
  so.start_unix_s = s.start_unix_s;
  so.record_attempts = opt.record_attempts;
  so.record_charges = opt.record_charges;
  so.peak_demand = opt.peak_demand;
  so.max_attempts = s.attempt_budget > 0 ? s.attempt_budget : default_attempt_budget;
  so.operation_windows_s = operation_windows(s);
  return so;
}
} // namespace detail

using detail::simulation_options;

scenario_result run_scenario(const scenario& s, const run_options& opt) {
  return run_scenario(std::make_shared<const scenario>(s), opt);
}

scenario_result run_scenario(std::shared_ptr<const scenario> shared, const run_options& opt) {
  // Dated limits resolved at the scenario's start, so that what the result says it ran is what ran.
  if (std::any_of(shared->options.begin(), shared->options.end(), has_dated_limits)) {
    auto resolved = std::make_shared<scenario>(*shared);
    for (auto& o : resolved->options)
      for (auto& t : o.targets) t = target_at(t, rules_date(resolved->start_unix_s));
    shared = std::move(resolved);
  }
  const scenario& s = *shared;
  check_run_size(run_size_of(s, opt.record_attempts, opt.record_charges), "scenario", s.name);
  scenario_result r;
  r.scn = std::move(shared);
  r.seed = opt.seed.value_or(s.seed);
  auto fleet = generate_fleet(s, r.seed);
  const std::vector<session_plan> plans = std::move(fleet.plans);
  r.scripts = std::move(fleet.scripts);  // the buffer moves: the plans' pointers stay valid
  sim_options so = simulation_options(s, opt);
  if (opt.record_attempts && !s.options.empty()) {
    // Each option's timeline may take its share of what the rest of the run leaves of the budget.
    const std::int64_t rest = estimate_run_bytes(run_size_of(s, false, opt.record_charges));
    so.timeline_room_bytes = std::max<std::int64_t>(
        1, (memory_budget_bytes() - rest) / static_cast<std::int64_t>(s.options.size()));
  }
  r.options.reserve(s.options.size());
  for (const auto& o : s.options) {
    so.run_name = detail::message("scenario ", s.name, ", option ", o.label);  // (in its budget errors)
    r.options.push_back(run_option(o, plans, so, opt.request_metrics, opt.report_progress));
    r.options.back().option = std::shared_ptr<const scenario_option>(r.scn, &o);  // shares the scenario
  }
  return r;
}

namespace {
// A simulation's served requests, as a progress task's units.
struct simulation_progress {
  detail::progress_task task;
  std::uint64_t reported = 0;
};
void advance_simulation(void* context, std::uint64_t served, std::uint64_t /*total*/) noexcept {
  auto* p = static_cast<simulation_progress*>(context);
  try {
    p->task.advance(served - p->reported);
    p->reported = served;
  } catch (...) {  // progress never stops a run
  }
}
} // namespace

bool has_dated_limits(const scenario_option& o) noexcept {
  return std::any_of(o.targets.begin(), o.targets.end(), [](const target& t) { return !t.dated_limits.empty(); });
}

option_result run_option(const scenario_option& o, std::span<const session_plan> plans, sim_options so, bool measure,
                         bool progress) {
  so.batch = o.batch;
  std::uint64_t requests = 0;
  if (progress)
    for (const auto& p : plans) requests += p.script->requests.size();
  simulation_progress sp{detail::progress_task("simulation", requests, progress)};
  if (progress) {
    so.progress = advance_simulation;
    so.progress_context = &sp;
  }
  option_result res;
  res.label = o.label;
  // Dated limits: the rules in force at the run's start (callers that report the option resolve
  // them first, so that this copy is only made for those that do not).
  std::optional<scenario_option> resolved;
  if (has_dated_limits(o)) {
    resolved = o;
    for (auto& t : resolved->targets) t = target_at(t, rules_date(so.start_unix_s));
  }
  const scenario_option& run = resolved ? *resolved : o;
  res.sim = run.simulator ? run.simulator(run, plans, so)
            : run.routed() ? simulate_route(run.targets, run.routing, run.client, plans, so)
                           : simulate(run.first(), run.client, plans, so);
  throw_if_interrupted();  // (a simulation asked to stop returns early: its result is not one)
  if (measure) res.metrics = compute_request_metrics(res.sim.requests);
  return res;
}

namespace detail {
run_summary summarize_run(const option_result& r, std::uint64_t seed, std::uint32_t option, const request_medians& m) {
  const auto& sim = r.sim;
  const fleet_metrics f = compute_fleet_metrics(sim);
  run_summary x;
  x.seed = seed;
  x.option = option;
  x.first_429_s = sim.first_429 ? sim.first_429->time_s : std::numeric_limits<double>::quiet_NaN();
  x.first_refused_s = std::numeric_limits<double>::quiet_NaN();
  for (const auto& ss : sim.sessions)
    if (ss.outcome == session_outcome::request_too_large && !(ss.end_s >= x.first_refused_s)) x.first_refused_s = ss.end_s;
  x.wall_s = sim.wall_s;
  x.stall_s = f.stall_s;
  x.stall_share = f.stall_share;
  x.cost_usd = sim.cost_usd;
  x.usd_per_task = f.usd_per_task;
  x.tasks_per_hour = f.tasks_per_hour;
  x.output_tps = f.output_tps;
  x.effective_tps_p50 = m.effective_tps_p50;
  x.ttft_p50_s = m.ttft_p50_s;
  x.sessions = f.sessions;
  x.completed = f.completed;
  x.rate_limited = static_cast<std::int32_t>(f.rate_limited);
  x.attempts = static_cast<std::int32_t>(std::min<std::int64_t>(f.attempts, std::numeric_limits<std::int32_t>::max()));
  x.sessions_died = f.died;
  x.cut_off = sim.cut_off;
  for (const auto& ss : sim.sessions) x.requests_served += ss.requests_served;
  x.operation_hours = sim.operation_hours;
  x.hours_with_429 = sim.hours_with_429;
  x.stall_hours_per_hour = sim.operation_hours > 0 ? f.stall_s / 3600.0 / sim.operation_hours
                                                   : std::numeric_limits<double>::quiet_NaN();
  return x;
}
} // namespace detail

run_summary summarize_run(const option_result& r, std::uint64_t seed, std::uint32_t option) {
  return detail::summarize_run(r, seed, option, compute_request_medians(r.sim.requests));
}

std::vector<std::uint64_t> consecutive_seeds(std::uint64_t first, std::size_t count) {
  std::vector<std::uint64_t> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = first + i;
  return v;
}

} // namespace loopcast
