// The benchmarks' fleet: N reference agents 2 s apart sharing the reference scenario's cloud option
// (Cerebras' Developer tier) with every limit × limits_x; the scripts are generated from seeds
// derive_seed(42, i), the clients' jitter from derive_seed(7, i). BM_Fleet times it and
// loopcast_shared_script writes it for the plain-Python model, so both simulate the same sessions.
#pragma once

#include <loopcast/loopcast.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace loopcast::bench {

struct reference_fleet {
  scenario_option option;
  std::vector<session_script> scripts;
  std::vector<session_plan> plans;  // point into `scripts`: moved, never copied

  reference_fleet() = default;
  reference_fleet(reference_fleet&&) = default;
  reference_fleet(const reference_fleet&) = delete;
  reference_fleet& operator=(const reference_fleet&) = delete;
};

/// `reference` is the reference scenario preset; `turns` > 0 fixes every session's turns (else the
/// workload's own distribution).
inline reference_fleet make_reference_fleet(const scenario& reference, std::size_t n, double limits_x, int turns = 0) {
  reference_fleet f;
  f.option = reference.options.at(0);
  for (auto& b : f.option.first().limits) b.limit *= limits_x;
  auto wl = reference.fleet.at(0).wl;
  if (turns > 0) wl.turns = fixed_dist{static_cast<double>(turns)};
  f.scripts.reserve(n);
  for (std::size_t i = 0; i < n; ++i) f.scripts.push_back(generate_session(wl, derive_seed(42, i)));
  for (std::size_t i = 0; i < n; ++i) f.plans.push_back({&f.scripts[i], 2.0 * static_cast<double>(i), derive_seed(7, i), 0});
  return f;
}

} // namespace loopcast::bench
