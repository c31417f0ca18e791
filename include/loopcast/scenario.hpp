// loopcast — a scenario: one workload run on several options (a cloud tier, a local GPU, …).
//
// Every option runs the *same* sessions: session i's script is generated from
// derive_seed(seed, i) whatever the option, so options differ only in how the work is timed,
// limited and billed. The client's jitter uses its own stream, derive_seed(seed, 2^32 + i).
#pragma once

#include "loopcast/metrics.hpp"
#include "loopcast/retry.hpp"
#include "loopcast/simulator.hpp"
#include "loopcast/target.hpp"
#include "loopcast/workload.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace loopcast {

struct scenario_option {
  std::string label;       ///< e.g. "cloud"
  target tgt;
  retry_policy client;
  bool batch = false;
};

struct scenario {
  std::string name;
  std::string description;
  workload wl;
  std::int32_t sessions = 1;
  double stagger_s = 0;          ///< session i starts at i · stagger_s, s
  std::uint64_t seed = 1;
  double start_unix_s = 0;       ///< Unix time of t = 0
  std::vector<scenario_option> options;
  std::vector<std::string> calibration;  ///< which parameter was fitted to which fact
  provenance origin;
};

struct option_result {
  std::string label;
  const scenario_option* option = nullptr;
  simulation_result sim;
  request_metrics metrics;
};

struct scenario_result {
  const scenario* scn = nullptr;
  std::uint64_t seed = 0;
  std::vector<session_script> scripts;   ///< the sessions every option ran
  std::vector<option_result> options;
};

struct run_options {
  std::optional<std::uint64_t> seed;  ///< overrides the scenario's seed
  bool record_attempts = true;
  bool record_charges = true;
};

scenario_result run_scenario(const scenario& s, const run_options& opt = {});

/// Simulates one option over the given sessions (batch from the option) and measures it.
option_result run_option(const scenario_option& o, std::span<const session_plan> plans, sim_options so);

/// One run of one option, summarised (a row of a Monte Carlo over seeds).
struct run_summary {
  std::uint64_t seed = 0;
  std::uint32_t option = 0;            ///< index into scenario::options
  double first_429_s = 0;              ///< NaN when no 429 happened
  double wall_s = 0;
  double stall_s = 0;                  ///< summed over sessions
  double stall_share = 0;              ///< stall_s / the sessions' summed durations
  double cost_usd = 0;
  double effective_tps_p50 = 0;        ///< 0 when no request was kept
  std::int32_t rate_limited = 0;       ///< 429s
  std::int32_t sessions_died = 0;      ///< sessions that did not complete
  std::int32_t requests_served = 0;
};

/// Runs the scenario once per seed (no timelines) and returns seeds × options rows, seed-major.
/// Everything happens in C++: callers from Python pay one call, not one per request.
std::vector<run_summary> run_seeds(const scenario& s, std::span<const std::uint64_t> seeds);

} // namespace loopcast
