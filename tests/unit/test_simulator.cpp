// The event-driven simulator: timings, 429s, retries, outcomes, cache expiry, fleets, invariants.
#include "loopcast/errors.hpp"
#include "loopcast/metrics.hpp"
#include "loopcast/rate_limits.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/simulation.hpp"

#include "two_requests.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace loopcast;
using loopcast::test_support::honour_forever;
using loopcast::test_support::two_requests;

namespace {

// Overhead 0.5 s, prefill 1,000 tok/s (1 ms), cached tokens free, decode 100 tok/s (10 ms);
// 100-token cache blocks with a 300 s TTL; no limits unless a test adds them.
target simple_target() {
  target t;
  t.name = "simple";
  t.context_window_tokens = 100000;
  t.cache.block_tokens = 100;
  t.cache.ttl_s = 300;
  t.speed.overhead_s = 0.5;
  t.speed.prefill = constant_curve{1e-3};
  t.speed.decode = constant_curve{1e-2};
  t.prices = price_sheet{};
  t.prices->usd_per_million = {1.0, 0.1, 0, 0, 10.0, 10.0};
  return t;
}

bucket_config total_tokens(double limit) {
  bucket_config b;
  b.name = "total";
  b.limit = limit;
  b.period_s = 60;
  b.classes = class_set::all();
  b.charging = charging_rule::actual;
  return b;
}

} // namespace

// r1 at 0: TTFT 0.5 + 1,000 × 1 ms = 1.5 s, decode 100 × 10 ms = 1 s → ends at 2.5.
// r2 at 4.5: 1,000 cached (10 whole blocks), 500 new: TTFT 0.5 + 0.5 = 1.0 → 5.5, ends at 6.5.
TEST(Simulator, SingleSessionTimeline) {
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  const auto r = simulate(simple_target(), honour_forever(), {&plan, 1});
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_DOUBLE_EQ(r.attempts[0].t_first_token, 1.5);
  EXPECT_DOUBLE_EQ(r.attempts[0].t_end, 2.5);
  EXPECT_DOUBLE_EQ(r.attempts[1].t_send, 4.5);
  EXPECT_EQ(r.attempts[1].tokens.cache_read, 1000);
  EXPECT_EQ(r.attempts[1].tokens.input, 500);
  EXPECT_DOUBLE_EQ(r.attempts[1].t_first_token, 5.5);
  EXPECT_DOUBLE_EQ(r.attempts[1].t_end, 6.5);
  EXPECT_DOUBLE_EQ(r.wall_s, 6.5);
  EXPECT_DOUBLE_EQ(r.busy_s, 2.5 + 2.0);
  EXPECT_EQ(r.sessions[0].outcome, session_outcome::completed);
  EXPECT_FALSE(r.first_429.has_value());
  // Cost: r1 1,000 × $1/M + 100 × $10/M = $0.002; r2 500 × $1/M + 1,000 × $0.1/M + $0.001 = $0.0016.
  EXPECT_NEAR(r.cost_usd, 0.0036, 1e-12);
}

// With a 1 s TTL the prefix cached at r1's first token (1.5 s) expires at 2.5 s; r2 at 4.5 s
// misses entirely: TTFT 0.5 + 1.5 = 2.0 s.
TEST(Simulator, StallLongerThanTtlTurnsTheNextRequestIntoAMiss) {
  auto t = simple_target();
  t.cache.ttl_s = 1.0;
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  const auto r = simulate(t, honour_forever(), {&plan, 1});
  EXPECT_EQ(r.attempts[1].tokens.cache_read, 0);
  EXPECT_EQ(r.attempts[1].tokens.input, 1500);
  EXPECT_DOUBLE_EQ(r.attempts[1].t_first_token - r.attempts[1].t_send, 2.0);
}

