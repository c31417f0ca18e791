// loopcast — a target's rules at a date, its dated limits applied: the definitions of target.hpp's
// target_at, drop_dated_limits and rule_changes_within (header-only, as the rest of the core).
#pragma once

#include <algorithm>
#include <cmath>

namespace loopcast {

namespace detail {
// The bucket's limit at Unix time `unix_s`: `base` times the factor of each of its dated limits in
// force then (none at a NaN time: a clock without a date).
inline double limit_on(const target& t, const bucket_config& b, double base, double unix_s) {
  double limit = base;
  for (const auto& d : t.dated_limits)
    if (d.bucket == b.name && unix_s >= d.from_unix_s && unix_s < d.until_unix_s) limit *= d.factor;
  return limit;
}
} // namespace detail

inline target target_at(const target& t, double unix_s) {
  target out = t;
  out.dated_limits.clear();
  for (auto& b : out.limits) {
    const bool dated = std::any_of(t.dated_limits.begin(), t.dated_limits.end(),
                                   [&](const dated_limit& d) { return d.bucket == b.name; });
    if (!dated) {  // (a target resolved before: its steps up to unix_s taken)
      b.limit = b.limit_at(unix_s);
      std::erase_if(b.limit_steps, [&](const limit_step& s) { return s.at_unix_s <= unix_s; });
      continue;
    }
    const double base = b.limit;
    b.limit = detail::limit_on(t, b, base, unix_s);
    // Each later date where a rule of this bucket begins or ends: the limit from then on.
    std::vector<double> dates;
    for (const auto& d : t.dated_limits)
      if (d.bucket == b.name)
        for (const double at : {d.from_unix_s, d.until_unix_s})
          if (at > unix_s && std::isfinite(at)) dates.push_back(at);
    std::sort(dates.begin(), dates.end());
    dates.erase(std::unique(dates.begin(), dates.end()), dates.end());
    b.limit_steps.clear();
    double last = b.limit;
    for (const double at : dates) {
      const double limit = detail::limit_on(t, b, base, at);
      if (limit != last) b.limit_steps.push_back({at, limit});
      last = limit;
    }
  }
  return out;
}

inline void drop_dated_limits(target& t, std::string_view bucket) {
  std::erase_if(t.dated_limits, [&](const dated_limit& d) { return d.bucket == bucket; });
  if (auto* b = t.find_bucket(bucket)) b->limit_steps.clear();
}

inline std::vector<dated_limit> rule_changes_within(const target& t, double from, double until) {
  std::vector<dated_limit> out;
  for (const auto& d : t.dated_limits)
    if ((d.from_unix_s > from && d.from_unix_s < until) || (d.until_unix_s > from && d.until_unix_s < until))
      out.push_back(d);
  return out;
}

} // namespace loopcast
