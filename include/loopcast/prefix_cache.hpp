// loopcast — the provider's prefix cache (docs/model.md §4).
//
// A prompt is a sequence of tokens cached in whole blocks of `block_tokens`. Whether block i of
// two prompts holds the same content depends on everything before it, so a block is identified
// by its index and the *lineage* of the prefix that ends in it. A request describes its prompt
// as runs: run r says "the blocks whose last token lies in [end of run r−1, end_tokens) belong
// to lineage r". A synthetic session has one lineage for the shared system prompt and one per
// compaction epoch; a replayed kv-cache-tester trace gets one per branch of its hash-id trie.
//
// A request's cache_read is the longest cached, unexpired prefix in whole blocks (zero when that
// is shorter than min_tokens). Serving a request (re)writes every whole block of its prompt with
// expiry t + ttl: a hit refreshes the TTL. A request may ask for a longer lifetime (a 1-hour write)
// where the provider sells one; a block then keeps the later of its two expiries, so a 5-minute
// write never shortens what a 1-hour write cached. Within one lineage, expiry never increases with
// the block index (every write covers blocks [0, end), and the later of two non-increasing
// expiries is non-increasing), so a lineage's state is a short list of (end_block, expiry) steps.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace loopcast {

/// Cache rules of a provider or local engine.
struct cache_config {
  bool enabled = true;
  std::int64_t block_tokens = 128;  ///< caching granularity, in tokens
  std::int64_t min_tokens = 0;      ///< prompts (and hits) shorter than this are not cached, in tokens
  double ttl_s = 300;               ///< time to live of a write, in seconds, refreshed on each hit
  bool write_charged = false;       ///< newly cached tokens are billed as cache_write (else input)
  bool write_1h = false;            ///< writes are billed at the 1-hour price (else the 5-minute one)
  /// The longer lifetime a request may ask for (Anthropic's 1-hour cache: 3,600 s), billed at the
  /// 1-hour write price; 0 when the provider sells one lifetime only.
  double ttl_1h_s = 0;

  /// Whether a request that asks for 1-hour writes gets them here.
  bool sells_1h() const noexcept { return ttl_1h_s > 0; }
  /// The lifetime of a request's writes, s: the 1-hour one when it asks for it and it is sold.
  double lifetime_s(bool asks_1h) const noexcept { return asks_1h && ttl_1h_s > 0 ? ttl_1h_s : ttl_s; }
  /// Whether a request's writes are billed at the 1-hour price.
  bool bills_1h(bool asks_1h) const noexcept { return write_1h || (asks_1h && ttl_1h_s > 0); }
};

/// One run of a prompt's prefix structure.
struct prefix_run {
  std::uint32_t lineage;   ///< lineage id (index into the cache's lineage table)
  std::int64_t end_tokens; ///< the run covers prompt positions up to (excluding) this one
};

/// How long a lookup's answer holds for the same prompt (prefix_cache::lookup): until `until`
/// (its cached blocks expire then), as long as lineage `lineage` is not written meanwhile (the run
/// where the hit stopped short; none when every run was a full hit). Writes to the other lineages
/// can only lengthen what they cache, so they do not change the answer before `until`. When
/// `until` is the expiry of one fully hit run alone (`renew_lineage`, whose first `renew_blocks`
/// blocks it needs), a rewrite of that run may have pushed it back: still_holds() looks there
/// before it gives up (a shared system prompt, which every other session's request refreshes).
struct cache_hold {
  static constexpr std::uint32_t no_lineage = ~std::uint32_t{0};
  double until = std::numeric_limits<double>::infinity();
  std::uint32_t lineage = no_lineage;
  std::uint32_t version = 0;  ///< the lineage's write count at the lookup
  std::uint32_t renew_lineage = no_lineage;
  std::uint32_t renew_blocks = 0;
};

/// The cache state of one organisation (shared by all its sessions).
class prefix_cache {
public:
  prefix_cache() = default;
  prefix_cache(cache_config cfg, std::size_t lineages) { reset(cfg, lineages); }

