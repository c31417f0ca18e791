// `loopcast stats`, `replay`, `fit`, `convert`: recorded agent sessions.
#include "cli/cli.hpp"

#include "loopcast/files.hpp"
#include "loopcast/forecast.hpp"
#include "loopcast/loopcast.hpp"
#include "loopcast/plan_choice.hpp"
#include "loopcast/report/plans.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/speed_fit.hpp"
#include "loopcast/stats.hpp"
#include "loopcast/trace.hpp"
#include "loopcast/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <chrono>
#include <ctime>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <thread>

#include <sys/ioctl.h>
#include <unistd.h>

namespace loopcast::cli {

namespace {

std::vector<std::filesystem::path> as_paths(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

struct stats_args {
  std::string price, price_list, since, until, by = "model", timezone;
  double cache_ttl_s = 0;
  std::int64_t block_tokens = 1;
  bool as_json = false, as_csv = false, breakdown = false;
};

// The terminal's width when standard output is one ($COLUMNS, else the terminal's own), else 0.
std::size_t terminal_width() {
  if (!::isatty(STDOUT_FILENO)) return 0;
  if (const char* c = std::getenv("COLUMNS"); c && *c) {
    std::size_t w = 0;
    const auto [end, ec] = std::from_chars(c, c + std::strlen(c), w);
    if (ec == std::errc{} && *end == '\0' && w >= 40) return w;
  }
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  return 0;
}

int cmd_stats(const log_args& la, const globals& g, const stats_args& a) {
  if (a.as_json && a.as_csv) throw std::invalid_argument("give --json or --csv, not both");
  stats_options so;
  so.by = *parse_name<stats_grouping>(a.by);
  so.breakdown = a.breakdown;
  so.timezone = time_zone_name(a.timezone);  // an unknown zone is refused before the logs are read
  if (!a.since.empty()) so.since_unix = local_day_start("--since", a.since, a.timezone);
  if (!a.until.empty()) so.until_unix = local_day_start("--until", a.until, a.timezone, 1);  // the whole day
  if (!a.since.empty() && !a.until.empty() && so.until_unix <= so.since_unix)
    throw std::invalid_argument(fmt::format("--until {} is before --since {}", a.until, a.since));
  auto read = read_logs(la, true);
  const auto& traces = read.traces;
  for (const auto& p : read.places) fmt::print(stderr, "reading {}\n", p);
  std::optional<target> priced;
  if (!a.price.empty()) {
    priced = target_ref(library(g), a.price);
    if (!priced->prices) throw config_error(a.price, "", "has no prices to price the logs with");
    so.price_all = &*priced->prices;
  }
  model_price_book book;  // each request at its own model, unless --price prices them all
  if (!priced) {
    book = load_price_book(a.price_list, library(g), models_of(traces));
    so.prices = &book;
  }
  so.cache_ttl_s = a.cache_ttl_s;
  so.cache_block_tokens = a.block_tokens;
  const auto st = compute_trace_stats(traces, so);
  if (a.as_json) std::cout << stats_to_json(traces, st, 2, read.listing) << "\n";
  else if (a.as_csv) {
    write_stats_csv(std::cout, st);
    std::ostringstream summary;  // what the logs held, where the table does not go
    write_logs_summary(summary, traces, read.listing);
    fmt::print(stderr, "{}", summary.str().substr(1));
  } else write_stats_text(std::cout, traces, st, terminal_width(), read.listing);
  return ok;
}

struct replay_args {
  std::vector<std::string> on, limits;
  std::string client, timeline, price_list, speed = "target", context = "compact", spill_after = "0";
  bool no_cooldown = false;
  std::int64_t max_tokens = 0;
  double compact_at = 0;
  std::uint64_t seed = 1;
  bool as_json = false, no_limits = false;
};

// Everything a replay reads: the logs, the price list, the targets, maps and client given as files,
// and the presets' folder.
std::vector<std::string> replay_inputs(const globals& g, const std::vector<std::string>& logs, const replay_args& a) {
  std::vector<std::string> in = logs;
  in.push_back(a.price_list);
  in.push_back(a.client);
  for (const auto& ref : a.on) {
    in.push_back(ref);  // a file, a map file, or names (which name no file)
    for (std::size_t start = 0; start < ref.size();) {  // the files of 'A>B' and 'PATTERN=TARGET,…'
      const auto end = std::min(ref.find_first_of(">,", start), ref.size());
      const auto item = ref.substr(start, end - start);
      in.push_back(item.substr(item.find('=') == std::string::npos ? 0 : item.find('=') + 1));
      start = end + 1;
    }
  }
  return with_library_inputs(g, std::move(in));
}

int cmd_replay(const log_args& la, const globals& g, const replay_args& a) {
  auto logs = la.logs;
  for (const auto& m : la.machines) logs.push_back(m.substr(m.find('=') + 1));
  const auto inputs = replay_inputs(g, logs, a);
  if (!a.timeline.empty()) check_not_an_input(a.timeline, inputs);  // before the work, not after
  const auto read = read_logs(la, false);
  const auto& traces = read.traces;
  const auto lib = library(g);
  const auto client = client_ref(lib, a.client.empty() ? default_client_for(traces) : a.client);
  route_policy routing;
  if (a.spill_after == "never") {
    routing.spill_after_s = std::numeric_limits<double>::infinity();
  } else {
    const char* end = a.spill_after.data() + a.spill_after.size();
    const auto [p, ec] = std::from_chars(a.spill_after.data(), end, routing.spill_after_s);
    if (ec != std::errc{} || p != end || !(routing.spill_after_s >= 0 && routing.spill_after_s <= 1e7))
      throw std::invalid_argument(
          fmt::format("--spill-after {}: expected seconds from 0 to 10^7, or never", a.spill_after));
  }
  if (a.no_cooldown) routing.cooldown_after_fails = 0;
  std::vector<model_map> targets;
  for (const auto& ref : a.on) targets.push_back(parse_model_map(ref, lib, client, routing, a.no_limits));
  std::vector<target*> tgts;
  for (auto& rt : targets)
    for (auto& r : rt.entries)
      for (auto& t : r.option.targets) tgts.push_back(&t);
  set_bucket_limits(tgts, a.limits);
  check_limits_set(tgts);
  replay_options ro;
  ro.seed = a.seed;
  ro.max_tokens = a.max_tokens;
  ro.record_attempts = !a.timeline.empty();
  ro.speed = *parse_name<replay_speed>(a.speed);  // CLI::IsMember checked the name
  ro.policy = *parse_name<context_policy>(a.context);
  ro.compact_at = a.compact_at;
  if (g.attempt_budget > 0) ro.max_attempts = g.attempt_budget;
  const auto book = load_price_book(a.price_list, lib, models_of(traces));
  ro.recorded_prices = &book;
  const auto r = run_replay(traces, targets, ro);
  if (!a.timeline.empty())  // (streamed to the file: a timeline may be large)
    write_output(a.timeline, [&r](std::ostream& os) { write_timeline_csv(os, r.options); }, inputs);
  if (a.as_json) std::cout << replay_to_json(traces, r) << "\n";
  else write_replay_text(std::cout, traces, r, read.listing);
  return ok;
}

int cmd_fit(const std::vector<std::string>& logs, const std::string& format, const std::string& out,
            const std::string& model, std::int64_t window, bool no_noise) {
  check_not_an_input(out, logs);
  const auto traces = import_traces(as_paths(logs), format_of(format));
  const auto fit = fit_speed_model(traces, model);
  const auto name = std::filesystem::path(out).stem().string();
  fit_preset_options fo;
  fo.context_window_tokens = window;
  fo.noise = !no_noise;
  const auto text = fit_to_target_json(fit, name, traces, fo);
  // The preset it writes must load; if it does not, the logs are to blame, not the output file.
  try {
    (void)parse_target(text, "the preset fitted to the logs");
  } catch (const config_error& e) {
    throw trace_error(logs.front(), 0, fmt::format("the speed fitted to these logs is not a valid preset: {}", e.reason()));
  }
  write_output(out, text + "\n", logs);
  fmt::print("fitted {} requests{}: R² {:.3f}; |predicted - recorded| / recorded P10 {:.1f}% · P50 {:.1f}% · P90 {:.1f}%\n",
             fit.samples, fit.used_ttft ? " (TTFT and decode separately)" : "", fit.r_squared, 100 * fit.abs_rel_error.p10,
             100 * fit.abs_rel_error.p50, 100 * fit.abs_rel_error.p90);
  const auto& p = std::get<linear_curve>(fit.model.prefill);
  const auto& d = std::get<linear_curve>(fit.model.decode);
  fmt::print("  overhead {:.3f} s · prefill {:.0f} tok/s at 0 ({:.0f} at 100K) · cached {:.2f} µs/token · decode {:.0f} tok/s "
             "at 0 ({:.0f} at 100K)\n",
             fit.model.overhead_s, 1 / p.a_s, 1 / (p.a_s + 1e5 * p.b_s_per_token), 1e6 * fit.model.cached_token_s, 1 / d.a_s,
             1 / (d.a_s + 1e5 * d.b_s_per_token));
  if (fit.noise_sigma > 0)
    fmt::print("  noise: recorded / predicted has log-space spread {:.3f} per request and {:.3f} per session{}\n",
               fit.noise_sigma, fit.session_sigma, no_noise ? " (not written: --no-noise)" : " (speed.noise)");
  for (const auto& n : fit.notes) fmt::print("  note: {}\n", n);
  fmt::print("wrote {}\n", out);
  return ok;
}

struct fit_workload_args {
  std::string model;
  std::int64_t window = 0, max_tokens = 32000;
  int points = 40;
};

int cmd_fit_workload(const std::vector<std::string>& logs, const std::string& format, const std::string& out,
                     const fit_workload_args& a) {
  check_not_an_input(out, logs);
  const auto traces = import_traces(as_paths(logs), format_of(format));
  workload_fit_options fo;
  fo.name = std::filesystem::path(out).stem().string();
  fo.model_pattern = a.model;
  fo.context_window_tokens = a.window;
  fo.max_tokens = a.max_tokens;
  fo.quantile_points = a.points;
  const auto f = fit_workload(traces, fo);
  const auto text = workload_fit_to_json(f, logs);
  try {
    (void)parse_workload(text, "the workload fitted to the logs");
  } catch (const config_error& e) {
    throw trace_error(logs.front(), 0, fmt::format("the workload fitted to these logs is not a valid preset: {}", e.reason()));
  }
  write_output(out, text + "\n", logs);
  const auto& w = f.w;
  fmt::print("fitted {} sessions ({} requests) of {} logs; models: {}\n", f.sessions, f.requests, f.traces,
             fmt::join(f.models, ", "));
  fmt::print("  turns P10 {:.0f} · P50 {:.0f} · P90 {:.0f}; first prompt: {} system + task P50 {:.0f} tokens\n",
             quantile(w.turns, 0.1), quantile(w.turns, 0.5), quantile(w.turns, 0.9), w.system_prompt_tokens,
             quantile(w.task_tokens, 0.5));
  fmt::print("  tool result per turn P50 by band:");
  for (const auto& b : w.tool_result_bands) fmt::print(" {}+: {:.0f}", b.from_turn, quantile(b.tokens, 0.5));
  fmt::print(" tokens (session scale σ {:.2f}, ρ with turns {:+.2f})\n", w.session_scale.sigma, w.session_scale.turns_correlation);
  fmt::print("  output P50 {:.0f} · P90 {:.0f} tokens; agent time P50 {:.1f} · P90 {:.1f} s\n", quantile(w.output_tokens, 0.5),
             quantile(w.output_tokens, 0.9), quantile(w.tool_time_s, 0.5), quantile(w.tool_time_s, 0.9));
  fmt::print("  {} compactions{}; {} cache breaks in {} requests\n", f.compactions,
             w.compaction.enabled ? fmt::format(" (at {:.0f}% of {} tokens)", 100 * w.compaction.at_fraction, w.context_window_tokens)
                                  : std::string{},
             f.cache_breaks, f.break_candidates);
  for (const auto& n : f.notes) fmt::print("  note: {}\n", n);
  fmt::print("wrote {}\n", out);
  return ok;
}

int cmd_convert(const std::string& log, const std::string& format, const std::string& out) {
  check_not_an_input(out, {log});
  const auto t = import_trace(log, format_of(format));
  if (t.totals)
    throw trace_error(log, 0, fmt::format("{} logs record per-task totals only: there are no requests to convert",
                                                    to_string(t.format)));
  std::ostringstream os;
  write_loopcast_jsonl(os, t);
  write_output(out, os.str(), {log});
  fmt::print(stderr, "{}: {} requests in {} sessions written to {}\n", log, t.request_count(), t.sessions.size(), out);
  return ok;
}

std::string pct_or_dash(double x, bool sign = false) {
  if (std::isnan(x)) return "—";
  return sign ? fmt::format("{:+.1f}%", 100 * x) : fmt::format("{:.1f}%", 100 * x);
}

struct validate_args {
  std::vector<std::string> fit_on, workload_fit_on;
  std::string on, workload, price = "anthropic-tier1-claude-sonnet-4.5-1m";
  std::int32_t seeds = 20, sessions = 1000;
  std::uint64_t seed = 1;
  bool no_noise = false, as_json = false;
};

int cmd_validate_workload(const std::vector<recorded_trace>& held_out, const std::string& format, const globals& g,
                          const validate_args& a) {
  const auto lib = library(g);
  workload w;
  std::vector<std::string> notes;
  if (!a.workload_fit_on.empty()) {
    const auto train = import_traces(as_paths(a.workload_fit_on), format_of(format));
    const auto f = fit_workload(train);
    w = f.w;
    notes.push_back(fmt::format("workload fitted on {} sessions of {} logs", f.sessions, f.traces));
  } else {
    w = workload_ref(lib, a.workload);
    notes.push_back(fmt::format("workload {}", w.name));
  }
  const auto price_target = target_ref(lib, a.price);
  if (!price_target.prices)
    throw std::invalid_argument(fmt::format("--price {}: the target has no prices (a local target is priced by its power)", a.price));
  notes.push_back(fmt::format("costs at {}'s prices, every earlier prefix of a session cached", price_target.name));
  auto v = validate_workload(held_out, w, *price_target.prices, a.sessions, a.seed);
  v.notes.insert(v.notes.begin(), notes.begin(), notes.end());
  if (a.as_json) {
    std::cout << workload_validation_to_json(v) << "\n";
    return ok;
  }
  fmt::print("loopcast validate --workload — {} real sessions of {} held-out logs, {} synthetic sessions\n", v.real_sessions,
             held_out.size(), v.synthetic_sessions);
  for (const auto& n : v.notes) fmt::print("  {}\n", n);
  fmt::print("\n  {:<28} {:>6}   {:>27}   {:>27}\n", "measure", "KS", "real P10 · P50 · P90", "synthetic P10 · P50 · P90");
  auto num = [](double x, const std::string& unit) {
    if (std::isnan(x)) return std::string("—");
    return unit == "USD" ? fmt::format("{:.3f}", x) : fmt::format("{:.0f}", x);
  };
  for (const auto& m : v.measures)
    fmt::print("  {:<28} {:>6}   {:>27}   {:>27}  {}\n", m.name, std::isnan(m.ks) ? std::string("—") : fmt::format("{:.3f}", m.ks),
               fmt::format("{} · {} · {}", num(m.real.p10, m.unit), num(m.real.p50, m.unit), num(m.real.p90, m.unit)),
               fmt::format("{} · {} · {}", num(m.synthetic.p10, m.unit), num(m.synthetic.p50, m.unit),
                           num(m.synthetic.p90, m.unit)),
               m.unit);
  fmt::print("\n  cost per session, synthetic P10–P90 width / real: {}\n",
             std::isnan(v.cost_spread_ratio) ? std::string("—") : fmt::format("{:.2f}", v.cost_spread_ratio));
  return ok;
}

int cmd_validate(const std::vector<std::string>& logs, const std::string& format, const globals& g, const validate_args& a) {
  const int modes = !a.fit_on.empty() + !a.on.empty() + !a.workload.empty() + !a.workload_fit_on.empty();
  if (modes != 1)
    throw std::invalid_argument("validate needs one of --fit-on LOG... or --on TARGET (speeds), --workload PRESET or "
                                "--workload-fit-on LOG... (workloads)");
  const auto held_out = import_traces(as_paths(logs), format_of(format));
  if (!a.workload.empty() || !a.workload_fit_on.empty()) return cmd_validate_workload(held_out, format, g, a);
  const auto& fit_on = a.fit_on;
  const auto& on = a.on;
  const bool no_noise = a.no_noise, as_json = a.as_json;
  std::vector<std::string> notes;
  model_map rt;
  if (!fit_on.empty()) {
    const auto train = import_traces(as_paths(fit_on), format_of(format));
    rt = fitted_targets(train, 30, !no_noise, &notes);
  } else {
    rt = validation_target(target_ref(library(g), on), !no_noise);
    notes.push_back(fmt::format("every model on {} (its limits removed)", rt.label));
  }
  validation_options vo;
  vo.seeds = a.seeds;
  vo.seed = a.seed;
  auto r = validate_replay(held_out, rt, vo);
  r.notes.insert(r.notes.begin(), notes.begin(), notes.end());
  const auto& sm = r.summary;
  if (as_json) {
    std::cout << validation_to_json(r) << "\n";
    return ok;
  }
  fmt::print("loopcast validate — {} held-out log{}, {} timed requests, {} seed{} per log\n", held_out.size(),
             held_out.size() == 1 ? "" : "s", sm.requests, r.seeds, r.seeds == 1 ? "" : "s");
  for (const auto& n : r.notes) fmt::print("  {}\n", n);
  fmt::print("\n  {:<44} {:>8} {:>9} {:>9} {:>8} {:>10} {:>6} {:>8}\n", "log", "requests", "APE P50", "APE P90", "bias",
             "total err", "KS", "cache Δ");
  for (const auto& v : r.traces) {
    const auto name = std::filesystem::path(v.file).filename().string();
    fmt::print("  {:<44} {:>8} {:>9} {:>9} {:>8} {:>10} {:>6} {:>8}\n", name.size() > 44 ? name.substr(0, 43) + "~" : name,
               v.requests, pct_or_dash(v.ape_p50), pct_or_dash(v.ape_p90), pct_or_dash(v.bias_p50, true),
               pct_or_dash(v.total_error, true), std::isnan(v.ks) ? std::string("—") : fmt::format("{:.3f}", v.ks),
               pct_or_dash(v.cache_share_diff, true));
  }
  fmt::print("\n  per-request error, median over logs of the per-log median   {} (P90 over logs {})\n",
             pct_or_dash(sm.ape_p50_median), pct_or_dash(sm.ape_p50_p90));
  fmt::print("  total API time per log, median |error|                       {} (max {})\n",
             pct_or_dash(sm.total_error_abs_median), pct_or_dash(sm.total_error_abs_max));
  fmt::print("  signed bias (median)                                         {}\n", pct_or_dash(sm.bias_median, true));
  fmt::print("  KS distance of durations (median over logs)                  {}\n",
             std::isnan(sm.ks_median) ? std::string("—") : fmt::format("{:.3f}", sm.ks_median));
  fmt::print("  recorded durations inside the simulated P10–P90              {}\n", pct_or_dash(sm.coverage));
  fmt::print("  logs whose recorded API time is inside the seeds' P10–P90    {}\n", pct_or_dash(sm.total_coverage));
  fmt::print("  first-token time, median |error| ({} requests record it)  {}\n", sm.ttft_requests,
             pct_or_dash(sm.ttft_ape_median));
  if (r.models.size() > 1) {
    fmt::print("\n  {:<44} {:>8} {:>9} {:>9}\n", "model", "requests", "APE P50", "P10–P90");
    for (const auto& m : r.models)
      fmt::print("  {:<44} {:>8} {:>9} {:>9}\n", m.model, m.requests, pct_or_dash(m.ape_p50), pct_or_dash(m.coverage));
  }
  fmt::print("  anchors (serving simulators, docs/validation.md): BLIS 6.7% median E2E; LLMServingSim 2.0 ≤2.2%; Vidur <9%\n");
  return ok;
}

} // namespace

namespace {

// What the log commands' options fill in (one command runs).
struct log_state {
  std::vector<std::string> logs;
  std::string format, price, price_list, out, one_log;
  double cache_ttl_s = 0;
  std::int64_t block_tokens = 1;
  bool as_json = false;
  replay_args replay;
  std::string fit_model;
  std::int64_t fit_window = 0;
  bool fit_no_noise = false;
};

void add_stats_command(CLI::App& app, const globals& g, const std::string& formats, std::vector<command>& cmds) {
  auto sa = std::make_shared<stats_args>();
  auto* stats = app.add_subcommand("stats", "Measure recorded agent sessions (docs/model.md §8): throughput, context, cache, cost; "
                                            "with no LOG, every log in the agents' default places");
  auto la = std::make_shared<log_args>();
  add_log_options(stats, *la, formats, true);
  stats->add_option("--since", sa->since, "Only requests sent on or after this day (YYYY-MM-DD or YYYYMMDD, in --timezone)");
  stats->add_option("--until", sa->until, "Only requests sent on or before this day (YYYY-MM-DD or YYYYMMDD, in --timezone)");
  stats->add_option("--by", sa->by, "Group by model, day, week (from Monday), month, session, project (the folder the "
                                    "agent ran in), machine (--machine) or block (the 5-hour windows a Claude plan counts)")
      ->capture_default_str()->check(member_of<stats_grouping>());
  stats->add_option("--timezone", sa->timezone, "IANA time zone of days, weeks, months and blocks (default: the machine's, $TZ)")
      ->check(time_zone_given());
  stats->add_flag("--breakdown", sa->breakdown, "Split each group by model");
  stats->add_option("--price", sa->price, "Price every request with this target preset (name or .json) instead of its own model's prices");
  stats->add_option("--price-list", sa->price_list, "Price each request at its model from this LiteLLM or models.dev price list "
                                                   "first (default: $LOOPCAST_PRICE_LIST; then the preset catalogue and the bundled LiteLLM map)");
  stats->add_option("--cache-ttl", sa->cache_ttl_s, "Also report the hit rate and cost with a provider cache of this TTL, s")
      ->check(finite_range(0.001, 366.0 * 86400));
  stats->add_option("--block-tokens", sa->block_tokens, "Block size of that cache, tokens")
      ->capture_default_str()->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  stats->add_flag("--json", sa->as_json, "Print the result as JSON");
  stats->add_flag("--csv", sa->as_csv, "Print one CSV row per group");
  cmds.push_back({stats, [la, sa, &g] { return cmd_stats(*la, g, *sa); }});
}

void add_replay_command(CLI::App& app, const globals& g, const std::shared_ptr<log_state>& st, const std::string& formats, std::vector<command>& cmds) {
  auto* replay = app.add_subcommand("replay", "Re-time recorded sessions on other targets: 429s, stalls, cost, speed");
  auto& ra = st->replay;
  auto la = std::make_shared<log_args>();
  add_log_options(replay, *la, formats, false);
  replay->add_option("--on", ra.on,
                     "Target preset (name or .json), a route 'TARGET>TARGET' (a 429 spills to the next target, "
                     "docs/routing.md), or a mapping by model: 'claude-opus-*=TARGET,claude-haiku-*=TARGET' "
                     "or a .json file {\"PATTERN\": \"TARGET\"}; repeat for a side-by-side comparison")
      ->required();
  replay->add_option("--client", ra.client,
                     "Client preset (name or .json); default: the agent that wrote the logs (claude-code, codex, opencode)");
  replay->add_option("--max-tokens", ra.max_tokens,
                     "max_tokens of every replayed request (default: the client's, e.g. Claude Code's 32,000, capped at "
                     "the target's maximum output)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{10000000}));
  replay->add_option("--speed", ra.speed, "target (the target's speed model) or recorded (each request keeps its recorded time)")
      ->capture_default_str()->check(member_of<replay_speed>());
  replay->add_option("--context", ra.context,
                     "When a prompt outgrows the target's window: compact (as the agent would), truncate, or fail")
      ->capture_default_str()->check(member_of<context_policy>());
  replay->add_option("--compact-at", ra.compact_at,
                     "Compact when the prompt reaches this fraction of the target's window (default: the client's, else 0.83)")
      ->check(finite_range(0.05, 1.0));
  replay->add_option("--limit", ra.limits,
                     "Set a bucket's limit on every target that has it, BUCKET=N (repeatable): a plan's unpublished cap, "
                     "or a what-if");
  replay->add_option("--spill-after", ra.spill_after,
                     "Routes: spill when a 429's retry-after exceeds this many seconds (0: on every 429; never: always wait)")
      ->capture_default_str();
  replay->add_flag("--no-cooldown", ra.no_cooldown,
                   "Routes: never cool a target down (default: after one 429, for 5 s, as LiteLLM's router)");
  replay->add_flag("--no-limits", ra.no_limits, "Drop the targets' rate-limit buckets (with --speed recorded: the recording itself)");
  replay->add_option("--price-list", ra.price_list, "Price the recorded requests from this LiteLLM or models.dev list first "
                                                    "(default: $LOOPCAST_PRICE_LIST; then the catalogue and the bundled LiteLLM map)");
  replay->add_option("--seed", ra.seed, "Seed of the clients' jitter")->capture_default_str()->check(seed_digits());
  replay->add_flag("--json", ra.as_json, "Print the result as JSON");
  replay->add_option("--timeline", ra.timeline, "Write one CSV row per request attempt to FILE");
  cmds.push_back({replay, [st, la, &g] { return cmd_replay(*la, g, st->replay); }});
}

// fit, validate, fit-workload, convert.
void add_fit_commands(CLI::App& app, const globals& g, const std::shared_ptr<log_state>& st, const std::string& formats, std::vector<command>& cmds) {
  auto* fit = app.add_subcommand("fit", "Fit a speed model to recorded sessions and write it as a target preset");
  fit->add_option("logs", st->logs, "Log files or directories")->required();
  fit->add_option("-o,--output", st->out, "Where to write the preset (.json)")->required();
  fit->add_option("--format", st->format, "Log format (default: detected): " + formats);
  fit->add_option("--model", st->fit_model, "Fit only the requests of models matching this pattern (e.g. 'claude-opus-*')");
  fit->add_option("--context-window", st->fit_window, "The model's context window, tokens (default: derived from the logs, with a note)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000'000'000}));
  fit->add_flag("--no-noise", st->fit_no_noise, "Do not write the fitted noise (speed.noise: per request and per session)");
  cmds.push_back({fit, [st] { return cmd_fit(st->logs, st->format, st->out, st->fit_model, st->fit_window, st->fit_no_noise); }});

  auto va = std::make_shared<validate_args>();
  auto* validate = app.add_subcommand("validate", "Measure replays or workloads against held-out recordings, fitted on other logs");
  validate->add_option("logs", st->logs, "Held-out log files or directories")->required();
  validate->add_option("--fit-on", va->fit_on, "Speeds: logs to fit per-model speeds on (never the held-out ones)");
  validate->add_option("--on", va->on, "Speeds: or a target preset (name or .json) whose speed to validate");
  validate->add_option("--workload", va->workload, "Workloads: a workload preset (name or .json) to compare with the logs' sessions");
  validate->add_option("--workload-fit-on", va->workload_fit_on, "Workloads: or logs to fit a workload on (never the held-out ones)");
  validate->add_option("--price", va->price, "Workloads: target whose prices give the cost per session")->capture_default_str();
  validate->add_option("--sessions", va->sessions, "Workloads: synthetic sessions to draw")
      ->capture_default_str()->check(CLI::Range(1, 1'000'000));
  validate->add_option("--seeds", va->seeds, "Speeds: replays per log when the speed has noise")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  validate->add_option("--seed", va->seed, "First seed")->capture_default_str()->check(seed_digits());
  validate->add_flag("--no-noise", va->no_noise, "Speeds: replay without the fitted noise (point estimates)");
  validate->add_option("--format", st->format, "Log format (default: detected): " + formats);
  validate->add_flag("--json", va->as_json, "Print the result as JSON");
  cmds.push_back({validate, [st, va, &g] { return cmd_validate(st->logs, st->format, g, *va); }});

  auto fwa = std::make_shared<fit_workload_args>();
  auto* fitw = app.add_subcommand("fit-workload", "Fit a workload preset (turns, context growth, outputs, agent time, "
                                                  "compactions, cache breaks) to recorded sessions");
  fitw->add_option("logs", st->logs, "Log files or directories")->required();
  fitw->add_option("-o,--output", st->out, "Where to write the preset (.json)")->required();
  fitw->add_option("--format", st->format, "Log format (default: detected): " + formats);
  fitw->add_option("--model", fwa->model, "Fit only the sessions of models matching this pattern (e.g. 'claude-opus-*')");
  fitw->add_option("--context-window", fwa->window, "The agent's context window, tokens (default: the largest prompt seen, with a note)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000'000'000}));
  fitw->add_option("--max-tokens", fwa->max_tokens, "max_tokens of the generated requests")
      ->capture_default_str()->check(CLI::Range(std::int64_t{1}, std::int64_t{10'000'000}));
  fitw->add_option("--points", fwa->points, "Points of each quantile table")->capture_default_str()->check(CLI::Range(4, 1000));
  cmds.push_back({fitw, [st, fwa] { return cmd_fit_workload(st->logs, st->format, st->out, *fwa); }});

  auto* convert = app.add_subcommand("convert", "Write a log as a loopcast JSONL trace (docs/trace-format.md)");
  convert->add_option("log", st->one_log, "Log file or opencode folder")->required();
  convert->add_option("-o,--output", st->out, "Output .jsonl")->required();
  convert->add_option("--format", st->format, "Log format (default: detected): " + formats);
  cmds.push_back({convert, [st] { return cmd_convert(st->one_log, st->format, st->out); }});
}

} // namespace

struct plans_args {
  std::vector<std::string> limits;
  double max_blocked = 2;
  std::string timezone, home_plan, since;
  bool as_json = false;
};

// --since: N days before now ("30d"), or a local date.
double since_of(const std::string& text, const std::string& timezone) {
  if (text.size() >= 2 && text.back() == 'd') {
    int days = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size() - 1, days);
    if (ec == std::errc{} && p == text.data() + text.size() - 1 && days >= 1 && days <= 36500)
      return static_cast<double>(std::time(nullptr)) - days * 86400.0;
  }
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front())) && text.find('-') == std::string::npos &&
      text.size() < 8)
    throw std::invalid_argument(fmt::format("--since {}: expected Nd (days before now, 1 to 36500) or a date "
                                            "YYYY-MM-DD", text));
  return local_day_start("--since", text, timezone);
}

int cmd_plans(const log_args& la, const globals& g, const plans_args& a) {
  auto read = read_logs(la, true);
  bool claude = false, codex = false;
  for (const auto& t : read.traces) {
    claude = claude || (t.format == trace_format::claude_code && t.request_count() > 0);
    codex = codex || (t.format == trace_format::codex && t.request_count() > 0);
  }
  if (!claude && !codex)
    throw trace_error(la.logs.empty() ? std::string("(this machine's logs)") : la.logs.front(), 0,
                      "no Claude Code or Codex request to compare plans with (plans are compared for those two agents)");
  compare_plans_options o;
  o.home_plan = a.home_plan;
  o.max_blocked_hours_week = a.max_blocked;
  if (!a.since.empty()) o.since_unix_s = since_of(a.since, a.timezone);
  // A --limit names the buckets of one agent's plans or the other's: with both agents' logs it
  // must fit one of them.
  bool limits_used = a.limits.empty();
  std::string limit_error;
  o.set_given = [&](plan_agent, std::span<target* const> tgts) {
    if (a.limits.empty()) return;
    try {
      set_bucket_limits(tgts, a.limits);
      limits_used = true;
    } catch (const std::invalid_argument& e) {
      if (!claude || !codex) throw;
      if (limit_error.empty()) limit_error = e.what();
    }
  };
  const auto results = compare_plans(std::move(read.traces), library(g), o);
  if (!limits_used) throw std::invalid_argument(limit_error);
  if (a.as_json) std::cout << plan_choices_to_json(results) << "\n";
  else
    for (std::size_t i = 0; i < results.size(); ++i)
      std::cout << (i > 0 ? "\n" : "") << plan_choice_text(results[i], a.timezone);
  return ok;
}

void add_plans_command(CLI::App& app, const globals& g, const std::string& formats, std::vector<command>& cmds) {
  auto pa = std::make_shared<plans_args>();
  auto* plans = app.add_subcommand("plans", "Which plan? Your Claude Code and Codex sessions replayed on each plan "
                                            "(Claude Pro, Max, Ultra; ChatGPT Plus, Pro 5x, Pro 20x) and the API: $ a "
                                            "month, hours a week waiting for resets (docs/plans.md)");
  auto la = std::make_shared<log_args>();
  add_log_options(plans, *la, formats, true);
  plans->add_option("--limit", pa->limits, "A cap instead of the fitted or assumed one: BUCKET=N (every plan) or "
                                           "TARGET:BUCKET=N (a preset name or pattern); repeatable");
  plans->add_option("--plan", pa->home_plan, "The plan your logs were recorded on (pro, max, ultra; plus, pro 5x, "
                                             "pro 20x): the caps fitted from them are that plan's (default: the login "
                                             "method the logs name, else max or plus)");
  plans->add_option("--since", pa->since, "Only the sessions that started since: Nd (N days before now) or a day "
                                          "(YYYY-MM-DD, in --timezone)");
  plans->add_option("--max-blocked-hours", pa->max_blocked, "Hours a week of waiting for resets the verdict accepts")
      ->capture_default_str()->check(finite_range(0, 168));
  plans->add_option("--timezone", pa->timezone, "IANA time zone of the waits' clock times (default: the machine's, $TZ)")
      ->check(time_zone_given());
  plans->add_flag("--json", pa->as_json, "Print the result as JSON");
  cmds.push_back({plans, [la, pa, &g] { return cmd_plans(*la, g, *pa); }});
}

std::vector<command> log_commands(CLI::App& app, const globals& g) {
  auto st = std::make_shared<log_state>();
  const std::string formats = "auto, claude-code, codex, opencode, kv-cache-tester, swe-agent, loopcast";
  std::vector<command> cmds;
  add_stats_command(app, g, formats, cmds);
  add_plans_command(app, g, formats, cmds);
  add_replay_command(app, g, st, formats, cmds);
  add_watch_command(app, g, formats, cmds);
  add_fit_commands(app, g, st, formats, cmds);
  return cmds;
}

} // namespace loopcast::cli