// Token bucket of 2,000 per 60 s (33.33/s). r1 charges 1,100 at 0. At 4.5 the bucket holds
// 900 + 4.5 × 33.33 = 1,050; r2 needs 1,600: 429 with retry_after (1,600 − 1,050)/33.33 = 16.5 s.
TEST(Simulator, RateLimitedThenRetriedAfterRetryAfter) {
  auto t = simple_target();
  t.limits = {total_tokens(2000)};
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  const auto r = simulate(t, honour_forever(), {&plan, 1});
  ASSERT_EQ(r.attempts.size(), 3u);
  EXPECT_EQ(r.attempts[1].status, attempt_status::rate_limited);
  EXPECT_NEAR(r.attempts[1].retry_after_s, 16.5, 1e-9);
  EXPECT_EQ(r.attempts[1].refused_by, 0);
  EXPECT_NEAR(r.bucket_levels[1], 950.0, 1e-9);  // used = 2,000 − 1,050 when r2 arrived
  EXPECT_EQ(r.attempts[2].status, attempt_status::ok);
  EXPECT_NEAR(r.attempts[2].t_send, 21.0, 1e-9);
  EXPECT_EQ(r.attempts[2].attempt, 1);
  ASSERT_TRUE(r.first_429.has_value());
  EXPECT_EQ(r.first_429->request, 2);
  EXPECT_DOUBLE_EQ(r.first_429->time_s, 4.5);
  EXPECT_EQ(r.first_429->sent_before, (token_counts{1000, 0, 0, 100, 0}));
  EXPECT_NEAR(r.first_429->buckets[0].used, 950.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.first_429->buckets[0].window_demand, 1100.0);
  EXPECT_NEAR(r.sessions[0].stall_s, 16.5, 1e-9);
  EXPECT_EQ(r.sessions[0].outcome, session_outcome::completed);
  EXPECT_EQ(r.sessions[0].rate_limited, 1);
  EXPECT_DOUBLE_EQ(r.buckets[0].refusals, 1.0);
}

