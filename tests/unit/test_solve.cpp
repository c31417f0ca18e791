// Inverse questions on cases built so that the answer is known by hand.
#include "loopcast/errors.hpp"
#include "loopcast/montecarlo.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/solve.hpp"

#include "study/seed_runs.hpp"
#include "run_summary_equal.hpp"
#include "single_request_workload.hpp"
#include "test_support.hpp"
#include "two_requests.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace loopcast;

namespace {

workload one_request_workload() { return test_support::single_request_workload("one"); }

// A cloud target taking 10 s per request, $210 per million input tokens: $0.21 per request.
target cloud(const std::string& name, std::vector<bucket_config> limits, double usd_per_million_input = 210) {
  target t;
  t.name = name;
  t.context_window_tokens = 8192;
  t.cache.enabled = false;
  t.speed.prefill = constant_curve{5e-3};  // 5 s for 1,000 tokens
  t.speed.decode = constant_curve{5e-2};   // 5 s for 100 tokens
  t.limits = std::move(limits);
  t.prices = price_sheet{};
  t.prices->usd_per_million.input = usd_per_million_input;
  return t;
}

bucket_config make_bucket(const std::string& name, bucket_algorithm a, bucket_unit u, double limit) {
  bucket_config b;
  b.name = name;
  b.algorithm = a;
  b.unit = u;
  b.limit = limit;
  b.period_s = 60;
  return b;
}

using loopcast::test_support::honour_forever;

scenario fleet_of(std::int32_t n, std::vector<scenario_option> options) {
  scenario s;
  s.name = "hand";
  s.seed = 5;
  s.fleet = {{"agents", one_request_workload(), n, 0, 0, std::nullopt}};
  s.options = std::move(options);
  return s;
}
} // namespace

// At most 3 requests in flight: 3 simultaneous agents never see a 429, 4 always do.
TEST(Solve, MaxAgentsUnderAConcurrencyLimit) {
  scenario_option o{"c3", {cloud("c3", {make_bucket("in_flight", bucket_algorithm::concurrency, bucket_unit::concurrent_requests, 3)})},
                    route_policy{}, honour_forever(), false};
  const auto s = fleet_of(1, {o});
  max_agents_query q;
  q.max_p429 = 0;
  q.seeds = 3;
  const auto r = solve_max_agents(s, q);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.answer, 3);
  EXPECT_EQ(r.bracket_lo, 3);
  EXPECT_EQ(r.bracket_hi, 4);
  // 1 and 2 meet it, 4 does not, then 3 meets it.
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.steps[2].x, 4);
  EXPECT_FALSE(r.steps[2].meets);
  EXPECT_EQ(r.steps[2].value.value, 1.0);
  EXPECT_EQ(r.answer_text, "3 agents (3 meet the criterion, 4 do not)");
}

// 4 simultaneous agents against 2 requests per fixed minute: the 3rd and 4th wait a minute. A
// factor f admits floor(2f) at once, so the smallest factor without stalls is 2.
TEST(Solve, MinLimitFindsTheFactorThatRemovesStalls) {
  scenario_option o{"rpm2", {cloud("rpm2", {make_bucket("rpm", bucket_algorithm::fixed_window, bucket_unit::requests, 2)})},
                    route_policy{}, honour_forever(), false};
  const auto s = fleet_of(4, {o});
  min_limit_query q;
  q.max_stall_share = 0;
  q.seeds = 2;
  const auto r = solve_min_limit(s, q);
  ASSERT_TRUE(r.found);
  EXPECT_LT(r.bracket_lo, 2.0);
  EXPECT_GE(r.bracket_hi, 2.0);
  EXPECT_LE(r.bracket_hi / r.bracket_lo, 1.01);
  EXPECT_FALSE(r.steps[0].meets);  // ×1: stalls
  EXPECT_GT(r.steps[0].value.value, 0.5);
  EXPECT_EQ(r.answer_text.rfind("×2.0", 0), 0u) << r.answer_text;
  min_limit_query bad = q;
  bad.bucket = "tpm";
  try {
    (void)solve_min_limit(s, bad);
    FAIL();
  } catch (const simulation_error& e) {
    EXPECT_STREQ(e.what(), "target rpm2 has no bucket named \"tpm\" (it has: rpm)");
  }
}

