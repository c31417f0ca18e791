// What if Cerebras doubled the Developer tier's total-TPM limit? Runs the reference scenario's
// cloud option as published and with total_tpm at 900K, and prints when the wall comes, how long
// the session stalls and what it costs.
//
//   build/examples/what_if_limits [MODELS_DIR]
#include <loopcast/loopcast.hpp>

#include <fmt/format.h>

#include <iostream>

namespace {
void report(const char* label, const loopcast::scenario& scn) {
  loopcast::run_options opt;
  opt.record_attempts = false;
  const auto res = loopcast::run_scenario(scn, opt);
  const auto& cloud = res.options.front();
  const auto& sim = cloud.sim;
  std::string wall = "no 429";
  if (sim.first_429)
    wall = fmt::format("first 429 on request {} at {:.1f} s ({})", sim.first_429->request, sim.first_429->time_s,
                       sim.first_429->bucket_name);
  fmt::print("{:<22} {}; stalled {:.1f} s; wall clock {:.1f} s; ${:.4f} (${:.2f}/hour)\n", label, wall,
             sim.sessions.front().stall_s, sim.wall_s, sim.cost_usd, sim.cost_usd / (sim.wall_s / 3600.0));
}
} // namespace

int main(int argc, char** argv) {
  try {
    const auto lib = argc > 1 ? loopcast::preset_library({argv[1]}) : loopcast::preset_library::standard();
    auto scn = lib.load_scenario("reference");
    scn.options.resize(1);  // the cloud option only
    report("Developer tier:", scn);
    scn.options.front().first().find_bucket("total_tpm")->limit *= 2;
    report("total_tpm doubled:", scn);
  } catch (const loopcast::error& e) {
    std::cerr << "what_if_limits: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
