// loopcast — a route: one scenario option served by an ordered list of targets (docs/routing.md).
//
// Each attempt goes to the first target of the route that is not cooling down (of its segment's
// targets, when a model map cuts the route into segments: route_policy::segments). On a 429 whose
// wait exceeds `spill_after_s`, the request spills at once to the next target that is not cooling
// down (it keeps no cached prefix there: the next target's cache has its own contents); otherwise
// the client waits as it would on one target and its retry picks again from the top. A target
// that refuses `cooldown_after_fails` times within `cooldown_window_s` is skipped for
// `cooldown_s` (LiteLLM's router: a 429 cools a deployment down at once, for 5 s by default).
// A request a target can never take (over its context window or a bucket's capacity) goes to the
// next target too. When every target is cooling down the request is held until the first of them
// is back (as the router's "no deployments available" error makes the client wait).
#pragma once

#include "loopcast/fields.hpp"
#include "loopcast/target.hpp"
#include "loopcast/tokens.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace loopcast {

/// Most targets in one route (attempt records keep the target index in one byte).
inline constexpr std::size_t max_route_targets = 8;

/// Targets [first, first + count) of a route: where the requests of one segment go.
struct route_segment {
  std::uint8_t first = 0;
  std::uint8_t count = 0;
  friend bool operator==(const route_segment&, const route_segment&) = default;
};

struct route_policy {
  /// Spill when a 429's wait (its retry-after, or the bucket's refill time when the provider sends
  /// none) exceeds this, s: 0 spills on every 429, infinity never spills.
  double spill_after_s = 0;
  std::int32_t cooldown_after_fails = 1;  ///< 429s within the window that cool a target down (0: never)
  double cooldown_window_s = 60;          ///< s
  double cooldown_s = 5;                  ///< how long a cooled-down target is skipped, s
  /// A replay's model map in one run: the route is cut into segments (each model's route), and a
  /// request goes to its own segment's targets only (request_spec::segment), spilling within it.
  /// Empty: one segment of every target.
  std::vector<route_segment> segments = {};
};

/// What one target of a route did in a run.
struct route_share {
  std::string target;              ///< the target's name
  std::int32_t attempts = 0;       ///< attempts sent to it
  std::int32_t rate_limited = 0;   ///< its 429s
  std::int32_t requests_served = 0;
  std::int32_t spilled_in = 0;     ///< attempts spilled to it at once by an earlier target's refusal
  std::int32_t cooldowns = 0;      ///< times it was cooled down
  token_counts tokens;             ///< served by it
  double cost_usd = 0;             ///< its tokens, plus its fee share or energy
  double stall_s = 0;              ///< what clients waited after its 429s, s
  double busy_s = 0;               ///< time with at least one of its requests in flight, s
  std::int64_t lost_cache_tokens = 0;  ///< prompt tokens cached on the target a request moved from, not here
  double lost_cache_usd = 0;       ///< those tokens at this target's input price above its cache-read price
};
/// The columns of a route share (JSON, numpy).
template <>
struct record_fields<route_share> {
  static constexpr std::tuple list{
      field{"target", &route_share::target, ""},
      field{"attempts", &route_share::attempts, ""},
      field{"rate_limited", &route_share::rate_limited, ""},
      field{"requests_served", &route_share::requests_served, ""},
      field{"spilled_in", &route_share::spilled_in, ""},
      field{"cooldowns", &route_share::cooldowns, ""},
      field{"tokens", &route_share::tokens, "tokens"},
      field{"cost_usd", &route_share::cost_usd, "USD"},
      field{"stall_s", &route_share::stall_s, "s"},
      field{"busy_s", &route_share::busy_s, "s"},
      field{"lost_cache_tokens", &route_share::lost_cache_tokens, "tokens"},
      field{"lost_cache_usd", &route_share::lost_cache_usd, "USD"}};
};

/// A route's name in reports: its targets' names joined by " → ".
inline std::string route_name(std::span<const target> route) {
  std::string name;
  for (const auto& t : route) name += (name.empty() ? "" : " → ") + t.name;
  return name;
}

/// The buckets of a route's targets side by side, as a run of it numbers them: a route's named
/// "TARGET:BUCKET" (`prefixed`), one target's as they are.
inline std::vector<bucket_config> route_buckets(std::span<const target> route, bool prefixed) {
  std::vector<bucket_config> out;
  for (const auto& t : route)
    for (auto b : t.limits) {
      if (prefixed) b.name = t.name + ":" + b.name;
      out.push_back(std::move(b));
    }
  return out;
}

/// The largest context window of a route's targets, in tokens.
inline std::int64_t route_window(std::span<const target> route) noexcept {
  std::int64_t w = 0;
  for (const auto& t : route) w = std::max(w, t.context_window_tokens);
  return w;
}

} // namespace loopcast
