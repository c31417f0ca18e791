// The header-only core on its own: this program links loopcast::core and GoogleTest, not the
// compiled library, so anything the model needs out of line would fail to link here. It builds a
// target and a session script in code, as a planning tool would, and checks a run derived by hand.
#include <loopcast/core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace {

using namespace loopcast;

// A 1,000-token-per-minute bucket on prompt tokens, 1 ms per prompt token, 10 ms per generated
// token, $1 / $2 per million input / output tokens, no prefix cache.
target hand_target() {
  target t;
  t.name = "hand";
  bucket_config itpm;
  itpm.name = "itpm";
  itpm.limit = 1000;
  itpm.period_s = 60;
  itpm.classes = {token_class::input, token_class::cache_read, token_class::cache_write};
  t.limits.push_back(itpm);
  t.cache.enabled = false;
  t.speed.prefill = constant_curve{0.001};
  t.speed.decode = constant_curve{0.01};
  price_sheet p;
  p.usd_per_million.input = 1;
  p.usd_per_million.output = 2;
  t.prices = p;
  return t;
}

// Two requests of 800 prompt and 100 output tokens, back to back.
session_script two_requests() {
  session_script s;
  s.source = "hand";
  for (int i = 0; i < 2; ++i) {
    request_spec r;
    r.prompt_tokens = 800;
    r.output_tokens = 100;
    r.max_tokens = 100;
    r.turn = i + 1;
    s.requests.push_back(r);
  }
  return s;
}

TEST(Core, SimulatesAHandBuiltTargetWithoutTheCompiledLibrary) {
  const auto tgt = hand_target();
  const auto script = two_requests();
  const std::vector<session_plan> plans{{&script, 0.0, 1, 0}};
  retry_policy client;  // honours retry-after, two retries
  const auto r = simulate(tgt, client, plans);

  // Request 1 at 0 s takes 800 of 1,000 tokens and runs 0.8 + 1.0 = 1.8 s. Request 2 at 1.8 s
  // finds 200 + 1.8 s × 1000/60 = 230 tokens: a 429 with retry-after (800 − 230) / (1000/60)
  // = 34.2 s. Its retry at 36.0 s is admitted and ends at 37.8 s.
  ASSERT_EQ(r.sessions.size(), 1u);
  const auto& s = r.sessions[0];
  EXPECT_EQ(s.outcome, session_outcome::completed);
  EXPECT_EQ(s.requests_served, 2);
  EXPECT_EQ(s.attempts, 3);
  EXPECT_EQ(s.rate_limited, 1);
  EXPECT_NEAR(s.stall_s, 34.2, 1e-9);
  EXPECT_NEAR(s.end_s, 37.8, 1e-9);
  ASSERT_TRUE(r.first_429);
  EXPECT_EQ(r.first_429->request, 2);
  EXPECT_EQ(r.first_429->bucket_name, "itpm");
  EXPECT_NEAR(r.first_429->time_s, 1.8, 1e-12);
  EXPECT_NEAR(r.first_429->retry_after_s, 34.2, 1e-9);
  // Tokens conserved, and 2 × (800 × $1 + 100 × $2) / 10^6 = $0.002.
  EXPECT_EQ(r.tokens.input, 1600);
  EXPECT_EQ(r.tokens.output, 200);
  EXPECT_NEAR(r.cost_usd, 0.002, 1e-15);
}

