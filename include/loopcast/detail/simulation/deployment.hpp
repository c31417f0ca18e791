// loopcast — one target's state in a run ("a deployment": its buckets, prefix cache, speed law,
// charge logs, local engine and totals), where each session's lineages sit in the shared prefix
// cache, and the longest of several buckets' waits. Internal; included by simulation.hpp.
#pragma once

#include "loopcast/engine.hpp"
#include "loopcast/limits/bucket.hpp"
#include "loopcast/prefix_cache.hpp"
#include "loopcast/results.hpp"
#include "loopcast/route.hpp"
#include "loopcast/simulator.hpp"
#include "loopcast/target.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace loopcast::detail {

/// Largest sum of charges in any window [t, t + period_s) and where it starts (two pointers over
/// the time-ordered log). Returns {0, 0} for an empty log.
inline std::pair<double, double> peak_window_demand(std::span<const charge_event> log, double period_s) noexcept {
  double best = 0, best_start = 0, sum = 0;
  std::size_t lo = 0;
  for (std::size_t hi = 0; hi < log.size(); ++hi) {
    sum += log[hi].amount;
    while (log[lo].t + period_s <= log[hi].t) sum -= log[lo++].amount;
    if (sum > best) {
      best = sum;
      best_start = log[lo].t;
    }
  }
  return {best, best_start};
}

// Engine: a decoding sequence, ordered by the virtual time at which it finishes.
struct decoding {
  double v_end;
  std::uint64_t seq;
  std::uint32_t session;
};
struct finishes_later {
  bool operator()(const decoding& a, const decoding& b) const noexcept {
    return a.v_end > b.v_end || (a.v_end == b.v_end && a.seq > b.seq);
  }
};

// Where each session's lineages sit in the shared prefix cache, and the sizes to reserve.
struct plan_layout {
  std::vector<std::uint32_t> family_base;  // global id of each family's shared lineage 0
  std::uint32_t shared = 0;                // the families' shared lineages, ids [0, shared)
  std::uint32_t lineages = 0;              // shared and private, all sessions
  std::size_t requests = 0;                // over all sessions
  std::size_t max_runs = 1;                // most prefix runs of one request
};
// `room`: a vector whose buffer the layout's family_base takes over (its contents are replaced).
inline plan_layout lay_out(std::span<const session_plan> plans, std::vector<std::uint32_t> room = {}) {
  plan_layout l;
  l.family_base = std::move(room);
  l.family_base.clear();
  // Each family's size (its scripts' most shared lineages), then, in place, where it begins.
  for (const auto& p : plans) {
    if (p.family >= l.family_base.size()) l.family_base.resize(p.family + 1, 0);
    l.family_base[p.family] = std::max(l.family_base[p.family], p.script->shared_lineages);
    l.requests += p.script->requests.size();
    for (const auto& r : p.script->requests) l.max_runs = std::max<std::size_t>(l.max_runs, r.runs_count);
  }
  for (auto& f : l.family_base) {
    const std::uint32_t size = f;
    f = l.lineages;
    l.lineages += size;
  }
  l.shared = l.lineages;
  for (const auto& p : plans) l.lineages += p.script->lineages - p.script->shared_lineages;
  return l;
}

// One target of a run ("a deployment"): its buckets, prefix cache, speed law, charge logs, local
// engine and totals. A run on one target has one; a route has one per target, each on its own.
template <class Bucket, class Speed>
struct deployment {
  const target* tgt;
  std::vector<Bucket> buckets;  // buckets[i] enforces tgt->limits[i]
  Speed speed;
  std::size_t nb;               // buckets
  std::size_t bucket_base = 0;  // the run's index of its bucket 0 (the route's buckets side by side)
  prefix_cache cache;
  std::vector<std::vector<charge_event>> log;  // per bucket: every charge, in time order
  bool has_noise = false;
  bool counts_refusals = false;  // a bucket counts refused requests (count_rejected)
  // A local engine (none when the run replays recorded speed).
  const engine_config* eng = nullptr;
  std::int64_t kv_pool = 0;
  std::vector<decoding> batch;          // sequences decoding, min-heap on virtual end time
  std::vector<std::uint32_t> waiting;   // first-come queue of admitted requests (a ring)
  std::size_t wait_head = 0, wait_count = 0;
  std::int64_t sequences = 0, kv = 0;
  double prefill_free_at = 0, vclock = 0, vclock_t = 0;
  engine_stats est;
  // A route: requests in flight here and the time with at least one (a local target's energy).
  std::int64_t in_flight = 0;
  double busy_since = 0;  // busy time: share.busy_s
  // A route's cooldown: the times of the last cooldown_after_fails 429s (a ring), skipped until.
  std::vector<double> fails;
  std::size_t fail_next = 0, fail_count = 0;  // fail_count: 429s since its last cooldown
  double cooled_until = -std::numeric_limits<double>::infinity();
  route_share share;

  // `spare`: a cache whose buffers this one takes over (run_storage), or nullptr.
  deployment(const target& t, std::vector<Bucket> b, Speed s, std::size_t lineages, prefix_cache* spare)
      : tgt(&t), buckets(std::move(b)), speed(std::move(s)), nb(t.limits.size()) {
    if (spare) cache.swap_buffers(*spare);
    cache.reset(t.cache, lineages);
  }
};

/// The longest of some buckets' waits and the bucket that has it (-1: none waits); never_admitted,
/// with its bucket, at the first bucket that never admits its charge.
struct admission_wait {
  double wait;
  std::int16_t worst;
};
/// The longest wait of buckets 0 … nb−1, bucket b's being wait_on(b).
template <class Wait>
[[gnu::always_inline]] inline admission_wait longest_of(std::size_t nb, Wait wait_on) noexcept {
  admission_wait a{0.0, -1};
  for (std::size_t b = 0; b < nb; ++b) {
    const double w = wait_on(b);
    if (w == never_admitted) return {never_admitted, static_cast<std::int16_t>(b)};
    if (w > a.wait) a = {w, static_cast<std::int16_t>(b)};
  }
  return a;
}

} // namespace loopcast::detail
