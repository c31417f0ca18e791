// What a scenario's runs share between running one (model/scenario.cpp) and running many seeds
// of it (study/seed_runs.cpp). Internal to loopcast.
#pragma once

#include "loopcast/budget.hpp"
#include "loopcast/metrics.hpp"
#include "loopcast/scenario.hpp"

#include <cstdint>

namespace loopcast::detail {

/// The simulation options of one run of the scenario (its start time and attempt budget).
sim_options simulation_options(const scenario& s, const run_options& opt);
/// A row of the run, given its requests' medians.
run_summary summarize_run(const option_result& r, std::uint64_t seed, std::uint32_t option, const request_medians& m);

} // namespace loopcast::detail
