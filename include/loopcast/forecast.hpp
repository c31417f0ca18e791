// loopcast — the next wall of a running session: when its target's buckets (or a subscription
// plan's windows) will next refuse it, forecast from the session's own growth (docs/watch.md).
//
// The log so far is replayed at its recorded times on fresh buckets of the target: each request is
// charged at its send (charge_for, max_tokens = what it generated) and adjusted at its end, so the
// buckets hold what the real session used. The session then goes on as it grew: each token class of
// its next requests follows a least-squares line over its last requests, plus the residual of one
// of them drawn at random (a prompt is kept within the target's context window); the gap between
// sends and a request's duration are that request's own.
// Each draw runs until a bucket refuses a request or the horizon passes; the forecast is the
// P10 / P50 / P90 of the time from the last send to that refusal over the draws.
#pragma once

#include "loopcast/target.hpp"
#include "loopcast/trace.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace loopcast {

struct forecast_options {
  std::uint64_t seed = 1;
  std::int32_t draws = 200;            ///< continuations drawn
  double horizon_s = 7 * 86400.0;      ///< how far ahead a draw looks for a refusal
  std::int32_t window_requests = 30;   ///< the last requests the growth is fitted on
};

struct bucket_now {
  std::string name;
  double used = 0;       ///< units in use just after the last request's send
  double limit = 0;
  double period_s = 0;
};

struct wall_forecast {
  std::string log;
  std::int64_t requests = 0;          ///< requests replayed so far
  double last_send_s = 0;             ///< the last request's send, s on the log's clock
  bool absolute_clock = false;        ///< times are Unix seconds
  std::vector<bucket_now> buckets;
  /// The first recorded request the target would have refused: its send time and the bucket.
  std::optional<double> refused_at_s;
  std::string refused_by;
  double gap_s = 0;                   ///< mean gap between sends over the fitted requests
  double growth_per_request = 0;      ///< fitted growth of a request's tokens (all classes) per request
  /// Seconds from the last send to the next refusal: P10, P50, P90 over the draws (infinite:
  /// beyond the horizon).
  double p10_s = std::numeric_limits<double>::infinity();
  double p50_s = std::numeric_limits<double>::infinity();
  double p90_s = std::numeric_limits<double>::infinity();
  double hit_share = 0;               ///< draws that met a refusal within the horizon
  std::string bucket;                 ///< the bucket that refused in most of them ("" when none)
  double requests_p50 = 0;            ///< requests sent before the refusal, median over those draws
  std::int32_t draws = 0;
};

/// Forecasts the next refusal of the trace's session(s) on `tgt` (every bucket's limit must be
/// set). Throws trace_error when the trace holds no request.
wall_forecast forecast_next_wall(const recorded_trace& trace, const target& tgt, const forecast_options& opt = {});

} // namespace loopcast
