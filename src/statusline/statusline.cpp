// Claude Code's statusline `rate_limits` (limits_inference.hpp, docs/plans.md "Statusline"): read
// from standard input without ever blocking the bar, printed, written as one log line, read back,
// and turned into what plan inference reads (statusline.hpp).
#include "statusline/statusline.hpp"

#include "loopcast/errors.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>

namespace loopcast {

using json = nlohmann::json;

namespace {

// One window of the input: {"used_percentage": P, "resets_at": EPOCH} (Claude Code's names; the log
// keeps them). Absent or null: nullopt.
std::optional<window_usage> window_in(const json& rl, const char* key, const std::string& source) {
  const auto w = rl.find(key);
  if (w == rl.end() || w->is_null()) return std::nullopt;
  const auto pointer = fmt::format("/rate_limits/{}", key);
  if (!w->is_object()) throw config_error(source, pointer, "expected an object with used_percentage and resets_at");
  const auto p = w->find("used_percentage"), r = w->find("resets_at");
  if (p == w->end() || !p->is_number())
    throw config_error(source, pointer + "/used_percentage", "expected a number from 0 to 100");
  if (r == w->end() || !r->is_number()) throw config_error(source, pointer + "/resets_at", "expected Unix seconds");
  window_usage u{p->get<double>(), r->get<double>()};
  if (!(u.used_percent >= 0 && u.used_percent <= 100))
    throw config_error(source, pointer + "/used_percentage", fmt::format("expected a number from 0 to 100, found {}", u.used_percent));
  if (!(std::abs(u.resets_at_unix) <= 1e11))
    throw config_error(source, pointer + "/resets_at", fmt::format("expected Unix seconds within ±10^11, found {}", u.resets_at_unix));
  return u;
}

json window_json(const window_usage& u) { return {{"used_percentage", u.used_percent}, {"resets_at", u.resets_at_unix}}; }

// The snapshot in the parsed input, leniently: a window that cannot be read is left out and its
// error kept in `problems` (the line shows what it can).
std::optional<statusline_snapshot> lenient_snapshot(const json& j, double now, std::vector<std::string>& problems) {
  const auto rl = j.find("rate_limits");
  if (rl == j.end() || rl->is_null()) return std::nullopt;
  if (!rl->is_object()) {
    problems.push_back("<stdin>: /rate_limits: expected an object");
    return std::nullopt;
  }
  statusline_snapshot s;
  s.t = now;
  if (const auto id = j.find("session_id"); id != j.end() && id->is_string()) s.session_id = id->get<std::string>();
  for (const auto& [key, slot] : {std::pair{"five_hour", &s.five_hour}, std::pair{"seven_day", &s.seven_day}}) {
    try {
      *slot = window_in(*rl, key, "<stdin>");
    } catch (const config_error& e) {
      problems.push_back(e.what());
    }
  }
  if (!s.five_hour && !s.seven_day) return std::nullopt;
  return s;
}

double now_unix() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The first JSON object of the input: bytes until its braces close (outside strings), the input
// ends, 1 MiB, or the deadline passes (stdin that is never closed, or a writer that stalls).
struct first_object {
  std::string text;
  bool complete = false;   ///< its braces closed
  bool timed_out = false;  ///< the deadline passed first
  bool too_long = false;
};
first_object read_first_object(int fd, double deadline_s) {
  first_object r;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(deadline_s);
  int depth = 0;
  bool in_string = false, escaped = false, started = false;
  char buf[8192];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      return r;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      r.timed_out = true;
      return r;
    }
    const ssize_t n = ready < 0 ? -1 : ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return r;  // the end (or an error: what came is all there is)
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buf[i];
      r.text += c;
      if (in_string) {
        if (escaped) escaped = false;
        else if (c == '\\') escaped = true;
        else if (c == '"') in_string = false;
        continue;
      }
      if (c == '"') in_string = true;
      else if (c == '{') {
        ++depth;
        started = true;
      } else if (c == '}' && --depth == 0 && started) {
        r.complete = true;
        return r;
      }
    }
    if (r.text.size() > (1u << 20)) {
      r.too_long = true;
      return r;
    }
  }
}

