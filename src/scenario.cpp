#include "loopcast/scenario.hpp"

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
  for (const auto& o : s.options) {
    so.batch = o.batch;
    option_result res;
    res.label = o.label;
    res.option = &o;
    res.sim = simulate(o.tgt, o.client, plans, so);
    res.metrics = compute_request_metrics(res.sim.requests);
    r.options.push_back(std::move(res));
  }
  return r;
}

} // namespace loopcast
