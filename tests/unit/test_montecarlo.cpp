// Monte Carlo: the interval arithmetic against textbook values, the precision loop, threads.
#include "loopcast/errors.hpp"
#include "loopcast/montecarlo.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/simulation.hpp"

#include "run_summary_equal.hpp"
#include "test_support.hpp"

#include <boost/math/distributions/binomial.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>

using namespace loopcast;

namespace {
using loopcast::test_support::models;
}

// n = 20, median, 95%: the interval is [x_(6), x_(15)] (coverage 95.9%), the textbook answer.
TEST(MonteCarloStats, MedianIntervalFromOrderStatistics) {
  std::vector<double> v(20);
  std::iota(v.begin(), v.end(), 1.0);  // x_(k) = k
  const auto e = quantile_interval(v, 0.5, 0.95);
  EXPECT_DOUBLE_EQ(e.value, 10.5);
  EXPECT_DOUBLE_EQ(e.lo, 6);
  EXPECT_DOUBLE_EQ(e.hi, 15);
  // Too few samples for a 95% bound on P10: P(B <= 0) = 0.9^20 = 12% > 2.5%.
  const auto p10 = quantile_interval(v, 0.1, 0.95);
  EXPECT_TRUE(std::isnan(p10.lo));
  EXPECT_DOUBLE_EQ(p10.hi, 6);  // the smallest u with P(B <= u − 1) >= 97.5%: P(B <= 5) = 98.9%
  // The ranks are remembered per (n, q, confidence): asked again, each gives its own.
  const auto again = quantile_interval(v, 0.5, 0.95);
  EXPECT_DOUBLE_EQ(again.lo, 6);
  EXPECT_DOUBLE_EQ(again.hi, 15);
  EXPECT_DOUBLE_EQ(quantile_interval(v, 0.5, 0.5).lo, 8);  // P(B <= 7) = 13.2% <= 25% < P(B <= 8) = 25.2%
  v.pop_back();  // n = 19: [x_(5), x_(15)] (P(B <= 4) = 0.96%, P(B <= 5) = 3.2%; P(B <= 13) = 96.8%, P(B <= 14) = 99.0%)
  const auto n19 = quantile_interval(v, 0.5, 0.95);
  EXPECT_DOUBLE_EQ(n19.lo, 5);
  EXPECT_DOUBLE_EQ(n19.hi, 15);
}

// The bisection gives the bounds a scan over every k gives (the scan is the definition above).
TEST(MonteCarloStats, QuantileBoundsEqualTheLinearScan) {
  for (const std::size_t n : {1u, 2u, 5u, 19u, 20u, 37u, 100u, 1000u, 4321u}) {
    std::vector<double> v(n);
    std::iota(v.begin(), v.end(), 1.0);  // x_(k) = k
    for (const double q : {0.01, 0.1, 0.25, 0.5, 0.9, 0.99})
      for (const double confidence : {0.5, 0.9, 0.95, 0.99}) {
        const boost::math::binomial_distribution<double> b(static_cast<double>(n), q);
        const double alpha = 1 - confidence;
        std::int64_t l = 0;
        while (l < static_cast<std::int64_t>(n) && boost::math::cdf(b, static_cast<double>(l)) <= alpha / 2) ++l;
        std::int64_t u = static_cast<std::int64_t>(n) + 1;
        while (u > 1 && boost::math::cdf(b, static_cast<double>(u - 2)) >= 1 - alpha / 2) --u;
        const auto e = quantile_interval(v, q, confidence);
        if (l >= 1) EXPECT_EQ(e.lo, static_cast<double>(l)) << n << " " << q << " " << confidence;
        else EXPECT_TRUE(std::isnan(e.lo)) << n << " " << q << " " << confidence;
        if (u <= static_cast<std::int64_t>(n)) EXPECT_EQ(e.hi, static_cast<double>(u)) << n << " " << q << " " << confidence;
        else EXPECT_TRUE(std::isnan(e.hi)) << n << " " << q << " " << confidence;
      }
  }
}

