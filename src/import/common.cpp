#include "import/common.hpp"

#include "json/parse.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace loopcast::detail {

namespace {
constexpr std::size_t max_issues_kept = 200;
}

void issue_log::skip(std::int64_t line, const std::string& reason, const std::string& detail) {
  ++s_.skipped[reason];
  note(line, detail.empty() ? reason : fmt::format("{}: {}", reason, detail));
}

void issue_log::note(std::int64_t line, const std::string& what) {
  ++s_.issues_total;
  if (s_.issues.size() < max_issues_kept) s_.issues.push_back({file_, line, what});
}

void for_each_line(const std::string& path, issue_log& log,
                   const std::function<void(std::int64_t, std::string_view)>& f) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw trace_error(path, 0, "cannot open file");
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } const close_at_end{fd};
  // One buffer, read into in large pieces: each complete line is given in place (no copy); the
  // unfinished one moves to the front before the next read, and a line longer than the buffer
  // grows it, up to max_line_bytes. Past that the line is dropped as it is read, never held whole.
  constexpr std::size_t piece = 1u << 20;
  thread_local std::vector<char> buf;  // kept for the thread's next file: no fresh pages per file
  if (buf.size() < piece + line_padding) buf.assign(piece + line_padding, '\0');
  struct shrink {
    ~shrink() {  // the room a long line took is given back
      if (buf.size() > 8 * piece + line_padding) std::vector<char>(piece + line_padding).swap(buf);
    }
  } const shrink_at_end;
  std::size_t begin = 0, end = 0;  // bytes read and not yet given: [begin, end)
  std::size_t scanned = 0;         // [begin, scanned) holds no newline
  std::int64_t n = 0;
  bool too_long = false, eof = false;
  const auto give = [&](std::size_t a, std::size_t b) {
    ++n;
    if (b > a && buf[b - 1] == '\r') --b;
    f(n, std::string_view(buf.data() + a, b - a));
  };
  const auto skip_long = [&](std::int64_t line) {
    log.skip(line, "line too long", fmt::format("over {} bytes", max_line_bytes));
  };
  for (;;) {
    while (scanned < end) {
      const void* nl = std::memchr(buf.data() + scanned, '\n', end - scanned);
      if (!nl) break;
      const auto at = static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data());
      if (too_long || at - begin > max_line_bytes) {
        skip_long(++n);
        too_long = false;
      } else {
        give(begin, at);
      }
      begin = scanned = at + 1;
    }
    scanned = end;
    if (eof) break;
    if (too_long) begin = scanned = end;  // the rest of a line being dropped
    if (begin > 0) {
      std::memmove(buf.data(), buf.data() + begin, end - begin);
      end -= begin;
      scanned = end;
      begin = 0;
    }
    if (!too_long && end > max_line_bytes) {
      too_long = true;
      begin = scanned = end = 0;
      std::vector<char>(piece + line_padding).swap(buf);
    }
    if (buf.size() - line_padding - end < piece / 2) buf.resize(2 * (buf.size() - line_padding) + line_padding);
    const auto got = ::read(fd, buf.data() + end, buf.size() - line_padding - end);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw trace_error(path, n, "read error");
    }
    if (got == 0) eof = true;
    else end += static_cast<std::size_t>(got);
  }
  if (too_long || end - begin > max_line_bytes) skip_long(n + 1);
  else if (end > begin) give(begin, end);
}

