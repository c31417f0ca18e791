#include "loopcast/compare.hpp"

#include "loopcast/budget.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/scenario.hpp"

#include "util/numbers.hpp"
#include "util/parallel.hpp"
#include "util/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace loopcast {

namespace {
using detail::nan;

struct run_stats {
  std::vector<request_sample> requests;
  std::vector<double> lifetimes;      // time to a wall, stopped sessions
  std::vector<double> durations;      // every session
  std::int32_t sessions = 0, stopped = 0, died = 0;
  std::string death;
  double rate_limited = 0, stall_share = 0, usd_per_task = nan, usd_per_hour = 0;
};

// Takes the run's request samples (they are pooled over the seeds later).
run_stats measure(option_result& o) {
  run_stats st;
  st.requests = std::move(o.sim.requests);
  const auto& sim = o.sim;
  const auto f = compute_fleet_metrics(sim);
  st.rate_limited = static_cast<double>(f.rate_limited);
  st.stall_share = f.stall_share;
  st.usd_per_task = f.usd_per_task;
  st.usd_per_hour = f.usd_per_hour;
  std::vector<double> first_429(sim.sessions.size(), nan);
  for (const auto& a : sim.attempts)
    if (a.status == attempt_status::rate_limited && std::isnan(first_429[a.session])) first_429[a.session] = a.t_send;
  for (std::size_t i = 0; i < sim.sessions.size(); ++i) {
    const auto& s = sim.sessions[i];
    ++st.sessions;
    st.durations.push_back(s.end_s - s.start_s);
    double wall = first_429[i];
    if (s.outcome != session_outcome::completed) {
      ++st.died;
      if (st.death.empty()) {
        st.death = std::string(to_string(s.outcome));
        for (const auto& a : sim.attempts)  // name the bucket a request was too large for
          if (a.session == i && a.status == attempt_status::too_large && a.refused_by >= 0) {
            st.death += " for " + sim.buckets[static_cast<std::size_t>(a.refused_by)].name;
            break;
          }
      }
      if (std::isnan(wall)) wall = s.end_s;
    }
    if (!std::isnan(wall)) {
      ++st.stopped;
      st.lifetimes.push_back(wall - s.start_s);
    }
  }
  return st;
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  std::size_t n = 0;
  for (double x : v)
    if (!std::isnan(x)) sum += x, ++n;
  return n ? sum / static_cast<double>(n) : nan;
}
} // namespace