// A cheap tier that stalls and a dearer one that does not: the criterion picks the dearer one.
TEST(Solve, CheapestOptionThatMeetsTheStallCriterion) {
  scenario_option cheap{"cheap", {cloud("cheap", {make_bucket("rpm", bucket_algorithm::fixed_window, bucket_unit::requests, 2)}, 100)},
                        route_policy{}, honour_forever(), false};
  scenario_option dear{"dear", {cloud("dear", {}, 210)}, route_policy{}, honour_forever(), false};
  auto s = fleet_of(4, {cheap, dear});
  cheapest_query q;
  q.max_stall_share = 0.01;
  q.seeds = 2;
  auto r = solve_cheapest_option(s, q);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.answer, 1);
  EXPECT_EQ(r.answer_text, "dear at $0.2100 per task");
  q.max_stall_share = 1;
  r = solve_cheapest_option(s, q);
  EXPECT_EQ(r.answer, 0);
  EXPECT_NEAR(r.steps[0].usd_per_task, 0.1, 1e-12);
}

// Local: 360 s per task at 1,000 W and $0.10/kWh = $0.01 per task, 10 tasks per busy hour, no idle
// draw, $1 of hardware per hour. Cloud: $0.21 per task. u* = A / (T·(c − e)) = 1 / (10 × 0.2) = 0.5.
TEST(Solve, BreakEvenUtilisationByHand) {
  target local;
  local.name = "gpu";
  local.kind = target_kind::local;
  local.context_window_tokens = 8192;
  local.cache.enabled = false;
  local.speed.prefill = constant_curve{0.1};  // 100 s
  local.speed.decode = constant_curve{2.6};   // 260 s
  local.power = power_config{1000, 0, 0.10, 8760, 8760};
  scenario_option l{"local", {local}, route_policy{}, honour_forever(), false};
  scenario_option c{"cloud", {cloud("cloud", {})}, route_policy{}, honour_forever(), false};
  const auto s = fleet_of(1, {c, l});
  breakeven_query q;
  q.seeds = 2;
  auto r = solve_breakeven(s, q);
  ASSERT_TRUE(r.found) << r.answer_text;
  EXPECT_NEAR(r.answer, 0.5, 1e-9);
  EXPECT_EQ(r.answer_text, "50.0% utilisation (12.0 hours a day, 120 tasks a day): above it the local target is cheaper "
                           "per task than cloud");
  // At 50% use the local cost per task equals the cloud's: 0.01 + 1 / (0.5 × 10) = 0.21.
  EXPECT_NEAR(r.steps[3].value.value, 0.21, 1e-9);
  // Twice the hardware: u* = 1; three times: never.
  q.hardware_usd = 3 * 8760;
  r = solve_breakeven(s, q);
  EXPECT_FALSE(r.found);
  EXPECT_NEAR(r.answer, 1.5, 1e-9);
  EXPECT_EQ(r.answer_text.rfind("never: even in use all the time", 0), 0u);
}

TEST(Solve, QuestionsTheScenarioCannotAnswer) {
  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  const auto s = lib.load_scenario("reference");
  breakeven_query b;
  try {
    (void)solve_breakeven(s, b);
    FAIL();
  } catch (const simulation_error& e) {
    EXPECT_STREQ(e.what(), "target local-workstation-qwen-27b has no hardware cost to amortise: set power.hardware_usd "
                           "and power.lifetime_hours (or give them to the question)");
  }
  max_agents_query m;
  m.option = 5;
  EXPECT_THROW((void)solve_max_agents(s, m), simulation_error);
  min_limit_query l;
  l.option = 1;
  try {
    (void)solve_min_limit(s, l);
    FAIL();
  } catch (const simulation_error& e) {
    EXPECT_STREQ(e.what(), "option local (local-workstation-qwen-27b) has no rate limits to scale");
  }
}

// A search's evaluations share their threads and each thread's storage: every step is what a Monte
// Carlo of its own gives (the reference agents, 6 seeds on 2 threads, the Developer tier's limits
// scaled: the stall share moves from step to step, so a seed that ran on the storage of another
// step's seed and kept anything of it would show).
TEST(Solve, EveryStepIsItsOwnMonteCarlo) {
  auto s = test_support::lib().load_scenario("reference");
  s.options.resize(1);
  s.fleet[0].sessions = 5;
  s.fleet[0].stagger_s = 10;
  min_limit_query q;
  q.max_stall_share = 0.05;
  q.seeds = 6;
  q.threads = 2;
  const auto r = solve_min_limit(s, q);
  ASSERT_GE(r.steps.size(), 4u);
  std::set<double> shares;
  for (const auto& step : r.steps) {
    SCOPED_TRACE(step.label);
    scenario t = s;
    for (auto& b : t.options[0].first().limits) b.limit *= step.x;
    const auto d = summarize_runs(t, run_seeds(t, consecutive_seeds(t.seed, 6), 1), {})[0];
    EXPECT_EQ(step.value.value, d.stall_share.mean.value);
    EXPECT_EQ(step.value.lo, d.stall_share.mean.lo);
    EXPECT_EQ(step.value.hi, d.stall_share.mean.hi);
    EXPECT_EQ(step.usd_per_task, d.usd_per_task.mean.value);
    shares.insert(step.value.value);
  }
  EXPECT_GE(shares.size(), 3u);  // the steps differ
}