std::string local_time(double t, const char* format) {
  const auto tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

// A percentage as the bar shows it: whole points, rounded down (99.6% is not full), one decimal
// between 99 and 100.
std::string percent(double p) {
  if (p > 99 && p < 100) return fmt::format("{:.1f}%", std::floor(p * 10) / 10);
  return fmt::format("{:.0f}%", std::floor(p));
}

// When a window resets: a clock time within a day, a weekday and time within a week, a date
// beyond; "reset passed" for a time already gone (the percentage is stale).
std::string reset_text(double resets_at, double now) {
  const double in = resets_at - now;
  if (in < 0) return "reset passed";
  if (in < 86400) return "↻ " + local_time(resets_at, "%H:%M");
  if (in < 7 * 86400.0) return "↻ " + local_time(resets_at, "%a %H:%M");
  return "↻ " + local_time(resets_at, "%b %d %H:%M");
}

void write_fd(int fd, const std::string& s) noexcept {
  for (std::size_t done = 0; done < s.size();) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // (a closed or full descriptor: nothing more can be said)
    done += static_cast<std::size_t>(n);
  }
}

// Appends `line` (newline included) with one write, opening without blocking; why not, or "".
std::string append_line(const std::string& path, const std::string& line) {
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::exists(dir, ec)) std::filesystem::create_directories(dir, ec);
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == ENXIO) return "a FIFO that nobody reads";
    return std::strerror(errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return "not a regular file";
  }
  ssize_t n = 0;
  do n = ::write(fd, line.data(), line.size());
  while (n < 0 && errno == EINTR);
  const int err = errno;
  const bool closed = ::close(fd) == 0;
  if (n < 0) return std::strerror(err);
  if (static_cast<std::size_t>(n) != line.size()) return "the disk took only part of the line";
  if (!closed) return std::strerror(errno);
  return "";
}

std::string default_log() {
  const char* env = std::getenv("LOOPCAST_STATUSLINE_LOG");
  if (env && *env) return env;
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.claude/loopcast-statusline.jsonl";
  return "";
}

} // namespace

std::optional<statusline_snapshot> parse_statusline_input(std::string_view text, double now_unix, const std::string& source) {
  const auto j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw config_error(source, "", "expected Claude Code's statusline JSON (an object)");
  const auto rl = j.find("rate_limits");
  if (rl == j.end() || rl->is_null()) return std::nullopt;
  if (!rl->is_object()) throw config_error(source, "/rate_limits", "expected an object");
  statusline_snapshot s;
  s.t = now_unix;
  if (const auto id = j.find("session_id"); id != j.end() && id->is_string()) s.session_id = id->get<std::string>();
  s.five_hour = window_in(*rl, "five_hour", source);
  s.seven_day = window_in(*rl, "seven_day", source);
  if (!s.five_hour && !s.seven_day) return std::nullopt;
  return s;
}