// The same run without the peak demands (sim_options::peak_demand false, as Monte Carlo runs):
// no charge log, the peaks and the first 429's window demand unknown (NaN), everything else the
// same. With them: r1's 1,100 and r2's 1,600 fall within one minute from 0.
TEST(Simulator, WithoutPeakDemandsOnlyThePeaksAreUnknown) {
  auto t = simple_target();
  t.limits = {total_tokens(2000)};
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  sim_options with;
  with.record_attempts = false;
  with.record_charges = false;
  sim_options without = with;
  without.peak_demand = false;
  const auto a = simulate(t, honour_forever(), {&plan, 1}, with);
  const auto b = simulate(t, honour_forever(), {&plan, 1}, without);
  EXPECT_DOUBLE_EQ(a.buckets[0].peak_demand, 2700.0);
  EXPECT_DOUBLE_EQ(a.buckets[0].peak_window_start_s, 0.0);
  ASSERT_TRUE(a.first_429 && b.first_429);
  EXPECT_DOUBLE_EQ(a.first_429->buckets[0].window_demand, 1100.0);
  EXPECT_TRUE(std::isnan(b.buckets[0].peak_demand));
  EXPECT_TRUE(std::isnan(b.buckets[0].peak_window_start_s));
  EXPECT_TRUE(std::isnan(b.first_429->buckets[0].window_demand));
  EXPECT_TRUE(b.charges.empty());
  EXPECT_EQ(b.first_429->buckets[0].used, a.first_429->buckets[0].used);
  EXPECT_EQ(b.buckets[0].charged, a.buckets[0].charged);
  EXPECT_EQ(b.buckets[0].refusals, a.buckets[0].refusals);
  ASSERT_EQ(b.requests.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(b.requests[i].t_end, a.requests[i].t_end);
  EXPECT_EQ(b.sessions[0].stall_s, a.sessions[0].stall_s);
  EXPECT_EQ(b.cost_usd, a.cost_usd);
  EXPECT_EQ(b.wall_s, a.wall_s);
}

TEST(Simulator, ClientThatGivesUpKillsTheSession) {
  auto t = simple_target();
  t.limits = {total_tokens(2000)};
  auto client = honour_forever();
  client.max_retries = 0;
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  const auto r = simulate(t, client, {&plan, 1});
  EXPECT_EQ(r.sessions[0].outcome, session_outcome::died_after_retries);
  EXPECT_EQ(r.sessions[0].requests_served, 1);
  EXPECT_DOUBLE_EQ(r.sessions[0].end_s, 4.5);
}

TEST(Simulator, WithoutRetryAfterTheClientBacksOff) {
  auto t = simple_target();
  t.limits = {total_tokens(2000)};
  t.sends_retry_after = false;
  auto client = honour_forever();
  client.base_s = 10;
  client.multiplier = 2;
  client.max_s = 100;
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  const auto r = simulate(t, client, {&plan, 1});
  // 429 at 4.5 (needs 16.5 s) → wait 10 s → 429 at 14.5 (needs 6.5 s) → wait 20 s → admitted at 34.5.
  ASSERT_EQ(r.attempts.size(), 4u);
  EXPECT_EQ(r.attempts[1].retry_after_s, -1.0);
  EXPECT_DOUBLE_EQ(r.attempts[2].t_send, 14.5);
  EXPECT_DOUBLE_EQ(r.attempts[3].t_send, 34.5);
  EXPECT_DOUBLE_EQ(r.sessions[0].stall_s, 30.0);
}

TEST(Simulator, RequestLargerThanABucketIsPermanent) {
  auto t = simple_target();
  t.limits = {total_tokens(1500)};  // r2 needs 1,600 > 1,500: never admissible
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  const auto r = simulate(t, honour_forever(), {&plan, 1});
  EXPECT_EQ(r.sessions[0].outcome, session_outcome::request_too_large);
  EXPECT_EQ(r.attempts.back().status, attempt_status::too_large);
  EXPECT_EQ(r.sessions[0].rate_limited, 0);
}

TEST(Simulator, ContextOverflowEndsTheSession) {
  auto t = simple_target();
  t.context_window_tokens = 1550;  // r2 needs 1,500 + 100
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  const auto r = simulate(t, honour_forever(), {&plan, 1});
  EXPECT_EQ(r.sessions[0].outcome, session_outcome::context_overflow);
  EXPECT_EQ(r.sessions[0].requests_served, 1);
}

// Reserve-then-refund: r1 reserves 1,000 + max_tokens 1,000 = 2,000 at 0 and returns 900 at 2.5.
TEST(Simulator, ReservationIsRefundedAtCompletion) {
  auto t = simple_target();
  auto b = total_tokens(2000);
  b.charging = charging_rule::reserve_then_refund;
  t.limits = {b};
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  const auto r = simulate(t, honour_forever(), {&plan, 1});
  // At 4.5: −2,000 at 0, +900 refund at 2.5, +150 refill → holds 1,050; r2 reserves 2,500 > 2,000: too large.
  EXPECT_EQ(r.sessions[0].outcome, session_outcome::request_too_large);
  ASSERT_EQ(r.charges.size(), 1u);
  EXPECT_DOUBLE_EQ(r.charges[0][0].amount, 1100.0);  // the net charge of r1
}

// Two sessions, one slot (concurrency 1): session 2 starts at 1.0 while session 1's r1 runs
// until 2.5, so it is refused with retry_after 1.5 s and admitted at 2.5.
TEST(Simulator, FleetSharesOneConcurrencyLimit) {
  auto t = simple_target();
  bucket_config c;
  c.name = "in_flight";
  c.limit = 1;
  c.unit = bucket_unit::concurrent_requests;
  c.algorithm = bucket_algorithm::concurrency;
  t.limits = {c};
  const auto script = two_requests();
  const session_plan plans[] = {{&script, 0, 1, 0}, {&script, 1.0, 2, 0}};
  const auto r = simulate(t, honour_forever(), plans);
  ASSERT_TRUE(r.first_429.has_value());
  EXPECT_EQ(r.first_429->session, 1u);
  EXPECT_DOUBLE_EQ(r.first_429->retry_after_s, 1.5);
  EXPECT_DOUBLE_EQ(r.buckets[0].peak_demand, 1.0);
  EXPECT_EQ(r.sessions[0].outcome, session_outcome::completed);
  EXPECT_EQ(r.sessions[1].outcome, session_outcome::completed);
  // Session 2's first request found session 1's system prompt? Not shared here (lineage 0 is
  // private): it paid for all 1,000 tokens.
  EXPECT_EQ(r.attempts[2].tokens.cache_read, 0);
}

TEST(Simulator, SessionsOfOneFamilyShareTheSystemPrompt) {
  auto script = two_requests();
  script.shared_lineages = 1;  // lineage 0 is common to every session of the family
  const session_plan plans[] = {{&script, 0, 1, 0}, {&script, 10.0, 2, 0}};
  const auto r = simulate(simple_target(), honour_forever(), plans);
  // Session 2's first request at 10 s hits session 1's cached 1,500-token prompt up to its own 1,000.
  const auto& second = r.attempts[2];
  EXPECT_EQ(second.session, 1u);
  EXPECT_EQ(second.tokens.cache_read, 1000);
}

TEST(Simulator, InvalidPlansAreRefused) {
  const session_plan no_script{nullptr, 0, 1, 0};
  EXPECT_THROW((void)simulate(simple_target(), honour_forever(), {&no_script, 1}), simulation_error);
  const auto script = two_requests();
  const session_plan negative{&script, -1, 1, 0};
  EXPECT_THROW((void)simulate(simple_target(), honour_forever(), {&negative, 1}), simulation_error);
}

// ---- invariants on a real workload ----------------------------------------------------------

namespace {
scenario fleet_scenario() {
  scenario s;
  s.name = "fleet";
  s.fleet.resize(1);
  workload& wl = s.fleet[0].wl;
  wl.name = "w";
  wl.system_prompt_tokens = 8000;
  wl.task_tokens = fixed_dist{2000};
  wl.turns = fixed_dist{40};
  wl.output_tokens = lognormal_dist{200, 600};
  wl.reasoning_tokens = lognormal_dist{500, 2000};
  wl.tool_result_tokens = lognormal_dist{1500, 4000};
  wl.front_load_factor = 4;
  wl.front_load_decay_turns = 5;
  wl.tool_time_s = lognormal_dist{1, 4};
  wl.compaction.enabled = true;
  wl.compaction.at_fraction = 0.7;
  s.fleet[0].sessions = 5;
  s.fleet[0].stagger_s = 3;
  s.seed = 11;
  scenario_option o;
  o.label = "cloud";
  o.targets = {simple_target()};
  o.first().speed.prefill = linear_curve{1e-4, 1e-9};
  o.first().speed.decode = linear_curve{1e-3, 1e-8};
  o.first().limits = {total_tokens(450000)};
  o.first().limits[0].charging = charging_rule::reserve_then_refund;
  o.first().context_window_tokens = 131072;
  o.client = honour_forever();
  o.client.jitter = jitter_kind::full;
  o.client.honour_retry_after = false;
  o.client.base_s = 1;
  o.client.max_s = 30;
  s.options = {o};
  return s;
}
} // namespace

TEST(Simulator, SameSeedIdenticalTimelineOtherSeedDifferent) {
  const auto s = fleet_scenario();
  const auto a = run_scenario(s), b = run_scenario(s);
  run_options other;
  other.seed = 12;
  const auto c = run_scenario(s, other);
  const auto& ta = a.options[0].sim.attempts;
  const auto& tb = b.options[0].sim.attempts;
  ASSERT_EQ(ta.size(), tb.size());
  for (std::size_t i = 0; i < ta.size(); ++i) {
    EXPECT_EQ(ta[i].session, tb[i].session);
    EXPECT_EQ(ta[i].t_send, tb[i].t_send);  // bit-identical, not just close
    EXPECT_EQ(ta[i].t_end, tb[i].t_end);
    EXPECT_EQ(ta[i].tokens, tb[i].tokens);
    EXPECT_EQ(ta[i].wait_s, tb[i].wait_s);
  }
  EXPECT_GT(a.options[0].sim.first_429.has_value() ? 1 : 0, 0) << "the scenario should exercise 429s";
  const auto& tc = c.options[0].sim.attempts;
  bool differs = ta.size() != tc.size();
  for (std::size_t i = 0; !differs && i < ta.size(); ++i) differs = ta[i].t_end != tc[i].t_end;
  EXPECT_TRUE(differs);
}

TEST(Simulator, TokensAreConserved) {
  const auto s = fleet_scenario();
  const auto res = run_scenario(s);
  const auto& sim = res.options[0].sim;
  token_counts from_attempts, from_sessions;
  std::int64_t prompt_expected = 0, generated_expected = 0;
  for (const auto& a : sim.attempts)
    if (a.status == attempt_status::ok) from_attempts += a.tokens;
  for (const auto& ss : sim.sessions) from_sessions += ss.tokens;
  for (std::size_t i = 0; i < res.scripts.size(); ++i) {
    const auto served = static_cast<std::size_t>(sim.sessions[i].requests_served);
    for (std::size_t k = 0; k < served; ++k) {
      prompt_expected += res.scripts[i].requests[k].prompt_tokens;
      generated_expected += res.scripts[i].requests[k].output_tokens + res.scripts[i].requests[k].reasoning_tokens;
    }
  }
  EXPECT_EQ(from_attempts, sim.tokens);
  EXPECT_EQ(from_sessions, sim.tokens);
  EXPECT_EQ(sim.tokens.prompt(), prompt_expected);
  EXPECT_EQ(sim.tokens.generated(), generated_expected);
  // Every request of every session was served (the client never gives up here).
  for (std::size_t i = 0; i < res.scripts.size(); ++i)
    EXPECT_EQ(sim.sessions[i].requests_served, static_cast<int>(res.scripts[i].requests.size()));
  // The bucket's net charges add up to every served token (it counts every class, actual sizes).
  double charged = 0;
  for (const auto& c : sim.charges[0]) charged += c.amount;
  EXPECT_NEAR(charged, static_cast<double>(sim.tokens.total()), 1e-6);
  double cost = 0;
  for (const auto& a : sim.attempts) cost += a.cost_usd;
  EXPECT_NEAR(cost, sim.cost_usd, 1e-9);
}

TEST(Simulator, PeakWindowDemand) {
  const charge_event log[] = {{0, 100}, {30, 200}, {59, 50}, {61, 300}, {200, 10}};
  // Windows [t, t + 60): from 30: 200 + 50 + 300 = 550 (the charge at 0 left at 60).
  const auto [peak, start] = detail::peak_window_demand(log, 60);
  EXPECT_DOUBLE_EQ(peak, 550.0);
  EXPECT_DOUBLE_EQ(start, 30.0);
}

// A client that never gives up against a bucket that counts its refusals: one request per 60 s
// in a sliding window, every 429 charged. r1 is admitted at 0; r2 at 4.5 waits 55.5 s, and its
// own refusal at 4.5 keeps the window full at 60 (wait 4.5), the one at 60 at 64.5 (wait 55.5),
// and so on: never admitted. The k-th refusal comes at 60·k/2 for even k, so the 10^6-th at
// 3·10^7 s, where the simulation stops the session (no throw from inside the loop).
TEST(Simulator, RefusalsThatKeepTheWindowFullEndTheSessionAfterAMillionAttempts) {
  auto t = simple_target();
  bucket_config rpm;
  rpm.name = "rpm";
  rpm.unit = bucket_unit::requests;
  rpm.algorithm = bucket_algorithm::sliding_window;
  rpm.limit = 1;
  rpm.period_s = 60;
  rpm.count_rejected = true;
  t.limits = {rpm};
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  sim_options opt;
  opt.record_attempts = false;
  opt.record_charges = false;
  const auto r = simulate(t, honour_forever(), {&plan, 1}, opt);
  const auto& s = r.sessions[0];
  EXPECT_EQ(s.outcome, session_outcome::died_after_retries);
  EXPECT_EQ(s.rate_limited, detail::max_attempts_per_request);
  EXPECT_EQ(s.attempts, 1 + detail::max_attempts_per_request);
  EXPECT_EQ(s.requests_served, 1);
  EXPECT_EQ(s.stop_request, 2);
  EXPECT_EQ(s.stop_bucket, 0);
  EXPECT_DOUBLE_EQ(s.end_s, 3e7);
  EXPECT_NEAR(s.stall_s, 3e7 - 4.5, 1e-3);
  EXPECT_EQ(r.buckets[0].refusals, 1'000'000);
}

// simulate_with: one bucket object per bucket of the target, checked before anything runs.
TEST(Simulator, CustomBucketsMustMatchTheTargetsLimits) {
  auto t = simple_target();
  t.limits = {total_tokens(1000)};
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  try {
    (void)simulate_with(t, honour_forever(), {&plan, 1}, {}, std::vector<bucket>{}, curve_speed{&t.speed});
    FAIL();
  } catch (const simulation_error& e) {
    EXPECT_STREQ(e.what(), "target simple has 1 buckets; the simulation was given 0");
  }
  EXPECT_EQ(t.find_bucket("total"), &t.limits[0]);
  EXPECT_EQ(t.find_bucket("rpm"), nullptr);
}

// What the session offered the bucket against what it can give. r1 at 0 is charged 1,100; r2 at
// 4.5 s needs 1,600 where 2,000 − (1,100 − 4.5 × 2000/60) = 1,050 are free: a 429 with a wait of
// 550 / (2000/60) = 16.5 s; admitted at 21.0 s, it ends at 23.0 s. Without the wait the work takes
// 23.0 − 16.5 = 6.5 s: 2,700 × 60 / 6.5 = 24,923 tokens per minute offered, 12.46× the limit; a
// full bucket of 2,000 then 2,000 per minute admits 2,700 in no less than (2700/2000 − 1) × 60 = 21 s.
TEST(Simulator, OfferedLoadAgainstTheBucketsCapacity) {
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  auto tgt = simple_target();
  tgt.limits.push_back(total_tokens(2000));
  bucket_config conc;
  conc.name = "in_flight";
  conc.unit = bucket_unit::concurrent_requests;
  conc.algorithm = bucket_algorithm::concurrency;
  conc.limit = 4;
  tgt.limits.push_back(conc);
  const auto r = simulate(tgt, honour_forever(), {&plan, 1});
  ASSERT_EQ(r.sessions[0].rate_limited, 1);
  EXPECT_NEAR(r.sessions[0].stall_s, 16.5, 1e-9);
  EXPECT_NEAR(r.sessions[0].end_s, 23.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.buckets[0].charged, 2700);
  const auto loads = bucket_loads(r, tgt.limits);
  ASSERT_EQ(loads.size(), 2u);
  ASSERT_TRUE(loads[0]);
  EXPECT_NEAR(loads[0]->span_s, 6.5, 1e-9);
  EXPECT_NEAR(loads[0]->offered_per_period, 2700 * 60 / 6.5, 1e-6);
  EXPECT_NEAR(loads[0]->ratio, 2700 * 60 / 6.5 / 2000, 1e-9);
  EXPECT_NEAR(loads[0]->min_span_s, 21.0, 1e-9);
  EXPECT_LE(loads[0]->min_span_s, r.wall_s);
  EXPECT_FALSE(loads[1]);  // concurrency is not a rate
}