TEST(Core, ReplaysABucketsLevelBetweenArrivals) {
  const auto tgt = hand_target();
  const auto script = two_requests();
  const std::vector<session_plan> plans{{&script, 0.0, 1, 0}};
  const auto r = simulate(tgt, retry_policy{}, plans);
  // The run above charges 800 at 0 s and 800 at 36.0 s (the 429 at 1.8 s charges nothing).
  ASSERT_EQ(r.bucket_ops.size(), 2u);
  const double t36 = r.bucket_ops[1].t;
  EXPECT_NEAR(t36, 36.0, 1e-9);
  // The level each attempt found, replayed, is the level the timeline recorded: 0, 770, 200.
  std::vector<double> at;
  for (const auto& a : r.attempts) at.push_back(a.t_send);
  const auto replayed = replay_levels(bucket(tgt.limits[0]), r.bucket_ops, 0, at);
  ASSERT_EQ(replayed.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(replayed[i], r.bucket_levels[i], 1e-9) << i;
  EXPECT_NEAR(replayed[1], 770, 1e-9);
  EXPECT_NEAR(replayed[2], 200, 1e-9);
  // Between them it drains at 1000/60 per second: 300 at 30 s, 200 just before the charge at 36 s,
  // 1,000 just after it, 970 when the run ends at 37.8 s.
  const auto c = bucket_level_curve(r, tgt.limits[0], 0, 378);  // a point every 0.1 s
  ASSERT_EQ(c.t.size(), 379u + 4u);
  auto level_at = [&](double t) {
    for (std::size_t i = 0; i < c.t.size(); ++i)
      if (std::abs(c.t[i] - t) < 1e-9) return c.used[i];
    ADD_FAILURE() << "no point at " << t;
    return -1.0;
  };
  EXPECT_NEAR(level_at(30.0), 300, 1e-6);
  EXPECT_NEAR(level_at(1.8), 770, 1e-6);
  EXPECT_NEAR(c.used.back(), 970, 1e-6);
  EXPECT_NEAR(c.t.back(), 37.8, 1e-9);
  const auto k = static_cast<std::size_t>(std::find(c.t.begin(), c.t.end(), t36) - c.t.begin());
  ASSERT_LT(k + 1, c.t.size());
  EXPECT_NEAR(c.used[k], 200, 1e-6);
  EXPECT_EQ(c.t[k + 1], t36);
  EXPECT_NEAR(c.used[k + 1], 1000, 1e-6);
}

TEST(Core, ReplaysRefundsOnEachBucketLaw) {
  // 800 charged at 0 s, 300 of it refunded at 10 s.
  const std::vector<bucket_op> ops{{0.0, 800, 0.0, 0, 0, false}, {10.0, -300, 10.0, 0, 0, true}};
  bucket_config cfg;
  cfg.name = "tpm";
  cfg.limit = 1000;
  cfg.period_s = 60;
  const std::vector<double> times{5.0, 10.0, 20.0, 30.0, 59.0, 61.0};
  // A token bucket drains 1000/60 per second: 716.67 at 5 s, 633.33 at 10 s before the refund,
  // 333.33 − 166.67 = 166.67 at 20 s, empty from 30 s.
  const auto tb = replay_levels(bucket(cfg), ops, 0, times);
  const std::vector<double> tb_expected{800 - 5000 / 60.0, 800 - 10000 / 60.0, 500 - 20000 / 60.0, 0, 0, 0};
  for (std::size_t i = 0; i < times.size(); ++i) EXPECT_NEAR(tb[i], tb_expected[i], 1e-9) << times[i];
  // A sliding window holds the net 500 until the charge is 60 s old.
  cfg.algorithm = bucket_algorithm::sliding_window;
  const auto sw = replay_levels(bucket(cfg), ops, 0, times);
  const std::vector<double> sw_expected{800, 800, 500, 500, 500, 0};
  for (std::size_t i = 0; i < times.size(); ++i) EXPECT_NEAR(sw[i], sw_expected[i], 1e-9) << times[i];
  // Operations on another bucket are not this one's; times must ascend.
  EXPECT_EQ(replay_levels(bucket(cfg), ops, 1, times), std::vector<double>(times.size(), 0.0));
  const std::vector<double> back{5.0, 1.0};
  EXPECT_THROW(replay_levels(bucket(cfg), ops, 0, back), simulation_error);
}

TEST(Core, RefusesAnInvalidPlanBeforeRunning) {
  const auto tgt = hand_target();
  auto script = two_requests();
  script.requests[1].delay_before_s = -1;
  const std::vector<session_plan> plans{{&script, 0.0, 1, 0}};
  try {
    (void)simulate(tgt, retry_policy{}, plans);
    FAIL() << "expected simulation_error";
  } catch (const simulation_error& e) {
    EXPECT_STREQ(e.what(), "hand (session 1), request 2: an agent delay of -1 s (expected 0 to 10^7 s)");
  }
}

TEST(Core, NormalQuantileMatchesKnownValues) {
  // Φ⁻¹ at a few probabilities, to 16 digits (the correctly rounded values); AS 241 is within a
  // relative 10^-15 of them (a few units in the last place).
  EXPECT_EQ(standard_normal_quantile(0.5), 0.0);
  for (const auto& [p, z] : {std::pair{0.9, 1.2815515655446004}, {0.975, 1.959963984540054},
                            {0.001, -3.090232306167814}, {1e-10, -6.361340902404056}, {0.3, -0.5244005127080407}})
    EXPECT_NEAR(standard_normal_quantile(p), z, 1e-15 * std::abs(z)) << "p = " << p;
  EXPECT_EQ(standard_normal_quantile(0.0), standard_normal_quantile(0x1.0p-60));  // clamped, finite
}

} // namespace
