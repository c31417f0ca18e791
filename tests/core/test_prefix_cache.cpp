// The prefix cache (docs/model.md §4): whole blocks, minimum size, TTL refreshed on hit, lineages.
#include "loopcast/prefix_cache.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace loopcast;

namespace {
cache_config cfg(std::int64_t block, std::int64_t min, double ttl) {
  cache_config c;
  c.block_tokens = block;
  c.min_tokens = min;
  c.ttl_s = ttl;
  return c;
}
} // namespace

TEST(PrefixCache, HitIsTheCachedPrefixInWholeBlocks) {
  prefix_cache c(cfg(128, 0, 300), 1);
  const std::vector<prefix_run> first{{0, 1000}};
  EXPECT_EQ(c.lookup(first, 1000, 0), 0);
  c.touch(first, 1000, 0);  // caches floor(1000 / 128) = 7 blocks = 896 tokens
  const std::vector<prefix_run> second{{0, 1500}};
  EXPECT_EQ(c.lookup(second, 1500, 10), 896);
  EXPECT_EQ(c.cacheable(1500), 1408);  // 11 blocks
}

TEST(PrefixCache, MinimumCacheableSize) {
  prefix_cache c(cfg(128, 1024, 300), 1);
  const std::vector<prefix_run> small{{0, 1000}};
  c.touch(small, 1000, 0);  // shorter than 1,024: not cached
  const std::vector<prefix_run> big{{0, 2000}};
  EXPECT_EQ(c.lookup(big, 2000, 1), 0);
  c.touch(big, 2000, 1);  // 15 blocks = 1,920 tokens
  const std::vector<prefix_run> bigger{{0, 2100}};
  EXPECT_EQ(c.lookup(bigger, 2100, 2), 1920);
  // A hit below the minimum counts as none: a 1,100-token prompt would hit 1,024 (8 blocks).
  prefix_cache d(cfg(128, 1100, 300), 1);
  d.touch(big, 2000, 0);
  const std::vector<prefix_run> short_one{{0, 1100}};
  EXPECT_EQ(d.lookup(short_one, 1100, 1), 0);  // 1,024 < 1,100
}

TEST(PrefixCache, ExpiresAfterTtlAndHitsRefresh) {
  prefix_cache c(cfg(100, 0, 300), 1);
  const std::vector<prefix_run> p{{0, 1000}};
  c.touch(p, 1000, 0);                  // expires at 300
  EXPECT_EQ(c.lookup(p, 1000, 299), 1000);
  c.touch(p, 1000, 299);                // a hit refreshes: expires at 599
  EXPECT_EQ(c.lookup(p, 1000, 598), 1000);
  EXPECT_EQ(c.lookup(p, 1000, 599), 0);  // a stall longer than the TTL: full miss
}

TEST(PrefixCache, ShorterTouchKeepsOlderTailExpiry) {
  prefix_cache c(cfg(100, 0, 300), 1);
  const std::vector<prefix_run> longp{{0, 2000}}, shortp{{0, 1000}};
  c.touch(longp, 2000, 0);    // 20 blocks until 300
  c.touch(shortp, 1000, 200); // first 10 blocks refreshed until 500
  EXPECT_EQ(c.lookup(longp, 2000, 250), 2000);
  EXPECT_EQ(c.lookup(longp, 2000, 350), 1000);  // the tail expired at 300, the head lives to 500
  EXPECT_EQ(c.lookup(longp, 2000, 500), 0);
}

// Two lineages: a shared system prompt (0) and a conversation (1). After a compaction the new
// conversation (2) still hits the system prompt's blocks.
TEST(PrefixCache, LineagesShareTheirCommonPrefixOnly) {
  prefix_cache c(cfg(100, 0, 300), 3);
  const std::vector<prefix_run> epoch1{{0, 950}, {1, 5000}};
  c.touch(epoch1, 5000, 0);
  // Blocks 0..8 end before token 950: lineage 0; block 9 (900..999) holds conversation tokens.
  const std::vector<prefix_run> epoch2{{0, 950}, {2, 3000}};
  EXPECT_EQ(c.lookup(epoch2, 3000, 1), 900);
  const std::vector<prefix_run> epoch1_next{{0, 950}, {1, 5600}};
  EXPECT_EQ(c.lookup(epoch1_next, 5600, 1), 5000);
}

TEST(PrefixCache, DisabledCachesNothing) {
  cache_config off;
  off.enabled = false;
  prefix_cache c(off, 1);
  const std::vector<prefix_run> p{{0, 1000}};
  c.touch(p, 1000, 0);
  EXPECT_EQ(c.lookup(p, 1000, 1), 0);
  EXPECT_EQ(c.cacheable(1000), 0);
}

