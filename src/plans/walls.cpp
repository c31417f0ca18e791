// A plan's limit messages read from their text (walls.hpp): the reset, in the zone the text
// names, resolved to an instant; the wall classified; copies of one wall counted once.
#include "loopcast/walls.hpp"

#include "util/time_zone.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace loopcast {

namespace {

bool has(std::string_view s, std::string_view what) {
  // Case-insensitive: the texts change their capitals between versions ("Weekly limit reached").
  if (what.size() > s.size()) return false;
  for (std::size_t i = 0; i + what.size() <= s.size(); ++i) {
    std::size_t k = 0;
    while (k < what.size() && std::tolower(static_cast<unsigned char>(s[i + k])) ==
                                  std::tolower(static_cast<unsigned char>(what[k])))
      ++k;
    if (k == what.size()) return true;
  }
  return false;
}

// A cursor over the text after "resets", "reset at" or "try again at".
struct cursor {
  std::string_view s;
  std::size_t i = 0;
  void blanks() {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',' || s[i] == '\t')) ++i;
  }
  bool word(std::string_view w) {
    blanks();
    if (s.substr(i, w.size()).size() == w.size() && has(s.substr(i, w.size()), w) &&
        (i + w.size() == s.size() || !std::isalpha(static_cast<unsigned char>(s[i + w.size()])))) {
      i += w.size();
      return true;
    }
    return false;
  }
  std::optional<int> number(std::size_t most_digits) {
    blanks();
    int v = 0;
    const std::size_t from = i;
    while (i < s.size() && i - from < most_digits && std::isdigit(static_cast<unsigned char>(s[i]))) v = v * 10 + (s[i++] - '0');
    if (i == from) return std::nullopt;
    return v;
  }
};

constexpr std::array<std::string_view, 12> month_names{"jan", "feb", "mar", "apr", "may", "jun",
                                                  "jul", "aug", "sep", "oct", "nov", "dec"};

// "Jan 22" / "January 22nd" / "Sep 17": month and day, else nullopt (the cursor unmoved).
std::optional<std::pair<unsigned, unsigned>> month_day(cursor& c) {
  const auto save = c.i;
  c.blanks();
  for (unsigned m = 0; m < 12; ++m) {
    if (c.s.size() - c.i < 3 || !has(c.s.substr(c.i, 3), month_names[m])) continue;
    c.i += 3;
    while (c.i < c.s.size() && std::isalpha(static_cast<unsigned char>(c.s[c.i]))) ++c.i;  // "uary", "tember"
    c.word(".");
    if (const auto d = c.number(2); d && *d >= 1 && *d <= 31) {
      for (const char* suffix : {"st", "nd", "rd", "th"})
        if (c.word(suffix)) break;
      return std::pair{m + 1, static_cast<unsigned>(*d)};
    }
    break;
  }
  c.i = save;
  return std::nullopt;
}

// "4pm", "5:40pm", "10 PM", "8:41 AM", "14:00": hour and minute, else nullopt.
std::optional<std::pair<int, int>> clock_time(cursor& c) {
  const auto save = c.i;
  const auto h = c.number(2);
  if (!h) return std::nullopt;
  int minute = 0;
  if (c.i < c.s.size() && c.s[c.i] == ':') {
    ++c.i;
    const auto m = c.number(2);
    if (!m || *m > 59) {
      c.i = save;
      return std::nullopt;
    }
    minute = *m;
  }
  const bool pm = c.word("pm") || c.word("p.m."), am = !pm && (c.word("am") || c.word("a.m."));
  if (pm || am) {
    if (*h < 1 || *h > 12) {
      c.i = save;
      return std::nullopt;
    }
    return std::pair{*h % 12 + (pm ? 12 : 0), minute};
  }
  if (*h > 23 || (c.i < c.s.size() && c.s[c.i] == ':')) {
    c.i = save;
    return std::nullopt;
  }
  return std::pair{*h, minute};
}

// The reset after one of the phrases: an instant, or nullopt when it cannot be placed.
struct reset_reading {
  std::optional<double> at;
  bool dated = false;  ///< a date was given (a weekly wall's)
  std::string problem;
};
reset_reading reset_after(std::string_view said, double t, const std::string& default_zone) {
  std::size_t at = std::string_view::npos, skip = 0;
  for (std::string_view phrase : {"resets ", "reset at ", "try again at ", "resets at "}) {
    for (std::size_t i = 0; i + phrase.size() <= said.size(); ++i)
      if (has(said.substr(i, phrase.size()), phrase)) {
        if (at == std::string_view::npos || i < at) {
          at = i;
          skip = phrase.size();
        }
        break;
      }
  }
  if (at == std::string_view::npos) return {std::nullopt, false, "a usage-limit message without a reset time of day to read: not used"};
  cursor c{said.substr(at + skip)};
  c.word("at");
  const auto md = month_day(c);
  std::optional<int> year;
  if (md) {
    const auto save = c.i;
    if (const auto y = c.number(4); y && *y >= 2000 && *y <= 2200) year = *y;
    else c.i = save;
    c.word("at");
  }
  const auto when = clock_time(c);
  if (!when) return {std::nullopt, false, "a usage-limit message without a reset time of day to read: not used"};
  std::string zone_name = default_zone;
  if (const auto open = said.find('(', at); open != std::string_view::npos)
    if (const auto close = said.find(')', open); close != std::string_view::npos && close - open < 64)
      zone_name = std::string(said.substr(open + 1, close - open - 1));
  try {
    const detail::zone z(zone_name);
    if (!md) return {z.next_local_time(t, when->first, when->second), false, ""};
    // A date without a year: the year that puts it soonest at or after the message (a day's slack
    // for a clock that runs behind).
    const auto now = z.local(t);
    for (int y = year.value_or(now.year); y <= year.value_or(now.year) + 1; ++y) {
      const double u = z.at(y, md->first, md->second, when->first, when->second);
      if (year || u >= t - 86400) return {u, true, ""};
    }
    return {std::nullopt, true, "a usage-limit message whose reset date cannot be placed: not used"};
  } catch (const std::invalid_argument&) {
    return {std::nullopt, false, fmt::format("a usage-limit message naming an unknown time zone \"{}\": not used", zone_name)};
  }
}

} // namespace