  /// Empty, with `lineages` lineages under cfg, in the room the cache already has (a run that
  /// follows another reuses its buffers: swap_buffers).
  void reset(cache_config cfg, std::size_t lineages) {
    cfg_ = cfg;
    lineage_.assign(lineages, lineage_state{});
    writes_.assign(lineages, 0);
    free_.clear();
    holders_.clear();
    sweep_at_ = min_sweep;
    if (lineages <= chunks_at_once) {
      pool_.assign(lineages * chunk_steps, step{});
      for (std::size_t l = 0; l < lineages; ++l)
        lineage_[l] = {static_cast<std::uint32_t>(l * chunk_steps), 0, chunk_steps};
    } else {
      pool_.clear();
    }
    // Blocks are counted by a shift when their size is a power of two (every preset's is).
    const auto b = static_cast<std::uint64_t>(std::max<std::int64_t>(1, cfg_.block_tokens));
    shift_ = (b & (b - 1)) == 0 ? std::countr_zero(b) : -1;
  }

  /// Exchanges the two caches' buffers (their contents go with them; reset() empties them).
  void swap_buffers(prefix_cache& other) noexcept {
    lineage_.swap(other.lineage_);
    writes_.swap(other.writes_);
    pool_.swap(other.pool_);
    free_.swap(other.free_);
    holders_.swap(other.holders_);
  }

  const cache_config& config() const noexcept { return cfg_; }

  /// Cached prompt tokens for a prompt of `prompt_tokens` described by `runs`, at time t; `hold`,
  /// when given, receives how long the answer holds (cache_hold, still_holds).
  std::int64_t lookup(std::span<const prefix_run> runs, std::int64_t prompt_tokens, double t,
                      cache_hold* hold = nullptr) const noexcept {
    if (hold) *hold = cache_hold{};
    if (!cfg_.enabled || prompt_tokens < cfg_.min_tokens) return 0;
    const std::int64_t full_blocks = blocks(prompt_tokens);
    std::int64_t hit_blocks = 0;
    // The fully hit run whose expiry bounds the hold, and whether any other run bounds it too.
    std::uint32_t bound_lineage = cache_hold::no_lineage;
    std::int64_t bound_blocks = 0;
    bool bounds = false;
    for (const auto& r : runs) {
      const std::int64_t run_end = std::min(blocks(r.end_tokens), full_blocks);
      if (run_end <= hit_blocks) continue;
      // The lineage's unexpired steps at t: blocks [0, cached_end); the run is a full hit until
      // the first step that reaches run_end expires, a partial one until its last step does.
      std::int64_t cached_end = 0;
      double full_until = 0, last_until = std::numeric_limits<double>::infinity();
      for (const auto& st : steps(r.lineage)) {
        if (st.expiry <= t) break;
        cached_end = st.end_block;
        last_until = st.expiry;
        if (full_until == 0 && cached_end >= run_end) full_until = st.expiry;
      }
      if (cached_end < run_end) {
        hit_blocks = std::max(hit_blocks, cached_end);
        if (hold) {
          if (last_until < std::numeric_limits<double>::infinity()) bounds = true;
          hold->until = std::min(hold->until, last_until);
          hold->lineage = r.lineage;
          hold->version = writes_[r.lineage];
        }
        break;
      }
      if (hold) {
        if (bound_lineage != cache_hold::no_lineage) bounds = true;
        bound_lineage = r.lineage;
        bound_blocks = run_end;
        hold->until = std::min(hold->until, full_until);
      }
      hit_blocks = run_end;
    }
    if (hold && !bounds && bound_lineage != cache_hold::no_lineage && bound_blocks <= std::numeric_limits<std::uint32_t>::max()) {
      hold->renew_lineage = bound_lineage;
      hold->renew_blocks = static_cast<std::uint32_t>(bound_blocks);
    }
    const std::int64_t hit = hit_blocks * cfg_.block_tokens;
    return hit < cfg_.min_tokens ? 0 : hit;
  }

  /// Whether a lookup's answer, with this hold, is still the answer at time t (for the same prompt);
  /// a hold that ran out but can be renewed (cache_hold) is renewed.
  bool still_holds(cache_hold& h, double t) const noexcept {
    if (h.lineage != cache_hold::no_lineage && writes_[h.lineage] != h.version) return false;
    return t < h.until || renew(h, t);
  }

  /// Whole-block tokens of the prompt that serving it will cache (its full blocks), in tokens.
  std::int64_t cacheable(std::int64_t prompt_tokens) const noexcept {
    if (!cfg_.enabled || prompt_tokens < cfg_.min_tokens) return 0;
    return blocks(prompt_tokens) * cfg_.block_tokens;
  }

