#include "loopcast/scenario.hpp"

#include <limits>

namespace loopcast {

scenario_result run_scenario(const scenario& s, const run_options& opt) {
  scenario_result r;
  r.scn = &s;
  r.seed = opt.seed.value_or(s.seed);
  r.scripts.reserve(static_cast<std::size_t>(s.sessions));
  std::vector<session_plan> plans;
  plans.reserve(static_cast<std::size_t>(s.sessions));
  for (std::int32_t i = 0; i < s.sessions; ++i) {
    const auto idx = static_cast<std::uint64_t>(i);
    r.scripts.push_back(generate_session(s.wl, derive_seed(r.seed, idx)));
  }
  for (std::int32_t i = 0; i < s.sessions; ++i) {
    const auto idx = static_cast<std::uint64_t>(i);
    plans.push_back({&r.scripts[idx], s.stagger_s * i, derive_seed(r.seed, (1ULL << 32) + idx), 0});
  }
  sim_options so;
  so.start_unix_s = s.start_unix_s;
  so.record_attempts = opt.record_attempts;
  so.record_charges = opt.record_charges;
  r.options.reserve(s.options.size());
  for (const auto& o : s.options) r.options.push_back(run_option(o, plans, so));
  return r;
}

option_result run_option(const scenario_option& o, std::span<const session_plan> plans, sim_options so) {
  so.batch = o.batch;
  option_result res;
  res.label = o.label;
  res.option = &o;
  res.sim = simulate(o.tgt, o.client, plans, so);
  res.metrics = compute_request_metrics(res.sim.requests);
  return res;
}

std::vector<run_summary> run_seeds(const scenario& s, std::span<const std::uint64_t> seeds) {
  std::vector<run_summary> out;
  out.reserve(seeds.size() * s.options.size());
  run_options ro;
  ro.record_attempts = false;
  ro.record_charges = false;
  for (const auto seed : seeds) {
    ro.seed = seed;
    const auto r = run_scenario(s, ro);
    for (std::size_t o = 0; o < r.options.size(); ++o) {
      const auto& sim = r.options[o].sim;
      run_summary x;
      x.seed = seed;
      x.option = static_cast<std::uint32_t>(o);
      x.first_429_s = sim.first_429 ? sim.first_429->time_s : std::numeric_limits<double>::quiet_NaN();
      x.wall_s = sim.wall_s;
      double busy = 0;
      for (const auto& ss : sim.sessions) {
        x.stall_s += ss.stall_s;
        busy += ss.end_s - ss.start_s;
        x.rate_limited += ss.rate_limited;
        x.sessions_died += ss.outcome != session_outcome::completed;
        x.requests_served += ss.requests_served;
      }
      x.stall_share = busy > 0 ? x.stall_s / busy : 0.0;
      x.cost_usd = sim.cost_usd;
      x.effective_tps_p50 = r.options[o].metrics.effective_tps.p50;
      out.push_back(x);
    }
  }
  return out;
}

} // namespace loopcast
