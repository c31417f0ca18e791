// Rate-limit buckets (docs/model.md §3): each algorithm and charging rule against hand-derived numbers.
#include "loopcast/rate_limits.hpp"

#include <gtest/gtest.h>

using namespace loopcast;

namespace {
bucket_config tokens_bucket(double limit, double period, bucket_algorithm alg = bucket_algorithm::token_bucket) {
  bucket_config b;
  b.name = "tpm";
  b.limit = limit;
  b.period_s = period;
  b.unit = bucket_unit::tokens;
  b.classes = class_set::all();
  b.algorithm = alg;
  return b;
}
} // namespace

// Token bucket, limit 600 per 60 s: refill rate 10 units/s, starts full.
TEST(TokenBucket, StartsFullRefillsContinuouslyAndCaps) {
  bucket b(tokens_bucket(600, 60));
  EXPECT_EQ(b.wait_for(600, 0), 0.0);
  b.charge(600, 0, 0);
  // Empty: 100 units need 100 / 10 = 10 s.
  EXPECT_DOUBLE_EQ(b.wait_for(100, 0), 10.0);
  // At t = 5 the bucket holds 50: 50 more need 5 s.
  EXPECT_DOUBLE_EQ(b.wait_for(100, 5), 5.0);
  EXPECT_DOUBLE_EQ(b.used(5), 550.0);
  // After 100 s it is full again, never fuller: 600 admissible, 601 never.
  EXPECT_EQ(b.wait_for(600, 100), 0.0);
  EXPECT_DOUBLE_EQ(b.used(100), 0.0);
  EXPECT_EQ(b.wait_for(601, 100), bucket::never);
}

// OpenAI's published 429 waits are exactly the token-bucket law
// (used + requested − limit) / (limit / 60).
TEST(TokenBucket, ReproducesOpenAIPublishedWaits) {
  {
    bucket b(tokens_bucket(50000, 60));
    b.charge(47949, 0, 0);
    // (47,949 + 3,006 − 50,000) / (50,000 / 60) = 955 / 833.33 = 1.146 s
    EXPECT_NEAR(b.wait_for(3006, 0), 1.146, 5e-4);
  }
  {
    bucket b(tokens_bucket(30000, 60));
    b.charge(22999, 0, 0);
    // (22,999 + 12,528 − 30,000) / 500 = 11.054 s
    EXPECT_NEAR(b.wait_for(12528, 0), 11.054, 5e-4);
  }
}

TEST(TokenBucket, RefundNeverOverfills) {
  bucket b(tokens_bucket(1000, 60));
  b.charge(300, 0, 0);
  b.adjust(-500, 1, 0, 0);  // refund more than was taken: the level is capped at the capacity
  EXPECT_DOUBLE_EQ(b.used(1), 0.0);
}

TEST(TokenBucket, LateChargeCanGoIntoDebt) {
  bucket b(tokens_bucket(600, 60));  // 10/s
  b.charge(500, 0, 0);
  b.adjust(+300, 0, 0, 0);            // on_completion: 300 more at t = 0 → level −200
  EXPECT_DOUBLE_EQ(b.used(0), 800.0);
  EXPECT_DOUBLE_EQ(b.wait_for(100, 0), 30.0);  // (100 − (−200)) / 10
}

