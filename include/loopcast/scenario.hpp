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

} // namespace loopcast