std::string statusline_log_line(const statusline_snapshot& s) {
  json rl = json::object();
  if (s.five_hour) rl["five_hour"] = window_json(*s.five_hour);
  if (s.seven_day) rl["seven_day"] = window_json(*s.seven_day);
  json j = {{"t", s.t}, {"session_id", s.session_id}, {"rate_limits", rl}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::vector<statusline_snapshot> read_statusline_log(const std::string& path, std::size_t* skipped) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw trace_error(path, 0, fmt::format("cannot read the statusline log: {}", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw trace_error(path, 0, "cannot read the statusline log: a folder");
  }
  (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::vector<statusline_snapshot> out;
  std::size_t bad = 0;
  std::int64_t n = 0;
  std::string line;
  bool overlong = false;  // the line being read passed statusline_read_max: skipped to its end
  auto take = [&] {
    ++n;
    if (overlong) {
      ++bad;
      overlong = false;
      line.clear();
      return;
    }
    if (line.empty()) return;
    const auto j = json::parse(line, nullptr, false);
    const auto t = j.is_object() ? j.find("t") : j.end();
    try {
      if (t == j.end() || !t->is_number() || !(std::abs(t->get<double>()) <= 1e11)) ++bad;  // a torn or foreign line
      else if (auto s = parse_statusline_input(line, t->get<double>(), fmt::format("{}:{}", path, n))) out.push_back(*s);
    } catch (const config_error&) {
      ++bad;
    }
    line.clear();
  };
  char buf[65536];
  for (;;) {
    const ssize_t k = ::read(fd, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      const int err = errno;
      ::close(fd);
      throw trace_error(path, n + 1, fmt::format("read error: {}", std::strerror(err)));
    }
    if (k == 0) break;
    for (ssize_t i = 0; i < k; ++i) {
      if (buf[i] == '\n') {
        take();
        continue;
      }
      if (overlong) continue;
      if (line.size() >= detail::statusline_read_max) {
        overlong = true;
        line.clear();
        line.shrink_to_fit();
        continue;
      }
      line += buf[i];
    }
  }
  ::close(fd);
  if (!line.empty() || overlong) take();
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.t < b.t; });
  if (skipped) *skipped = bad;
  return out;
}

namespace detail {

std::vector<rate_limit_snapshot> statusline_as_rate_limits(std::span<const statusline_snapshot> snapshots) {
  std::vector<rate_limit_snapshot> out;
  out.reserve(snapshots.size());
  for (const auto& s : snapshots) {
    json j = json::object();
    if (s.five_hour)
      j["primary"] = {{"used_percent", s.five_hour->used_percent}, {"window_minutes", 300}, {"resets_at", s.five_hour->resets_at_unix}};
    if (s.seven_day)
      j["secondary"] = {{"used_percent", s.seven_day->used_percent}, {"window_minutes", 10080},
                        {"resets_at", s.seven_day->resets_at_unix}};
    out.push_back({s.t, j.dump()});
  }
  return out;
}

std::string statusline_text(const statusline_snapshot& s, double now) {
  std::string out;
  if (s.five_hour) out += fmt::format("5h {} {}", percent(s.five_hour->used_percent), reset_text(s.five_hour->resets_at_unix, now));
  if (s.seven_day)
    out += fmt::format("{}7d {} {}", out.empty() ? "" : " · ", percent(s.seven_day->used_percent),
                       reset_text(s.seven_day->resets_at_unix, now));
  return out;
}

int run_statusline(const statusline_call& call, int in_fd, int out_fd, int err_fd) noexcept {
  try {
    // Whatever still blocks (a log on a hung file system) ends with the call.
    if (call.call_deadline_s > 0) ::alarm(static_cast<unsigned>(std::ceil(call.call_deadline_s)));
    const double now = now_unix();
    const auto input = read_first_object(in_fd, call.input_deadline_s);
    std::vector<std::string> problems;
    std::optional<statusline_snapshot> snap;
    std::string shown;
    const auto j = json::parse(input.text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      shown = "plan usage: no input";
      problems.push_back(input.timed_out  ? fmt::format("no complete JSON object on stdin within {} s", call.input_deadline_s)
                         : input.too_long ? std::string("more than 1 MiB of statusline input")
                         : input.text.find_first_not_of(" \t\r\n") == std::string::npos
                             ? std::string("empty input (expected Claude Code's statusline JSON)")
                             : std::string("expected Claude Code's statusline JSON (an object)"));
    } else {
      snap = lenient_snapshot(j, now, problems);
      shown = snap ? statusline_text(*snap, now) : std::string("plan usage: not reported yet");
    }
    write_fd(out_fd, shown + "\n");  // the bar first: the log never holds it up
    std::string why;
    std::string path;
    if (snap && !call.no_log) {
      path = call.log.empty() ? default_log() : call.log;
      if (path.empty()) {
        why = "no HOME and no --log: say where to log the snapshots";
      } else {
        std::string line = statusline_log_line(*snap) + "\n";
        if (line.size() > statusline_line_max) {  // only a huge session id does that: cut it to fit
          auto cut = *snap;
          cut.session_id.resize(cut.session_id.size() - std::min(cut.session_id.size(), line.size() - statusline_line_max));
          line = statusline_log_line(cut) + "\n";
          problems.push_back(fmt::format("the session id was cut to fit one {}-byte line", statusline_line_max));
        }
        why = line.size() <= statusline_line_max ? append_line(path, line) : std::string("the line is too long");
      }
    }
    std::string err;
    for (const auto& p : problems) err += "loopcast statusline: " + p + "\n";
    if (!why.empty()) err += fmt::format("loopcast statusline: {}: snapshot not recorded: {}\n", path.empty() ? "log" : path, why);
    write_fd(err_fd, err);
    return 0;
  } catch (...) {  // (out of memory): the bar still gets a line
    write_fd(out_fd, "plan usage: n/a\n");
    return 0;
  }
}

} // namespace detail

} // namespace loopcast