double plan_wall::window_start() const noexcept {
  if (kind != wall_kind::five_hour || std::isnan(resets_at_unix)) return std::numeric_limits<double>::quiet_NaN();
  return std::floor((resets_at_unix - 5 * 3600.0) / 3600.0) * 3600.0;
}

wall_reading read_wall_text(std::string_view said, double t, const std::string& default_zone) {
  wall_reading r;
  if (has(said, "required for 1M context")) return r;  // a request refused for its size, not a wall
  plan_wall w;
  w.t = t;
  w.text = std::string(said.substr(0, 240));
  // The legacy form: the Unix time it reopens.
  if (const auto bar = said.find("usage limit reached|"); bar != std::string_view::npos) {
    const auto digits = said.substr(bar + 20);
    double epoch = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), epoch);
    if (ec != std::errc{} || end == digits.data() || !(epoch > 1e9 && epoch < 1e11)) {
      r.problem = "a usage-limit message whose reset time is not a Unix time between 2001 and 5138: not used";
      return r;
    }
    w.resets_at_unix = epoch;
    w.kind = epoch - t <= 5 * 3600.0 + 60 ? wall_kind::five_hour : wall_kind::weekly;
    r.wall = w;
    return r;
  }
  const bool spend = has(said, "spend limit");
  const bool extra = has(said, "out of extra usage");
  const bool limit = spend || extra || has(said, "limit reached") || has(said, "hit your limit") ||
                     has(said, "hit your session limit") || has(said, "hit your weekly limit") ||
                     has(said, "hit your usage limit") || has(said, "limit will reset") ||
                     (has(said, "hit your") && has(said, " limit"));
  if (!limit) return r;
  if (spend) {  // a spend cap: it reopens at the month's turn, which the text need not say
    w.kind = wall_kind::spend_cap;
    if (const auto reset = reset_after(said, t, default_zone); reset.at) {
      w.resets_at_unix = *reset.at;
    } else {  // unsaid: 00:00 UTC on the next month's 1st, as Anthropic's spend caps reopen
      const detail::zone utc("UTC");
      const auto now = utc.local(t);
      w.resets_at_unix = now.month == 12 ? utc.at(now.year + 1, 1, 1, 0, 0) : utc.at(now.year, now.month + 1, 1, 0, 0);
    }
    r.wall = w;
    return r;
  }
  const auto reset = reset_after(said, t, default_zone);
  if (extra) {
    w.kind = wall_kind::extra_usage;
    if (reset.at) w.resets_at_unix = *reset.at;
    r.wall = w;
    return r;
  }
  if (!reset.at) {
    r.problem = reset.problem;
    return r;
  }
  w.resets_at_unix = *reset.at;
  if (has(said, "opus limit") || has(said, "sonnet limit")) w.kind = wall_kind::weekly_scoped;
  else if (has(said, "weekly")) w.kind = wall_kind::weekly;
  else if (has(said, "session limit") || has(said, "5-hour")) w.kind = wall_kind::five_hour;
  else w.kind = *reset.at - t <= 5 * 3600.0 + 60 ? wall_kind::five_hour : wall_kind::weekly;
  r.wall = w;
  return r;
}

std::vector<plan_wall> dedupe_walls(std::vector<plan_wall> walls) {
  std::stable_sort(walls.begin(), walls.end(), [](const plan_wall& a, const plan_wall& b) { return a.t < b.t; });
  std::vector<plan_wall> out;
  for (auto& w : walls) {
    const auto same = std::find_if(out.rbegin(), out.rend(), [&](const plan_wall& o) {
      if (o.kind != w.kind) return false;
      if (!std::isnan(o.resets_at_unix) && !std::isnan(w.resets_at_unix)) return std::abs(o.resets_at_unix - w.resets_at_unix) <= 90;
      return std::isnan(o.resets_at_unix) && std::isnan(w.resets_at_unix) && w.t - o.t <= 300;
    });
    if (same != out.rend()) same->copies += w.copies;
    else out.push_back(std::move(w));
  }
  return out;
}

} // namespace loopcast
