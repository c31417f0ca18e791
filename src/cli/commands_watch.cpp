// `loopcast watch`: a running session's next wall, following its log as `tail -F` follows a file;
// `watch --backtest`: how often such forecasts held the truth on logs whose end is known.
#include "cli/cli.hpp"

#include "loopcast/forecast.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/report/document.hpp"
#include "loopcast/report/forecast.hpp"
#include "loopcast/trace.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <thread>

#include <sys/stat.h>

namespace loopcast::cli {

namespace {

struct watch_args {
  std::vector<std::string> logs, limits, caps;
  std::string on, format, cuts = "0.25,0.5,0.75";
  double poll_s = 1, quit_after_s = 0, horizon_s = 7 * 86400.0;
  std::int32_t draws = 200, recent = forecast_options{}.recent_requests, block = forecast_options{}.block_requests;
  double pace_sigma = forecast_options{}.pace_sigma;
  std::int64_t work_budget = forecast_options{}.work_budget;
  std::uint64_t seed = 1;
  bool once = false, as_json = false, backtest = false, account = false, first_wall_only = false, each_window = false;
};

// The session logs that feed the target's account from this machine: every .jsonl under the
// default folders of the agent that uses the target's provider (Claude Code for Anthropic, Codex
// for OpenAI, both otherwise) written within its longest window (at most 366 days); a usage
// window holds every session sent in it, not only the newest one.
std::vector<std::filesystem::path> account_logs(const target& tgt) {
  namespace fs = std::filesystem;
  double window_s = 0;
  for (const auto& b : tgt.limits) window_s = std::max(window_s, b.period_s);
  window_s = std::clamp(window_s, 3600.0, 366 * 86400.0);
  const auto since = fs::file_time_type::clock::now() -
                     std::chrono::duration_cast<fs::file_time_type::duration>(std::chrono::duration<double>(window_s));
  const std::string agent = tgt.provider == "anthropic" ? "claude-code" : tgt.provider == "openai" ? "codex" : "";
  std::vector<fs::path> logs;
  for (const auto& place : default_log_locations()) {
    if (place.agent == "opencode" || (!agent.empty() && place.agent != agent)) continue;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(place.path, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec) || it->path().extension() != ".jsonl") continue;
      const auto t = it->last_write_time(ec);
      if (!ec && t >= since) logs.push_back(it->path());
    }
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

// What `tail -F` looks at: which file the name points to, its size and its last change.
struct file_look {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const file_look&) const = default;
};

file_look look_at(const std::filesystem::path& p) {
  struct stat st{};
  file_look f;
  if (::stat(p.c_str(), &st) != 0) return f;
  f.exists = true;
  f.dev = st.st_dev;
  f.ino = st.st_ino;
  f.size = st.st_size;
  f.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return f;
}

// What a forecast depends on in a log: its requests' count, tokens and last times.
struct log_fingerprint {
  std::size_t requests = 0;
  std::int64_t tokens = 0;
  double last_send = 0, last_end = 0;
  bool operator==(const log_fingerprint&) const = default;
};

log_fingerprint fingerprint_of(const recorded_trace& t) {
  log_fingerprint f;
  for (const auto& s : t.sessions)
    for (const auto& q : s.requests) {
      ++f.requests;
      f.tokens += q.tokens.total();
      f.last_send = std::max(f.last_send, q.t_send);
      if (std::isfinite(q.t_end)) f.last_end = std::max(f.last_end, q.t_end);
    }
  return f;
}

bool is_stream(const std::string& path) {
  if (path == "-") return true;
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

// A note on the log's state, as a line of text or a JSON object of the stream.
void say(const watch_args& a, const std::string& log, const std::string& event, const std::string& text) {
  if (a.as_json)
    std::cout << to_json_text(document(document::object{{"log", document(log)}, {"event", document(event)}}), -1) << "\n";
  else fmt::print("{}: {}\n", log, text);
  std::cout.flush();
}

forecast_options forecast_options_of(const watch_args& a) {
  forecast_options fo;
  fo.seed = a.seed;
  fo.draws = a.draws;
  fo.horizon_s = a.horizon_s;
  fo.recent_requests = a.recent;
  fo.block_requests = a.block;
  fo.pace_sigma = a.pace_sigma;
  fo.work_budget = a.work_budget;
  fo.each_window = !a.first_wall_only;
  return fo;
}

// The logs as one account: each imported on its own (a log with no complete request yet is left
// out until it has one), each API response counted once across them (a resumed session's copied
// transcript), then merged on one clock (merge_logs refuses logs that cannot share one).
std::optional<recorded_trace> account_trace(const std::vector<std::filesystem::path>& logs, trace_format format) {
  std::vector<recorded_trace> traces;
  for (const auto& p : logs) {
    try {
      traces.push_back(import_trace(p, format));
    } catch (const trace_error&) {
      // Not a usable log yet: wait for more lines.
    }
  }
  if (traces.empty()) return std::nullopt;
  drop_repeated_responses(traces);  // (the first copy of a response stays: some log keeps requests)
  return merge_logs(traces);
}

// One followed file as `tail -F` sees it.
struct followed {
  std::filesystem::path path;
  file_look last;
  bool vanished = false;
};

// Follows the logs as `tail -F` does: a new forecast whenever the requests of the account change;
// a log replaced (another file under the name) or truncated is read afresh; a log that vanishes is
// waited for. With `rescan` (the account's default logs), new session logs join as they appear.
// Quits after quit_after_s seconds without a change (0: never), counted from the end of the last
// forecast.
int follow(const watch_args& a, std::vector<std::filesystem::path> logs, const std::function<std::vector<std::filesystem::path>()>& rescan,
           const target& tgt, const preset_library& lib, trace_format format) {
  if (!a.as_json)
    fmt::print("watching {} on {} (Ctrl-C to stop)\n",
               logs.size() == 1 ? logs.front().string() : fmt::format("{} logs", logs.size()), tgt.name);
  std::vector<followed> files;
  for (auto& p : logs) files.push_back({std::move(p), {}, false});
  log_fingerprint seen;  // what the last forecast was of (with has_seen)
  bool has_seen = false;
  double seen_last = 0;         // its last send
  std::size_t seen_before = 0;  // its requests sent at or before seen_last
  auto last_change = std::chrono::steady_clock::now();
  for (;;) {
    if (rescan)
      for (auto& p : rescan())
        if (std::none_of(files.begin(), files.end(), [&](const followed& f) { return f.path == p; }))
          files.push_back({p, {}, false});
    bool changed = false;
    for (auto& f : files) {
      const auto now = look_at(f.path);
      if (!now.exists && !f.vanished && f.last.exists) {
        f.vanished = true;
        say(a, f.path.string(), "vanished", "the log is gone; waiting for it to come back");
      }
      if (now.exists && !(now == f.last)) {
        if (f.vanished || (f.last.exists && (now.ino != f.last.ino || now.dev != f.last.dev))) {
          say(a, f.path.string(), "replaced", "a new file under the log's name; reading it afresh");
          has_seen = false;
        } else if (f.last.exists && now.size < f.last.size) {
          say(a, f.path.string(), "truncated", "the log was truncated; reading it afresh");
          has_seen = false;
        }
        f.vanished = false;
        changed = true;
      }
      f.last = now;
    }
    if (changed) {
      std::vector<std::filesystem::path> present;
      for (const auto& f : files)
        if (f.last.exists) present.push_back(f.path);
      if (const auto t = account_trace(present, format)) {
        const auto fp = fingerprint_of(*t);
        // A request appended with a send before the last one already read (a clock set back, a log
        // copied in late): the forecast is made from the log sorted by send time, which is said.
        std::size_t before = 0;
        double last = -std::numeric_limits<double>::infinity(), earliest_new = std::numeric_limits<double>::infinity();
        for (const auto& s : t->sessions)
          for (const auto& r : s.requests) {
            last = std::max(last, r.t_send);
            if (has_seen && r.t_send <= seen_last) {
              ++before;
              earliest_new = std::min(earliest_new, r.t_send);
            }
          }
        if (has_seen && before > seen_before)
          say(a, t->file, "earlier_request",
              fmt::format("{} request{} sent before the last one already read ({}) appeared (the earliest sent {:.0f} s "
                          "before it): the forecast is made from the log sorted by send time",
                          before - seen_before, before - seen_before == 1 ? "" : "s", fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(static_cast<std::time_t>(seen_last))),
                          seen_last - earliest_new));
        if (!has_seen || !(seen == fp)) {
          auto fo = forecast_options_of(a);
          fo.agent = lib.load_client(default_client_for({*t}));
          const auto fc = forecast_next_wall(*t, tgt, fo);
          if (a.as_json) std::cout << forecast_to_json(fc, -1) << "\n";
          else write_forecast_text(std::cout, fc, a.horizon_s);
          std::cout.flush();
          seen = fp;
          has_seen = true;
          seen_last = last;
          seen_before = 0;
          for (const auto& s : t->sessions)
            for (const auto& r : s.requests) seen_before += r.t_send <= seen_last;
        }
      }
      last_change = std::chrono::steady_clock::now();
    }
    if (a.quit_after_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - last_change).count() >= a.quit_after_s) {
      if (!has_seen) {
        const bool gone = std::all_of(files.begin(), files.end(), [](const followed& f) { return f.vanished; });
        throw trace_error(files.size() == 1 ? files.front().path.string() : fmt::format("{} logs", files.size()), 0,
                          gone && !files.empty() ? "the log vanished and did not come back" : "no usable request while watching");
      }
      return ok;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(a.poll_s));
  }
}