compare_result compare_on(const workload& wl, std::span<const scenario_option> options, const compare_options& opt) {
  if (!wl.contract)
    throw simulation_error(fmt::format("workload {} has no \"contract\" to compare against (docs/presets.md)", wl.name));
  if (options.empty()) throw simulation_error("compare needs at least one option");
  if (opt.seeds < 1) throw simulation_error(fmt::format("at least 1 seed is needed, found {}", opt.seeds));
  compare_result res;
  res.workload = wl.name;
  res.contract = *wl.contract;
  res.sessions = opt.sessions > 0 ? opt.sessions : res.contract.sessions;
  res.stagger_s = opt.stagger_s >= 0 ? opt.stagger_s : res.contract.stagger_s;
  res.seeds = opt.seeds;
  scenario s;
  s.name = "compare";
  s.fleet = {{wl.name, wl, res.sessions, 0, res.stagger_s, std::nullopt}};
  s.options.assign(options.begin(), options.end());
  s.start_unix_s = opt.start_unix_s;
  const auto no = s.options.size();
  std::vector<run_stats> per(static_cast<std::size_t>(opt.seeds) * no);
  // Each worker runs a seed at a time: the memory budget is checked for that many runs at once.
  check_run_size(run_size_of(s, false, false), "scenario", s.name,
                 static_cast<std::int64_t>(detail::worker_count(static_cast<std::size_t>(opt.seeds), opt.threads)));
  const auto shared = std::make_shared<const scenario>(s);  // one copy for every seed
  detail::progress_task progress("compare", static_cast<std::uint64_t>(opt.seeds));
  detail::parallel_for(static_cast<std::size_t>(opt.seeds), opt.threads, [&](std::size_t k) {
    run_options ro;
    ro.seed = opt.seed + k;
    ro.record_charges = false;
    ro.peak_demand = false;
    ro.request_metrics = false;
    ro.report_progress = false;  // the seeds are the progress
    auto r = run_scenario(shared, ro);
    for (std::size_t o = 0; o < no; ++o) per[k * no + o] = measure(r.options[o]);
    progress.advance();
  });
  const auto& c = res.contract;
  for (std::size_t o = 0; o < no; ++o) {
    compare_row row;
    row.label = s.options[o].label;
    row.model = view_of(s.options[o]).model;
    std::vector<request_sample> pooled;
    std::vector<double> lifetimes, durations, limited, stall, cost, per_hour;
    std::int32_t sessions = 0, stopped = 0, died = 0;
    for (std::int32_t k = 0; k < opt.seeds; ++k) {
      const auto& st = per[static_cast<std::size_t>(k) * no + o];
      pooled.insert(pooled.end(), st.requests.begin(), st.requests.end());
      lifetimes.insert(lifetimes.end(), st.lifetimes.begin(), st.lifetimes.end());
      durations.insert(durations.end(), st.durations.begin(), st.durations.end());
      limited.push_back(st.rate_limited);
      stall.push_back(st.stall_share);
      cost.push_back(st.usd_per_task);
      per_hour.push_back(st.usd_per_hour);
      sessions += st.sessions;
      stopped += st.stopped;
      died += st.died;
      if (row.death.empty()) row.death = st.death;
    }
    const auto m = compute_request_metrics(pooled);
    row.effective_tps = m.effective_tps;
    row.ttft_s = m.ttft_s;
    row.wall_per_task_s = mean_of(durations);
    row.rate_limited = mean_of(limited);
    row.stall_share = mean_of(stall);
    row.p_session_dies = sessions ? static_cast<double>(died) / sessions : 0.0;
    row.stopped_share = sessions ? static_cast<double>(stopped) / sessions : 0.0;
    row.lifetime_p50_s = lifetimes.empty() ? nan : percentile(lifetimes, 0.5);
    row.usd_per_task = mean_of(cost);
    row.usd_per_hour = mean_of(per_hour);

    // The gate, then the contract's clauses.
    if (const auto it = opt.intelligence.find(row.model); it != opt.intelligence.end()) row.intelligence = it->second;
    if (!opt.bar) row.gate = "not set";
    else if (!row.intelligence) row.gate = "not rated";
    else row.gate = *row.intelligence >= *opt.bar ? "pass" : "fail";
    if (row.gate == "fail")
      row.failures.push_back(fmt::format("intelligence {:g} < bar {:g} ({})", *row.intelligence, *opt.bar, row.model));
    if (c.must_complete && died > 0)
      row.failures.push_back(fmt::format("{:.0f}% of sessions died ({})", 100 * row.p_session_dies, row.death));
    // A clause with nothing to measure (no request served, no task completed) is left to must_complete.
    auto over = [&](const std::optional<double>& limit, double value, const char* what, const char* unit, int digits) {
      if (limit && !std::isnan(value) && !(value <= *limit))
        row.failures.push_back(fmt::format("{} {:.{}f}{} > {:.{}f}{}", what, value, digits, unit, *limit, digits, unit));
    };
    const double none = std::numeric_limits<double>::quiet_NaN();
    over(c.ttft_p50_max_s, row.ttft_s.count ? row.ttft_s.p50 : none, "TTFT P50", " s", 2);
    over(c.ttft_p90_max_s, row.ttft_s.count ? row.ttft_s.p90 : none, "TTFT P90", " s", 2);
    over(c.wall_per_task_max_s, row.wall_per_task_s, "wall clock per task", " s", 1);
    over(c.usd_per_task_max, row.usd_per_task, "$ per task", "", 4);
    over(c.stall_share_max, row.stall_share, "stall share", "", 3);
    if (c.effective_tps_p50_min && row.effective_tps.count > 0 && !(row.effective_tps.p50 >= *c.effective_tps_p50_min))
      row.failures.push_back(fmt::format("effective throughput P50 {:.0f} tok/s < {:.0f} tok/s", row.effective_tps.p50,
                                         *c.effective_tps_p50_min));
    row.meets = row.failures.empty();
    res.rows.push_back(std::move(row));
  }
  return res;
}

} // namespace loopcast
