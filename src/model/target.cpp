// A target's rules at a date: its dated limits applied (include/loopcast/target.hpp).
#include "loopcast/target.hpp"

namespace loopcast {

target target_at(const target& t, double unix_s) {
  target out = t;
  out.dated_limits.clear();
  for (const auto& d : t.dated_limits) {
    if (!(unix_s >= d.from_unix_s && unix_s < d.until_unix_s)) continue;
    if (auto* b = out.find_bucket(d.bucket)) b->limit *= d.factor;
  }
  return out;
}

void drop_dated_limits(target& t, std::string_view bucket) {
  std::erase_if(t.dated_limits, [&](const dated_limit& d) { return d.bucket == bucket; });
}

std::vector<dated_limit> rule_changes_within(const target& t, double from, double until) {
  std::vector<dated_limit> out;
  for (const auto& d : t.dated_limits)
    if ((d.from_unix_s > from && d.from_unix_s < until) || (d.until_unix_s > from && d.until_unix_s < until))
      out.push_back(d);
  return out;
}

} // namespace loopcast
