// loopcast — a bucket's level over a whole run, between arrivals as well as at them.
//
// The timeline records each bucket's level only when an attempt arrives; between arrivals a token
// bucket drains, a sliding window forgets old charges and a fixed window resets. A run that
// records its timeline also records every bucket operation (simulation_result::bucket_ops), so the
// level at any time is found by replaying those operations on a fresh bucket of the same law and
// asking it. Header-only, part of loopcast::core.
#pragma once

#include "loopcast/detail/message.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/limits/bucket.hpp"
#include "loopcast/limits/bucket_law.hpp"
#include "loopcast/results.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace loopcast {

/// Points (t, units in use) of one bucket: drawn through with straight lines they show its level.
struct level_curve {
  std::vector<double> t;
  std::vector<double> used;
};

/// Replays the operations on bucket `b` on `fresh` (a bucket of the law the run used, in its
/// initial state) and returns its level at each of `times` (ascending), taken after the
/// operations strictly before that time — as the timeline records the level an attempt found.
template <bucket_law Bucket>
std::vector<double> replay_levels(Bucket fresh, std::span<const bucket_op> ops, std::size_t b,
                                  std::span<const double> times) {
  std::vector<std::uint64_t> tickets(ops.size(), 0);
  std::vector<double> out;
  out.reserve(times.size());
  std::size_t i = 0;
  double last = -std::numeric_limits<double>::infinity();
  auto apply_before = [&](double t) {
    for (; i < ops.size() && ops[i].t < t; ++i) {
      const bucket_op& op = ops[i];
      if (op.bucket != b) continue;
      if (op.t < last) throw simulation_error(detail::message("bucket operation ", i, " at t = ", op.t,
                                                             " s comes after one at ", last, " s"));
      last = op.t;
      if (!op.adjust) {
        tickets[i] = fresh.charge(op.q, op.t, op.t_release);
      } else {
        if (op.ref >= i || ops[op.ref].adjust || ops[op.ref].bucket != b)
          throw simulation_error(detail::message("bucket operation ", i, " adjusts ", op.ref, ", which is not an earlier charge to bucket ", b));
        fresh.adjust(op.q, op.t, ops[op.ref].t, tickets[op.ref]);
      }
    }
  };
  double prev = -std::numeric_limits<double>::infinity();
  for (double t : times) {
    if (!(t >= prev)) throw simulation_error(detail::message("level times must ascend: ", t, " after ", prev));
    prev = t;
    apply_before(t);
    out.push_back(fresh.used(t));
  }
  return out;
}

/// The level of bucket `b` from t = 0 to `t_end`: just before and just after each of its
/// operations, and at `grid` evenly spaced times in between, so that lines through the points
/// follow a token bucket's drain, a window's reset and a sliding window's forgetting to within
/// t_end / grid.
template <bucket_law Bucket>
level_curve replay_level_curve(Bucket fresh, std::span<const bucket_op> ops, std::size_t b, double t_end,
                               std::size_t grid = 2000) {
  if (!(t_end >= 0) || !std::isfinite(t_end)) throw simulation_error(detail::message("level curve: t_end = ", t_end, " s"));
  level_curve c;
  std::vector<std::uint64_t> tickets(ops.size(), 0);
  double last = 0;
  auto sample = [&](double t) {
    c.t.push_back(t);
    c.used.push_back(fresh.used(t));
  };
  std::size_t k = 0;  // next grid point
  auto grid_until = [&](double t) {  // the grid points before t (those before `last` are done)
    for (; k <= grid; ++k) {
      const double g = grid == 0 ? t_end : t_end * static_cast<double>(k) / static_cast<double>(grid);
      if (g >= t) break;
      sample(g);
    }
  };
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const bucket_op& op = ops[i];
    if (op.bucket != b) continue;
    if (op.t < last) throw simulation_error(detail::message("bucket operation ", i, " at t = ", op.t,
                                                           " s comes after one at ", last, " s"));
    grid_until(op.t);
    last = op.t;
    sample(op.t);
    if (!op.adjust) {
      tickets[i] = fresh.charge(op.q, op.t, op.t_release);
    } else {
      if (op.ref >= i || ops[op.ref].adjust || ops[op.ref].bucket != b)
        throw simulation_error(detail::message("bucket operation ", i, " adjusts ", op.ref, ", which is not an earlier charge to bucket ", b));
      fresh.adjust(op.q, op.t, ops[op.ref].t, tickets[op.ref]);
    }
    sample(op.t);
  }
  grid_until(std::nextafter(t_end, std::numeric_limits<double>::infinity()));
  return c;
}

/// The level curve of bucket `b` of a run of the built-in buckets (`cfg` is its configuration,
/// target::limits[b]) up to the run's last request end or bucket operation. Empty when the run
/// did not record its timeline.
inline level_curve bucket_level_curve(const simulation_result& r, const bucket_config& cfg, std::size_t b,
                                      std::size_t grid = 2000) {
  if (b >= r.buckets.size())
    throw simulation_error(detail::message("bucket ", b, " of a run with ", r.buckets.size(), " buckets"));
  double t_end = 0;
  for (const auto& op : r.bucket_ops) t_end = std::max(t_end, op.t);
  for (const auto& q : r.requests) if (std::isfinite(q.t_end)) t_end = std::max(t_end, q.t_end);
  if (r.bucket_ops.empty()) return {};
  return replay_level_curve(bucket(cfg, r.start_unix_s), r.bucket_ops, b, t_end, grid);
}

} // namespace loopcast