// A lookup's hold (cache_hold) says how long its answer stands: by hand, a full hit holds until
// its blocks expire whatever other prompts write, and a partial one until its lineage is written.
TEST(PrefixCache, AHoldLastsUntilTheHitsBlocksExpireOrItsLineageIsWritten) {
  prefix_cache c(cfg(100, 0, 300), 2);
  const std::vector<prefix_run> system{{0, 1000}};
  c.touch(system, 1000, 0);      // lineage 0: 10 blocks until 300 s
  const std::vector<prefix_run> prompt{{0, 1000}, {1, 1550}};
  cache_hold h;
  EXPECT_EQ(c.lookup(prompt, 1550, 10, &h), 1000);  // the system prompt hits; lineage 1 has nothing
  EXPECT_EQ(h.until, 300);
  EXPECT_EQ(h.lineage, 1u);
  EXPECT_TRUE(c.still_holds(h, 299.9));
  EXPECT_FALSE(c.still_holds(h, 300));                // the system prompt's blocks expire
  EXPECT_EQ(h.renew_lineage, 0u);                     // ... unless lineage 0 is rewritten
  EXPECT_EQ(h.renew_blocks, 10u);
  c.touch(system, 1000, 20);                          // rewriting lineage 0 only lengthens the hit
  EXPECT_TRUE(c.still_holds(h, 250));
  EXPECT_EQ(h.until, 300);
  EXPECT_TRUE(c.still_holds(h, 310));                 // the hit now lasts until 320: renewed
  EXPECT_EQ(h.until, 320);
  EXPECT_FALSE(c.still_holds(h, 320));
  c.touch(prompt, 1550, 30);                          // lineage 1 written: the answer may change
  EXPECT_FALSE(c.still_holds(h, 31));
  EXPECT_EQ(c.lookup(prompt, 1550, 31, &h), 1500);   // every run a full hit: no lineage to watch
  EXPECT_EQ(h.lineage, cache_hold::no_lineage);
  EXPECT_EQ(h.until, 330);
  EXPECT_EQ(h.renew_lineage, cache_hold::no_lineage);  // two runs bound it: no renewal
  prefix_cache off(cfg(100, 2000, 300), 1);           // below the minimum: nothing, for ever
  EXPECT_EQ(off.lookup(system, 1000, 0, &h), 0);
  EXPECT_TRUE(off.still_holds(h, 1e12));
}

// A lineage written with shorter and shorter prompts keeps a step per write (each later one
// shorter and longer-lived): ten of them, past the room a lineage starts with. At 305.5 the writes
// up to 5 s have expired; the longest still cached is the one at 6 s, 4 blocks.
TEST(PrefixCache, ALineageKeepsEveryShorterWriteUntilItExpires) {
  prefix_cache c(cfg(100, 0, 300), 2);
  const std::vector<prefix_run> other{{1, 700}};  // the lineage beside it, written once at 5 s
  c.touch(other, 700, 5);
  for (int k = 0; k < 10; ++k) {
    const std::vector<prefix_run> p{{0, 100 * (10 - k)}};
    c.touch(p, 100 * (10 - k), k);
  }
  const std::vector<prefix_run> ten{{0, 1000}};
  EXPECT_EQ(c.lookup(ten, 1000, 200), 1000);  // nothing expired yet: the first write's 10 blocks
  EXPECT_EQ(c.lookup(ten, 1000, 300.5), 900);
  EXPECT_EQ(c.lookup(ten, 1000, 305.5), 400);
  EXPECT_EQ(c.lookup(ten, 1000, 309.5), 0);
  EXPECT_EQ(c.lookup(other, 700, 304.5), 700);  // untouched by the other lineage's steps
  EXPECT_EQ(c.lookup(other, 700, 305), 0);
  c.touch(ten, 1000, 310);                      // a longer prompt covers them all again
  EXPECT_EQ(c.lookup(ten, 1000, 609), 1000);
  EXPECT_EQ(c.lookup(ten, 1000, 610), 0);
}

