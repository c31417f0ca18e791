#include "loopcast/limits_inference.hpp"

#include "loopcast/errors.hpp"

#include "json_reader.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <regex>

namespace loopcast {

namespace {
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}
std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}
double unix_of(int y, int mo, int d, int h, int mi, double s) {
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{static_cast<unsigned>(mo)},
                                        std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || s >= 61) return nan;
  return static_cast<double>(std::chrono::sys_days{ymd}.time_since_epoch().count()) * 86400.0 + h * 3600.0 + mi * 60.0 + s;
}
// "2026-11-29T18:00:30Z", "2026-11-29T18:00:30.5+00:00".
double parse_rfc3339(const std::string& s) {
  static const std::regex re(R"((\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2}(?:\.\d+)?)(Z|z|[+-]\d{2}:\d{2}))");
  std::smatch m;
  if (!std::regex_match(s, m, re)) return nan;
  double t = unix_of(std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]), std::stoi(m[4]), std::stoi(m[5]), std::stod(m[6]));
  const std::string z = m[7];
  if (z.size() == 6) t -= (z[0] == '-' ? -1 : 1) * (std::stoi(z.substr(1, 2)) * 3600.0 + std::stoi(z.substr(4, 2)) * 60.0);
  return t;
}
// "Sun, 29 Nov 2026 18:00:00 GMT" (RFC 7231).
double parse_http_date(const std::string& s) {
  static const std::regex re(R"([A-Za-z]{3}, (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT)");
  std::smatch m;
  if (!std::regex_match(s, m, re)) return nan;
  static const char* months[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
  const auto mon = lower(m[2]);
  for (int i = 0; i < 12; ++i)
    if (mon == months[i]) return unix_of(std::stoi(m[3]), i + 1, std::stoi(m[1]), std::stoi(m[4]), std::stoi(m[5]), std::stod(m[6]));
  return nan;
}
double time_of(const std::string& v) {
  if (v.size() > 64) return nan;
  if (auto n = number(v)) return *n;
  const double t = parse_rfc3339(v);
  return std::isnan(t) ? parse_http_date(v) : t;
}
} // namespace

std::optional<double> parse_duration(std::string_view s) {
  static const std::regex re(R"((?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?)");
  const std::string str = trim(s);
  if (str.empty() || str.size() > 64) return std::nullopt;
  if (auto n = number(str)) return *n;  // plain seconds
  std::smatch m;
  if (!std::regex_match(str, m, re)) return std::nullopt;
  double t = 0;
  const double scale[] = {3600, 60, 1, 1e-3};
  for (int i = 0; i < 4; ++i)
    if (m[i + 1].matched) t += std::stod(m[i + 1]) * scale[i];
  return t;
}

