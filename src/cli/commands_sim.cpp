// `loopcast run` and `loopcast montecarlo`: simulate a scenario once or over many seeds.
#include "cli.hpp"

#include "loopcast/montecarlo.hpp"
#include "loopcast/report.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/sweep.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace loopcast::cli {

namespace {

int cmd_run(const globals& g, const std::string& ref, const std::optional<std::uint64_t>& seed, bool as_json,
            const std::string& timeline) {
  const auto lib = library(g);
  const scenario scn = scenario_ref(lib, ref);
  run_options opt;
  opt.seed = seed;
  opt.record_attempts = !timeline.empty();
  const auto result = run_scenario(scn, opt);
  if (!timeline.empty()) {
    std::ostringstream csv;
    write_timeline_csv(csv, result);
    write_output(timeline, csv.str());
  }
  if (as_json) std::cout << to_json(result) << "\n";
  else write_text_report(std::cout, result);
  return ok;
}

int cmd_montecarlo(const globals& g, const std::string& ref, const montecarlo_options& mo, bool as_json,
                   const std::string& csv) {
  const auto lib = library(g);
  const scenario scn = scenario_ref(lib, ref);
  const auto r = run_montecarlo(scn, mo);
  if (!csv.empty()) {
    std::ostringstream os;
    write_runs_csv(os, scn, r.rows);
    write_output(csv, os.str());
  }
  if (as_json) std::cout << montecarlo_to_json(scn, r) << "\n";
  else write_montecarlo_text(std::cout, scn, r);
  return ok;
}

int cmd_sweep(const globals& g, const std::string& file, unsigned threads, bool as_json, const std::string& csv,
              bool print_base) {
  const auto lib = library(g);
  const auto spec = load_sweep_file(file, lib);
  if (print_base) {
    std::cout << spec.base_json << "\n";
    return ok;
  }
  const auto r = run_sweep(spec, threads);
  if (!csv.empty()) {
    std::ostringstream os;
    write_sweep_csv(os, spec, r);
    write_output(csv, os.str());
  }
  if (as_json) std::cout << sweep_to_json(spec, r) << "\n";
  else write_sweep_text(std::cout, spec, r);
  return ok;
}

} // namespace

std::vector<command> simulation_commands(CLI::App& app, const globals& g) {
  struct state {
    std::string scenario = "reference", timeline, csv;
    std::uint64_t seed = 0;
    bool as_json = false, print_base = false;
    montecarlo_options mc;
    std::string metric = "usd_per_task";
  };
  auto st = std::make_shared<state>();
  std::vector<command> cmds;

  auto* run = app.add_subcommand("run", "Simulate a scenario (default: the reference case of DESIGN.md §9)");
  run->add_option("scenario", st->scenario, "Scenario file or preset name")->capture_default_str();
  auto* seed_opt = run->add_option("--seed", st->seed, "Random seed (default: the scenario's)");
  run->add_flag("--json", st->as_json, "Print the whole result as JSON (schema: docs/output.md)");
  run->add_option("--timeline", st->timeline, "Write one CSV row per request attempt to FILE");
  cmds.push_back({run, [st, seed_opt, &g] {
                    std::optional<std::uint64_t> seed;
                    if (seed_opt->count() > 0) seed = st->seed;
                    return cmd_run(g, st->scenario, seed, st->as_json, st->timeline);
                  }});

  auto* mc = app.add_subcommand("montecarlo", "Run a scenario over many seeds: quantiles of time to first 429, stall "
                                              "share, cost per task, with confidence intervals");
  mc->add_option("scenario", st->scenario, "Scenario file or preset name")->required();
  auto* seeds_opt = mc->add_option("--seeds", st->mc.seeds, "Number of seeds (scenario seed, +1, +2, …)")
                        ->capture_default_str()->check(CLI::Range(1, 10000000));
  mc->add_option("--precision", st->mc.precision,
                 "Instead of --seeds: add seeds until the mean of --metric is known within ±this fraction")
      ->check(CLI::Range(1e-6, 10.0))->excludes(seeds_opt);
  mc->add_option("--metric", st->metric, "Metric of --precision: usd_per_task, stall_share, tasks_per_hour, wall_s")
      ->capture_default_str()->check(CLI::IsMember({"usd_per_task", "stall_share", "tasks_per_hour", "wall_s"}));
  mc->add_option("--max-seeds", st->mc.max_seeds, "With --precision: stop at this many seeds")
      ->capture_default_str()->check(CLI::Range(2, 10000000));
  mc->add_option("--confidence", st->mc.confidence, "Confidence of the intervals")
      ->capture_default_str()->check(CLI::Range(0.5, 0.9999));
  mc->add_option("--horizon", st->mc.horizon_s, "Report P(first 429 within this many seconds)")
      ->capture_default_str()->check(CLI::Range(1e-3, 1e9));
  mc->add_option("--threads", st->mc.threads, "Threads (0: one per core); results do not depend on it")
      ->capture_default_str()->check(CLI::Range(0u, 1024u));
  mc->add_flag("--json", st->as_json, "Print the result as JSON");
  mc->add_option("--csv", st->csv, "Write one CSV row per run (seed × option) to FILE ('-': stdout)");
  cmds.push_back({mc, [st, &g] {
                    static const std::map<std::string, mc_metric> metrics = {
                        {"usd_per_task", mc_metric::usd_per_task}, {"stall_share", mc_metric::stall_share},
                        {"tasks_per_hour", mc_metric::tasks_per_hour}, {"wall_s", mc_metric::wall_s}};
                    st->mc.metric = metrics.at(st->metric);
                    return cmd_montecarlo(g, st->scenario, st->mc, st->as_json, st->csv);
                  }});

  auto* sweep = app.add_subcommand("sweep", "Run a grid over preset parameters × seeds (docs/sweeps.md)");
  sweep->add_option("file", st->scenario, "Sweep file (.json)")->required()->check(CLI::ExistingFile);
  sweep->add_option("--threads", st->mc.threads, "Threads (0: one per core); results do not depend on it")
      ->capture_default_str()->check(CLI::Range(0u, 1024u));
  sweep->add_flag("--json", st->as_json, "Print every point's distributions as JSON");
  sweep->add_option("--csv", st->csv, "Write one CSV row per run (point × seed × option) to FILE ('-': stdout)");
  sweep->add_flag("--print-base", st->print_base, "Print the resolved scenario the parameter paths point into, and stop");
  cmds.push_back({sweep, [st, &g] {
                    return cmd_sweep(g, st->scenario, st->mc.threads, st->as_json, st->csv, st->print_base);
                  }});
  return cmds;
}

} // namespace loopcast::cli
