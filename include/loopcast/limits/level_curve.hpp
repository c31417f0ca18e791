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
#include <utility>
#include <vector>

namespace loopcast {

/// Points (t, units in use) of one bucket: drawn through with straight lines they show its level.
struct level_curve {
  std::vector<double> t;
  std::vector<double> used;
};

namespace detail {
// Applies a run's operations on one bucket, in their order, to a fresh bucket of its law.
template <bucket_law Bucket>
class level_replay {
public:
  level_replay(Bucket fresh, std::span<const bucket_op> ops, std::size_t b)
      : bucket_(std::move(fresh)), ops_(ops), b_(b), tickets_(ops.size(), 0) {}

  /// The time of the bucket's next operation (infinity: none left).
  double next_time() noexcept {
    while (i_ < ops_.size() && ops_[i_].bucket != b_) ++i_;
    return i_ < ops_.size() ? ops_[i_].t : std::numeric_limits<double>::infinity();
  }

  /// Applies the bucket's next operation (next_time() must be finite).
  void apply_next() {
    const bucket_op& op = ops_[i_];
    if (op.t < last_)
      throw simulation_error(message("bucket operation ", i_, " at t = ", op.t, " s comes after one at ", last_, " s"));
    last_ = op.t;
    if (!op.adjust) {
      tickets_[i_] = bucket_.charge(op.q, op.t, op.t_release);
    } else {
      if (op.ref >= i_ || ops_[op.ref].adjust || ops_[op.ref].bucket != b_)
        throw simulation_error(message("bucket operation ", i_, " adjusts ", op.ref, ", which is not an earlier charge to bucket ", b_));
      bucket_.adjust(op.q, op.t, ops_[op.ref].t, tickets_[op.ref]);
    }
    ++i_;
  }

  double used(double t) { return bucket_.used(t); }
  double wait_for(double q, double t) { return bucket_.wait_for(q, t); }

private:
  Bucket bucket_;
  std::span<const bucket_op> ops_;
  std::size_t b_;
  std::vector<std::uint64_t> tickets_;  // what each charge returned, for its adjustment
  std::size_t i_ = 0;
  double last_ = -std::numeric_limits<double>::infinity();
};
} // namespace detail

/// Replays the operations on bucket `b` on `fresh` (a bucket of the law the run used, in its
/// initial state) and returns its level at each of `times` (ascending), taken after the
/// operations strictly before that time — as the timeline records the level an attempt found.
template <bucket_law Bucket>
std::vector<double> replay_levels(Bucket fresh, std::span<const bucket_op> ops, std::size_t b,
                                  std::span<const double> times) {
  detail::level_replay<Bucket> r(std::move(fresh), ops, b);
  std::vector<double> out;
  out.reserve(times.size());
  double prev = -std::numeric_limits<double>::infinity();
  for (double t : times) {
    if (!(t >= prev)) throw simulation_error(detail::message("level times must ascend: ", t, " after ", prev));
    prev = t;
    while (r.next_time() < t) r.apply_next();
    out.push_back(r.used(t));
  }
  return out;
}

/// Bucket `b` after its operations strictly before `t`, in one replay: its level at `t`, and how
/// long from `t` until it would take `q` units (for a window, until it resets; for a token bucket,
/// until it has drained enough; 0 when it would now).
struct level_and_wait {
  double used = 0;
  double wait_s = 0;
};
template <bucket_law Bucket>
level_and_wait replay_level_and_wait(Bucket fresh, std::span<const bucket_op> ops, std::size_t b, double t, double q) {
  detail::level_replay<Bucket> r(std::move(fresh), ops, b);
  while (r.next_time() < t) r.apply_next();
  const double used = r.used(t);
  return {used, r.wait_for(q, t)};
}

/// The level of bucket `b` from t = 0 to `t_end`: just before and just after each of its
/// operations, and at `grid` evenly spaced times in between, so that lines through the points
/// follow a token bucket's drain, a window's reset and a sliding window's forgetting to within
/// t_end / grid.
template <bucket_law Bucket>
level_curve replay_level_curve(Bucket fresh, std::span<const bucket_op> ops, std::size_t b, double t_end,
                               std::size_t grid = 2000) {
  if (!(t_end >= 0) || !std::isfinite(t_end)) throw simulation_error(detail::message("level curve: t_end = ", t_end, " s"));
  detail::level_replay<Bucket> r(std::move(fresh), ops, b);
  level_curve c;
  auto sample = [&](double t) {
    c.t.push_back(t);
    c.used.push_back(r.used(t));
  };
  std::size_t k = 0;  // the next grid point
  auto grid_until = [&](double t) {  // the grid points before t
    for (; k <= grid; ++k) {
      const double g = grid == 0 ? t_end : t_end * static_cast<double>(k) / static_cast<double>(grid);
      if (g >= t) break;
      sample(g);
    }
  };
  for (double t = r.next_time(); std::isfinite(t); t = r.next_time()) {
    grid_until(t);
    sample(t);
    r.apply_next();
    sample(t);
  }
  grid_until(std::nextafter(t_end, std::numeric_limits<double>::infinity()));
  return c;
}

/// The level curve of bucket `b` of a run of the built-in buckets (`cfg` is its configuration,
/// target::limits[b]) up to the run's last request end, attempt or bucket operation. Empty when
/// the run did not record its timeline.
inline level_curve bucket_level_curve(const simulation_result& r, const bucket_config& cfg, std::size_t b,
                                      std::size_t grid = 2000) {
  if (b >= r.buckets.size())
    throw simulation_error(detail::message("bucket ", b, " of a run with ", r.buckets.size(), " buckets"));
  if (r.bucket_ops.empty()) return {};
  double t_end = 0;
  for (const auto& op : r.bucket_ops) t_end = std::max(t_end, op.t);
  for (const auto& q : r.requests) if (std::isfinite(q.t_end)) t_end = std::max(t_end, q.t_end);
  for (const auto& a : r.attempts) t_end = std::max(t_end, a.t_send);  // a last refusal comes after every end
  return replay_level_curve(bucket(cfg, r.start_unix_s), r.bucket_ops, b, t_end, grid);
}

} // namespace loopcast