std::vector<header_snapshot> parse_header_snapshots(std::string_view text, const std::string& file) {
  std::vector<header_snapshot> out;
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    const auto j = detail::parse_json(text, file);
    std::vector<const nlohmann::json*> maps;
    if (j.is_object()) maps.push_back(&j);
    else
      for (const auto& e : j) maps.push_back(&e);
    for (std::size_t i = 0; i < maps.size(); ++i) {
      const auto& m = *maps[i];
      const auto where = j.is_object() ? file : fmt::format("{}#/{}", file, i);
      if (!m.is_object())
        throw config_error(file, j.is_object() ? "" : fmt::format("/{}", i),
                           fmt::format("expected an object of header names and values, found {}", detail::describe(m)));
      header_snapshot s;
      s.source = where;
      s.time_unix_s = nan;
      for (const auto& [k, v] : m.items()) {
        const auto key = lower(k);
        const std::string value = v.is_string() ? v.get<std::string>() : v.dump();
        if (key == "time" || key == "t") s.time_unix_s = time_of(value);
        else s.headers[key] = trim(value);
      }
      if (std::isnan(s.time_unix_s) && s.headers.count("date")) s.time_unix_s = time_of(s.headers["date"]);
      out.push_back(std::move(s));
    }
    return out;
  }
  // Raw text: "Name: value" lines; a blank line or an HTTP status line starts the next response.
  header_snapshot cur;
  std::size_t line_no = 0, pos = 0;
  auto flush = [&] {
    if (!cur.headers.empty()) {
      if (cur.headers.count("date")) cur.time_unix_s = time_of(cur.headers["date"]);
      out.push_back(std::move(cur));
    }
    cur = {};
    cur.time_unix_s = nan;
  };
  cur.time_unix_s = nan;
  while (pos <= text.size()) {
    const auto nl = text.find('\n', pos);
    const auto line = trim(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    ++line_no;
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    if (line.empty() || line.rfind("HTTP/", 0) == 0) {
      flush();
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string::npos || colon == 0) continue;  // not a header (e.g. a body line)
    if (cur.headers.empty()) cur.source = fmt::format("{}:{}", file, line_no);
    cur.headers[lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
  }
  flush();
  return out;
}

namespace {

struct family {
  const char* provider;
  const char* name;       // bucket name
  const char* limit;      // header names
  const char* remaining;
  const char* reset;
  enum reset_kind { seconds, duration, rfc3339 } kind;
  double period_s;
  bucket_unit unit;
  class_set counts;
  charging_rule charging;
};

const family families[] = {
    {"cerebras", "tokens_per_minute", "x-ratelimit-limit-tokens-minute", "x-ratelimit-remaining-tokens-minute",
     "x-ratelimit-reset-tokens-minute", family::seconds, 60, bucket_unit::tokens, class_set::all(),
     charging_rule::reserve_then_refund},
    {"cerebras", "requests_per_day", "x-ratelimit-limit-requests-day", "x-ratelimit-remaining-requests-day",
     "x-ratelimit-reset-requests-day", family::seconds, 86400, bucket_unit::requests, {}, charging_rule::actual},
    {"openai", "rpm", "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests",
     family::duration, 60, bucket_unit::requests, {}, charging_rule::actual},
    {"openai", "tpm", "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens",
     family::duration, 60, bucket_unit::tokens, class_set::all(), charging_rule::reserve_then_refund},
    {"anthropic", "rpm", "anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining",
     "anthropic-ratelimit-requests-reset", family::rfc3339, 60, bucket_unit::requests, {}, charging_rule::actual},
    {"anthropic", "itpm", "anthropic-ratelimit-input-tokens-limit", "anthropic-ratelimit-input-tokens-remaining",
     "anthropic-ratelimit-input-tokens-reset", family::rfc3339, 60, bucket_unit::tokens,
     {token_class::input, token_class::cache_write}, charging_rule::actual},
    {"anthropic", "otpm", "anthropic-ratelimit-output-tokens-limit", "anthropic-ratelimit-output-tokens-remaining",
     "anthropic-ratelimit-output-tokens-reset", family::rfc3339, 60, bucket_unit::tokens,
     {token_class::output, token_class::reasoning}, charging_rule::reserve_then_refund},
    {"anthropic", "tpm", "anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining",
     "anthropic-ratelimit-tokens-reset", family::rfc3339, 60, bucket_unit::tokens,
     {token_class::input, token_class::cache_write, token_class::output, token_class::reasoning},
     charging_rule::reserve_then_refund},
};
} // namespace

limits_inference infer_limits(std::span<const header_snapshot> snaps) {
  limits_inference r;
  r.provider = "unknown";
  for (const auto& s : snaps)
    for (const auto& [k, v] : s.headers)
      if (k == "retry-after" || k == "retry-after-ms") r.sends_retry_after = true;
  for (const auto& f : families) {
    std::optional<double> limit;
    inferred_bucket b;
    std::vector<std::string> seen;
    for (const auto& s : snaps) {
      const auto l = s.headers.find(f.limit);
      if (l == s.headers.end()) continue;
      const auto lv = number(l->second);
      if (!lv || *lv <= 0) {
        r.notes.push_back(fmt::format("{}: {}: \"{}\" is not a limit; ignored", s.source, f.limit, l->second));
        continue;
      }
      if (limit && *lv != *limit)
        r.notes.push_back(fmt::format("{}: {} changed from {:g} to {:g}; the last value is used", s.source, f.limit, *limit, *lv));
      limit = *lv;
      const auto rem = s.headers.find(f.remaining);
      const auto rst = s.headers.find(f.reset);
      if (rem == s.headers.end() || rst == s.headers.end()) continue;
      const auto remaining = number(rem->second);
      double reset = nan;
      if (f.kind == family::seconds) reset = number(rst->second).value_or(nan);
      else if (f.kind == family::duration) reset = parse_duration(rst->second).value_or(nan);
      else if (!std::isnan(s.time_unix_s)) reset = parse_rfc3339(rst->second) - s.time_unix_s;
      if (!remaining || !(reset > 0)) continue;
      b.implied_rates.push_back((*lv - *remaining) / reset);
    }
    if (!limit) continue;
    if (r.provider == "unknown") r.provider = f.provider;
    b.header = f.limit;
    auto& c = b.config;
    c.name = f.name;
    c.limit = *limit;
    c.period_s = f.period_s;
    c.unit = f.unit;
    c.classes = f.counts;
    c.algorithm = bucket_algorithm::token_bucket;
    if (c.classes.counts_generated()) c.charging = f.charging;
    const double expected = c.limit / c.period_s;
    if (b.implied_rates.empty()) {
      b.evidence = "no snapshot with both remaining and reset: the algorithm is assumed (a continuous bucket)";
    } else {
      double lo = b.implied_rates.front(), hi = lo;
      for (double x : b.implied_rates) lo = std::min(lo, x), hi = std::max(hi, x);
      const bool continuous = lo >= 0.8 * expected && hi <= 1.25 * expected;
      b.evidence = fmt::format("{} snapshot{} a refill of {:.4g}–{:.4g} per second; a continuous bucket of {:g} per "
                               "{:g} s refills {:.4g}: {}", b.implied_rates.size(), b.implied_rates.size() == 1 ? " implies" : "s imply",
                               lo, hi, c.limit, c.period_s, expected,
                               continuous ? "consistent" : "not consistent (a fixed window, or a different period?)");
      if (!continuous && f.unit == bucket_unit::tokens && f.kind == family::rfc3339)
        b.evidence += "; Anthropic rounds remaining tokens to thousands, which blurs small differences";
    }
    r.buckets.push_back(std::move(b));
  }
  if (r.provider == "unknown") r.notes.push_back("no rate-limit header of Cerebras, OpenAI or Anthropic was found");
  if (r.provider == "cerebras" && !r.sends_retry_after) {
    r.sends_retry_after = true;  // as in the Cerebras presets: clients wait for x-ratelimit-reset-*
    r.notes.push_back("Cerebras sends x-ratelimit-reset-* instead of retry-after; clients are modelled as honouring it");
  }
  if (r.provider == "cerebras")
    r.notes.push_back("Cerebras' tokens-minute headers describe one bucket; the Developer tier also has an uncached "
                      "bucket (about a third of the total) that the headers do not show");
  return r;
}

std::string limits_fragment_json(const limits_inference& r, int indent) {
  using oj = nlohmann::ordered_json;
  oj buckets = oj::array();
  for (const auto& b : r.buckets) {
    const auto& c = b.config;
    oj j = {{"name", c.name}, {"unit", to_string(c.unit)}};
    if (c.unit == bucket_unit::tokens) {
      oj counts = oj::array();
      for (auto t : all_token_classes)
        if (c.classes.contains(t)) counts.push_back(to_string(t));
      j["counts"] = counts;
    }
    if (c.limit == std::floor(c.limit) && c.limit < 9e15) j["limit"] = static_cast<std::int64_t>(c.limit);
    else j["limit"] = c.limit;
    j["period_s"] = c.period_s;
    j["algorithm"] = to_string(c.algorithm);
    if (c.classes.counts_generated()) j["charging"] = to_string(c.charging);
    buckets.push_back(j);
  }
  return oj{{"sends_retry_after", r.sends_retry_after}, {"buckets", buckets}}.dump(indent, ' ', false,
                                                                                       oj::error_handler_t::replace);
}

std::optional<rate_limit_message> parse_rate_limit_message(std::string_view text) {
  static const std::regex re(
      R"(Limit:? ([0-9][0-9,]*), Used:? ([0-9][0-9,]*), Requested:? ([0-9][0-9,]*)\.?.*?try again in ((?:[0-9.]+(?:h|ms|m|s))+))",
      std::regex::icase);
  // std::regex recurses per character: look only at a short window from "Limit" on.
  const auto l0 = lower(std::string(text.substr(0, 1 << 16)));
  const auto at = l0.find("limit");
  if (at == std::string::npos || l0.find("requested", at) == std::string::npos) return std::nullopt;
  const std::string s(text.substr(0, std::min<std::size_t>(text.size(), at + 400)));
  std::smatch m;
  const std::string window = s.substr(at);
  if (!std::regex_search(window, m, re)) return std::nullopt;
  auto num = [](std::string v) {
    v.erase(std::remove(v.begin(), v.end(), ','), v.end());
    return std::stod(v);
  };
  rate_limit_message r;
  r.text = trim(s);
  r.limit = num(m[1]);
  r.used = num(m[2]);
  r.requested = num(m[3]);
  const auto wait = parse_duration(m[4].str());
  if (!wait || r.limit <= 0) return std::nullopt;
  r.stated_wait_s = *wait;
  const auto l = lower(s);
  r.unit = l.find("request") != std::string::npos && l.find("token") == std::string::npos ? "requests" : "tokens";
  if (l.find("(rpd)") != std::string::npos || l.find("(tpd)") != std::string::npos || l.find("per day") != std::string::npos)
    r.period_s = 86400;
  r.predicted_wait_s = (r.used + r.requested - r.limit) / (r.limit / r.period_s);
  r.consistent = std::abs(r.predicted_wait_s - r.stated_wait_s) <= std::max(0.005, 0.005 * r.stated_wait_s);
  return r;
}

std::vector<rate_limit_message> find_rate_limit_messages(std::string_view text, const std::string& file) {
  std::vector<rate_limit_message> out;
  std::size_t pos = 0, line = 0;
  while (pos < text.size()) {
    const auto nl = text.find('\n', pos);
    const auto l = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    ++line;
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    // A line may hold JSON ({"error": {"message": "…"}}): the regex finds the message inside it too.
    if (auto m = parse_rate_limit_message(l)) {
      m->source = fmt::format("{}:{}", file, line);
      out.push_back(std::move(*m));
    }
  }
  return out;
}

} // namespace loopcast