std::optional<nlohmann::json> parse_line(std::string_view text, std::int64_t line, issue_log& log) {
  if (text.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;  // blank
  auto r = parse_json_text<nlohmann::json>(text, max_json_depth, /*refuse_duplicates=*/false);
  if (r.value) return std::move(r.value);
  // (a syntax error's column: its byte in the line)
  log.skip(line, "not JSON", (r.syntax ? fmt::format("column {}: {}", r.byte, r.message) : r.message).substr(0, 160));
  return std::nullopt;
}

namespace {
// A valid UTC civil time as Unix seconds; nullopt for a date or time that does not exist.
std::optional<double> civil_seconds(int y, int mo, int d, int h, int mi, double sec) {
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{static_cast<unsigned>(mo)},
                                        std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || !(sec >= 0 && sec < 61)) return std::nullopt;
  const auto days = std::chrono::sys_days{ymd}.time_since_epoch().count();
  return static_cast<double>(days) * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
}

// "2026-02-10T21:11:56.846Z" as logs write it (fixed widths, UTC): read without sscanf or a copy.
// Anything else (an offset, narrower fields) is nullopt here and left to the general reader.
std::optional<double> parse_iso8601_utc(std::string_view s) {
  if (s.size() < 20 || s.back() != 'Z' || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  const auto num = [&](std::size_t at, std::size_t width) {
    int v = 0;
    for (std::size_t i = at; i < at + width; ++i) {
      if (s[i] < '0' || s[i] > '9') return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  const int y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || s[17] < '0' || s[17] > '9' || s[18] < '0' || s[18] > '9')
    return std::nullopt;
  double sec = 0;  // "56.846": exactly as strtod reads it
  const auto secs = s.substr(17, s.size() - 18);
  if (auto [ptr, ec] = std::from_chars(secs.data(), secs.data() + secs.size(), sec);
      ec != std::errc() || ptr != secs.data() + secs.size())
    return std::nullopt;
  return civil_seconds(y, mo, d, h, mi, sec);
}
} // namespace

std::optional<double> parse_iso8601(std::string_view s) {
  if (auto t = parse_iso8601_utc(s)) return t;
  int y, mo, d, h, mi;
  double sec;
  int consumed = 0;
  const std::string str(s);
  if (std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &sec, &consumed) != 6) return std::nullopt;
  std::string_view rest = s.substr(static_cast<std::size_t>(consumed));
  double offset = 0;
  if (rest == "Z" || rest.empty()) {
  } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
    int oh = 0, om = 0;
    if (std::sscanf(std::string(rest.substr(1)).c_str(), "%2d:%2d", &oh, &om) != 2) return std::nullopt;
    offset = (rest[0] == '+' ? 1 : -1) * (oh * 3600.0 + om * 60.0);
  } else {
    return std::nullopt;
  }
  const auto t = civil_seconds(y, mo, d, h, mi, sec);
  if (!t) return std::nullopt;
  return *t - offset;
}

std::optional<std::int64_t> count_at(const nlohmann::json& j, std::string_view key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double x = it->get<double>();
  if (!std::isfinite(x) || x < 0 || x != std::floor(x) || x > static_cast<double>(max_token_count)) return std::nullopt;
  return static_cast<std::int64_t>(x);
}

std::optional<double> number_at(const nlohmann::json& j, std::string_view key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double x = it->get<double>();
  if (!std::isfinite(x)) return std::nullopt;
  return x;
}

