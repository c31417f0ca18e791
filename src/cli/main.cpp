// loopcast — command-line interface.
//
// Exit codes: 0 success; 1 the simulation could not run; 2 bad command line; 3 bad input (a
// preset, scenario or file); 4 an output file could not be written. Errors are one line on stderr.
#include "cli/cli.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/version.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <system_error>

namespace {

// The first argument before "--" that starts with '-', is none of the app's options (or its
// subcommands'), and names an existing file or folder.
std::optional<std::string> path_taken_for_option(const CLI::App& app, int argc, char** argv) {
  std::set<std::string> spellings;
  std::vector<const CLI::App*> apps{&app};
  for (std::size_t i = 0; i < apps.size(); ++i) {
    for (const auto* o : apps[i]->get_options()) {
      for (const auto& n : o->get_lnames()) spellings.insert("--" + n);
      for (const auto& n : o->get_snames()) spellings.insert("-" + n);
    }
    for (const auto* sub : apps[i]->get_subcommands({})) apps.push_back(sub);
  }
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-' || spellings.contains(a.substr(0, a.find('=')))) continue;
    std::error_code ec;
    if (std::filesystem::exists(a, ec)) return a;
  }
  return std::nullopt;
}

} // namespace

int main(int argc, char** argv) {
  using namespace loopcast::cli;
  CLI::App app{"loopcast — simulate agentic LLM sessions against providers' rate limits, prices and speed,\n"
               "and against local GPUs. See README.md and docs/."};
  app.set_version_flag("--version", loopcast::version_string);
  app.require_subcommand(1);
  app.footer("Exit codes: 0 ok, 1 simulation failed, 2 bad command line, 3 bad input (preset, scenario or log), 4 cannot write output.");

  globals g;
  app.add_option("--models", g.models_dir, "Presets directory (default: $LOOPCAST_MODELS or the bundled models/)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--attempt-budget", g.attempt_budget,
                 "Stop each simulated run after this many attempts (429s included), its running sessions cut off "
                 "(default 200,000,000, or the scenario's \"attempt_budget\"): bounds run, montecarlo, solve and "
                 "replay on tiers a fleet overwhelms (a sweep takes \"attempt_budget\" from its base scenario)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000'000'000}));
  app.add_flag("-q,--quiet", g.quiet, "No progress line on stderr (shown only on a terminal, for work over ~2 s)");
  std::vector<command> cmds = simulation_commands(app, g);
  for (auto&& group : {log_commands(app, g), catalogue_commands(app, g)}) cmds.insert(cmds.end(), group.begin(), group.end());

  // A log path that starts with '-' (Claude Code's project folders do: -home-u-app) would be taken
  // for options (-h … prints help): it goes after "--". One that is no option of ours but names an
  // existing file or folder is refused, saying so.
  if (const auto path = path_taken_for_option(app, argc, argv)) {
    fmt::print(stderr, "loopcast: {0}: not an option, but an existing file or folder: put paths that start with '-' "
                       "after \"--\" (e.g. loopcast stats -- {0})\n", *path);
    return usage;
  }
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

  install_progress_bar(g.quiet);
  try {
    for (const auto& c : cmds)
      if (c.app->parsed()) {
        const int code = c.run();
        // Output lost on the way out (a full disk, a closed pipe) is a failure, not a success.
        std::cout.flush();
        if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
          fmt::print(stderr, "loopcast: standard output: write failed\n");
          return cannot_write;
        }
        return code;
      }
  } catch (const std::filesystem::filesystem_error& e) {
    const auto p = e.path1().string();
    fmt::print(stderr, "loopcast: {}{}\n", p.empty() ? "" : p + ": ", e.code().message());
    return bad_input;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "loopcast: out of memory (the run's estimate fitted the memory budget; lower "
                       "LOOPCAST_MEMORY_BUDGET_GB, or simulate less)\n");
    return sim_failed;
  } catch (const std::system_error& e) {
    fmt::print(stderr, "loopcast: {}\n", e.what());
    return sim_failed;
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "loopcast: {}\n", e.what());
    return usage;
  } catch (const loopcast::config_error& e) {
    fmt::print(stderr, "loopcast: {}\n", e.what());
    return bad_input;
  } catch (const loopcast::trace_error& e) {
    fmt::print(stderr, "loopcast: {}\n", e.what());
    return bad_input;
  } catch (const loopcast::simulation_error& e) {
    fmt::print(stderr, "loopcast: {}\n", e.what());
    return sim_failed;
  } catch (const loopcast::error& e) {  // e.g. too few requests to fit
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