  /// Records that the prompt was served at time t: its whole blocks expire at t + ttl (the
  /// config's TTL), or later where an earlier, longer write keeps them.
  void touch(std::span<const prefix_run> runs, std::int64_t prompt_tokens, double t) noexcept {
    touch(runs, prompt_tokens, t, cfg_.ttl_s, t);
  }
  /// The same, with a lifetime of `ttl_s` (> 0) for this write (cache_config::lifetime_s), made
  /// known at `now` <= t (a simulation caches a prompt when its prefill ends, and knows when that
  /// is at its admission): no lookup after this one asks about a time before `now`.
  void touch(std::span<const prefix_run> runs, std::int64_t prompt_tokens, double t, double ttl_s, double now) noexcept {
    if (!cfg_.enabled || prompt_tokens < cfg_.min_tokens) return;
    const std::int64_t full_blocks = blocks(prompt_tokens);
    const double expiry = t + ttl_s;
    for (const auto& r : runs) {
      const std::int64_t run_end = std::min(blocks(r.end_tokens), full_blocks);
      if (run_end > 0) extend(r.lineage, run_end, expiry, std::min(now, t));
      if (blocks(r.end_tokens) >= full_blocks) break;
    }
  }

  /// The steps' room the cache holds (memory accounting, tests): a chunk for each lineage written
  /// whose steps have not all expired at the last sweep, free chunks, and the rooms of grown ones.
  std::size_t pool_steps() const noexcept { return pool_.size(); }

private:
  // The hold's one bounding run is a full hit at t while the first step (the latest written) that
  // covers its blocks has not expired: the lookup would find the same answer, held until then.
  [[gnu::noinline]] bool renew(cache_hold& h, double t) const noexcept {
    if (h.renew_lineage == cache_hold::no_lineage) return false;
    for (const auto& st : steps(h.renew_lineage))
      if (st.end_block >= h.renew_blocks) {
        if (!(st.expiry > t)) return false;
        h.until = st.expiry;
        return true;
      }
    return false;
  }

  struct step {
    std::int64_t end_block;  // blocks [previous step's end, end_block) ...
    double expiry;           // ... expire at this time (decreasing along the list)
  };
  // A lineage's steps lie side by side in pool_, from `begin`: `count` of them, room for `room`
  // (none before it has a chunk). Most lineages never hold more than two at once (a conversation's
  // prompt only grows), so each has a chunk of chunk_steps; one that needs more moves to the end of
  // the pool with twice the room, and gives its chunk back. A cache of many lineages is a few
  // allocations, not one per lineage.
  struct lineage_state {
    std::uint32_t begin = 0;
    std::uint32_t count = 0, room = 0;
  };
  static constexpr std::uint32_t chunk_steps = 2;
  // A cache of up to chunks_at_once lineages (2 MB of steps) gives each its chunk at reset, and
  // keeps it; a larger one (a fleet of thousands of sessions) gives a chunk at a lineage's first
  // write, and takes it back by a sweep.
  static constexpr std::size_t chunks_at_once = 65536;
  // A sweep takes back the chunks of lineages that hold nothing unexpired (a compacted conversation,
  // a session that ended, a branch left behind): when no chunk is free and the lineages holding
  // one have doubled since the last sweep (so a sweep costs O(1) a chunk taken), at least min_sweep.
  static constexpr std::size_t min_sweep = 1024;

  std::span<const step> steps(std::uint32_t lineage) const noexcept {
    const lineage_state& l = lineage_[lineage];
    return {pool_.data() + l.begin, l.count};
  }

  // Whole blocks in n tokens (n >= 0).
  std::int64_t blocks(std::int64_t n) const noexcept {
    return shift_ >= 0 ? n >> shift_ : n / cfg_.block_tokens;
  }

  // Blocks [0, end) of the lineage now expire at `expiry` or later: the steps it covers go, so do
  // the ones that expired by `now` (nothing can read them again), and it comes first. A step that
  // outlives it (a longer write made it) stays in front: outlived().
  void extend(std::uint32_t lineage, std::int64_t end, double expiry, double now) noexcept {
    lineage_state& l = lineage_[lineage];
    ++writes_[lineage];
    if (l.room == 0) [[unlikely]]
      take_chunk(lineage, now);
    step* v = pool_.data() + l.begin;
    if (l.count > 0 && v[0].expiry > expiry) [[unlikely]] {
      outlived(l, end, expiry, now);
      return;
    }
    std::size_t keep = 0;
    while (keep < l.count && v[keep].end_block <= end) ++keep;
    std::size_t last = l.count;
    while (last > keep && v[last - 1].expiry <= now) --last;
    const std::size_t count = last - keep + 1;
    if (count > l.room) [[unlikely]] {
      v = grow(l, count);
    }
    if (keep == 0) std::move_backward(v, v + last, v + count);  // one place back
    else if (keep > 1) std::move(v + keep, v + last, v + 1);     // to just behind the new first
    v[0] = step{end, expiry};
    l.count = static_cast<std::uint32_t>(count);
  }

