// Every function the header-only core declares, called from a program linked with nothing but
// loopcast::core (and GoogleTest): the core must define what it declares. Values derived by hand.
#include <loopcast/core.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace loopcast;

namespace {
// One session of 4 attempts, one refused, 30 s waited, from 0 to 100 s; every request served.
simulation_result one_session() {
  simulation_result r;
  session_result s;
  s.outcome = session_outcome::completed;
  s.requests_total = s.requests_served = 3;
  s.attempts = 4;
  s.rate_limited = 1;
  s.start_s = 0;
  s.end_s = 100;
  s.stall_s = 30;
  r.sessions.push_back(s);
  r.wall_s = 100;
  r.cost_usd = 2;
  r.tokens.output = 500;
  bucket_summary b;
  b.name = "tpm";
  b.limit = 1000;
  b.period_s = 60;
  b.charged = 3500;
  r.buckets.push_back(b);
  return r;
}
} // namespace

TEST(CoreFunctions, QuantilesAndSummaries) {
  const std::vector<double> sorted{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(sorted_quantile(sorted, 0.5), 2.5);
  std::vector<double> v{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(v, 0.25), 1.75);  // rank 0.75 between 1 and 2
  const auto p = summarize({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(p.p50, 3.0);
  EXPECT_DOUBLE_EQ(p.p10, 1.4);
  EXPECT_EQ(p.count, 5u);
}

// A request of 1,000 prompt tokens (400 cached) sent at 0, first token at 1 s, 100 tokens by 3 s:
// 100 / 3 tok/s effective, 100 / 2 decode, TTFT 1 s, cache hit rate 0.4, context/output 10.
TEST(CoreFunctions, RequestMetrics) {
  const std::vector<request_sample> rq{{0, 0.0, 1.0, 3.0, 1000, 400, 100}};
  const auto m = compute_request_metrics(rq);
  EXPECT_NEAR(m.effective_tps.p50, 100.0 / 3, 1e-12);
  EXPECT_NEAR(m.decode_tps.p50, 50.0, 1e-12);
  EXPECT_NEAR(m.ttft_s.p50, 1.0, 1e-12);
  EXPECT_NEAR(m.cache_hit_rate, 0.4, 1e-12);
  EXPECT_NEAR(m.context_output_ratio, 10.0, 1e-12);
  const auto med = compute_request_medians(rq);
  EXPECT_NEAR(med.effective_tps_p50, 100.0 / 3, 1e-12);
  median_samples ms;
  add_median_samples(rq[0], ms.effective_tps, ms.ttft_s);
  EXPECT_NEAR(compute_request_medians(ms).ttft_p50_s, 1.0, 1e-12);
}

// 1 of 4 attempts refused; 30 of 100 s waited; one task in 100 s at $2: 36 tasks an hour, $2 a task.
// The bucket: 3,500 charged over the 70 s the work takes without its waits is 3,000 a minute,
// 3× its 1,000; it admits them in at least (3.5 − 1) × 60 = 150 s. On a $100 plan the run is
// 100 s of a month (2,629,800 s): at that pace 26,298 tasks, but the bucket admits a run's 3,500
// only 1,000 a minute: (1,000 / 3,500) × (2,629,800 / 60) = 12,522.86 tasks a month, its bound.
TEST(CoreFunctions, RunMetrics) {
  const auto r = one_session();
  EXPECT_DOUBLE_EQ(session_rate_429(r.sessions[0]), 0.25);
  EXPECT_DOUBLE_EQ(session_stall_share(r.sessions[0]), 0.3);
  const auto f = compute_fleet_metrics(r);
  EXPECT_EQ(f.completed, 1);
  EXPECT_DOUBLE_EQ(f.tasks_per_hour, 36.0);
  EXPECT_DOUBLE_EQ(f.usd_per_task, 2.0);
  EXPECT_DOUBLE_EQ(f.output_tps, 5.0);
  bucket_config tpm;
  tpm.name = "tpm";
  tpm.limit = 1000;
  tpm.period_s = 60;
  const std::vector<bucket_config> limits{tpm};
  const auto loads = bucket_loads(r, limits);
  ASSERT_EQ(loads.size(), 1u);
  ASSERT_TRUE(loads[0].has_value());
  EXPECT_DOUBLE_EQ(loads[0]->span_s, 70.0);
  EXPECT_DOUBLE_EQ(loads[0]->ratio, 3.0);
  EXPECT_DOUBLE_EQ(loads[0]->min_span_s, 150.0);
  target t;
  t.name = "plan";
  t.kind = target_kind::plan;
  t.limits = limits;
  t.plan = plan_terms{};
  t.plan->monthly_fee_usd = 100;
  const auto c = plan_cost_of(r, t);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->limited_by, "tpm");
  EXPECT_NEAR(c->tasks_per_month, (1000.0 / 3500) * (plan_month_s / 60), 1e-6);
  EXPECT_NEAR(c->fee_share_usd, 100 * 100 / plan_month_s, 1e-12);
}

// A bucket of 1,000 with a rule of half until 2026-05-06: at 2026-02-01 it is 500, with a step to
// 1,000 at the change; the change lies within Feb–Jun; dropping the rule leaves 1,000 at any date.
TEST(CoreFunctions, DatedRules) {
  target t;
  t.name = "t";
  bucket_config b;
  b.name = "five_hour";
  b.limit = 1000;
  t.limits.push_back(b);
  dated_limit d;
  d.bucket = "five_hour";
  d.until_unix_s = 1778025600;  // 2026-05-06
  d.factor = 0.5;
  t.dated_limits.push_back(d);
  const auto feb = target_at(t, 1769904000);
  EXPECT_DOUBLE_EQ(feb.limits[0].limit, 500.0);
  ASSERT_EQ(feb.limits[0].limit_steps.size(), 1u);
  EXPECT_DOUBLE_EQ(feb.limits[0].limit_steps[0].at_unix_s, 1778025600.0);
  EXPECT_DOUBLE_EQ(feb.limits[0].limit_steps[0].limit, 1000.0);
  EXPECT_EQ(rule_changes_within(t, 1769904000, 1780000000).size(), 1u);
  EXPECT_TRUE(rule_changes_within(t, 1779000000, 1780000000).empty());
  drop_dated_limits(t, "five_hour");
  EXPECT_DOUBLE_EQ(target_at(t, 1769904000).limits[0].limit, 1000.0);
}
