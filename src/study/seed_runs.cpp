// Seeds of a scenario run one after another on each worker, each in the storage the one before
// left (study/seed_runs.hpp): Monte Carlo, sweeps and solve.
#include "study/seed_runs.hpp"

#include "loopcast/budget.hpp"

#include "model/runs.hpp"
#include "util/progress.hpp"

namespace loopcast {

namespace detail {
void run_seed(const scenario& s, std::uint64_t seed, seed_workspace& ws, std::span<run_summary> rows) {
  run_options ro;
  ro.record_attempts = false;
  ro.record_charges = false;
  ro.peak_demand = false;
  sim_options so = simulation_options(s, ro);
  so.request_rows = false;  // a row keeps only two medians of its requests
  generate_fleet(s, seed, ws.fleet);
  ws.spare.resize(s.options.size());
  so.storage = &ws.storage;
  for (std::size_t o = 0; o < s.options.size(); ++o) {
    so.recycle = &ws.spare[o];
    option_result r = run_option(s.options[o], ws.fleet.plans, so, false, false);
    rows[o] = detail::summarize_run(r, seed, static_cast<std::uint32_t>(o), compute_request_medians(r.sim.medians_from));
    ws.spare[o] = std::move(r.sim);
  }
}
} // namespace detail

namespace detail {
std::vector<run_summary> run_seeds_on(worker_pool& pool, std::span<seed_workspace> ws, const scenario& s,
                                      std::span<const std::uint64_t> seeds, std::span<const std::size_t> order) {
  const std::size_t no = s.options.size();
  // Runs in flight at once, each worker with its own scripts and results.
  const std::size_t workers = worker_count(seeds.size(), static_cast<unsigned>(pool.workers()));
  check_run_size(run_size_of(s, false, false), "scenario", s.name, static_cast<std::int64_t>(workers));
  std::vector<run_summary> out(seeds.size() * no);
  // A single seed is a run, not a Monte Carlo: no progress of its own.
  progress_task progress("Monte Carlo", seeds.size(), seeds.size() > 1);
  pool.run(seeds.size(), [&](std::size_t k, std::size_t worker) {
    const std::size_t i = order.empty() ? k : order[k];
    run_seed(s, seeds[i], ws[worker], std::span<run_summary>(out).subspan(i * no, no));
    progress.advance();
  });
  return out;
}
} // namespace detail

std::vector<run_summary> run_seeds(const scenario& s, std::span<const std::uint64_t> seeds, unsigned threads) {
  detail::worker_pool pool(detail::worker_count(seeds.size(), threads));
  std::vector<detail::seed_workspace> ws(pool.workers());
  return detail::run_seeds_on(pool, ws, s, seeds);
}

} // namespace loopcast