  // extend() where the first steps outlive the write: they stay, and the write's step comes after
  // them (when they do not already hold all of its blocks).
  [[gnu::noinline]] void outlived(lineage_state& l, std::int64_t end, double expiry, double now) noexcept {
    step* v = pool_.data() + l.begin;
    std::size_t front = 1;
    while (front < l.count && v[front].expiry > expiry) ++front;
    if (v[front - 1].end_block >= end) return;  // a longer write holds all of it
    std::size_t keep = front;
    while (keep < l.count && v[keep].end_block <= end) ++keep;
    std::size_t last = l.count;
    while (last > keep && v[last - 1].expiry <= now) --last;
    const std::size_t count = front + 1 + (last - keep);
    if (count > l.room) v = grow(l, count);
    if (front + 1 > keep) std::move_backward(v + keep, v + last, v + count);  // back to make room
    else if (front + 1 < keep) std::move(v + keep, v + last, v + front + 1);  // forward over what went
    v[front] = step{end, expiry};
    l.count = static_cast<std::uint32_t>(count);
  }

  // Room for `count` steps at the end of the pool (twice as much as before, at least); the chunk
  // the lineage leaves is free for another.
  [[gnu::noinline]] step* grow(lineage_state& l, std::size_t count) {
    const std::size_t room = std::max<std::size_t>(count, 2 * std::size_t{l.room});
    const std::size_t begin = pool_.size();
    pool_.resize(begin + room);
    std::copy_n(pool_.begin() + l.begin, l.count, pool_.begin() + static_cast<std::ptrdiff_t>(begin));
    if (l.room == chunk_steps) free_.push_back(l.begin);  // (its entry in holders_ goes at the next sweep)
    l.begin = static_cast<std::uint32_t>(begin);
    l.room = static_cast<std::uint32_t>(room);
    return pool_.data() + begin;
  }

  // A chunk for a lineage written for the first time (or again after a sweep took its chunk back):
  // a free one, or one at the end of the pool. `now` as in extend().
  [[gnu::noinline]] void take_chunk(std::uint32_t lineage, double now) {
    if (free_.empty() && holders_.size() >= sweep_at_) {
      sweep(now);
      sweep_at_ = std::max(min_sweep, 2 * holders_.size());
    }
    std::uint32_t begin;
    if (!free_.empty()) {
      begin = free_.back();
      free_.pop_back();
    } else {
      begin = static_cast<std::uint32_t>(pool_.size());
      pool_.resize(pool_.size() + chunk_steps);
    }
    lineage_[lineage] = lineage_state{begin, 0, chunk_steps};
    holders_.push_back(lineage);
  }

  // Takes back the chunk of every lineage whose steps all expired by `now` (its first step lasts
  // longest): no lookup can read them again, so it holds nothing, as before its first write.
  void sweep(double now) {
    std::size_t kept = 0;
    for (const std::uint32_t id : holders_) {
      lineage_state& l = lineage_[id];
      if (l.room != chunk_steps) continue;  // it moved to a larger room and gave its chunk back
      if (l.count == 0 || pool_[l.begin].expiry <= now) {
        free_.push_back(l.begin);
        l = lineage_state{};
        continue;
      }
      holders_[kept++] = id;
    }
    holders_.resize(kept);
  }

  cache_config cfg_{};
  std::vector<lineage_state> lineage_;
  std::vector<std::uint32_t> writes_;  // per lineage: how many times it was written (cache_hold; apart,
                                       // so that a herd's holds check a small array)
  std::vector<step> pool_;
  std::vector<std::uint32_t> free_;     // the chunks in pool_ no lineage holds (their begins)
  std::vector<std::uint32_t> holders_;  // the lineages that hold a chunk (and some that left theirs)
  std::size_t sweep_at_ = min_sweep;    // holders_ that start a sweep when no chunk is free
  int shift_ = -1;                     // log2 of block_tokens when a power of two
};

} // namespace loopcast
