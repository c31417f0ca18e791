// `loopcast stats`, `replay`, `fit`, `convert`: recorded agent sessions.
#include "cli.hpp"

#include "loopcast/loopcast.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/trace.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace loopcast::cli {

namespace {

trace_format format_of(const std::string& name) {
  if (name.empty()) return trace_format::automatic;
  if (auto f = parse_trace_format(name)) return *f;
  throw std::invalid_argument(fmt::format("unknown --format \"{}\" (expected auto, claude-code, codex, opencode, "
                                          "kv-cache-tester, swe-agent or loopcast)", name));
}

std::vector<std::filesystem::path> as_paths(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

int cmd_stats(const std::vector<std::string>& logs, const std::string& format, const globals& g,
              const std::string& price, bool as_json) {
  const auto traces = import_traces(as_paths(logs), format_of(format));
  std::optional<target> priced;
  if (!price.empty()) {
    priced = target_ref(library(g), price);
    if (!priced->prices) throw config_error(price, "", "has no prices to price the logs with");
  }
  const auto st = compute_trace_stats(traces, priced ? &*priced->prices : nullptr);
  if (as_json) std::cout << stats_to_json(traces, st) << "\n";
  else write_stats_text(std::cout, traces, st);
  return ok;
}

int cmd_replay(const std::vector<std::string>& logs, const std::string& format, const globals& g,
               const std::vector<std::string>& on, const std::string& client, std::int64_t max_tokens,
               std::uint64_t seed, bool as_json, const std::string& timeline) {
  const auto traces = import_traces(as_paths(logs), format_of(format));
  const auto lib = library(g);
  std::vector<scenario_option> options;
  for (const auto& ref : on) {
    scenario_option o;
    o.tgt = target_ref(lib, ref);
    o.label = o.tgt.name;
    o.client = client_ref(lib, client);
    options.push_back(std::move(o));
  }
  replay_options ro;
  ro.seed = seed;
  ro.default_max_tokens = max_tokens;
  ro.record_attempts = !timeline.empty();
  const auto r = run_replay(traces, options, ro);
  if (!timeline.empty()) {
    std::ofstream f(timeline);
    if (!f) throw output_error(fmt::format("{}: cannot open for writing", timeline));
    write_timeline_csv(f, r.options);
    if (!f) throw output_error(fmt::format("{}: write failed", timeline));
  }
  if (as_json) std::cout << replay_to_json(traces, r) << "\n";
  else write_replay_text(std::cout, traces, r);
  return ok;
}

int cmd_fit(const std::vector<std::string>& logs, const std::string& format, const std::string& out) {
  const auto traces = import_traces(as_paths(logs), format_of(format));
  const auto fit = fit_speed_model(traces);
  const auto name = std::filesystem::path(out).stem().string();
  const auto text = fit_to_target_json(fit, name, traces);
  (void)parse_target(text, out);  // the preset it writes must load
  std::ofstream f(out);
  if (!f) throw output_error(fmt::format("{}: cannot open for writing", out));
  f << text << "\n";
  if (!f) throw output_error(fmt::format("{}: write failed", out));
  fmt::print("fitted {} requests{}: R² {:.3f}; |predicted - recorded| / recorded P10 {:.1f}% · P50 {:.1f}% · P90 {:.1f}%\n",
             fit.samples, fit.used_ttft ? " (TTFT and decode separately)" : "", fit.r_squared, 100 * fit.abs_rel_error.p10,
             100 * fit.abs_rel_error.p50, 100 * fit.abs_rel_error.p90);
  const auto& p = std::get<linear_curve>(fit.model.prefill);
  const auto& d = std::get<linear_curve>(fit.model.decode);
  fmt::print("  overhead {:.3f} s · prefill {:.0f} tok/s at 0 ({:.0f} at 100K) · cached {:.2f} µs/token · decode {:.0f} tok/s "
             "at 0 ({:.0f} at 100K)\n",
             fit.model.overhead_s, 1 / p.a_s, 1 / (p.a_s + 1e5 * p.b_s_per_token), 1e6 * fit.model.cached_token_s, 1 / d.a_s,
             1 / (d.a_s + 1e5 * d.b_s_per_token));
  for (const auto& n : fit.notes) fmt::print("  note: {}\n", n);
  fmt::print("wrote {}\n", out);
  return ok;
}

int cmd_convert(const std::string& log, const std::string& format, const std::string& out) {
  const auto t = import_trace(log, format_of(format));
  if (t.totals)
    throw trace_error(log, 0, fmt::format("{} logs record per-task totals only: there are no requests to convert",
                                                    to_string(t.format)));
  std::ofstream f(out);
  if (!f) throw output_error(fmt::format("{}: cannot open for writing", out));
  write_loopcast_jsonl(f, t);
  if (!f) throw output_error(fmt::format("{}: write failed", out));
  fmt::print(stderr, "{}: {} requests in {} sessions written to {}\n", log, t.request_count(), t.sessions.size(), out);
  return ok;
}

} // namespace

std::vector<command> log_commands(CLI::App& app, const globals& g) {
  struct state {
    std::vector<std::string> logs, on;
    std::string format, price, client = "opencode", out, one_log;
    std::int64_t max_tokens = 16384;
    std::uint64_t seed = 1;
    bool as_json = false;
    std::string timeline;
  };
  auto st = std::make_shared<state>();
  const std::string formats = "auto, claude-code, codex, opencode, kv-cache-tester, swe-agent, loopcast";
  std::vector<command> cmds;

  auto* stats = app.add_subcommand("stats", "Measure recorded agent sessions (DESIGN.md §8): throughput, context, cache, cost");
  stats->add_option("logs", st->logs, "Log files or directories")->required();
  stats->add_option("--format", st->format, "Log format (default: detected): " + formats);
  stats->add_option("--price", st->price, "Price the logs with this target preset (name or .json)");
  stats->add_flag("--json", st->as_json, "Print the result as JSON");
  cmds.push_back({stats, [st, &g] { return cmd_stats(st->logs, st->format, g, st->price, st->as_json); }});

  auto* replay = app.add_subcommand("replay", "Re-time recorded sessions on other targets: 429s, stalls, cost, speed");
  replay->add_option("logs", st->logs, "Log files or directories (replayed together)")->required();
  replay->add_option("--on", st->on, "Target preset (name or .json); repeat for a side-by-side comparison")->required();
  replay->add_option("--client", st->client, "Client retry policy preset (name or .json)")->capture_default_str();
  replay->add_option("--max-tokens", st->max_tokens, "max_tokens of the replayed requests (reserved by some buckets)")
      ->capture_default_str()->check(CLI::Range(std::int64_t{1}, std::int64_t{10000000}));
  replay->add_option("--seed", st->seed, "Seed of the clients' jitter")->capture_default_str();
  replay->add_option("--format", st->format, "Log format (default: detected): " + formats);
  replay->add_flag("--json", st->as_json, "Print the result as JSON");
  replay->add_option("--timeline", st->timeline, "Write one CSV row per request attempt to FILE");
  cmds.push_back({replay, [st, &g] {
                    return cmd_replay(st->logs, st->format, g, st->on, st->client, st->max_tokens, st->seed, st->as_json,
                                      st->timeline);
                  }});

  auto* fit = app.add_subcommand("fit", "Fit a speed model to recorded sessions and write it as a target preset");
  fit->add_option("logs", st->logs, "Log files or directories")->required();
  fit->add_option("-o,--output", st->out, "Where to write the preset (.json)")->required();
  fit->add_option("--format", st->format, "Log format (default: detected): " + formats);
  cmds.push_back({fit, [st] { return cmd_fit(st->logs, st->format, st->out); }});

  auto* convert = app.add_subcommand("convert", "Write a log as a loopcast JSONL trace (docs/trace-format.md)");
  convert->add_option("log", st->one_log, "Log file or opencode folder")->required();
  convert->add_option("-o,--output", st->out, "Output .jsonl")->required();
  convert->add_option("--format", st->format, "Log format (default: detected): " + formats);
  cmds.push_back({convert, [st] { return cmd_convert(st->one_log, st->format, st->out); }});
  return cmds;
}

} // namespace loopcast::cli