TEST(MonteCarloStats, MeanUsesStudentT) {
  const std::vector<double> v = {1, 2, 3, 4, 5};
  const auto e = mean_interval(v, 0.95);
  EXPECT_DOUBLE_EQ(e.value, 3);
  // t(0.975, 4) = 2.7764451; sd = 1.5811388; half = 2.7764451 × 1.5811388 / √5 = 1.9632432.
  EXPECT_NEAR(e.lo, 3 - 1.9632432, 1e-6);
  EXPECT_NEAR(e.hi, 3 + 1.9632432, 1e-6);
  EXPECT_TRUE(std::isnan(mean_interval(std::vector<double>{1}, 0.95).lo));
}

TEST(MonteCarloStats, ClopperPearson) {
  const auto none = proportion_interval(0, 10, 0.95);
  EXPECT_DOUBLE_EQ(none.value, 0);
  EXPECT_DOUBLE_EQ(none.lo, 0);
  EXPECT_NEAR(none.hi, 1 - std::pow(0.025, 0.1), 1e-9);  // 0.30850
  const auto half = proportion_interval(5, 10, 0.95);
  EXPECT_NEAR(half.lo, 0.187086, 1e-6);
  EXPECT_NEAR(half.hi, 0.812914, 1e-6);
}

TEST(MonteCarloStats, CensoredTimesSortLast) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto d = describe_samples({5, inf, 1, std::numeric_limits<double>::quiet_NaN(), inf, 3}, 0.95);
  EXPECT_EQ(d.count, 5u);                // the NaN is left out
  EXPECT_DOUBLE_EQ(d.p50.value, 5);      // 1, 3, 5, inf, inf
  EXPECT_TRUE(std::isinf(d.p90.value));  // most runs had no 429
  EXPECT_DOUBLE_EQ(d.mean.value, 3);     // the mean is over finite samples
}

TEST(MonteCarlo, PrecisionTargetAddsSeedsUntilReached) {
  const preset_library lib({models});
  const auto s = lib.load_scenario("reference");
  montecarlo_options o;
  o.precision = 0.01;
  o.threads = 2;
  const auto r = run_montecarlo(s, o);
  EXPECT_TRUE(r.precision_reached);
  EXPECT_EQ(r.seeds % 20, 0);
  EXPECT_EQ(r.rows.size(), static_cast<std::size_t>(r.seeds) * 2);
  EXPECT_EQ(r.rows.front().seed, 42u);
  for (const auto& d : r.options) EXPECT_LE(d.relative_half_width, 0.01) << d.label;
  // Half as many seeds did not reach it (the loop stops at the first batch that does).
  o.precision = 0;
  o.seeds = r.seeds / 2;
  const auto half = run_montecarlo(s, o);
  bool short_of_it = false;
  for (const auto& d : half.options) short_of_it |= d.relative_half_width > 0.01;
  EXPECT_TRUE(short_of_it || r.seeds == 20);
  // A cap below what is needed is reported.
  o.precision = 0.0001;
  o.max_seeds = 40;
  const auto capped = run_montecarlo(s, o);
  EXPECT_FALSE(capped.precision_reached);
  EXPECT_EQ(capped.seeds, 40);
}

TEST(MonteCarlo, SameSummaryWhateverTheThreadCount) {
  const preset_library lib({models});
  const auto s = lib.load_scenario("reference");
  montecarlo_options o;
  o.seeds = 64;
  o.threads = 1;
  const auto a = run_montecarlo(s, o);
  o.threads = 4;
  const auto b = run_montecarlo(s, o);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (std::size_t i = 0; i < a.rows.size(); ++i) EXPECT_TRUE(test_support::same_row(a.rows[i], b.rows[i])) << "row " << i;
  EXPECT_EQ(a.options[0].usd_per_task.p50.value, b.options[0].usd_per_task.p50.value);
  // The reference cloud option hits 429 within the hour in most runs; the local one never.
  EXPECT_GT(a.options[0].p_429_within.value, 0.5);
  EXPECT_EQ(a.options[1].p_429_within.value, 0.0);
  EXPECT_TRUE(std::isinf(a.options[1].first_429_s.p50.value));
}

TEST(MonteCarlo, BadSettingsAreRefused) {
  const preset_library lib({models});
  const auto s = lib.load_scenario("reference");
  montecarlo_options o;
  o.confidence = 1.5;
  EXPECT_THROW((void)run_montecarlo(s, o), simulation_error);
  o = {};
  o.horizon_s = std::numeric_limits<double>::quiet_NaN();
  try {
    (void)run_montecarlo(s, o);
    FAIL();
  } catch (const simulation_error& e) {
    EXPECT_STREQ(e.what(), "horizon must be a finite time > 0 s, found nan");
  }
}

