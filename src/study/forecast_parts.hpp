// The pieces of a forecast and its backtest (forecast.hpp). Internal to loopcast.
#pragma once

#include "loopcast/forecast.hpp"
#include "loopcast/random.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/results.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace loopcast::detail {

/// Refuses options out of range (std::invalid_argument).
void check_forecast_options(const forecast_options& opt);

/// Replays a trace on the target as `replay --speed recorded` does, with a client that gives up at
/// the first 429, so that the run ends at the wall.
class forecast_replay {
public:
  forecast_replay(const recorded_trace& trace, const target& tgt, const forecast_options& opt);
  /// A trace as the input of run() (one built by hand, without model names, gets one).
  static std::vector<recorded_trace> input(const recorded_trace& t);
  /// The run of input(t) (the trace, or the trace and a continuation); adds its requests to
  /// `simulated`.
  /// With `wait_out`, the client waits for each refusal's retry-after (a window's reset) instead
  /// of giving up, and the attempts are recorded.
  simulation_result run(const std::vector<recorded_trace>& one, bool timeline, std::int64_t& simulated,
                        bool wait_out = false) const;
  simulation_result run(const recorded_trace& t, bool timeline, std::int64_t& simulated, bool wait_out = false) const {
    return run(input(t), timeline, simulated, wait_out);
  }
  /// The log's clock at simulated t = 0: the first send.
  double origin() const noexcept { return origin_; }
  /// The target as the replay runs it: on a log with clock times, its rules in force at the log's
  /// start, with the dated changes after it as limit steps (target_at).
  const target& tgt() const noexcept { return tgt_; }

private:
  target tgt_;
  retry_policy no_retry_;
  retry_policy waits_;  // honours every retry-after, forever
  session_shaping shaping_;
  double origin_ = 0;
};

/// One recent request as the step a continuation repeats.
struct continuation_step {
  std::int64_t growth = 0;      ///< prompt tokens over the previous request of its session
  std::int64_t output = 0, reasoning = 0;
  double delay_s = 0;           ///< agent time before it
  double duration_s = 0;
  // For logs without hash ids, how the step met the cache (its prefix is what the replay
  // derives from the recorded reads): its uncached input, the share of the prompt it shared
  // with the previous request that it read from the cache (1: all; less: the client broke the
  // cache there), and whether it wrote to the 1-hour cache.
  std::int64_t uncached = 0;
  double read_share = 1;
  bool write_1h = false;
};
std::vector<continuation_step> recent_steps(const recorded_trace& t, std::int32_t recent);
/// The session that sent last.
std::size_t active_session(const recorded_trace& t);
/// Appends up to `count` requests to session `session`, each a step drawn from `steps` (stops
/// after the first sent past `stop_at`, on the log's clock).
struct continuation_shape {
  std::int32_t block = 1;     ///< steps taken in a row
  double pace_sigma = 0;      ///< log-normal spread of the draw's pace
};
void append_continuation(recorded_trace& t, std::size_t session, std::span<const continuation_step> steps, rng& g,
                         std::size_t count, double stop_at, const continuation_shape& shape = {});

struct draw_outcome {
  enum kind_t { wall, beyond_horizon, censored } kind = beyond_horizon;
  double after_s = 0;           ///< wall: its time after the cut; censored: how far the draw got
  std::string bucket;
  std::int64_t requests = 0;    ///< continued requests sent before the wall
  /// With each_window, per bucket: its first refusal (kind, after_s as above).
  std::vector<std::pair<kind_t, double>> buckets;
};
/// One continuation, replayed in chunks that grow until it meets a wall (with `each_window`, every
/// bucket's), passes the horizon or reaches `per_draw` simulated requests.
draw_outcome run_draw(const forecast_replay& replay, const recorded_trace& trace, std::size_t active,
                      std::span<const continuation_step> steps, std::uint64_t seed, double cut, double horizon_s,
                      std::int64_t per_draw, const continuation_shape& shape, std::int64_t& simulated,
                      bool each_window = false);
/// Each bucket's first refusal strictly after simulated time `after`, in a run that recorded its
/// attempts (infinite: none): a 429 counts for the bucket with the longest wait (refused_by).
std::vector<double> first_refusals(const simulation_result& r, std::size_t buckets, double after);
/// The quantiles of the draws: walls, censored stops (lower bounds) and, for the rest, infinity.
wall_quantiles summarise_draws(const std::vector<double>& walls, const std::vector<double>& censored,
                               std::int32_t draws);
/// CRPS of an ensemble against y.
double crps_of(std::vector<double> x, double y);

} // namespace loopcast::detail