// The hold never lies: over random prompts, writes and times, a later lookup of a prompt whose
// hold still stands gives the same answer (the simulation then skips the lookup). Block sizes that
// are and are not powers of two.
TEST(PrefixCache, AnAnswerThatStillHoldsIsTheAnswer) {
  std::uint64_t x = 12345;
  auto next = [&x](std::uint64_t n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (x >> 33) % n;
  };
  for (const std::int64_t block : {std::int64_t{128}, std::int64_t{100}}) {
    prefix_cache c(cfg(block, 256, 60), 4);
    struct remembered {
      std::vector<prefix_run> runs;
      std::int64_t prompt, answer;
      cache_hold hold;
    };
    std::vector<remembered> seen;
    double t = 0;
    int checked = 0;
    for (int step = 0; step < 20000; ++step) {
      t += static_cast<double>(next(2000)) / 100.0;  // 0 to 20 s apart
      std::vector<prefix_run> runs{{0, static_cast<std::int64_t>(200 + next(800))}};
      runs.push_back({static_cast<std::uint32_t>(1 + next(3)), runs[0].end_tokens + static_cast<std::int64_t>(next(3000))});
      const std::int64_t prompt = runs.back().end_tokens - static_cast<std::int64_t>(next(50));
      if (next(3) == 0) c.touch(runs, prompt, t);
      for (auto& r : seen)
        if (c.still_holds(r.hold, t)) {
          ASSERT_EQ(c.lookup(r.runs, r.prompt, t), r.answer) << "block " << block << ", step " << step;
          ++checked;
        }
      remembered r{runs, prompt, 0, {}};
      r.answer = c.lookup(runs, prompt, t, &r.hold);
      seen.push_back(r);
      if (seen.size() > 8) seen.erase(seen.begin());
    }
    EXPECT_GT(checked, 1000) << "block " << block;  // the property was exercised
  }
}

// A 1-hour write outlives the 5-minute writes after it (each block keeps the later of its
// expiries), by hand: 1,000 tokens written at 0 for an hour, 1,500 at 10 for 300 s.
//   at 300: all 1,500 cached; at 400: the first 1,000 (until 3,600); at 3,600: nothing.
// A 5-minute write of 800 at 500 changes nothing (a longer write holds all of it); an hour-long
// write of 2,000 at 3,000 lasts until 6,600. Without the later-expiry rule the 1,500 written at 10
// would have cut the first 1,000 to 310 (0 read at 400).
TEST(PrefixCache, ALongerWriteOutlivesTheShorterOnesAfterIt) {
  prefix_cache c(cfg(1, 0, 300), 1);
  const std::vector<prefix_run> a{{0, 1000}}, b{{0, 1500}}, small{{0, 800}}, big{{0, 2000}};
  c.touch(a, 1000, 0, 3600, 0);
  c.touch(b, 1500, 10, 300, 10);
  EXPECT_EQ(c.lookup(b, 1500, 300), 1500);
  EXPECT_EQ(c.lookup(b, 1500, 400), 1000);
  EXPECT_EQ(c.lookup(b, 1500, 3599), 1000);
  c.touch(small, 800, 500, 300, 500);
  EXPECT_EQ(c.lookup(b, 1500, 3599), 1000);
  EXPECT_EQ(c.lookup(b, 1500, 3600), 0);
  c.touch(big, 2000, 3000, 3600, 3000);
  EXPECT_EQ(c.lookup(big, 2000, 6599), 2000);
  EXPECT_EQ(c.lookup(big, 2000, 6600), 0);
}

