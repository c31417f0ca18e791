// One seed of a scenario after another on one thread, reusing the storage of the one before:
// Monte Carlo (run_seeds), sweeps and solve run thousands of seeds, and a seed of a large fleet
// allocates tens of MB of scripts and results. Generated afresh each time, they cost the allocator
// and (where it gives memory back to the system between seeds) a page fault for every page touched
// again. Internal to loopcast.
#pragma once

#include "loopcast/detail/run_storage.hpp"
#include "loopcast/scenario.hpp"

#include "util/parallel.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace loopcast::detail {

/// What one worker keeps from one seed to the next: the fleet's scripts, each option's last result,
/// and the simulation's own buffers (their contents are replaced).
struct seed_workspace {
  fleet_sessions fleet;
  std::vector<simulation_result> spare;  // per option
  run_storage storage;                   // the options' runs in turn
};

/// Runs every option of `s` for `seed` (no timeline, no charge log, no peak demands) and writes
/// one row per option to rows[0 … options).
void run_seed(const scenario& s, std::uint64_t seed, seed_workspace& ws, std::span<run_summary> rows);

/// run_seeds() on the pool's workers, worker w in ws[w] (ws.size() >= pool.workers()): for a caller
/// that runs many such batches one after another (solve), with threads and storage kept between them.
/// `order`, when given (a permutation of the seeds' indices), is the order the seeds are started in;
/// the rows are in the seeds' order whatever it is.
std::vector<run_summary> run_seeds_on(worker_pool& pool, std::span<seed_workspace> ws, const scenario& s,
                                      std::span<const std::uint64_t> seeds, std::span<const std::size_t> order = {});

} // namespace loopcast::detail