std::vector<double> parse_cuts(const std::string& text) {
  std::vector<double> cuts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    double x = 0;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), x);
    if (item.empty() || ec != std::errc{} || p != item.data() + item.size() || !(x > 0 && x < 1))
      throw std::invalid_argument(fmt::format("--cuts {}: expected shares of a log's requests in (0, 1), as 0.25,0.5,0.75; "
                                              "found \"{}\"", text, item));
    cuts.push_back(x);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cuts;
}

std::vector<std::pair<std::string, double>> parse_caps(const std::vector<std::string>& caps) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& c : caps) {
    const auto eq = c.find('=');
    double x = 0;
    const char* end = c.data() + c.size();
    const auto [p, ec] = eq == std::string::npos ? std::from_chars_result{c.data(), std::errc::invalid_argument}
                                                 : std::from_chars(c.data() + eq + 1, end, x);
    if (eq == std::string::npos || eq == 0 || ec != std::errc{} || p != end || !(x > 0 && x <= 10))
      throw std::invalid_argument(fmt::format("--cap {}: expected BUCKET=SHARE, a share of the first window's use in (0, 10]", c));
    for (const auto& [name, share] : out)
      if (name == c.substr(0, eq)) throw std::invalid_argument(fmt::format("--cap {}: the bucket is capped twice", name));
    out.emplace_back(c.substr(0, eq), x);
  }
  return out;
}

