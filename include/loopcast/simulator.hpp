// loopcast — the event-driven simulator.
//
// Sessions run against one organisation's buckets, prefix cache and speed. Each session is a
// sequential loop, so it has at most one pending event: "send the next attempt at t" or "the
// request in flight ends at t". Events are ordered by (time, sequence number), so a run is a pure
// function of its inputs and seeds. The loop allocates nothing per event beyond the recorded
// results (reserved up front).
//
// Per attempt at time t:
//   1. prompt split: cache_read = prefix-cache hit; input/cache_write = the rest.
//   2. context window: prompt + generated > window → context_overflow, the session ends.
//   3. admission: each bucket's wait for its admission charge; a charge above a bucket's capacity
//      follows its oversize rule (refuse → request_too_large; rate_limited → a 429 on every
//      attempt; debt → admitted once the bucket is full); any wait > 0 → 429 with retry_after =
//      the largest wait; the client retries or gives up.
//   4. served: buckets charged; TTFT and decode from the speed model; the prompt's whole blocks
//      are cached (or refreshed) with expiry t_first_token + ttl; at t_end refunds and late
//      charges apply and the next request is sent after its delay.
#pragma once

#include "loopcast/results.hpp"
#include "loopcast/retry.hpp"
#include "loopcast/session.hpp"
#include "loopcast/target.hpp"

#include <cstdint>
#include <span>

namespace loopcast {

/// One session to simulate.
struct session_plan {
  const session_script* script = nullptr;
  double start_s = 0;          ///< when its first request is sent, s
  std::uint64_t seed = 0;      ///< the client's jitter stream
  std::uint32_t family = 0;    ///< sessions of one family share the script's shared lineages
};

struct sim_options {
  double start_unix_s = 0;       ///< Unix time of simulated t = 0 (time-of-day prices, epoch windows)
  bool batch = false;            ///< requests go through the batch API (discounted)
  bool record_attempts = true;   ///< keep the per-attempt timeline and bucket levels
  bool record_charges = true;    ///< keep the per-bucket charge log (peak demand)
  /// Each request takes its recorded time (request_spec::recorded_ttft_s and recorded_duration_s;
  /// an unknown duration counts as 0) instead of the target's speed model and engine: only the
  /// limits and the cache change anything. For replays.
  bool recorded_speed = false;
};

/// Runs the sessions to completion (or death). Throws simulation_error on an invalid plan.
simulation_result simulate(const target& tgt, const retry_policy& client,
                           std::span<const session_plan> sessions, const sim_options& opt = {});

/// Largest sum of charges in any window [t, t + period_s) and where it starts (two pointers over
/// the time-ordered log). Returns {0, 0} for an empty log.
std::pair<double, double> peak_window_demand(std::span<const charge_event> log, double period_s);

} // namespace loopcast