// Fixed window, 10 per 60 s from the session start.
// Asking a bucket changes nothing: every algorithm, charged the same way, with and without a read
// before each operation and in between (a 429 storm reads on every attempt), has the same levels
// and waits to the last bit. Levels near empty, where the refill's rounding shows.
TEST(Buckets, ReadsDoNotChangeTheLevel) {
  for (const auto alg : {bucket_algorithm::token_bucket, bucket_algorithm::fixed_window,
                         bucket_algorithm::sliding_window}) {
    bucket read(tokens_bucket(450000, 600, alg)), quiet(tokens_bucket(450000, 600, alg));
    std::uint64_t x = 12345;
    auto next = [&x] { return (x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 11; };
    double t = 0;
    for (int i = 0; i < 2000; ++i) {
      const double t0 = t;
      t += static_cast<double>(next() % 1000) * 1e-3 + 1e-7;
      for (int k = 1; k <= 3; ++k) (void)read.used(t0 + (t - t0) * k / 4);  // only `read` is asked in between
      const double q = 1000 + static_cast<double>(next() % 9000);
      ASSERT_EQ(read.wait_for(q, t), quiet.wait_for(q, t)) << to_string(alg) << ", step " << i;
      if (quiet.wait_for(q, t) == 0) {
        const auto ticket = read.charge(q, t, t + 1);
        quiet.charge(q, t, t + 1);
        (void)read.used(t + 0.3);
        read.adjust(-q / 3, t + 0.5, t, ticket);
        quiet.adjust(-q / 3, t + 0.5, t, ticket);
        t += 0.5;
      }
      ASSERT_EQ(read.used(t), quiet.used(t)) << to_string(alg) << ", step " << i;
    }
  }
}

TEST(FixedWindow, ResetsAtPeriodBoundaries) {
  bucket b(tokens_bucket(10, 60, bucket_algorithm::fixed_window));
  b.charge(8, 1, 0);
  EXPECT_EQ(b.wait_for(2, 30), 0.0);            // 8 + 2 <= 10
  EXPECT_DOUBLE_EQ(b.wait_for(3, 30), 30.0);    // wait for the window starting at 60 s
  EXPECT_DOUBLE_EQ(b.used(59.9), 8.0);
  EXPECT_DOUBLE_EQ(b.used(60), 0.0);
  EXPECT_EQ(b.wait_for(11, 60), bucket::never);
}

TEST(FixedWindow, RefundOnlyWithinTheSameWindow) {
  bucket b(tokens_bucket(10, 60, bucket_algorithm::fixed_window));
  b.charge(6, 10, 0);
  b.adjust(-4, 20, 10, 0);  // same window: count 6 − 4 = 2
  EXPECT_DOUBLE_EQ(b.used(20), 2.0);
  b.charge(5, 50, 0);       // count 7
  b.adjust(-5, 70, 50, 0);  // the window rolled at 60: the refund has nothing to return
  EXPECT_DOUBLE_EQ(b.used(70), 0.0);
}

TEST(FixedWindow, EpochAnchorAlignsToWallClock) {
  auto cfg = tokens_bucket(10, 60, bucket_algorithm::fixed_window);
  cfg.anchor = window_anchor::epoch;
  // Simulated t = 0 is Unix 1000 s; windows start at Unix multiples of 60, i.e. at t = 20, 80, …
  bucket b(cfg, 1000.0);
  b.charge(10, 5, 0);
  EXPECT_DOUBLE_EQ(b.wait_for(1, 5), 15.0);
  EXPECT_EQ(b.wait_for(1, 20), 0.0);
}

// Sliding window, 10 per 60 s: the window is (t − 60, t].
TEST(SlidingWindow, WaitsUntilOldChargesLeave) {
  bucket b(tokens_bucket(10, 60, bucket_algorithm::sliding_window));
  const auto first = b.charge(4, 0, 0);
  const auto second = b.charge(4, 20, 0);
  // At 30: 8 in the window; 5 more fit once the charge at 0 leaves, at 60.
  EXPECT_DOUBLE_EQ(b.wait_for(5, 30), 30.0);
  EXPECT_DOUBLE_EQ(b.wait_for(2, 30), 0.0);
  // Refund 2 of the second charge: 4 + 2 + 4 = 10 fits now.
  b.adjust(-2, 25, 20, second);
  EXPECT_EQ(b.wait_for(4, 30), 0.0);
  // 5 still needs the first charge gone: 4 + 2 + 5 = 11 > 10.
  EXPECT_DOUBLE_EQ(b.wait_for(5, 30), 30.0);
  // At exactly 60 the charge at 0 is out of (0, 60].
  EXPECT_DOUBLE_EQ(b.used(60), 2.0);
  (void)first;
}

TEST(SlidingWindow, MultipleExpiriesNeeded) {
  bucket b(tokens_bucket(10, 60, bucket_algorithm::sliding_window));
  b.charge(3, 0, 0);
  b.charge(3, 10, 0);
  b.charge(3, 20, 0);
  // 9 used at t = 25; 8 more fit only when all three have left:
  // from t = 60: 6 + 8 = 14; from 70: 3 + 8 = 11; from 80: 0 + 8 = 8 <= 10 → wait 80 − 25 = 55 s.
  EXPECT_DOUBLE_EQ(b.wait_for(8, 25), 55.0);
}

TEST(Concurrency, WaitsForTheEarliestCompletion) {
  bucket_config cfg;
  cfg.name = "in_flight";
  cfg.limit = 2;
  cfg.unit = bucket_unit::concurrent_requests;
  cfg.algorithm = bucket_algorithm::concurrency;
  bucket b(cfg);
  b.charge(1, 0, 10);
  b.charge(1, 1, 5);
  EXPECT_DOUBLE_EQ(b.used(2), 2.0);
  EXPECT_DOUBLE_EQ(b.wait_for(1, 2), 3.0);  // the request ending at 5 frees a slot
  EXPECT_EQ(b.wait_for(1, 5), 0.0);
  EXPECT_DOUBLE_EQ(b.used(10), 0.0);
}

// One request: input 100, cache_read 900, output 50, reasoning 150 (generated 200), max_tokens 1,000.
TEST(Charging, FourRulesOnABucketCountingEverything) {
  const token_counts t{100, 900, 0, 50, 150};
  auto b = tokens_bucket(1e6, 60);
  b.charging = charging_rule::actual;
  EXPECT_EQ(charge_for(b, t, 1000).at_admission, 1200);  // 100 + 900 + 200
  EXPECT_EQ(charge_for(b, t, 1000).at_completion, 0);
  b.charging = charging_rule::reserve_then_refund;
  EXPECT_EQ(charge_for(b, t, 1000).at_admission, 2000);  // 1,000 prompt + 1,000 reserved
  EXPECT_EQ(charge_for(b, t, 1000).at_completion, -800); // 1,000 − 200 unused
  b.charging = charging_rule::reserve;
  EXPECT_EQ(charge_for(b, t, 1000).at_admission, 2000);
  EXPECT_EQ(charge_for(b, t, 1000).at_completion, 0);
  b.charging = charging_rule::on_completion;
  EXPECT_EQ(charge_for(b, t, 1000).at_admission, 1000);
  EXPECT_EQ(charge_for(b, t, 1000).at_completion, 200);
}

TEST(Charging, CountedClassesOnly) {
  const token_counts t{100, 900, 40, 50, 150};
  auto uncached = tokens_bucket(1e6, 60);
  uncached.classes = class_set{token_class::input};
  EXPECT_EQ(charge_for(uncached, t, 1000).at_admission, 100);
  auto itpm = tokens_bucket(1e6, 60);
  itpm.classes = class_set{token_class::input, token_class::cache_write};  // Anthropic: no cache reads
  EXPECT_EQ(charge_for(itpm, t, 1000).at_admission, 140);
  auto otpm = tokens_bucket(1e6, 60);
  otpm.classes = class_set{token_class::output, token_class::reasoning};
  otpm.charging = charging_rule::reserve_then_refund;
  EXPECT_EQ(charge_for(otpm, t, 1000).at_admission, 1000);
  EXPECT_EQ(charge_for(otpm, t, 1000).at_completion, -800);
  bucket_config rpm;
  rpm.unit = bucket_unit::requests;
  EXPECT_EQ(charge_for(rpm, t, 1000).at_admission, 1);
}

// Reservation makes a request that fits on its actual size wait: Cerebras' total TPM.
TEST(Charging, ReservationDelaysAdmission) {
  auto cfg = tokens_bucket(450000, 60);  // 7,500/s
  cfg.charging = charging_rule::reserve_then_refund;
  bucket b(cfg);
  b.charge(400000, 0, 0);
  const token_counts next{2000, 40000, 0, 300, 700};  // 43,000 actual, 58,384 with a 16,384 reserve
  const auto c = charge_for(cfg, next, 16384);
  EXPECT_EQ(c.at_admission, 58384);
  // Holds 50,000: the reserve needs (58,384 − 50,000) / 7,500 = 1.11787 s more.
  EXPECT_NEAR(b.wait_for(c.at_admission, 0), 8384.0 / 7500.0, 1e-12);
}