int cmd_backtest(const globals& g, const watch_args& a) {
  if (a.logs.empty()) throw std::invalid_argument("watch --backtest: give the logs to backtest on");
  const auto lib = library(g);
  target tgt = target_ref(lib, a.on);
  backtest_options bo;
  bo.forecast = forecast_options_of(a);
  bo.each_window = a.each_window;
  bo.cuts = parse_cuts(a.cuts);
  bo.caps = parse_caps(a.caps);
  // The capped buckets' limits are the backtest's own; the rest are the --limit settings.
  target* tp = &tgt;
  set_bucket_limits({&tp, 1}, a.limits);
  for (auto& b : tgt.limits)
    for (const auto& [name, share] : bo.caps)
      if (b.name == name) b.limit_unpublished = false;
  check_limits_set({&tp, 1});
  const auto traces = import_traces({a.logs.begin(), a.logs.end()}, format_of(a.format));
  bo.forecast.agent = lib.load_client(default_client_for(traces));
  const auto r = backtest_forecasts(traces, tgt, bo);
  if (a.as_json) std::cout << backtest_to_json(r, bo) << "\n";
  else write_backtest_text(std::cout, r, bo);
  return ok;
}

int cmd_watch(const globals& g, const watch_args& a) {
  if (a.backtest) return cmd_backtest(g, a);
  if (!a.caps.empty()) throw std::invalid_argument("--cap sets a backtest's caps: give it with --backtest");
  if (a.each_window)
    throw std::invalid_argument("--each-window scores a backtest's forecasts of each window: give it with --backtest "
                                "(watch forecasts each window's wall unless --first-wall-only)");
  const auto lib = library(g);
  target tgt = target_ref(lib, a.on);
  target* tp = &tgt;
  set_bucket_limits({&tp, 1}, a.limits);
  check_limits_set({&tp, 1});
  const auto format = format_of(a.format);
  // The logs: those named; with none named (or --account), every log of this machine that feeds
  // the target's account within its longest window, new ones joining as they appear.
  const bool account = a.account || a.logs.empty();
  std::vector<std::filesystem::path> logs(a.logs.begin(), a.logs.end());
  if (account)
    for (auto& p : account_logs(tgt))
      if (std::find(logs.begin(), logs.end(), p) == logs.end()) logs.push_back(std::move(p));
  if (logs.empty())
    throw std::invalid_argument(fmt::format("watch: no {} session log written within the target's longest window in the "
                                            "default places (~/.claude/projects, ~/.codex/sessions, $CLAUDE_CONFIG_DIR, "
                                            "$CODEX_HOME): name one",
                                            tgt.provider == "anthropic" ? "Claude Code" : tgt.provider == "openai" ? "Codex"
                                                                                                                  : "Claude Code or Codex"));
  for (const auto& p : logs)
    if (is_stream(p.string()) && (!a.once || logs.size() > 1))
      throw std::invalid_argument(a.once ? fmt::format("watch {}: a stream is read alone: give it as the only log", p.string())
                                         : fmt::format("watch {}: a stream can be read once (--once), not followed: give a file",
                                                       p.string()));
  if (a.once) {
    // import_traces reads standard input, a FIFO or a device once (a FIFO without a writer is empty).
    auto traces = import_traces(logs, format);
    if (a.logs.size() == 1 && !account && traces.size() != 1)
      throw std::invalid_argument(fmt::format("watch {}: {} logs there; watch reads one (name a file)", a.logs.front(),
                                              traces.size()));
    const auto t = merge_logs(traces);
    auto fo = forecast_options_of(a);
    fo.agent = lib.load_client(default_client_for({t}));
    const auto f = forecast_next_wall(t, tgt, fo);
    if (a.as_json) std::cout << forecast_to_json(f, 2) << "\n";
    else write_forecast_text(std::cout, f, a.horizon_s);
    return ok;
  }
  std::function<std::vector<std::filesystem::path>()> rescan;
  if (account) rescan = [&tgt] { return account_logs(tgt); };
  return follow(a, std::move(logs), rescan, tgt, lib, format);
}

} // namespace