std::optional<bool> bool_at(const nlohmann::json& j, std::string_view key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

std::optional<std::string> string_at(const nlohmann::json& j, std::string_view key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::int32_t model_index(recorded_trace& t, std::string_view name) {
  for (std::size_t i = 0; i < t.models.size(); ++i)
    if (t.models[i] == name) return static_cast<std::int32_t>(i);
  t.models.emplace_back(name);
  return static_cast<std::int32_t>(t.models.size() - 1);
}

namespace {

// Every time and count as it enters loopcast: finite and within the documented bounds (times
// within ±10^11 s, agent delays 0 to 10^7 s, the first token inside its request, costs 0 to 10^6
// USD, prefix runs within the token cap). Out of range is an error naming the file and line:
// such a value is never a real recording, and downstream it would overflow or mislead.
void check_request(const recorded_trace& t, const recorded_session& s, const recorded_request& r) {
  const long line = static_cast<long>(r.source_line);
  auto fail = [&](const std::string& what) { throw trace_error(t.file, line, what); };
  auto time_ok = [](double x) { return std::isfinite(x) && std::abs(x) <= max_abs_time_s; };
  if (!time_ok(r.t_send))
    fail(fmt::format("session {}: send time {} s is out of range (a finite time within ±10^11 s)", s.id, r.t_send));
  if (!std::isnan(r.t_end) && !time_ok(r.t_end))
    fail(fmt::format("session {}: end time {} s is out of range (a finite time within ±10^11 s)", s.id, r.t_end));
  if (!std::isnan(r.t_first_token)) {
    if (!time_ok(r.t_first_token))
      fail(fmt::format("session {}: first-token time {} s is out of range (a finite time within ±10^11 s)", s.id,
                       r.t_first_token));
    // loopcast's own traces must be consistent; other logs' clocks may disagree by a little:
    // finish_trace drops such a first token with a note.
    if (t.format == trace_format::loopcast &&
        (r.t_first_token < r.t_send || (!std::isnan(r.t_end) && r.t_first_token > r.t_end)))
      fail(fmt::format("session {}: first token at {} s lies outside its request (sent {} s, ended {} s)", s.id,
                       r.t_first_token, r.t_send, r.t_end));
  }
  if (!std::isnan(r.delay_before_s) && !(r.delay_before_s >= 0 && r.delay_before_s <= max_delay_s))
    fail(fmt::format("session {}: delay_before_s {} is out of range (0 to 10^7 s)", s.id, r.delay_before_s));
  if (!std::isnan(r.cost_usd) && !(r.cost_usd >= 0 && r.cost_usd <= max_request_cost_usd))
    fail(fmt::format("session {}: cost_usd {} is out of range (0 to 10^6 USD per request)", s.id, r.cost_usd));
  for (std::uint32_t k = 0; k < r.runs_count; ++k) {
    const auto& run = t.runs[r.runs_begin + k];
    if (run.end_tokens < 0 || run.end_tokens > max_token_count)
      fail(fmt::format("session {}: prefix run end {} is out of range (0 to 10^13 tokens)", s.id, run.end_tokens));
    if (t.has_prefix && run.lineage >= t.lineages)
      fail(fmt::format("session {}: prefix lineage {} is not below the trace's {} lineages", s.id, run.lineage, t.lineages));
  }
}

} // namespace

std::uint64_t response_key_of(std::string_view a, std::string_view b) noexcept {
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&](std::string_view s) {
    for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  };
  mix(a);
  mix(std::string_view("\0", 1));
  mix(b);
  return h == 0 ? 1 : h;
}

void drop_empty_sessions(recorded_trace& t) {
  std::vector<std::int32_t> new_index(t.sessions.size(), -1);
  std::int32_t kept = 0;
  for (std::size_t i = 0; i < t.sessions.size(); ++i)
    if (!t.sessions[i].requests.empty()) new_index[i] = kept++;
  if (static_cast<std::size_t>(kept) == t.sessions.size()) return;
  std::vector<recorded_session> sessions;
  sessions.reserve(static_cast<std::size_t>(kept));
  for (std::size_t i = 0; i < t.sessions.size(); ++i) {
    if (new_index[i] < 0) continue;
    auto& s = t.sessions[i];
    s.parent = s.parent >= 0 ? new_index[static_cast<std::size_t>(s.parent)] : -1;
    sessions.push_back(std::move(s));
  }
  t.sessions = std::move(sessions);
}

void finish_trace(recorded_trace& t, issue_log& log) {
  for (const auto& s : t.sessions)
    for (const auto& r : s.requests) check_request(t, s, r);
  std::int64_t n = 0;
  for (auto& s : t.sessions) {
    for (std::size_t i = 1; i < s.requests.size(); ++i)
      if (s.requests[i].t_send < s.requests[i - 1].t_send)
        log.note(s.requests[i].source_line, "timestamp earlier than the previous request's; requests sorted by send time");
    std::stable_sort(s.requests.begin(), s.requests.end(),
                     [](const recorded_request& a, const recorded_request& b) { return a.t_send < b.t_send; });
    for (auto& r : s.requests) {
      if (!std::isnan(r.t_end) && r.t_end < r.t_send) {
        log.note(r.source_line, "generation ends before the request was sent; end set to the send time");
        r.t_end = r.t_send;
      }
      if (!std::isnan(r.t_first_token) &&
          (r.t_first_token < r.t_send || (!std::isnan(r.t_end) && r.t_first_token > r.t_end))) {
        log.note(r.source_line, "first token outside its request; its time is dropped");
        r.t_first_token = unknown_time;
      }
      if (!std::isnan(r.t_first_token)) t.has_ttft = true;
    }
    n += static_cast<std::int64_t>(s.requests.size());
  }
  drop_empty_sessions(t);
  t.summary.requests = n;
}

std::string no_request_reason(const recorded_trace& t) {
  std::string why;
  for (const auto& [reason, count] : t.summary.skipped) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", count, reason);
  return fmt::format("no usable request in {} record{} read{}", t.summary.records_read, t.summary.records_read == 1 ? "" : "s",
                     why.empty() ? "" : fmt::format(" (skipped: {})", why));
}

nlohmann::json read_json_document(const std::string& path, std::uintmax_t max_bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw trace_error(path, 0, fmt::format("cannot read file: {}", ec.message()));
  if (size == 0) throw trace_error(path, 0, "empty file");
  if (size > max_bytes) throw trace_error(path, 0, fmt::format("file is {} bytes; at most {} are read", size, max_bytes));
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  auto r = parse_json_text<nlohmann::json>(text, max_json_depth, /*refuse_duplicates=*/false);
  if (r.value) return std::move(*r.value);
  if (r.too_deep) throw trace_error(path, 0, fmt::format("JSON nested deeper than {} levels", max_json_depth));
  if (r.syntax) {
    const auto [line, column] = line_column(text, r.byte);
    throw trace_error(path, static_cast<long>(line), fmt::format("not valid JSON at column {}: {}", column, r.message));
  }
  throw trace_error(path, 0, "not valid JSON: " + r.message);
}

} // namespace loopcast::detail
