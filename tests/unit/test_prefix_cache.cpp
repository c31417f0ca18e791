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
