// loopcast — a route in a run (route.hpp, docs/routing.md): which target takes an attempt, a
// request's segment of targets (a model map), spills, cooldowns and the cache a spill leaves
// behind. The simulation's member functions; internal, included by run.hpp.
#pragma once

#include "loopcast/detail/simulation/run.hpp"

namespace loopcast {

// ---- a route: which target takes an attempt, spills, cooldowns --------------------------------
// A fresh send (not a spill) goes to the first target not cooling down; when all are, the
// request is held until the first of them is back. Returns false when held.
// (Route-only functions are kept out of line: a run on one target never calls them.)
template <bucket_law Bucket, speed_law Speed, client_law Client>
bool simulation<Bucket, Speed, Client>::pick_target(std::uint32_t si, session_state& s, double t) {
  if (s.spilled) {
    s.spilled = false;
    return true;
  }
  double back = std::numeric_limits<double>::infinity();
  const route_segment seg = segment_of(s.request());
  for (std::size_t k = seg.first; k < std::size_t{seg.first} + seg.count; ++k) {
    if (dep_[k].cooled_until <= t) {
      s.on = static_cast<std::uint8_t>(k);
      return true;
    }
    back = std::min(back, dep_[k].cooled_until);
  }
  s.res.stall_s += back - t;
  schedule(back, si, detail::event_kind::send);
  return false;
}

// The targets a request may go to: its segment's (route_policy::segments), else the whole route.
template <bucket_law Bucket, speed_law Speed, client_law Client>
route_segment simulation<Bucket, Speed, Client>::segment_of(const request_spec& req) const noexcept {
  if (policy_.segments.empty()) return {0, static_cast<std::uint8_t>(dep_.size())};
  return policy_.segments[req.segment];
}

// A refused attempt had `cached` prompt tokens cached on its target: if another target serves
// the request, it pays for those in full (admit's lost cache).
template <bucket_law Bucket, speed_law Speed, client_law Client>
void simulation<Bucket, Speed, Client>::remember_cache(session_state& s, std::int64_t cached) noexcept {
  if (cached > s.spill_cached) {
    s.spill_cached = cached;
    s.cached_from = s.on;
  }
}

// The request leaves its target for the next one not cooling down; false when there is none.
template <bucket_law Bucket, speed_law Speed, client_law Client>
bool simulation<Bucket, Speed, Client>::spill(session_state& s, double t) noexcept {
  const route_segment seg = segment_of(s.request());
  for (std::size_t k = s.on + 1u; k < std::size_t{seg.first} + seg.count; ++k)
    if (dep_[k].cooled_until <= t) {
      s.on = static_cast<std::uint8_t>(k);
      s.spilled = true;
      ++dep_[k].share.spilled_in;
      return true;
    }
  return false;
}

// A 429 from d: cooled down once cooldown_after_fails of them fall within the window.
template <bucket_law Bucket, speed_law Speed, client_law Client>
void simulation<Bucket, Speed, Client>::note_failure(deployment& d, double t) noexcept {
  if (d.fails.empty()) return;
  d.fails[d.fail_next] = t;
  d.fail_next = (d.fail_next + 1) % d.fails.size();
  ++d.fail_count;
  // d.fails[d.fail_next] is now the oldest of the last cooldown_after_fails 429s.
  if (d.fail_count >= d.fails.size() && d.fails[d.fail_next] > t - policy_.cooldown_window_s) {
    d.cooled_until = t + policy_.cooldown_s;
    ++d.share.cooldowns;
    d.fail_count = 0;  // the 429s that cooled it down are spent
  }
}

// A request moved here paid for `lost` prompt tokens that the target it left had cached: the
// price of its split here minus the price had those tokens been cache reads.
template <bucket_law Bucket, speed_law Speed, client_law Client>
void simulation<Bucket, Speed, Client>::note_lost_cache(deployment& d, const token_counts& tk, std::int64_t lost, double t) noexcept {
  d.share.lost_cache_tokens += lost;
  if (!d.tgt->prices) return;
  token_counts hit = tk;
  std::int64_t& write = hit.cache_write_1h > 0 ? hit.cache_write_1h : hit.cache_write;
  const std::int64_t from_write = std::min(lost, write);
  write -= from_write;
  hit.input -= std::min(hit.input, lost - from_write);
  hit.cache_read += lost;
  const double now = opt_.start_unix_s + t;
  d.share.lost_cache_usd += price_request(*d.tgt->prices, tk, now, opt_.batch).total_usd -
                            price_request(*d.tgt->prices, hit, now, opt_.batch).total_usd;
}

} // namespace loopcast
