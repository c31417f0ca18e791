// Time zones for grouping recorded requests by local day, week and month: the system's tz
// database (/usr/share/zoneinfo) through Howard Hinnant's date library, kept out of every other
// translation unit. Internal to loopcast.
#pragma once

#include <string>

namespace date {
class time_zone;
}

namespace loopcast::detail {

/// A local date and time.
struct civil_time {
  int year = 1970;
  unsigned month = 1, day = 1;
  int hour = 0, minute = 0;
  unsigned weekday = 3;  ///< 0 = Monday … 6 = Sunday
};

class zone {
public:
  /// An IANA zone ("Europe/Berlin", "UTC"); "" is the machine's: $TZ when it names a zone, else
  /// /etc/localtime, else UTC. Throws std::invalid_argument naming an unknown zone.
  explicit zone(const std::string& name = {});
  const std::string& name() const noexcept { return name_; }
  /// The local date and time at a Unix time (s).
  civil_time local(double unix_s) const;
  /// The Unix time (s) of a local date's midnight (the first instant of that day there).
  double midnight(int year, unsigned month, unsigned day) const;
  /// The Unix time (s) at which the local clock reads that date and time (the earlier of two in a
  /// DST fold; in a gap, the first instant after it).
  double at(int year, unsigned month, unsigned day, int hour, int minute) const;
  /// The first Unix time (s) after `after_unix` at which the local clock reads hour:minute.
  double next_local_time(double after_unix, int hour, int minute) const;

private:
  const date::time_zone* tz_ = nullptr;
  std::string name_;
};

} // namespace loopcast::detail
