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
#include <stdexcept>

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

loopcast::trace_format format_of(const std::string& name) {
  if (name.empty()) return loopcast::trace_format::automatic;
  if (auto f = loopcast::parse_trace_format(name)) return *f;
  throw std::invalid_argument(fmt::format("unknown --format \"{}\" (expected auto, claude-code, codex, opencode, "
                                          "kv-cache-tester, swe-agent or loopcast)", name));
}

std::vector<std::filesystem::path> as_paths(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

// A target or client given as a preset name or a .json file.
loopcast::target target_ref(const loopcast::preset_library& lib, const std::string& ref) {
  std::error_code ec;
  if (ref.ends_with(".json") && std::filesystem::is_regular_file(ref, ec)) return loopcast::load_target_file(ref);
  return lib.load_target(ref);
}
loopcast::retry_policy client_ref(const loopcast::preset_library& lib, const std::string& ref) {
  std::error_code ec;
  if (ref.ends_with(".json") && std::filesystem::is_regular_file(ref, ec)) return loopcast::load_client_file(ref);
  return lib.load_client(ref);
}

int cmd_stats(const std::vector<std::string>& logs, const std::string& format, const std::string& models_dir,
              const std::string& price, bool as_json) {
  const auto traces = loopcast::import_traces(as_paths(logs), format_of(format));
  std::optional<loopcast::target> priced;
  if (!price.empty()) {
    priced = target_ref(library(models_dir), price);
    if (!priced->prices) throw loopcast::config_error(price, "", "has no prices to price the logs with");
  }
  const auto st = loopcast::compute_trace_stats(traces, priced ? &*priced->prices : nullptr);
  if (as_json) std::cout << loopcast::stats_to_json(traces, st) << "\n";
  else loopcast::write_stats_text(std::cout, traces, st);
  return ok;
}

int cmd_replay(const std::vector<std::string>& logs, const std::string& format, const std::string& models_dir,
               const std::vector<std::string>& on, const std::string& client, std::int64_t max_tokens,
               std::uint64_t seed, bool as_json, const std::string& timeline) {
  const auto traces = loopcast::import_traces(as_paths(logs), format_of(format));
  const auto lib = library(models_dir);
  std::vector<loopcast::scenario_option> options;
  for (const auto& ref : on) {
    loopcast::scenario_option o;
    o.tgt = target_ref(lib, ref);
    o.label = o.tgt.name;
    o.client = client_ref(lib, client);
    options.push_back(std::move(o));
  }
  loopcast::replay_options ro;
  ro.seed = seed;
  ro.default_max_tokens = max_tokens;
  ro.record_attempts = !timeline.empty();
  const auto r = loopcast::run_replay(traces, options, ro);
  if (!timeline.empty()) {
    std::ofstream f(timeline);
    if (!f) throw output_error(fmt::format("{}: cannot open for writing", timeline));
    loopcast::write_timeline_csv(f, r.options);
    if (!f) throw output_error(fmt::format("{}: write failed", timeline));
  }
  if (as_json) std::cout << loopcast::replay_to_json(traces, r) << "\n";
  else loopcast::write_replay_text(std::cout, traces, r);
  return ok;
}

int cmd_fit(const std::vector<std::string>& logs, const std::string& format, const std::string& out) {
  const auto traces = loopcast::import_traces(as_paths(logs), format_of(format));
  const auto fit = loopcast::fit_speed_model(traces);
  const auto name = std::filesystem::path(out).stem().string();
  const auto text = loopcast::fit_to_target_json(fit, name, traces);
  (void)loopcast::parse_target(text, out);  // the preset it writes must load
  std::ofstream f(out);
  if (!f) throw output_error(fmt::format("{}: cannot open for writing", out));
  f << text << "\n";
  if (!f) throw output_error(fmt::format("{}: write failed", out));
  fmt::print("fitted {} requests{}: R² {:.3f}; |predicted - recorded| / recorded P10 {:.1f}% · P50 {:.1f}% · P90 {:.1f}%\n",
             fit.samples, fit.used_ttft ? " (TTFT and decode separately)" : "", fit.r_squared, 100 * fit.abs_rel_error.p10,
             100 * fit.abs_rel_error.p50, 100 * fit.abs_rel_error.p90);
  const auto& p = std::get<loopcast::linear_curve>(fit.model.prefill);
  const auto& d = std::get<loopcast::linear_curve>(fit.model.decode);
  fmt::print("  overhead {:.3f} s · prefill {:.0f} tok/s at 0 ({:.0f} at 100K) · cached {:.2f} µs/token · decode {:.0f} tok/s "
             "at 0 ({:.0f} at 100K)\n",
             fit.model.overhead_s, 1 / p.a_s, 1 / (p.a_s + 1e5 * p.b_s_per_token), 1e6 * fit.model.cached_token_s, 1 / d.a_s,
             1 / (d.a_s + 1e5 * d.b_s_per_token));
  for (const auto& n : fit.notes) fmt::print("  note: {}\n", n);
  fmt::print("wrote {}\n", out);
  return ok;
}

int cmd_convert(const std::string& log, const std::string& format, const std::string& out) {
  const auto t = loopcast::import_trace(log, format_of(format));
  if (t.totals)
    throw loopcast::trace_error(log, 0, fmt::format("{} logs record per-task totals only: there are no requests to convert",
                                                    loopcast::to_string(t.format)));
  std::ofstream f(out);
  if (!f) throw output_error(fmt::format("{}: cannot open for writing", out));
  loopcast::write_loopcast_jsonl(f, t);
  if (!f) throw output_error(fmt::format("{}: write failed", out));
  fmt::print(stderr, "{}: {} requests in {} sessions written to {}\n", log, t.request_count(), t.sessions.size(), out);
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
  app.footer("Exit codes: 0 ok, 1 simulation failed, 2 bad command line, 3 bad input (preset, scenario or log), 4 cannot write output.");

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

  std::vector<std::string> logs;
  std::string format, price, client = "opencode", out;
  std::vector<std::string> on;
  std::int64_t max_tokens = 16384;
  std::uint64_t replay_seed = 1;
  const std::string formats = "auto, claude-code, codex, opencode, kv-cache-tester, swe-agent, loopcast";

  auto* stats = app.add_subcommand("stats", "Measure recorded agent sessions (DESIGN.md §8): throughput, context, cache, cost");
  stats->add_option("logs", logs, "Log files or directories")->required();
  stats->add_option("--format", format, "Log format (default: detected): " + formats);
  stats->add_option("--price", price, "Price the logs with this target preset (name or .json)");
  stats->add_flag("--json", as_json, "Print the result as JSON");

  auto* replay = app.add_subcommand("replay", "Re-time recorded sessions on other targets: 429s, stalls, cost, speed");
  replay->add_option("logs", logs, "Log files or directories (replayed together)")->required();
  replay->add_option("--on", on, "Target preset (name or .json); repeat for a side-by-side comparison")->required();
  replay->add_option("--client", client, "Client retry policy preset (name or .json)")->capture_default_str();
  replay->add_option("--max-tokens", max_tokens, "max_tokens of the replayed requests (reserved by some buckets)")
      ->capture_default_str()->check(CLI::Range(std::int64_t{1}, std::int64_t{10000000}));
  replay->add_option("--seed", replay_seed, "Seed of the clients' jitter")->capture_default_str();
  replay->add_option("--format", format, "Log format (default: detected): " + formats);
  replay->add_flag("--json", as_json, "Print the result as JSON");
  replay->add_option("--timeline", timeline, "Write one CSV row per request attempt to FILE");

  auto* fit = app.add_subcommand("fit", "Fit a speed model to recorded sessions and write it as a target preset");
  fit->add_option("logs", logs, "Log files or directories")->required();
  fit->add_option("-o,--output", out, "Where to write the preset (.json)")->required();
  fit->add_option("--format", format, "Log format (default: detected): " + formats);

  auto* convert = app.add_subcommand("convert", "Write a log as a loopcast JSONL trace (docs/trace-format.md)");
  std::string one_log;
  convert->add_option("log", one_log, "Log file or opencode folder")->required();
  convert->add_option("-o,--output", out, "Output .jsonl")->required();
  convert->add_option("--format", format, "Log format (default: detected): " + formats);

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
    if (stats->parsed()) return cmd_stats(logs, format, models_dir, price, as_json);
    if (replay->parsed()) return cmd_replay(logs, format, models_dir, on, client, max_tokens, replay_seed, as_json, timeline);
    if (fit->parsed()) return cmd_fit(logs, format, out);
    if (convert->parsed()) return cmd_convert(one_log, format, out);
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
