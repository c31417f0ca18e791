#include "util/time_zone.hpp"

#include <date/tz.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace loopcast::detail {

namespace {
const date::time_zone* locate(const std::string& name) {
  try {
    return date::locate_zone(name);
  } catch (const std::exception&) {
    return nullptr;
  }
}
} // namespace

zone::zone(const std::string& name) {
  if (!name.empty()) {
    tz_ = locate(name);
    if (!tz_)
      throw std::invalid_argument(fmt::format("unknown time zone \"{}\" (expected an IANA name such as UTC, "
                                              "Europe/Berlin or America/New_York, from /usr/share/zoneinfo)", name));
    name_ = tz_->name();
    return;
  }
  if (const char* env = std::getenv("TZ"); env && *env) {
    std::string n = env[0] == ':' ? env + 1 : env;
    tz_ = locate(n);
  }
  if (!tz_) {
    try {
      tz_ = date::current_zone();
    } catch (const std::exception&) {
      tz_ = nullptr;
    }
  }
  if (!tz_) tz_ = locate("UTC");
  if (!tz_) throw std::invalid_argument("no time zone database (/usr/share/zoneinfo: install the tzdata package)");
  name_ = tz_->name();
}

civil_time zone::local(double unix_s) const {
  const date::sys_seconds t{std::chrono::seconds{static_cast<std::int64_t>(std::floor(unix_s))}};
  const auto lt = tz_->to_local(t);
  const auto day = date::floor<date::days>(lt);
  const date::year_month_day ymd{day};
  const date::hh_mm_ss hms{lt - day};
  const date::weekday wd{day};
  civil_time c;
  c.year = static_cast<int>(ymd.year());
  c.month = static_cast<unsigned>(ymd.month());
  c.day = static_cast<unsigned>(ymd.day());
  c.hour = static_cast<int>(hms.hours().count());
  c.minute = static_cast<int>(hms.minutes().count());
  c.weekday = wd.iso_encoding() - 1;
  return c;
}

double zone::midnight(int year, unsigned month, unsigned day) const {
  const date::local_days d{date::year{year} / date::month{month} / date::day{day}};
  // A day whose midnight a DST change skips starts at the first instant after it.
  const auto t = tz_->to_sys(date::local_seconds{d.time_since_epoch()}, date::choose::earliest);
  return static_cast<double>(t.time_since_epoch().count());
}

double zone::at(int year, unsigned month, unsigned day, int hour, int minute) const {
  const date::local_days d{date::year{year} / date::month{month} / date::day{day}};
  const auto lt = date::local_seconds{d.time_since_epoch()} + std::chrono::hours{hour} + std::chrono::minutes{minute};
  return static_cast<double>(tz_->to_sys(lt, date::choose::earliest).time_since_epoch().count());
}

double zone::next_local_time(double after_unix, int hour, int minute) const {
  const auto c = local(after_unix);
  const date::local_days today{date::year{c.year} / date::month{c.month} / date::day{c.day}};
  for (int d = 0; d < 3; ++d) {
    const auto lt = date::local_seconds{(today + date::days{d}).time_since_epoch()} + std::chrono::hours{hour} +
                    std::chrono::minutes{minute};
    const double t = static_cast<double>(tz_->to_sys(lt, date::choose::earliest).time_since_epoch().count());
    if (t > after_unix) return t;
  }
  return after_unix;  // (unreachable: a local time recurs every day)
}

} // namespace loopcast::detail
