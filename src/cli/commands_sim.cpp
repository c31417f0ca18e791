// `loopcast run` and `loopcast montecarlo`: simulate a scenario once or over many seeds.
#include "cli/cli.hpp"

#include "loopcast/compare.hpp"
#include "loopcast/montecarlo.hpp"
#include "loopcast/report.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/solve.hpp"
#include "loopcast/sweep.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace loopcast::cli {

namespace {

int cmd_run(const globals& g, const std::string& ref, const std::optional<std::uint64_t>& seed, bool as_json,
            const std::string& timeline) {
  const auto lib = library(g);
  const scenario scn = scenario_ref(g, lib, ref);
  run_options opt;
  opt.seed = seed;
  opt.record_attempts = !timeline.empty();
  const auto result = run_scenario(scn, opt);
  if (!timeline.empty())  // (streamed to the file: a timeline may be large)
    write_output(timeline, [&result](std::ostream& os) { write_timeline_csv(os, result); },
                 with_library_inputs(g, {ref}));
  if (as_json) std::cout << to_json(result) << "\n";
  else write_text_report(std::cout, result);
  return ok;
}

int cmd_montecarlo(const globals& g, const std::string& ref, const montecarlo_options& mo, bool as_json,
                   const std::string& csv) {
  const auto lib = library(g);
  const scenario scn = scenario_ref(g, lib, ref);
  const auto r = run_montecarlo(scn, mo);
  if (!csv.empty()) {
    std::ostringstream os;
    write_runs_csv(os, scn, r.rows);
    write_output(csv, os.str(), with_library_inputs(g, {ref}));
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
    write_output(csv, os.str(), with_library_inputs(g, {file}));
  }
  if (as_json) std::cout << sweep_to_json(spec, r) << "\n";
  else write_sweep_text(std::cout, spec, r);
  return ok;
}

// The index of the option with this label; empty: `fallback`.
std::size_t option_index(const scenario& s, const std::string& label, std::size_t fallback) {
  if (label.empty()) return fallback;
  std::string labels;
  for (std::size_t i = 0; i < s.options.size(); ++i) {
    if (s.options[i].label == label) return i;
    labels += fmt::format("{}{}", i ? ", " : "", s.options[i].label);
  }
  throw std::invalid_argument(fmt::format("scenario {} has no option \"{}\" (its options: {})", s.name, label, labels));
}

struct solve_args {
  std::string scenario, option, bucket, local, cloud;
  std::vector<std::string> on;
  solve_common common;
  double p429 = 0.1, horizon_s = 3600, stall_share = 0.05, tolerance = 0.01, hardware_usd = 0, lifetime_hours = 0;
  std::int32_t max_agents = 4096;
  bool as_json = false;
};

// A query with the options every question shares (seeds, threads, the option evaluated).
template <class Query>
Query query_for(const solve_args& a, const scenario& s) {
  Query q;
  static_cast<solve_common&>(q) = a.common;
  q.option = option_index(s, a.option, 0);
  return q;
}

int print_solve(const scenario& s, const solve_result& r, bool as_json) {
  if (as_json) std::cout << solve_to_json(s, r) << "\n";
  else write_solve_text(std::cout, s, r);
  return ok;
}

void add_solve_commands(CLI::App& app, const globals& g, std::vector<command>& cmds) {
  auto* solve = app.add_subcommand("solve", "Answer an inverse question by searching over the simulator");
  solve->require_subcommand(1);
  auto a = std::make_shared<solve_args>();
  a->common.threads = 0;  // on the command line, every core (the answer does not depend on it)
  auto common = [a](CLI::App* c, bool with_option) {
    c->add_option("scenario", a->scenario, "Scenario file or preset name")->required();
    if (with_option) c->add_option("--option", a->option, "Label of the option to evaluate (default: the first)");
    c->add_option("--seeds", a->common.seeds, "Seeds per evaluation (scenario seed, +1, …)")
        ->capture_default_str()->check(CLI::Range(1, 1000000));
    c->add_option("--threads", a->common.threads, "Threads (0: one per core)")->capture_default_str()->check(CLI::Range(0u, 1024u));
    c->add_flag("--json", a->as_json, "Print the result as JSON");
  };

  auto* agents = solve->add_subcommand("max-agents", "The most agents (sessions) with P(429 within the horizon) <= --p429");
  common(agents, true);
  agents->add_option("--p429", a->p429, "Largest acceptable fraction of seeds with a 429")->capture_default_str()
      ->check(finite_range(0.0, 1.0));
  agents->add_option("--horizon", a->horizon_s, "Seconds")->capture_default_str()->check(finite_range(1e-3, 1e9));
  agents->add_option("--max-agents", a->max_agents, "Stop the search here")->capture_default_str()->check(CLI::Range(1, 1000000));
  cmds.push_back({agents, [a, &g] {
                    const auto s = scenario_ref(g, library(g), a->scenario);
                    auto q = query_for<max_agents_query>(*a, s);
                    q.max_p429 = a->p429;
                    q.horizon_s = a->horizon_s;
                    q.max_agents = a->max_agents;
                    return print_solve(s, solve_max_agents(s, q), a->as_json);
                  }});

  auto* limit = solve->add_subcommand("min-limit", "The smallest factor on the limits that keeps the stall share <= --stall-share");
  common(limit, true);
  limit->add_option("--stall-share", a->stall_share, "Largest acceptable mean stall share")->capture_default_str()
      ->check(finite_range(0.0, 1.0));
  limit->add_option("--bucket", a->bucket, "Scale only this bucket (default: all)");
  limit->add_option("--tolerance", a->tolerance, "Relative width of the final bracket")->capture_default_str()
      ->check(finite_range(1e-4, 0.5));
  cmds.push_back({limit, [a, &g] {
                    const auto s = scenario_ref(g, library(g), a->scenario);
                    auto q = query_for<min_limit_query>(*a, s);
                    q.max_stall_share = a->stall_share;
                    q.bucket = a->bucket;
                    q.relative_tolerance = a->tolerance;
                    return print_solve(s, solve_min_limit(s, q), a->as_json);
                  }});

  auto* cheapest = solve->add_subcommand("cheapest", "The option (tier) with the lowest $ per task among those keeping "
                                                     "the stall share <= --stall-share");
  common(cheapest, false);
  cheapest->add_option("--stall-share", a->stall_share, "Largest acceptable mean stall share")->capture_default_str()
      ->check(finite_range(0.0, 1.0));
  cheapest->add_option("--on", a->on, "Also try this target preset (name or .json), with the first option's client");
  cmds.push_back({cheapest, [a, &g] {
                    const auto lib = library(g);
                    auto s = scenario_ref(g, lib, a->scenario);
                    for (const auto& ref : a->on) {
                      scenario_option o = s.options.front();
                      o.targets = {target_ref(lib, ref)};
                      o.label = o.first().name;
                      o.batch = false;
                      s.options.push_back(std::move(o));
                    }
                    auto q = query_for<cheapest_query>(*a, s);
                    q.max_stall_share = a->stall_share;
                    return print_solve(s, solve_cheapest_option(s, q), a->as_json);
                  }});

  auto* even = solve->add_subcommand("break-even", "The utilisation at which a local target (hardware amortised) "
                                                   "costs less per task than a cloud option");
  common(even, false);
  even->add_option("--local", a->local, "Label of the local option (default: the first local one)");
  even->add_option("--cloud", a->cloud, "Label of the cloud option (default: the first cloud one)");
  even->add_option("--hardware-usd", a->hardware_usd, "Purchase price to amortise (default: the target's)")
      ->check(finite_range(0.01, 1e9));
  even->add_option("--lifetime-hours", a->lifetime_hours, "Hours to amortise it over (default: the target's)")
      ->check(finite_range(1.0, 1e7));
  cmds.push_back({even, [a, &g] {
                    const auto s = scenario_ref(g, library(g), a->scenario);
                    auto q = query_for<breakeven_query>(*a, s);
                    if (!a->local.empty()) q.local = option_index(s, a->local, 0);
                    if (!a->cloud.empty()) q.cloud = option_index(s, a->cloud, 0);
                    q.hardware_usd = a->hardware_usd;
                    q.lifetime_hours = a->lifetime_hours;
                    return print_solve(s, solve_breakeven(s, q), a->as_json);
                  }});
}

struct compare_args {
  std::string workload, client = "opencode";
  std::vector<std::string> on, scores, limits;
  compare_options opt;
  double bar = 0;
  bool has_bar = false, as_json = false;
};

int cmd_compare(const globals& g, const compare_args& a) {
  const auto lib = library(g);
  std::error_code ec;
  const workload wl = a.workload.ends_with(".json") && std::filesystem::is_regular_file(a.workload, ec)
                          ? load_workload_file(a.workload)
                          : lib.load_workload(a.workload);
  std::vector<scenario_option> options;
  for (const auto& ref : a.on) {
    scenario_option o;
    o.targets = {target_ref(lib, ref)};
    o.label = o.first().name;
    o.client = client_ref(lib, a.client);
    options.push_back(std::move(o));
  }
  std::vector<target*> tgts;
  for (auto& o : options) tgts.push_back(&o.first());
  set_bucket_limits(tgts, a.limits);
  check_limits_set(tgts);
  auto opt = a.opt;
  for (const auto& s : a.scores) {
    const auto eq = s.rfind('=');
    double v = 0;
    try {
      if (eq == std::string::npos || eq == 0) throw std::invalid_argument("");
      std::size_t used = 0;
      v = std::stod(s.substr(eq + 1), &used);
      if (used != s.size() - eq - 1 || !std::isfinite(v)) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw std::invalid_argument(fmt::format("--score expects MODEL=NUMBER with a finite number, found \"{}\"", s));
    }
    opt.intelligence[s.substr(0, eq)] = v;
  }
  if (a.has_bar) opt.bar = a.bar;
  const auto r = compare_on(wl, options, opt);
  if (a.as_json) std::cout << compare_to_json(r) << "\n";
  else write_compare_text(std::cout, r);
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
  st->mc.threads = 0;  // on the command line, every core (results do not depend on it)
  std::vector<command> cmds;

  auto* run = app.add_subcommand("run", "Simulate a scenario (default: the reference case of docs/model.md §9)");
  run->add_option("scenario", st->scenario, "Scenario file or preset name")->capture_default_str();
  auto* seed_opt = run->add_option("--seed", st->seed, "Random seed (default: the scenario's)")->check(seed_digits());
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
      ->check(finite_range(1e-6, 10.0))->excludes(seeds_opt);
  mc->add_option("--metric", st->metric, "Metric of --precision: usd_per_task, stall_share, tasks_per_hour, wall_s")
      ->capture_default_str()->check(member_of<mc_metric>());
  mc->add_option("--max-seeds", st->mc.max_seeds, "With --precision: stop at this many seeds")
      ->capture_default_str()->check(CLI::Range(2, 10000000));
  mc->add_option("--confidence", st->mc.confidence, "Confidence of the intervals")
      ->capture_default_str()->check(finite_range(0.5, 0.9999));
  mc->add_option("--horizon", st->mc.horizon_s, "Report P(first 429 within this many seconds)")
      ->capture_default_str()->check(finite_range(1e-3, 1e9));
  mc->add_option("--threads", st->mc.threads, "Threads (0: one per core); results do not depend on it")
      ->capture_default_str()->check(CLI::Range(0u, 1024u));
  mc->add_flag("--json", st->as_json, "Print the result as JSON");
  mc->add_option("--csv", st->csv, "Write one CSV row per run (seed × option) to FILE ('-': stdout)");
  cmds.push_back({mc, [st, &g] {
                    st->mc.metric = *parse_name<mc_metric>(st->metric);  // CLI::IsMember checked the name
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

  add_solve_commands(app, g, cmds);

  auto ca = std::make_shared<compare_args>();
  ca->opt.threads = 0;  // on the command line, every core
  auto* cmp = app.add_subcommand("compare", "Run a task (a workload with a contract) on several options: which meet "
                                            "the contract, at what price, and why the others fail");
  cmp->add_option("workload", ca->workload, "Workload preset or .json with a \"contract\" (task-code-completion, "
                                           "reference-agent-loop, task-long-document-batch, task-one-off-script)")->required();
  cmp->add_option("--on", ca->on, "Target preset (name or .json); repeat for each option")->required();
  cmp->add_option("--client", ca->client, "Client retry policy (name or .json)")->capture_default_str();
  cmp->add_option("--sessions", ca->opt.sessions, "Sessions at once (default: the contract's)")->check(CLI::Range(1, 100000));
  cmp->add_option("--stagger", ca->opt.stagger_s, "Seconds between session starts (default: the contract's)")
      ->check(finite_range(0.0, 1e6));
  cmp->add_option("--seeds", ca->opt.seeds, "Seeds (runs per option)")->capture_default_str()->check(CLI::Range(1, 100000));
  cmp->add_option("--seed", ca->opt.seed, "First seed")->capture_default_str()->check(seed_digits());
  cmp->add_option("--threads", ca->opt.threads, "Threads (0: one per core)")->capture_default_str()->check(CLI::Range(0u, 1024u));
  cmp->add_option("--limit", ca->limits, "Set a bucket's limit on every target that has it, BUCKET=N (repeatable): a "
                                        "plan's unpublished cap, or a what-if");
  cmp->add_option("--score", ca->scores, "Intelligence score of a model, MODEL=NUMBER (the target's model); repeatable");
  auto* bar = cmp->add_option("--bar", ca->bar, "The intelligence gate: a model passes with score >= bar");
  cmp->add_flag("--json", ca->as_json, "Print the result as JSON");
  cmds.push_back({cmp, [ca, bar, &g] {
                    ca->has_bar = bar->count() > 0;
                    return cmd_compare(g, *ca);
                  }});
  return cmds;
}

} // namespace loopcast::cli