// A request that no bucket can ever admit (a charge above the whole limit, oversize "refuse") is
// the provider's 429: P(429) counts it, as does P(refused) on its own, and the first wall's time is
// the refusal's. On the reference cloud option with total_tpm cut to 10 tokens every session's first
// request is refused at its start, so every run has a wall at t = 0 and no 429 from a bucket.
TEST(MonteCarlo, ARequestNoBucketCanAdmitIsAWall) {
  const preset_library lib({models});
  auto s = lib.load_scenario("reference");
  s.options[0].first().find_bucket("total_tpm")->limit = 10;
  montecarlo_options o;
  o.seeds = 20;
  const auto r = run_montecarlo(s, o);
  const auto& d = r.options[0];
  EXPECT_EQ(d.p_429_within.value, 1.0);
  EXPECT_EQ(d.p_refused_within.value, 1.0);
  EXPECT_EQ(d.p_session_dies.value, 1.0);
  EXPECT_EQ(d.first_429_s.p50.value, 0.0);
  for (const auto& row : r.rows) {
    if (row.option != 0) continue;
    EXPECT_TRUE(std::isnan(row.first_429_s));
    EXPECT_EQ(row.first_refused_s, 0.0);
  }
  // The local option is untouched: no wall of either kind.
  EXPECT_EQ(r.options[1].p_429_within.value, 0.0);
  EXPECT_EQ(r.options[1].p_refused_within.value, 0.0);
}

// An option with laws of the caller's own runs in Monte Carlo (on several threads): wrapping the
// built-in buckets and speed in simulate_with gives the built-in rows exactly, once per seed; a
// speed law of a fixed 10 s per request (no 429s on the non-binding local option) makes every
// completed request take 10 s, so each session's wall clock is 10 s × its requests + its tool time.
TEST(MonteCarlo, AnOptionRunsOnCustomLaws) {
  const preset_library lib({models});
  auto s = lib.load_scenario("reference");
  s.options.resize(1);
  std::atomic<int> calls{0};
  auto wrapped = s.options[0];
  wrapped.label = "wrapped";
  wrapped.simulator = [&calls](const scenario_option& o, std::span<const session_plan> plans, const sim_options& so) {
    ++calls;
    std::vector<bucket> buckets;
    for (const auto& b : o.first().limits) buckets.emplace_back(b, so.start_unix_s);
    return simulate_with(o.first(), o.client, plans, so, std::move(buckets), curve_speed{&o.first().speed});
  };
  auto both = s;
  both.options.push_back(wrapped);
  montecarlo_options mo;
  mo.seeds = 6;
  mo.threads = 2;
  const auto r = run_montecarlo(both, mo);
  EXPECT_EQ(calls.load(), 6);
  ASSERT_EQ(r.rows.size(), 12u);
  for (std::size_t i = 0; i < r.rows.size(); i += 2) {
    auto a = r.rows[i], b = r.rows[i + 1];
    b.option = a.option;
    EXPECT_TRUE(test_support::same_row(a, b)) << "seed " << a.seed;
  }
  struct ten_seconds {
    request_timing time(std::int64_t, std::int64_t, std::int64_t) const noexcept { return {1.0, 9.0}; }
  };
  static_assert(speed_law<ten_seconds>);
  auto slow = s;
  slow.options[0].targets[0].limits.clear();  // nothing binds: every request takes its 10 s
  slow.options[0].simulator = [](const scenario_option& o, std::span<const session_plan> plans, const sim_options& so) {
    return simulate_with(o.first(), o.client, plans, so, std::vector<bucket>{}, ten_seconds{});
  };
  const auto fleet = generate_fleet(slow, slow.seed);
  double tool_s = 0;
  for (const auto& q : fleet.scripts[0].requests) tool_s += q.delay_before_s;
  const auto one = run_scenario(slow, run_options{});
  EXPECT_NEAR(one.options[0].sim.wall_s, 10.0 * static_cast<double>(fleet.scripts[0].requests.size()) + tool_s, 1e-6);
}
