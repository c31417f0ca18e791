// One seed of a scenario after another on one thread, reusing the storage of the one before:
// Monte Carlo (run_seeds), sweeps and solve run thousands of seeds, and a seed of a large fleet
// allocates tens of MB of scripts and results. Generated afresh each time, they cost the allocator
// and (where it gives memory back to the system between seeds) a page fault for every page touched
// again. Internal to loopcast.
#pragma once

#include "loopcast/scenario.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace loopcast::detail {

/// What one worker keeps from one seed to the next: the fleet's scripts, each option's last result
/// and the medians' values (their buffers; the contents are replaced).
struct seed_workspace {
  fleet_sessions fleet;
  std::vector<simulation_result> spare;  // per option
  std::vector<double> medians[2];        // the values each row's two medians are selected from
};

/// Runs every option of `s` for `seed` (no timeline, no charge log, no peak demands) and writes
/// one row per option to rows[0 … options).
void run_seed(const scenario& s, std::uint64_t seed, seed_workspace& ws, std::span<run_summary> rows);

} // namespace loopcast::detail
