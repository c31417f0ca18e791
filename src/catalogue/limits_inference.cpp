#include "loopcast/limits_inference.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/files.hpp"

#include "json/reader.hpp"
#include "util/numbers.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>

namespace loopcast {

namespace {
// The periods a limit is stated per, and the letter a per-minute bucket's name ("rpm") takes when
// its limit turns out to be per hour or per day ('\0': not renamed).
struct named_period {
  double seconds;
  std::string_view word;
  char name_letter;
};
constexpr named_period named_periods[] = {{1, "second", '\0'}, {60, "minute", '\0'}, {3600, "hour", 'h'}, {86400, "day", 'd'}};
using detail::nan;

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
// Reads `n` digits at s[i…] (advancing i); -1 if they are not there.
int digits(const std::string& s, std::size_t& i, int n) {
  int v = 0;
  for (int k = 0; k < n; ++k, ++i) {
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}
bool expect(const std::string& s, std::size_t& i, char c) {
  if (i < s.size() && s[i] == c) {
    ++i;
    return true;
  }
  return false;
}
// "2026-11-29T18:00:30Z", "2026-11-29T18:00:30.5+00:00".
double parse_rfc3339(const std::string& s) {
  std::size_t i = 0;
  const int y = digits(s, i, 4);
  if (y < 0 || !expect(s, i, '-')) return nan;
  const int mo = digits(s, i, 2);
  if (mo < 0 || !expect(s, i, '-')) return nan;
  const int d = digits(s, i, 2);
  if (d < 0 || i >= s.size() || (s[i] != 'T' && s[i] != 't' && s[i] != ' ')) return nan;
  ++i;
  const int h = digits(s, i, 2);
  if (h < 0 || !expect(s, i, ':')) return nan;
  const int mi = digits(s, i, 2);
  if (mi < 0 || !expect(s, i, ':')) return nan;
  const int sec = digits(s, i, 2);
  if (sec < 0) return nan;
  double frac = 0;
  if (expect(s, i, '.')) {
    double scale = 0.1;
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return nan;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i, scale /= 10) frac += (s[i] - '0') * scale;
  }
  double t = unix_of(y, mo, d, h, mi, sec + frac);
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z') && i + 1 == s.size()) return t;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    const double sign = s[i] == '-' ? -1 : 1;
    ++i;
    const int oh = digits(s, i, 2);
    if (oh < 0 || !expect(s, i, ':')) return nan;
    const int om = digits(s, i, 2);
    if (om < 0 || i != s.size()) return nan;
    return t - sign * (oh * 3600.0 + om * 60.0);
  }
  return nan;
}
// "Sun, 29 Nov 2026 18:00:00 GMT" (RFC 7231).
double parse_http_date(const std::string& s) {
  if (s.size() != 29 || s[3] != ',' || s.substr(25) != " GMT") return nan;
  static const char* months[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
  std::size_t i = 5;
  const int d = digits(s, i, 2);
  const auto mon = lower(s.substr(8, 3));
  i = 12;
  const int y = digits(s, i, 4);
  i = 17;
  const int h = digits(s, i, 2);
  i = 20;
  const int mi = digits(s, i, 2);
  i = 23;
  const int sec = digits(s, i, 2);
  if (d < 0 || y < 0 || h < 0 || mi < 0 || sec < 0) return nan;
  for (int m = 0; m < 12; ++m)
    if (mon == months[m]) return unix_of(y, m + 1, d, h, mi, sec);
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
  const std::string str = trim(s);
  if (str.empty() || str.size() > 64) return std::nullopt;
  if (auto n = number(str)) return *n;  // plain seconds
  // A sequence of <number><unit>, units h, m, s, ms, in that order ("6m0s", "1.5s", "20ms").
  double t = 0;
  int last = -1;  // index of the last unit used
  std::size_t i = 0;
  while (i < str.size()) {
    std::size_t j = i;
    while (j < str.size() && (std::isdigit(static_cast<unsigned char>(str[j])) || str[j] == '.')) ++j;
    if (j == i) return std::nullopt;
    const auto value = number(str.substr(i, j - i));
    if (!value) return std::nullopt;
    int unit = -1;
    double scale = 0;
    if (str.compare(j, 2, "ms") == 0) unit = 3, scale = 1e-3, j += 2;
    else if (j < str.size() && str[j] == 'h') unit = 0, scale = 3600, ++j;
    else if (j < str.size() && str[j] == 'm') unit = 1, scale = 60, ++j;
    else if (j < str.size() && str[j] == 's') unit = 2, scale = 1, ++j;
    if (unit <= last) return std::nullopt;  // no unit, or units out of order
    last = unit;
    t += *value * scale;
    i = j;
  }
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
  };
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
    // A header's name is a token (RFC 9110 §5.1); anything else is a body line (e.g. the JSON of a
    // 429 after a `curl -i` capture's headers), not a header of another response.
    const auto is_token = [](unsigned char c) {
      return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
    };
    if (colon == std::string::npos || colon == 0 ||
        !std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(colon), is_token))
      continue;
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
      // A preset's limit is a whole number from 1 to 10^12: anything else cannot become one.
      if (!lv || *lv < 1 || *lv > 1e12 || *lv != std::floor(*lv)) {
        r.notes.push_back(fmt::format("{}: {}: \"{}\" is not a limit (a whole number from 1 to 10^12); ignored",
                                      s.source, f.limit, l->second));
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
      // A limit per another period refills at limit / period: say which one the snapshots fit (e.g.
      // Groq's x-ratelimit-limit-requests counts requests per day, console.groq.com/docs/rate-limits).
      for (const auto& [period, word, letter] : named_periods)
        if (!continuous && period != c.period_s && lo >= 0.8 * c.limit / period && hi <= 1.25 * c.limit / period &&
            lo > 0) {
          b.evidence += fmt::format("; consistent with a limit of {:g} per {} (a continuous bucket refilling {:.4g} "
                                    "per second): the bucket is proposed per {} s",
                                    c.limit, word, c.limit / period, period);
          c.period_s = period;
          if (letter != '\0' && c.name.size() > 2 && c.name.ends_with("pm")) c.name.back() = letter;
          break;
        }
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
      for (auto t : counted_token_classes)
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

namespace {
// After `key` (case-insensitive) at or after `from` in the lower-cased text: an optional ':' and
// spaces, then a number with optional thousands commas. Advances `from` past it.
std::optional<double> number_after(const std::string& l, const std::string& key, std::size_t& from) {
  for (auto at = l.find(key, from); at != std::string::npos; at = l.find(key, at + 1)) {
    std::size_t i = at + key.size();
    if (i < l.size() && l[i] == ':') ++i;
    while (i < l.size() && l[i] == ' ') ++i;
    std::string digits;
    for (; i < l.size() && (std::isdigit(static_cast<unsigned char>(l[i])) || l[i] == ',' || l[i] == '.'); ++i)
      if (l[i] != ',') digits += l[i];
    while (!digits.empty() && digits.back() == '.') digits.pop_back();  // the sentence's full stop
    if (const auto v = number(digits)) {  // else e.g. "rate limit reached": look further
      from = i;
      return v;
    }
  }
  return std::nullopt;
}
} // namespace

namespace {
// Anthropic's form: "… would exceed your organization's rate limit of 30,000 input tokens per
// minute …": a limit and its period, nothing to check the bucket law against.
std::optional<rate_limit_message> parse_stated_limit(std::string_view text, const std::string& l) {
  const auto at = l.find("rate limit of ");
  if (at == std::string::npos) return std::nullopt;
  std::size_t i = at + 14;
  std::string digits;
  for (; i < l.size() && (std::isdigit(static_cast<unsigned char>(l[i])) || l[i] == ','); ++i)
    if (l[i] != ',') digits += l[i];
  const auto limit = number(digits);
  const auto per = l.find(" per ", i);
  if (!limit || *limit <= 0 || per == std::string::npos || per - i > 40) return std::nullopt;
  const auto unit = trim(l.substr(i, per - i));
  const auto word = std::string_view(l).substr(per + 5);
  const auto period = std::find_if(std::begin(named_periods), std::end(named_periods),
                                   [&](const auto& p) { return word.starts_with(p.word); });
  if (period == std::end(named_periods) ||
      (unit.find("token") == std::string::npos && unit.find("request") == std::string::npos))
    return std::nullopt;
  rate_limit_message r;
  r.text = trim(text.substr(0, std::min<std::size_t>(text.size(), per + 5 + period->word.size())));
  r.unit = unit;
  r.period_s = period->seconds;
  r.limit = *limit;
  r.checkable = false;
  r.used = r.requested = r.stated_wait_s = r.predicted_wait_s = std::numeric_limits<double>::quiet_NaN();
  return r;
}
} // namespace

std::optional<rate_limit_message> parse_rate_limit_message(std::string_view text) {
  const auto l = lower(std::string(text.substr(0, 1 << 16)));
  std::size_t at = 0;
  const auto limit = number_after(l, "limit", at);
  const auto used = limit ? number_after(l, "used", at) : std::nullopt;
  const auto requested = used ? number_after(l, "requested", at) : std::nullopt;
  if (!limit || !used || !requested) return parse_stated_limit(text, l);
  const auto again = l.find("try again in ", at);
  if (again == std::string::npos) return std::nullopt;
  std::size_t i = again + 13, j = i;
  while (j < l.size() && (std::isalnum(static_cast<unsigned char>(l[j])) || l[j] == '.')) ++j;
  auto token = l.substr(i, j - i);
  while (!token.empty() && token.back() == '.') token.pop_back();
  const auto wait = parse_duration(token);
  if (!wait || *limit <= 0) return std::nullopt;
  rate_limit_message r;
  r.text = trim(text.substr(0, std::min<std::size_t>(text.size(), j)));
  r.limit = *limit;
  r.used = *used;
  r.requested = *requested;
  r.stated_wait_s = *wait;
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
    // A line may hold JSON ({"error": {"message": "…"}}): the message is found inside it too.
    if (auto m = parse_rate_limit_message(l)) {
      m->source = fmt::format("{}:{}", file, line);
      out.push_back(std::move(*m));
    }
  }
  return out;
}

limits_evidence infer_limits_from_files(const std::vector<std::string>& files) {
  limits_evidence e;
  std::vector<header_snapshot> snaps;
  for (const auto& f : files) {
    const auto text = read_text_file(f);
    auto s = parse_header_snapshots(text, f);
    auto m = find_rate_limit_messages(text, f);
    if (s.empty() && m.empty())
      throw config_error(f, "", "no response headers and no 429 message (\"Limit L, Used U, Requested R … try again in T\")");
    snaps.insert(snaps.end(), s.begin(), s.end());
    e.messages.insert(e.messages.end(), m.begin(), m.end());
  }
  e.snapshots = snaps.size();
  e.inferred = infer_limits(snaps);
  if (e.inferred.buckets.empty() && e.messages.empty()) {
    std::string all;
    for (const auto& f : files) all += fmt::format("{}{}", all.empty() ? "" : ", ", f);
    throw config_error(all, "", "no rate-limit header of Cerebras, OpenAI or Anthropic and no 429 message (\"Limit L, "
                                "Used U, Requested R … try again in T\")");
  }
  return e;
}

} // namespace loopcast
