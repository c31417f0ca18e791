// loopcast — command-line interface.
//
// Exit codes: 0 success; 1 the simulation could not run; 2 bad command line; 3 bad input (a
// preset, scenario or file); 4 an output file could not be written. Errors are one line on stderr.
#include "loopcast/loopcast.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace {

enum exit_code : int { ok = 0, sim_failed = 1, usage = 2, bad_input = 3, cannot_write = 4 };

struct output_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

loopcast::preset_library library(const std::string& models_dir) {
  if (models_dir.empty()) return loopcast::preset_library::standard();
  return loopcast::preset_library({models_dir});
}

int cmd_run(const std::string& scenario_ref, const std::string& models_dir, const std::optional<std::uint64_t>& seed,
            bool as_json, const std::string& timeline) {
  const auto lib = library(models_dir);
  std::error_code ec;
  const loopcast::scenario scn = std::filesystem::is_regular_file(scenario_ref, ec)
                                     ? loopcast::load_scenario_file(scenario_ref, lib)
                                     : lib.load_scenario(scenario_ref);
  loopcast::run_options opt;
  opt.seed = seed;
  opt.record_attempts = !timeline.empty();
  const auto result = loopcast::run_scenario(scn, opt);
  if (!timeline.empty()) {
    std::ofstream f(timeline);
    if (!f) throw output_error(fmt::format("{}: cannot open for writing", timeline));
    loopcast::write_timeline_csv(f, result);
    if (!f) throw output_error(fmt::format("{}: write failed", timeline));
  }
  if (as_json) std::cout << loopcast::to_json(result) << "\n";
  else loopcast::write_text_report(std::cout, result);
  return ok;
}

int cmd_presets(const std::string& models_dir) {
  const auto lib = library(models_dir);
  fmt::print("presets in {}\n\n", models_dir.empty() ? loopcast::default_models_dir().string() : models_dir);
  fmt::print("{:<10} {:<36} {}\n", "kind", "name", "description");
  for (const auto& e : lib.entries())
    fmt::print("{:<10} {:<36} {}\n", loopcast::to_string(e.kind), e.name, e.description);
  return ok;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"loopcast — simulate agentic LLM sessions against providers' rate limits, prices and speed,\n"
               "and against local GPUs. See README.md and docs/."};
  app.set_version_flag("--version", loopcast::version_string);
  app.require_subcommand(1);
  app.footer("Exit codes: 0 ok, 1 simulation failed, 2 bad command line, 3 bad input file, 4 cannot write output.");

  std::string models_dir;
  app.add_option("--models", models_dir, "Presets directory (default: $LOOPCAST_MODELS or the bundled models/)")
      ->check(CLI::ExistingDirectory);

  auto* run = app.add_subcommand("run", "Simulate a scenario (default: the reference case of DESIGN.md §9)");
  std::string scenario_ref = "reference";
  std::uint64_t seed_value = 0;
  bool as_json = false;
  std::string timeline;
  run->add_option("scenario", scenario_ref, "Scenario file or preset name")->capture_default_str();
  auto* seed_opt = run->add_option("--seed", seed_value, "Random seed (default: the scenario's)");
  run->add_flag("--json", as_json, "Print the whole result as JSON (schema: docs/output.md)");
  run->add_option("--timeline", timeline, "Write one CSV row per request attempt to FILE");

  auto* presets = app.add_subcommand("presets", "List the presets in the models directory");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "loopcast: {}\n", e.what());
    return usage;
  }

  try {
    if (run->parsed()) {
      std::optional<std::uint64_t> seed;
      if (seed_opt->count() > 0) seed = seed_value;
      return cmd_run(scenario_ref, models_dir, seed, as_json, timeline);
    }
    if (presets->parsed()) return cmd_presets(models_dir);
  } catch (const loopcast::config_error& e) {
    fmt::print(stderr, "loopcast: {}\n", e.what());
    return bad_input;
  } catch (const loopcast::trace_error& e) {
    fmt::print(stderr, "loopcast: {}\n", e.what());
    return bad_input;
  } catch (const output_error& e) {
    fmt::print(stderr, "loopcast: {}\n", e.what());
    return cannot_write;
  } catch (const std::exception& e) {
    fmt::print(stderr, "loopcast: {}\n", e.what());
    return sim_failed;
  }
  return usage;
}
