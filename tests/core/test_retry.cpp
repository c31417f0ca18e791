// Client retry policies (docs/model.md §3).
#include "loopcast/retry.hpp"

#include <gtest/gtest.h>

using namespace loopcast;

namespace {
retry_policy openai() {
  retry_policy p;
  p.name = "openai";
  p.max_retries = 2;
  p.retry_after_cap_s = 120;
  p.over_cap = over_cap_action::give_up;
  p.base_s = 0.5;
  p.max_s = 8;
  p.jitter = jitter_kind::scaled_75;
  return p;
}
} // namespace

TEST(Retry, HonoursRetryAfterWithinCap) {
  rng g(1);
  const auto d = decide_retry(openai(), 0, 5.0, g);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.wait_s, 5.0);
  EXPECT_FALSE(decide_retry(openai(), 0, 130.0, g).retry);  // > 120 s: the OpenAI SDK gives up
  EXPECT_FALSE(decide_retry(openai(), 2, 1.0, g).retry);    // two retries used
}

TEST(Retry, OverCapFallsBackToBackoff) {
  auto p = openai();
  p.retry_after_cap_s = 60;
  p.over_cap = over_cap_action::backoff;  // Anthropic SDK
  p.jitter = jitter_kind::none;
  rng g(1);
  const auto d = decide_retry(p, 1, 70.0, g);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.wait_s, 1.0);  // min(0.5 · 2¹, 8)
}

TEST(Retry, ExponentialBackoffCapped) {
  retry_policy p;  // opencode: unbounded, 1 s × 2ⁿ capped at 30 s
  p.max_retries = -1;
  p.honour_retry_after = true;
  p.base_s = 1;
  p.multiplier = 2;
  p.max_s = 30;
  rng g(1);
  EXPECT_EQ(decide_retry(p, 0, -1, g).wait_s, 1.0);
  EXPECT_EQ(decide_retry(p, 4, -1, g).wait_s, 16.0);
  EXPECT_EQ(decide_retry(p, 5, -1, g).wait_s, 30.0);
  EXPECT_TRUE(decide_retry(p, 1000, -1, g).retry);
}

// aider: ignores retry-after, 0.25 s doubling, gives up once the delay passes 60 s:
// 0.25·2⁷ = 32 s is still tried, 0.25·2⁸ = 64 s is not.
TEST(Retry, AiderGivesUpPastSixtySeconds) {
  retry_policy p;
  p.max_retries = -1;
  p.honour_retry_after = false;
  p.base_s = 0.25;
  p.multiplier = 2;
  p.max_s = 1000;
  p.give_up_above_s = 60;
  rng g(1);
  EXPECT_EQ(decide_retry(p, 0, 3.0, g).wait_s, 0.25);  // retry-after ignored
  EXPECT_EQ(decide_retry(p, 7, -1, g).wait_s, 32.0);
  EXPECT_FALSE(decide_retry(p, 8, -1, g).retry);
}

TEST(Retry, JitterStaysInItsRangeAndIsSeeded) {
  retry_policy p;
  p.max_retries = -1;
  p.honour_retry_after = false;
  p.base_s = 4;
  p.multiplier = 1;
  p.max_s = 4;
  for (auto j : {jitter_kind::full, jitter_kind::equal, jitter_kind::scaled_75}) {
    p.jitter = j;
    const double lo = j == jitter_kind::full ? 0.0 : j == jitter_kind::equal ? 2.0 : 3.0;
    rng g(7), h(7);
    for (int i = 0; i < 1000; ++i) {
      const double w = decide_retry(p, 0, -1, g).wait_s;
      EXPECT_GE(w, lo);
      EXPECT_LE(w, 4.0);
      EXPECT_EQ(w, decide_retry(p, 0, -1, h).wait_s);  // same seed, same draws
    }
  }
}
