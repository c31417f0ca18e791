// loopcast — the event-driven simulation: a reading guide.
//
// Sessions run against one organisation's buckets, prefix cache and speed (a "deployment"), or
// against a route of several, each with its own (route.hpp: which one takes an attempt, spills on
// a long retry-after, cooldowns). Each session is a sequential loop, so it has at most one pending
// event: "send the next attempt at t", "the request in flight ends at t" or (with a local engine)
// "its prefill is done at t". Events are ordered by (time, sequence number), so a run is a pure
// function of its inputs and seeds.
//
// Per attempt at time t (on_send):
//   1. prompt split: cache_read = prefix-cache hit; input/cache writes = the rest.
//   2. context window: prompt + generated > window → context_overflow, the session ends.
//   3. admission: each bucket's wait for its admission charge; a charge a bucket never admits
//      follows its oversize rule (refuse → request_too_large; rate_limited → a 429 on every
//      attempt); any wait > 0 → a 429 with retry_after = the largest wait (refuse); the client
//      retries or gives up. On one target whose 429s charge nothing, without a timeline, the
//      retries wait in detail::retry_queue, in key order, and the 429s due before the next other
//      event are handled in one batch (refuse_waiting, sim_options::coalesce_refusals), in the
//      event loop's order, with the same results to the bit.
//   4. admitted (admit): buckets charged; TTFT and decode from the speed law; the prompt's whole
//      blocks are cached (or refreshed) with expiry t_first_token + ttl; at t_end (on_complete)
//      refunds and late charges apply and the next request is sent after its delay.
//
// The buckets, the speed and the client are template parameters: `simulate()` runs the target's
// own (limits/bucket.hpp, speed.hpp, retry.hpp); `simulate_with()` runs a tool's own bucket law
// (limits/bucket_law.hpp), speed law or client law (the concepts below). Everything that can be
// wrong with the input is checked before the loop; the loop itself neither throws nor allocates
// beyond the results it records, whose storage is reserved up front (the herd's batches reserve
// theirs once, at the run's first refused retry).
//
// Where things live (detail/simulation/):
//   checks.hpp       what is checked before the loop (check_simulation, check_route)
//   deployment.hpp   one target's state in a run; where each session's lineages sit in the
//                    shared prefix cache (lay_out); the longest of several buckets' waits
//   run.hpp          the simulation class: the event loop, a send, a 429, an admission, a
//                    completion, the storage a run reuses, the fetch-ahead, the summary
//   router.hpp       a route: which target takes an attempt, segments, spills, cooldowns
//   engine_pool.hpp  a local engine: slots, KV-cache pool, prefill queue, shared decode
//   herd.hpp         the batched 429s of a herd, and herd_reader: which bucket laws batch
//
// This header, like everything it includes, is header-only: a tool that links loopcast::core
// (CMake) or includes <loopcast/core.hpp> simulates without linking the compiled library.
#pragma once

#include "loopcast/limits/bucket.hpp"
#include "loopcast/random.hpp"
#include "loopcast/retry.hpp"
#include "loopcast/route.hpp"
#include "loopcast/simulator.hpp"
#include "loopcast/speed.hpp"

#include <concepts>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace loopcast {

/// What the simulation needs of a speed model: the durations of a request with `cached` prompt
/// tokens from the cache, `uncached` more prompt tokens and `generated` output + reasoning tokens.
/// The target's request-to-request noise (speed_model::noise_*) multiplies whatever it returns.
template <class S>
concept speed_law = requires(const S& s, std::int64_t n) {
  { s.time(n, n, n) } -> std::same_as<request_timing>;
};

/// What the simulation needs of a client: its reaction to the n-th 429 of one request (n = retries
/// already made; retry_after_s < 0 when the provider sent none; draws from g for jitter), and
/// whether it never gives up. retry_policy (retry.hpp) is the preset-driven one.
template <class C>
concept client_law = requires(const C& c, int n, double retry_after_s, rng& g) {
  { c.decide(n, retry_after_s, g) } -> std::same_as<retry_decision>;
  { c.retries_forever() } -> std::same_as<bool>;
};
static_assert(client_law<retry_policy>);

/// The built-in speed law: the target's speed curves (speed.hpp).
struct curve_speed {
  const speed_model* model;
  request_timing time(std::int64_t cached, std::int64_t uncached, std::int64_t generated) const noexcept {
    return time_request(*model, cached, uncached, generated);
  }
};

} // namespace loopcast

// The simulation class and its parts (detail/simulation/), which need the concepts above.
#include "loopcast/detail/simulation/run.hpp"

namespace loopcast {

/// Runs the sessions with a tool's own client, buckets (`buckets[i]` enforces tgt.limits[i]) and
/// speed law. Throws simulation_error on an invalid plan, before anything runs.
template <bucket_law Bucket, speed_law Speed, client_law Client>
simulation_result simulate_with(const target& tgt, const Client& client, std::span<const session_plan> sessions,
                                const sim_options& opt, std::vector<Bucket> buckets, Speed speed) {
  return simulation<Bucket, Speed, Client>(tgt, client, sessions, opt, std::move(buckets), std::move(speed)).run();
}

/// Runs the sessions to completion (or death) on the target's own buckets (tgt.limits) and speed
/// curves (tgt.speed), with the client's retry policy. Throws simulation_error on an invalid plan,
/// before anything runs.
inline simulation_result simulate(const target& tgt, const retry_policy& client, std::span<const session_plan> sessions,
                                  const sim_options& opt = {}) {
  std::vector<bucket> buckets;
  if (opt.storage) buckets.swap(opt.storage->buckets);  // their room (the simulation leaves them there again)
  buckets.clear();
  buckets.reserve(tgt.limits.size());
  for (const auto& b : tgt.limits) buckets.emplace_back(b, opt.start_unix_s);
  return simulate_with(tgt, client, sessions, opt, std::move(buckets), curve_speed{&tgt.speed});
}

/// Runs the sessions on a route (route.hpp): each target on its own buckets, prefix cache, speed
/// curves and prices, the policy deciding where each attempt goes. The result's buckets are the
/// targets' side by side (named "TARGET:BUCKET", as route_buckets() names them) and its `route`
/// says what each target did. Throws simulation_error on an invalid plan or route, before anything runs.
inline simulation_result simulate_route(std::span<const target> route, const route_policy& policy,
                                        const retry_policy& client, std::span<const session_plan> sessions,
                                        const sim_options& opt = {}) {
  std::vector<std::vector<bucket>> buckets(route.size());
  std::vector<curve_speed> speeds;
  for (std::size_t k = 0; k < route.size(); ++k) {
    for (const auto& b : route[k].limits) buckets[k].emplace_back(b, opt.start_unix_s);
    speeds.push_back(curve_speed{&route[k].speed});
  }
  return simulation<bucket, curve_speed>(route, policy, client, sessions, opt, std::move(buckets), std::move(speeds))
      .run();
}

} // namespace loopcast