// Against a cache kept block by block (each block's expiry the latest of its writes): random
// prompts on four lineages, writes of 60 s and 600 s, each written up to 5 s after the time it is
// made known (a prefill that ends later), lookups at the current time.
TEST(PrefixCache, MixedLifetimesMatchABlockByBlockCache) {
  std::uint64_t x = 777;
  auto next = [&x](std::uint64_t n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (x >> 33) % n;
  };
  for (const std::int64_t block : {std::int64_t{128}, std::int64_t{100}}) {
    const std::int64_t min_tokens = 256;
    prefix_cache c(cfg(block, min_tokens, 60), 4);
    std::vector<std::vector<double>> expiry(4, std::vector<double>(64, 0.0));  // per lineage, per block
    auto reference = [&](const std::vector<prefix_run>& runs, std::int64_t prompt, double t) {
      if (prompt < min_tokens) return std::int64_t{0};
      const std::int64_t full = prompt / block;
      std::int64_t hit = 0;
      for (const auto& r : runs) {
        const std::int64_t end = std::min(r.end_tokens / block, full);
        if (end <= hit) continue;
        std::int64_t cached = 0;
        while (cached < end && expiry[r.lineage][static_cast<std::size_t>(cached)] > t) ++cached;
        if (cached < end) {
          hit = std::max(hit, cached);
          break;
        }
        hit = end;
      }
      return hit * block < min_tokens ? 0 : hit * block;
    };
    double t = 0;
    int hits = 0;
    for (int step = 0; step < 20000; ++step) {
      t += static_cast<double>(next(2000)) / 100.0;
      std::vector<prefix_run> runs{{0, static_cast<std::int64_t>(200 + next(800))}};
      runs.push_back({static_cast<std::uint32_t>(1 + next(3)), runs[0].end_tokens + static_cast<std::int64_t>(next(5000))});
      const std::int64_t prompt = runs.back().end_tokens - static_cast<std::int64_t>(next(50));
      const std::int64_t got = c.lookup(runs, prompt, t);
      ASSERT_EQ(got, reference(runs, prompt, t)) << "block " << block << ", step " << step;
      hits += got > 0;
      if (next(2) == 0 && prompt >= min_tokens) {
        const double at = t + static_cast<double>(next(500)) / 100.0;
        const double ttl = next(4) == 0 ? 600 : 60;
        c.touch(runs, prompt, at, ttl, t);
        const std::int64_t full = prompt / block;
        for (const auto& r : runs) {
          for (std::int64_t b = 0; b < std::min(r.end_tokens / block, full); ++b)
            expiry[r.lineage][static_cast<std::size_t>(b)] = std::max(expiry[r.lineage][static_cast<std::size_t>(b)], at + ttl);
          if (r.end_tokens / block >= full) break;
        }
      }
    }
    EXPECT_GT(hits, 5000) << "block " << block;  // the comparison saw hits, not only misses
  }
}

// A sweep takes back the room of lineages whose writes all expired (in a cache of more than 65,536
// lineages; a smaller one gives each its room at once): 70,000 lineages written in turn, a quarter
// of the writes going to older ones (some after their room was taken back, some grown past two
// steps), hold the room of those alive (about a minute's worth) and of the grown ones, and every
// lookup is what a block-by-block cache gives.
TEST(PrefixCache, TheRoomOfExpiredLineagesIsTakenBackAndNothingElseChanges) {
  std::uint64_t x = 4242;
  auto next = [&x](std::uint64_t n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (x >> 33) % n;
  };
  constexpr std::size_t lineages = 70000, max_blocks = 40;
  constexpr std::int64_t block = 128;
  prefix_cache c(cfg(block, 0, 60), lineages);
  std::vector<std::vector<double>> expiry(lineages, std::vector<double>(max_blocks, 0.0));
  auto reference = [&](std::uint32_t lineage, std::int64_t prompt, double t) {
    std::int64_t cached = 0;
    while (cached < prompt / block && expiry[lineage][static_cast<std::size_t>(cached)] > t) ++cached;
    return cached * block;
  };
  double t = 0;
  std::size_t most_room = 0;
  int revisits = 0;
  for (std::uint32_t l = 0; l < lineages; ++l) {
    t += 0.1;  // ten new lineages a second: about 600 alive under a 60 s lifetime
    // Mostly the newest lineage; now and then one written before: long ago (its room may have gone)
    // or in the last 80 s (alive, or expired within the last 20 s).
    const bool old = l > 1000 && next(4) == 0;
    const std::uint32_t id = !old ? l : next(2) == 0 ? static_cast<std::uint32_t>(next(l)) : l - static_cast<std::uint32_t>(1 + next(800));
    revisits += old;
    // Up to three writes, shorter ones after longer ones (a lineage of three steps grows).
    for (int w = 0; w < 1 + static_cast<int>(next(3)); ++w) {
      const std::int64_t prompt = block * static_cast<std::int64_t>(1 + next(max_blocks - 1));
      const std::vector<prefix_run> runs{{id, prompt}};
      ASSERT_EQ(c.lookup(runs, prompt, t), reference(id, prompt, t)) << "lineage " << l;
      const double at = t + static_cast<double>(next(100)) / 100.0;
      c.touch(runs, prompt, at, 60, t);
      for (std::int64_t b = 0; b < prompt / block; ++b)
        expiry[id][static_cast<std::size_t>(b)] = std::max(expiry[id][static_cast<std::size_t>(b)], at + 60);
    }
    most_room = std::max(most_room, c.pool_steps());
  }
  EXPECT_GT(revisits, 10000);
  // Without sweeps every lineage would keep its room: at least 2 × 70,000 steps. With them, a sweep
  // waits for 1,024 lineages holding room, so about 1,600 alive or waiting, two steps each, and the
  // rooms of the grown ones, which they keep (about 16,000 steps here).
  EXPECT_LT(most_room, std::size_t{30000});
  EXPECT_GT(most_room, std::size_t{2 * 600});
}