void add_watch_command(CLI::App& app, const globals& g, const std::string& formats, std::vector<command>& cmds) {
  auto wa = std::make_shared<watch_args>();
  auto* watch = app.add_subcommand("watch", "Follow a running session's log and forecast its next 429 or plan cut-off "
                                            "on a target (median and P10-P90); --backtest scores such forecasts");
  watch->add_option("logs", wa->logs, "The account's logs, one clock (default: this machine's Claude Code or Codex logs "
                                      "written within the target's longest window); with --backtest, the logs to backtest on");
  watch->add_flag("--account", wa->account, "Add this machine's logs of the account (the default places) to those named: "
                                            "logs copied from other machines join them");
  watch->add_option("--on", wa->on, "Target or plan preset (name or .json)")->required();
  watch->add_option("--limit", wa->limits, "Set a bucket's limit, BUCKET=N (repeatable): a plan's unpublished cap");
  watch->add_flag("--once", wa->once, "Forecast once from the log as it is, and exit (reads a stream too: - for stdin)");
  watch->add_flag("--json", wa->as_json, "Print JSON (following: one line per refresh)");
  watch->add_option("--poll", wa->poll_s, "Seconds between looks at the log")->capture_default_str()->check(finite_range(0.01, 3600));
  watch->add_option("--quit-after", wa->quit_after_s, "Stop after this many seconds without a change (0: never)")
      ->capture_default_str()->check(finite_range(0, 1e7));
  watch->add_option("--horizon", wa->horizon_s, "How far ahead to look for the next wall, s (at most 366 days)")
      ->capture_default_str()->check(finite_range(1, 366 * 86400.0));
  watch->add_option("--draws", wa->draws, "Continuations drawn")->capture_default_str()->check(CLI::Range(1, 100000));
  watch->add_option("--recent", wa->recent, "The recent requests a continuation resamples")
      ->capture_default_str()->check(CLI::Range(1, 1000000));
  watch->add_option("--block", wa->block, "Consecutive recent requests a continuation takes at a time")
      ->capture_default_str()->check(CLI::Range(1, 1000000));
  watch->add_option("--pace-sigma", wa->pace_sigma, "Log-normal spread of each draw's pace (its agent times)")
      ->capture_default_str()->check(finite_range(0, 5));
  watch->add_option("--work-budget", wa->work_budget, "Requests simulated over all draws at most")
      ->capture_default_str()->check(CLI::Range(std::int64_t{1}, std::int64_t{10'000'000'000}));
  watch->add_flag("--first-wall-only", wa->first_wall_only,
                  "Stop each draw at its first wall: no wall per window (faster)");
  watch->add_flag("--each-window", wa->each_window,
                  "With --backtest: score each window's own wall too (the truth: a replay waiting out each reset)");
  watch->add_option("--seed", wa->seed, "Seed of the draws")->capture_default_str()->check(seed_digits());
  watch->add_option("--format", wa->format, "Log format (default: detected): " + formats);
  watch->add_flag("--backtest", wa->backtest, "Cut each log at --cuts, forecast from before the cut and score it "
                                              "against the replay of the whole log (docs/watch.md)");
  watch->add_option("--cuts", wa->cuts, "Backtest: where to cut each log, shares of its requests")->capture_default_str();
  watch->add_option("--cap", wa->caps, "Backtest: BUCKET=SHARE sets the bucket's limit per log to SHARE × what the "
                                       "whole log used in its first window (repeatable)");
  cmds.push_back({watch, [wa, &g] { return cmd_watch(g, *wa); }});
}

} // namespace loopcast::cli