// solve starts the seeds that cost most in its last evaluation first (run_seeds_on's order): the
// rows stay in the seeds' order, each what the seed gives alone (reversed and shuffled orders on
// 2 workers against run_seeds on one thread).
TEST(Solve, SeedsStartedInAnotherOrderKeepTheirRows) {
  auto s = test_support::lib().load_scenario("reference");
  s.fleet[0].sessions = 3;
  s.fleet[0].stagger_s = 5;
  const auto seeds = consecutive_seeds(s.seed, 5);
  const auto alone = run_seeds(s, seeds, 1);
  ASSERT_EQ(alone.size(), 5u * s.options.size());
  detail::worker_pool pool(2);
  std::vector<detail::seed_workspace> ws(pool.workers());
  for (const std::vector<std::size_t>& order : {std::vector<std::size_t>{4, 3, 2, 1, 0}, std::vector<std::size_t>{2, 0, 4, 1, 3}}) {
    const auto rows = detail::run_seeds_on(pool, ws, s, seeds, order);
    ASSERT_EQ(rows.size(), alone.size());
    for (std::size_t r = 0; r < rows.size(); ++r) EXPECT_TRUE(test_support::same_row(rows[r], alone[r])) << r;
  }
}

// Agents 2,000 s apart under a concurrency limit they never reach: every count meets the criterion,
// but only the first floor(3600 / 2000) + 1 = 2 start within the horizon, and the answer says so.
TEST(Solve, MaxAgentsSaysWhenAStaggerMakesTheQuestionHollow) {
  scenario_option o{"c3", {cloud("c3", {make_bucket("in_flight", bucket_algorithm::concurrency, bucket_unit::concurrent_requests, 3)})},
                    route_policy{}, honour_forever(), false};
  auto s = fleet_of(1, {o});
  s.fleet[0].stagger_s = 2000;
  max_agents_query q;
  q.seeds = 2;
  q.max_agents = 8;
  const auto r = solve_max_agents(s, q);
  EXPECT_EQ(r.answer_text, "at least 8 agents (the search stops there)");
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[1], "with agents 2000 s apart, only the first 2 start within the 3600 s horizon: more agents just "
                        "start later, so 8 is not a capacity; give the group \"arrivals\" (engineers starting sessions "
                        "through a working day) to ask how many people the tier serves");
}

// A team asks how many engineers: each starts 4 sessions over an 8-hour day (0.5 an hour), every
// session refused at once, so n engineers give P(429 in a working hour) = 1 − e^(−n/2): 0.393 for
// one, 0.632 for two. At most 0.5: one engineer (50 seeds × 40 hours per evaluation).
TEST(Solve, MaxAgentsOfATeamCountsEngineersByTheirWorkingHours) {
  auto tpm = make_bucket("tpm", bucket_algorithm::token_bucket, bucket_unit::tokens, 10);
  tpm.classes = class_set::all();  // 1,100 tokens a request against 10: refused outright
  scenario_option o{"tiny", {cloud("tiny", {tpm})}, route_policy{}, honour_forever(), false};
  auto s = fleet_of(1, {o});
  s.start_unix_s = 1772409600;  // Monday 2026-03-02, 00:00 UTC
  s.fleet[0].arrivals = arrival_rule{1, 4, 9, 17, "UTC", 5};
  s.fleet[0].sessions = arrival_cap(*s.fleet[0].arrivals);
  max_agents_query q;
  q.max_p429 = 0.5;
  q.seeds = 50;
  const auto r = solve_max_agents(s, q);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.answer_text, "1 engineer (1 meet the criterion, 2 do not)");
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_NEAR(r.steps[0].value.value, 1 - std::exp(-0.5), 0.03);
  EXPECT_NEAR(r.steps[1].value.value, 1 - std::exp(-1.0), 0.03);
  EXPECT_EQ(r.notes[0], "criterion: the share of working hours with a 429 (p_429_per_hour, pooled over 50 seeds) is at "
                        "most 0.500 (option tiny); the engineers vary, each starting 4 sessions a day");
}
