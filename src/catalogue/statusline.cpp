// Claude Code's statusline `rate_limits` (limits_inference.hpp, docs/plans.md "Statusline"): read
// from standard input, written as a log line, read back, and turned into what plan inference reads.
#include "catalogue/statusline.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/files.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

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
  return j.dump();
}

std::vector<statusline_snapshot> read_statusline_log(const std::string& path, std::size_t* skipped) {
  std::ifstream in(path);
  if (!in) throw trace_error(path, 0, "cannot read the statusline log");
  std::vector<statusline_snapshot> out;
  std::string line;
  std::size_t bad = 0;
  std::int64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.size() > (1u << 20)) {
      ++bad;
      continue;
    }
    try {
      const auto j = json::parse(line, nullptr, false);
      const auto t = j.is_object() ? j.find("t") : j.end();
      if (t == j.end() || !t->is_number() || !(std::abs(t->get<double>()) <= 1e11)) {
        ++bad;
        continue;
      }
      if (auto s = parse_statusline_input(line, t->get<double>(), fmt::format("{}:{}", path, n))) out.push_back(*s);
    } catch (const config_error&) {
      ++bad;
    }
  }
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

} // namespace detail

} // namespace loopcast
