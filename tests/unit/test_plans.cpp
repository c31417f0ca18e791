// Subscription plans (docs/plans.md): a window that opens at the first request, weighted caps,
// unpublished caps the user sets, and the monthly fee priced per task and per hour.
#include "loopcast/errors.hpp"
#include "loopcast/forecast.hpp"
#include "loopcast/limits/bucket.hpp"
#include "loopcast/limits_inference.hpp"
#include "loopcast/metrics.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/report/catalogue.hpp"
#include "loopcast/report/forecast.hpp"
#include "loopcast/simulation.hpp"
#include "loopcast/trace.hpp"

#include "two_requests.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace loopcast;
using loopcast::test_support::error_of;
using loopcast::test_support::honour_forever;
using loopcast::test_support::two_requests;

namespace {

constexpr double five_hours = 5 * 3600.0;

bucket_config requests_window(double limit, window_anchor anchor) {
  bucket_config b;
  b.name = "five_hour";
  b.unit = bucket_unit::requests;
  b.algorithm = bucket_algorithm::fixed_window;
  b.limit = limit;
  b.period_s = five_hours;
  b.anchor = anchor;
  return b;
}

// A plan of 1 request per 5-hour window, $100 a month. Overhead 0.5 s, prefill 1 ms/token, decode
// 10 ms/token, 100-token cache blocks kept 300 s.
nlohmann::json plan_json() {
  return nlohmann::json::parse(R"({
    "kind": "target", "name": "test-plan", "source": "test", "read_on": "2026-12-01", "verified": false,
    "type": "plan", "provider": "test", "tier": "max", "model": "m", "context_window_tokens": 100000,
    "limits": {"sends_retry_after": true, "buckets": [
      {"name": "five_hour", "unit": "requests", "limit": 1, "period_s": 18000, "algorithm": "fixed_window",
       "anchor": "first_use"}]},
    "cache": {"enabled": true, "block_tokens": 100, "ttl_s": 300, "write_charged": false},
    "speed": {"overhead_s": 0.5, "prefill": {"kind": "constant", "tokens_per_second": 1000}, "cached_token_s": 0,
              "decode": {"kind": "constant", "tokens_per_second": 100}},
    "plan": {"name": "Test Max", "monthly_fee_usd": 100}
  })");
}

target plan_target(const nlohmann::json& j = plan_json()) { return parse_target(j.dump(), "plan.json"); }

} // namespace

// The window opens at the first charge (1,000 s), not at 0, and closes 5 hours later whatever
// happened inside it: a charge just before the close does not extend it. The next window opens at
// the next charge after the close, not at a multiple of the period.
TEST(Plans, FirstUseWindowOpensAtTheFirstRequestAndClosesFiveHoursLater) {
  bucket b(requests_window(3, window_anchor::first_use));
  EXPECT_EQ(b.used(500), 0.0);
  EXPECT_EQ(b.wait_for(1, 500), 0.0);
  b.charge(1, 1000, 1000);  // opens [1,000, 19,000)
  b.charge(1, 5000, 5000);
  EXPECT_EQ(b.wait_for(1, 9000), 0.0);
  b.charge(1, 18999, 18999);  // the third, a second before the close
  EXPECT_EQ(b.used(18999), 3.0);
  EXPECT_DOUBLE_EQ(b.wait_for(1, 18999), 1.0);  // full until 19,000 = 1,000 + 18,000
  EXPECT_EQ(b.used(19000), 0.0);                // closed, nothing open
  EXPECT_EQ(b.wait_for(3, 25000), 0.0);
  b.charge(2, 30000, 30000);                    // opens [30,000, 48,000)
  EXPECT_DOUBLE_EQ(b.wait_for(2, 40000), 8000.0);
  // A refund counts in the window of its charge only.
  b.adjust(-1, 47000, 30000, 0);
  EXPECT_EQ(b.used(47000), 1.0);
  b.adjust(-1, 49000, 47500, 0);  // the window of that charge closed at 48,000: nothing to refund
  EXPECT_EQ(b.used(49000), 0.0);
  // A late charge with no window open opens one.
  b.adjust(4, 50000, 49000, 0);
  EXPECT_DOUBLE_EQ(b.wait_for(1, 50000), 18000.0);
}

// On the hour: simulated time 0 is 03:05:00 UTC (2026-11-02). A first request at 1,000 s (03:21:40)
// opens the window 03:00-08:00, i.e. [-300, 17,700) in simulated seconds: full, it waits until
// 17,700, not 19,000; the next request at 20,000 s (08:38:20) opens 08:00-13:00, [17,700, 35,700).
TEST(Plans, FirstUseHourWindowOpensAtTheWholeHour) {
  const double start = 1'793'577'600.0 + 3 * 3600 + 300;
  bucket b(requests_window(2, window_anchor::first_use_hour), start);
  b.charge(1, 1000, 1000);
  b.charge(1, 2000, 2000);
  EXPECT_DOUBLE_EQ(b.wait_for(1, 2000), 17700.0 - 2000.0);
  EXPECT_EQ(b.used(17699), 2.0);
  EXPECT_EQ(b.used(17700), 0.0);
  b.charge(2, 20000, 20000);
  EXPECT_DOUBLE_EQ(b.wait_for(1, 20000), 35700.0 - 20000.0);
  // The Claude plans count their 5-hour windows so.
  const auto pro = preset_library({LOOPCAST_TEST_MODELS_DIR}).load_target("claude-pro-sonnet-4.5");
  EXPECT_EQ(pro.find_bucket("five_hour")->anchor, window_anchor::first_use_hour);
  EXPECT_EQ(pro.find_bucket("weekly")->anchor, window_anchor::first_use);
}

// Weighted caps: each counted class × its weight, the whole × the model's weight.
TEST(Plans, WeightedChargesCountClassesAndTheModelsWeight) {
  bucket_config b;
  b.unit = bucket_unit::tokens;
  b.classes = {token_class::input, token_class::cache_read, token_class::output};
  b.class_weights = {1, 0.1, 1, 1, 1};
  b.weight = 5;
  b.charging = charging_rule::actual;
  token_counts t{1000, 10000, 400, 200, 0};  // cache_write 400 and reasoning are not counted
  // 5 × (1,000 + 0.1 × 10,000 + 200) = 11,000.
  EXPECT_DOUBLE_EQ(charge_for(b, t, 4000).at_admission, 11000.0);
  b.charging = charging_rule::reserve_then_refund;  // reserve 5 × 4,000, refund 5 × (4,000 − 200)
  EXPECT_DOUBLE_EQ(charge_for(b, t, 4000).at_admission, 5 * (2000.0 + 4000.0));
  EXPECT_DOUBLE_EQ(charge_for(b, t, 4000).at_completion, -5 * 3800.0);
  bucket_config r = requests_window(10, window_anchor::first_use);
  r.weight = 2.5;  // a message of this model counts 2.5 messages
  EXPECT_DOUBLE_EQ(charge_for(r, t, 0).at_admission, 2.5);
}

// One session starting at 1,000 s on a plan of 1 request per 5-hour window. r1 at 1,000 ends at
// 1,002.5 (TTFT 0.5 + 1.5, decode 1.0); r2 at 1,004.5 is refused: the window opened at 1,000
// closes at 19,000, so retry-after is 17,995.5 s. At 19,000 the cache (TTL 300 s) has expired:
// TTFT 0.5 + 1.5 = 2 s, decode 1 s, end 19,003. With windows anchored at 0 instead, r2 waits only
// until 18,000.
TEST(Plans, SimulatedSessionWaitsForTheWindowItOpened) {
  const auto script = two_requests();
  const session_plan plan{&script, 1000, 1, 0};
  const auto t = plan_target();
  const auto r = simulate(t, honour_forever(), {&plan, 1});
  ASSERT_EQ(r.attempts.size(), 3u);
  EXPECT_DOUBLE_EQ(r.attempts[1].t_send, 1004.5);
  EXPECT_DOUBLE_EQ(r.attempts[1].retry_after_s, 17995.5);
  EXPECT_DOUBLE_EQ(r.attempts[2].t_send, 19000.0);
  EXPECT_EQ(r.attempts[2].tokens.cache_read, 0);
  EXPECT_DOUBLE_EQ(r.attempts[2].t_end, 19003.0);
  EXPECT_DOUBLE_EQ(r.wall_s, 18003.0);
  EXPECT_EQ(r.sessions[0].outcome, session_outcome::completed);

  auto grid = t;
  grid.limits[0].anchor = window_anchor::session_start;
  const auto g = simulate(grid, honour_forever(), {&plan, 1});
  EXPECT_DOUBLE_EQ(g.attempts[2].t_send, 18000.0);

  // The fee: a month is 365.25 / 12 days = 2,629,800 s. The run's share is 100 × 18,003 / 2,629,800.
  EXPECT_DOUBLE_EQ(r.cost_usd, 100.0 * 18003 / 2629800);
  EXPECT_EQ(r.token_cost_usd, 0.0);
  // Repeated all month: the wall clock admits 2,629,800 / 18,003 = 146.08 tasks; the window admits
  // 1 task × (1 / 2 requests) × (2,629,800 / 18,000 windows) = 73.05: it limits the month.
  const auto c = plan_cost_of(r, t);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->limited_by, "five_hour");
  EXPECT_DOUBLE_EQ(c->tasks_per_month, 0.5 * 2629800 / 18000);
  EXPECT_DOUBLE_EQ(c->usd_per_task, 100 / (0.5 * 2629800 / 18000));
  EXPECT_DOUBLE_EQ(c->usd_per_hour, 100 / (0.5 * 2629800 / 18000 * 18003 / 3600));
  EXPECT_DOUBLE_EQ(c->limited_share, (0.5 * 2629800 / 18000) / (2629800 / 18003.0));
  EXPECT_DOUBLE_EQ(c->fee_share_usd, r.cost_usd);
}

// A bucket whose limit steps within a run takes the new limit as of the step's time, whenever it is
// first asked after it. Token bucket of 10 refilled in 10 s (1 unit/s), emptied at 0, stepping to
// 20 (2 units/s) at 5 s: at 5 s it holds 5, and the 10 more capacity make 15; at 7 s, 15 + 2 × 2 = 19,
// so 20 units wait 0.5 s — the same whether or not it was asked at 5 s.
TEST(Plans, LimitStepsTakeEffectAtTheirTime) {
  bucket_config c;
  c.name = "tpm";
  c.limit = 10;
  c.period_s = 10;
  c.limit_steps = {{1000 + 5.0, 20}};  // Unix times; t = 0 is Unix 1,000
  bucket asked(c, 1000), unasked(c, 1000);
  for (bucket* b : {&asked, &unasked}) b->charge(10, 0, 0);
  EXPECT_DOUBLE_EQ(asked.wait_for(20, 5), 2.5);  // (20 − 15) / 2
  EXPECT_DOUBLE_EQ(asked.used(5), 5.0);
  EXPECT_DOUBLE_EQ(asked.wait_for(20, 7), 0.5);
  EXPECT_DOUBLE_EQ(unasked.wait_for(20, 7), 0.5);
  EXPECT_EQ(asked.wait_for(21, 100), bucket::never);  // above the new capacity
  // A lower limit: what is used stays used, the level goes below zero (5 units used of a new 4:
  // refilled at 0.4/s, 2 units wait (2 + 1) / 0.4 = 7.5 s).
  bucket_config d = c;
  d.limit_steps = {{1000 + 5.0, 4}};
  bucket lower(d, 1000);
  lower.charge(10, 0, 0);
  EXPECT_DOUBLE_EQ(lower.used(5), 5.0);
  EXPECT_DOUBLE_EQ(lower.wait_for(2, 5), 7.5);
  // A window keeps its count: 3 of 3 in a 5-hour window, stepping to 6 at 1 hour admits 3 more.
  bucket_config w = requests_window(3, window_anchor::first_use);
  w.limit_steps = {{3600, 6}};
  bucket win(w, 0);
  for (int k = 0; k < 3; ++k) win.charge(1, 100 + k, 100 + k);
  EXPECT_DOUBLE_EQ(win.wait_for(1, 200), five_hours - 100);
  EXPECT_EQ(win.wait_for(3, 3600), 0.0);
  EXPECT_EQ(win.used(3600), 3.0);
  EXPECT_DOUBLE_EQ(win.wait_for(4, 3600), five_hours + 100 - 3600);
}

// The session above, on a plan whose 5-hour cap doubles on 2026-05-06 (a dated rule) and a run
// that crosses the date: starting 1,003 s before it, the cap is 2 from 1,003 s on, and r2 at
// 1,004.5 s is admitted (its first 1,000 tokens cached: TTFT 0.5 + 0.5 s, decode 1 s, it ends at
// 1,006.5 s); starting 1,013 s
// before, r2 comes under the old cap of 1 and waits for the window as before.
TEST(Plans, ARunCrossingADatedRuleTakesItWhenItComes) {
  const auto script = two_requests();
  const session_plan plan{&script, 1000, 1, 0};
  auto j = plan_json();
  j["limits"]["buckets"][0]["limit"] = 2;
  j["limits"]["dated"] = nlohmann::json::parse(R"([
    {"bucket": "five_hour", "until": "2026-05-06T00:00:00Z", "factor": 0.5, "source": "doubled on 2026-05-06"}])");
  const auto t = plan_target(j);
  const double may6 = 1'778'025'600.0;
  sim_options so;
  so.start_unix_s = may6 - 1003;
  const auto crossing = simulate(target_at(t, so.start_unix_s), honour_forever(), {&plan, 1}, so);
  ASSERT_EQ(crossing.attempts.size(), 2u);
  EXPECT_EQ(crossing.attempts[1].status, attempt_status::ok);
  EXPECT_DOUBLE_EQ(crossing.attempts[1].t_end, 1006.5);
  so.start_unix_s = may6 - 1013;
  const auto before = simulate(target_at(t, so.start_unix_s), honour_forever(), {&plan, 1}, so);
  ASSERT_EQ(before.attempts.size(), 3u);
  EXPECT_DOUBLE_EQ(before.attempts[1].retry_after_s, 17995.5);
  EXPECT_DOUBLE_EQ(before.attempts[2].t_send, 19000.0);
}

// A cap the source does not publish is null in the preset; a run needs it set.
TEST(Plans, UnpublishedCapMustBeSetBeforeARun) {
  auto j = plan_json();
  j["limits"]["buckets"][0]["limit"] = nullptr;
  const auto t = plan_target(j);
  EXPECT_TRUE(t.limits[0].limit_unpublished);
  const auto script = two_requests();
  const session_plan plan{&script, 0, 1, 0};
  EXPECT_EQ(error_of([&] { (void)simulate(t, honour_forever(), {&plan, 1}); }),
            "target test-plan: bucket five_hour has no published limit; set it before running (a scenario option's "
            "\"limits\": {\"five_hour\": N}, --limit five_hour=N, or Target.with_bucket_limit)");

  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  nlohmann::json scn = nlohmann::json::parse(R"({"kind": "scenario", "name": "s", "source": "test",
    "read_on": "2026-12-01", "seed": 1, "start_time_utc": "2026-05-04T14:00:00Z",
    "workload": "reference-agent-loop", "sessions": 1})");
  scn["options"] = {{{"label", "plan"}, {"target", j}, {"client", "claude-code"}}};
  EXPECT_EQ(error_of([&] { (void)parse_scenario(scn.dump(), "s.json", lib); }),
            "s.json: /options/0: target test-plan's bucket five_hour has no published limit: set it with "
            "\"limits\": {\"five_hour\": N} (docs/plans.md)");
  scn["options"][0]["limits"] = {{"five_hours", 10}};
  EXPECT_EQ(error_of([&] { (void)parse_scenario(scn.dump(), "s.json", lib); }),
            "s.json: /options/0/limits: target test-plan has no bucket \"five_hours\" (its buckets: five_hour)");
  scn["options"][0]["limits"] = {{"five_hour", 10}};
  const auto s = parse_scenario(scn.dump(), "s.json", lib);
  EXPECT_EQ(s.options[0].first().limits[0].limit, 10.0);
  EXPECT_FALSE(s.options[0].first().limits[0].limit_unpublished);
}

// Rules change with dates: the test plan's limit of 10 requests was 5 until 2026-05-06 (factor 0.5)
// and 30 from 2026-05-13 until 2026-07-13 (× 3). target_at applies what is in force at a time,
// once; a run resolves the rules at its start.
TEST(Plans, DatedLimitsApplyAtTheirDates) {
  auto j = plan_json();
  j["limits"]["buckets"][0]["limit"] = 10;
  j["limits"]["dated"] = nlohmann::json::parse(R"([
    {"bucket": "five_hour", "until": "2026-05-06T00:00:00Z", "factor": 0.5, "source": "doubled on 2026-05-06"},
    {"bucket": "five_hour", "from": "2026-05-13T00:00:00Z", "until": "2026-07-13T00:00:00Z", "factor": 3,
     "source": "a boost"}])");
  const auto t = plan_target(j);
  ASSERT_EQ(t.dated_limits.size(), 2u);
  const double may6 = 1'778'025'600.0;  // 2026-05-06T00:00:00Z
  EXPECT_EQ(t.dated_limits[0].until_unix_s, may6);
  EXPECT_EQ(target_at(t, may6 - 1).limits[0].limit, 5.0);
  EXPECT_EQ(target_at(t, may6).limits[0].limit, 10.0);
  EXPECT_EQ(target_at(t, may6 + 8 * 86400.0).limits[0].limit, 30.0);
  EXPECT_EQ(target_at(t, 1'800'000'000.0).limits[0].limit, 10.0);  // 2027
  const auto once = target_at(t, may6 - 1);
  EXPECT_TRUE(once.dated_limits.empty());
  EXPECT_EQ(target_at(once, may6 - 1).limits[0].limit, 5.0);
  // The changes after that date are the bucket's limit steps: 10 from May 6, 30 from May 13, 10
  // again from July 13; resolved again later, the steps up to then are taken.
  const double may13 = may6 + 7 * 86400.0, jul13 = 1'783'900'800.0;
  ASSERT_EQ(once.limits[0].limit_steps.size(), 3u);
  EXPECT_EQ(once.limits[0].limit_steps[0].at_unix_s, may6);
  EXPECT_EQ(once.limits[0].limit_steps[0].limit, 10.0);
  EXPECT_EQ(once.limits[0].limit_steps[1].at_unix_s, may13);
  EXPECT_EQ(once.limits[0].limit_steps[1].limit, 30.0);
  EXPECT_EQ(once.limits[0].limit_steps[2].at_unix_s, jul13);
  EXPECT_EQ(once.limits[0].limit_steps[2].limit, 10.0);
  EXPECT_EQ(once.limits[0].limit_at(may13 + 1), 30.0);
  const auto later = target_at(once, may13);
  EXPECT_EQ(later.limits[0].limit, 30.0);
  ASSERT_EQ(later.limits[0].limit_steps.size(), 1u);
  EXPECT_EQ(later.limits[0].limit_steps[0].at_unix_s, jul13);
  EXPECT_TRUE(target_at(t, jul13).limits[0].limit_steps.empty());
  // A clock without a date: the preset's own limit, no steps.
  const auto undated = target_at(t, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(undated.limits[0].limit, 10.0);
  EXPECT_TRUE(undated.limits[0].limit_steps.empty());
  EXPECT_EQ(rule_changes_within(t, may6 - 86400, may6 + 86400).size(), 1u);
  EXPECT_TRUE(rule_changes_within(t, may6, may6 + 86400).empty());
  // A limit the user sets holds at any date (a scenario's "limits", --limit): its rules go.
  auto user = t;
  drop_dated_limits(user, "five_hour");
  EXPECT_EQ(target_at(user, may6 - 1).limits[0].limit, 10.0);
  auto user_later = once;  // (and its steps, when the target was resolved before)
  drop_dated_limits(user_later, "five_hour");
  EXPECT_TRUE(user_later.limits[0].limit_steps.empty());
  // A scenario that starts on 2026-05-04 runs, and says it ran, under the limit of 5.
  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  scenario scn = lib.load_scenario("reference");
  scn.options.resize(1);
  scn.options[0].targets = {t};
  scn.start_unix_s = may6 - 2 * 86400.0;
  const auto r = run_scenario(scn);
  EXPECT_EQ(r.options[0].option->first().limits[0].limit, 5.0);
  ASSERT_TRUE(r.options[0].sim.first_429.has_value());
  EXPECT_EQ(r.options[0].sim.first_429->request, 6);  // the 6th request of the window meets the cap of 5
  // A replay of logs from 2026-02-10 to 02-23 on a rule that changes on 02-11: it starts under the
  // rule in force at the start (factor 0.5 until 02-11), takes the change when it comes, and says so.
  auto k = plan_json();
  k["limits"]["buckets"][0]["limit"] = 1000;
  k["limits"]["dated"] = nlohmann::json::parse(R"([
    {"bucket": "five_hour", "until": "2026-02-11T00:00:00Z", "factor": 0.5, "source": "a test rule"}])");
  scenario_option o;
  o.label = "plan";
  o.targets = {plan_target(k)};
  o.client = honour_forever();
  const auto logs = import_traces({test_support::traces / "claude-code-jsonl"});
  const auto rr = run_replay(logs, std::vector<scenario_option>{o});
  EXPECT_EQ(rr.options[0].option->first().limits[0].limit, 500.0);
  EXPECT_NE(std::find(rr.shaping[0].notes.begin(), rr.shaping[0].notes.end(),
                      "test-plan: the limit of five_hour changes from 500 to 1,000 at 2026-02-11 00:00 UTC, within the "
                      "logs' span (a test rule): the replay takes the new limit then"),
            rr.shaping[0].notes.end())
      << fmt::format("{}", fmt::join(rr.shaping[0].notes, " | "));
  // The change is taken where it comes: with 1 request a window before 02-11 and 1,000 after, every
  // 429 comes before it (the logs of 02-10 wait for their window, which closes after the change, and
  // are served then) and the logs of 02-12 meet none; held at 1 throughout, they would.
  const double feb11 = 1'770'768'000.0;  // 2026-02-11T00:00:00Z
  k["limits"]["dated"][0]["factor"] = 0.001;
  o.targets = {plan_target(k)};
  const auto stepped = run_replay(logs, std::vector<scenario_option>{o});
  auto held = plan_target(k);
  held.limits[0].limit = 1;
  drop_dated_limits(held, "five_hour");
  o.targets = {held};
  const auto flat = run_replay(logs, std::vector<scenario_option>{o});
  auto refusals = [](const replay_result& x, double t0, bool before) {
    int n = 0;
    for (const auto& a : x.options[0].sim.attempts)
      if (a.status == attempt_status::rate_limited && (x.options[0].sim.start_unix_s + a.t_send < t0) == before) ++n;
    return n;
  };
  EXPECT_GT(refusals(stepped, feb11, true), 0);
  EXPECT_EQ(refusals(stepped, feb11, false), 0);
  EXPECT_GT(refusals(flat, feb11, false), 0);
  for (const auto& q : stepped.options[0].sim.requests) EXPECT_TRUE(std::isfinite(q.t_end));
  // Errors name the place.
  j["limits"]["dated"][0]["bucket"] = "weekly";
  EXPECT_EQ(error_of([&] { (void)plan_target(j); }), "plan.json: /limits/dated/0/bucket: no bucket \"weekly\" in this target's limits");
  j["limits"]["dated"][0] = {{"bucket", "five_hour"}, {"from", "2026-07-01T00:00:00Z"}, {"until", "2026-06-01T00:00:00Z"},
                             {"factor", 2}, {"source", "s"}};
  EXPECT_EQ(error_of([&] { (void)plan_target(j); }), "plan.json: /limits/dated/0/until: expected \"until\" after \"from\"");
  // The Claude plans: the 5-hour cap was half of today's before 2026-05-06.
  const auto pro = lib.load_target("claude-pro-sonnet-4.5");
  ASSERT_EQ(pro.dated_limits.size(), 1u);
  EXPECT_EQ(pro.dated_limits[0].bucket, "five_hour");
  EXPECT_EQ(pro.dated_limits[0].until_unix_s, may6);
  EXPECT_EQ(pro.dated_limits[0].factor, 0.5);
}

TEST(Plans, PresetErrors) {
  auto j = plan_json();
  j["prices"] = {{"usd_per_million", {{"input", 1}, {"cache_read", 0.1}, {"output", 5}}}};
  EXPECT_EQ(error_of([&] { (void)plan_target(j); }),
            "plan.json: /prices: a plan target is priced by its monthly fee; compare it with pay-as-you-go or a local "
            "machine as another option of the scenario");
  j = plan_json();
  j.erase("plan");
  EXPECT_EQ(error_of([&] { (void)plan_target(j); }),
            "plan.json: a plan target needs \"plan\": {\"name\", \"monthly_fee_usd\"}");
  j = plan_json();
  j["type"] = "cloud";
  j["prices"] = {{"usd_per_million", {{"input", 1}, {"cache_read", 0.1}, {"output", 5}}}};
  EXPECT_EQ(error_of([&] { (void)plan_target(j); }), "plan.json: /plan: only a target of type \"plan\" has a plan");
  j = plan_json();
  j["limits"]["buckets"][0] = {{"name", "t"},           {"unit", "tokens"},       {"limit", 1000},
                               {"period_s", 18000},     {"algorithm", "fixed_window"},
                               {"counts", {{"input", 1}, {"output", 1}, {"reasoning", 2}}},
                               {"charging", "reserve"}};
  EXPECT_EQ(error_of([&] { (void)plan_target(j); }),
            "plan.json: /limits/buckets/0/counts: charging \"reserve\" reserves max_tokens for output and reasoning "
            "alike, so they need the same weight (found 1 and 2)");
  j["limits"]["buckets"][0]["counts"] = {{"input", 1}, {"cache_reads", 0.1}};
  j["limits"]["buckets"][0].erase("charging");
  EXPECT_EQ(error_of([&] { (void)plan_target(j); }),
            "plan.json: /limits/buckets/0/counts: unknown token class \"cache_reads\"; expected any of input, "
            "cache_read, cache_write, output, reasoning, cache_write_1h");
  j["limits"]["buckets"][0]["counts"] = {{"input", 1}, {"cache_read", 0.1}};
  j["limits"]["buckets"][0]["weight"] = 5;
  j["limits"]["buckets"][0]["anchor"] = "first_use";
  const auto t = plan_target(j);
  EXPECT_DOUBLE_EQ(t.limits[0].class_weight(token_class::cache_read), 0.1);
  EXPECT_DOUBLE_EQ(t.limits[0].weight, 5.0);
  EXPECT_EQ(t.limits[0].anchor, window_anchor::first_use);
  EXPECT_FALSE(t.limits[0].classes.contains(token_class::output));
}

// ---- caps learnt from logs (limits_inference.hpp) ------------------------------------------------

namespace {
const plan_cap_interval& cap(const plan_inference& r, const std::string& window, const std::string& counts) {
  for (const auto& c : r.caps)
    if (c.window == window && c.counts == counts) return c;
  throw std::runtime_error("no cap for " + window + " / " + counts);
}
} // namespace

// The real Codex rollout records its 5-hour window at 2% before the first request and 6% at
// 11:44:29, when the requests so far had used 1,426,736 input (1,328,640 of them cached) and 8,000
// output tokens. The last of them (106,961 input, 369 output) may not show yet. All tokens:
// 100 × (1,434,736 − 107,330) / (4 + 1.5) = 24,134,654.5 ≤ cap ≤ 100 × 1,434,736 / (4 − 1.5) =
// 57,389,440. The weekly window rose 1% → 2%: a lower bound only.
TEST(PlanCaps, CodexSnapshotsBoundTheCap) {
  const auto t = import_trace(std::string(LOOPCAST_TEST_TRACES_DIR) +
                                  "/codex/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl",
                              trace_format::codex);
  const auto r = infer_plan_caps({&t, 1});
  const auto& all = cap(r, "5-hour", "all tokens");
  EXPECT_DOUBLE_EQ(all.low, 100 * (1434736.0 - 107330) / 5.5);
  EXPECT_DOUBLE_EQ(all.high, 100 * 1434736.0 / 2.5);
  EXPECT_EQ(all.period_s, 18000.0);
  EXPECT_TRUE(all.consistent);
  // Without cache reads: 98,096 uncached input + 8,000 output; the last request 106,961 − 102,272
  // = 4,689 uncached + 369 output.
  const auto& fresh = cap(r, "5-hour", "all but cache reads");
  EXPECT_DOUBLE_EQ(fresh.low, 100 * (106096.0 - 5058) / 5.5);
  EXPECT_DOUBLE_EQ(fresh.high, 100 * 106096.0 / 2.5);
  const auto& week = cap(r, "weekly", "all tokens");
  EXPECT_TRUE(std::isinf(week.high));
  EXPECT_GT(week.low, 0.0);
}

// The same real rollout with its requests gone (used on another machine, say): its percentages
// still rose 2% -> 6%, but a window in which the logs hold no usage bounds nothing. It once gave
// "0 to 0" as a cap.
TEST(PlanCaps, AWindowWithoutUsageBoundsNothing) {
  auto t = import_trace(std::string(LOOPCAST_TEST_TRACES_DIR) +
                            "/codex/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl",
                        trace_format::codex);
  for (auto& s : t.sessions) s.requests.clear();
  const auto r = infer_plan_caps({&t, 1});
  for (const auto& c : r.caps) {
    EXPECT_EQ(c.low, 0.0) << c.window << " " << c.counts;
    EXPECT_TRUE(std::isinf(c.high)) << c.window << " " << c.counts;
  }
  bool noted = false;
  for (const auto& n : r.notes) noted = noted || n.ends_with(": 2 windows in which the logs hold no usage bound nothing");
  EXPECT_TRUE(noted);
}

// A snapshot whose reset time is absurd (10^300, once printed as a 301-digit epoch) or whose
// window is invalid is not used, and the notes say how many: here the real rollout with its
// first snapshot's primary window reset at 1e300 and its second's window_minutes at -5.
TEST(PlanCaps, AbsurdCodexWindowsAreLeftOutWithANote) {
  const auto real = std::string(LOOPCAST_TEST_TRACES_DIR) +
                    "/codex/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl";
  const auto path = std::filesystem::temp_directory_path() / ("loopcast_codex_" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ifstream in(real);
    std::ofstream out(path);
    std::string line;
    int snapshots = 0;
    while (std::getline(in, line)) {
      if (line.find("\"rate_limits\":{") != std::string::npos && snapshots < 2) {
        const auto at = line.find(snapshots == 0 ? "\"resets_at\":1771864834" : "\"window_minutes\":300");
        if (at != std::string::npos) {
          line.replace(at, snapshots == 0 ? 22 : 20, snapshots == 0 ? "\"resets_at\":1e300" : "\"window_minutes\":-5");
          ++snapshots;
        }
      }
      out << line << "\n";
    }
    ASSERT_EQ(snapshots, 2);
  }
  const auto t = import_trace(path, trace_format::codex);
  std::filesystem::remove(path);
  const auto r = infer_plan_caps({&t, 1});
  bool noted = false;
  for (const auto& n : r.notes)
    noted = noted || n.find(": 2 window snapshots without a used_percent from 0 to 100, a positive window_minutes and a "
                            "resets_at within ±10^11 s: not used") != std::string::npos;
  EXPECT_TRUE(noted);
  // Nothing in the report is a number of more than 12 digits in a row.
  const auto json = plan_caps_to_json(r);
  std::size_t run = 0, longest = 0;
  for (const char c : json) longest = std::max(longest, run = std::isdigit(static_cast<unsigned char>(c)) ? run + 1 : 0);
  EXPECT_LE(longest, 12u) << json;
}

// A Claude Code log cut off at 03:00 by a window reopening at 05:00 (so open since 00:00): the
// requests at 01:00 (input 1,000, cache read 10,000, cache write 2,000, output 500) and 02:00
// (input 3,000, cache read 20,000, output 1,000) were admitted; the one at 23:00 the day before lies
// outside the window. All tokens: cap > 13,500 (before the 02:00 request) and ≤ 37,500.
TEST(PlanCaps, ClaudeCodeCutOffBoundsTheCap) {
  const auto path = std::filesystem::temp_directory_path() / ("loopcast_cutoff_" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream out(path);
    auto user = [&](const char* ts) {
      out << R"({"type":"user","timestamp":")" << ts << R"(","message":{"role":"user","content":"go"}})" << "\n";
    };
    auto assistant = [&](const char* ts, const char* id, const char* usage) {
      out << R"({"type":"assistant","timestamp":")" << ts << R"(","message":{"id":")" << id
          << R"(","model":"claude-opus-4-5","content":[{"type":"text","text":"ok"}],"usage":)" << usage << "}}\n";
    };
    user("2025-12-31T23:00:00Z");
    assistant("2025-12-31T23:00:05Z", "a0", R"({"input_tokens":50000,"output_tokens":10})");
    user("2026-01-01T01:00:00Z");
    assistant("2026-01-01T01:00:05Z", "a1",
              R"({"input_tokens":1000,"cache_read_input_tokens":10000,"cache_creation_input_tokens":2000,"output_tokens":500})");
    user("2026-01-01T02:00:00Z");
    assistant("2026-01-01T02:00:05Z", "a2", R"({"input_tokens":3000,"cache_read_input_tokens":20000,"output_tokens":1000})");
    user("2026-01-01T03:00:00Z");
    out << R"({"type":"assistant","timestamp":"2026-01-01T03:00:01Z","isApiErrorMessage":true,"message":{"id":"s1",)"
        << R"("model":"<synthetic>","content":[{"type":"text","text":"Claude AI usage limit reached|1767243600"}],)"
        << R"("usage":{"input_tokens":0,"output_tokens":0}}})" << "\n";
  }
  const auto t = import_trace(path, trace_format::claude_code);
  std::filesystem::remove(path);
  ASSERT_EQ(t.walls.size(), 1u);
  EXPECT_EQ(t.walls[0].resets_at_unix, 1767243600.0);
  EXPECT_EQ(t.walls[0].source_line, 8);
  const auto r = infer_plan_caps({&t, 1});
  const auto& all = cap(r, "5-hour", "all tokens");
  EXPECT_EQ(all.low, 13500.0);
  EXPECT_EQ(all.high, 37500.0);
  const auto& fresh = cap(r, "5-hour", "all but cache reads");
  EXPECT_EQ(fresh.low, 3500.0);
  EXPECT_EQ(fresh.high, 7500.0);
  const auto& tenth = cap(r, "5-hour", "cache reads at 0.1");
  EXPECT_DOUBLE_EQ(tenth.low, 4500.0);
  EXPECT_DOUBLE_EQ(tenth.high, 10500.0);
  EXPECT_EQ(all.observations, 2);  // the cut-off, and the usage of each window
}

// Claude Code's statusline input: the plan's windows, read and logged; an input without them is
// nothing to log; a window out of range is refused with its JSON pointer.
TEST(PlanCaps, StatuslineInputIsReadAndLogged) {
  const auto s = parse_statusline_input(
      R"({"session_id": "abc", "model": {"id": "claude-opus-4-6"}, "rate_limits": {"five_hour": {"used_percentage": 23.5,
          "resets_at": 1767243600}, "seven_day": {"used_percentage": 41, "resets_at": 1767600000}}})",
      1767230000.5);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->t, 1767230000.5);
  EXPECT_EQ(s->session_id, "abc");
  ASSERT_TRUE(s->five_hour && s->seven_day);
  EXPECT_EQ(s->five_hour->used_percent, 23.5);
  EXPECT_EQ(s->five_hour->resets_at_unix, 1767243600.0);
  EXPECT_EQ(s->seven_day->used_percent, 41.0);
  EXPECT_FALSE(parse_statusline_input(R"({"session_id": "abc", "cost": {"total_cost_usd": 1.2}})", 0).has_value());
  EXPECT_EQ(error_of([] { (void)parse_statusline_input(R"({"rate_limits": {"five_hour": {"used_percentage": 130,
                                                           "resets_at": 1}}})", 0); }),
            "<stdin>: /rate_limits/five_hour/used_percentage: expected a number from 0 to 100, found 130");
  // Logged and read back (a line that is no snapshot is skipped and counted).
  const auto path = std::filesystem::temp_directory_path() / ("loopcast_statusline_" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream out(path);
    out << statusline_log_line(*s) << "\n" << "not json\n";
  }
  std::size_t skipped = 0;
  const auto back = read_statusline_log(path.string(), &skipped);
  std::filesystem::remove(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(skipped, 1u);
  EXPECT_EQ(back[0].t, s->t);
  EXPECT_EQ(back[0].five_hour->used_percent, 23.5);
  EXPECT_EQ(back[0].seven_day->resets_at_unix, 1767600000.0);
}

// Statusline snapshots of one 5-hour window (resets at 05:00): 10% at 01:00, 20% at 02:00, 30% at
// 03:00. The Claude Code log's requests ending in between: 1,000 tokens at 01:30 (input 600, output
// 400) and 10,000 at 02:30 (input 9,000, output 1,000). From 10% to 30%: all tokens 11,000, the last
// 10,000 in the upper bound only: 100 × 1,000 / 21.5 ≤ cap ≤ 100 × 11,000 / 18.5. A point cost 100
// tokens in the first hour and 1,000 in the second: more than 3-fold, a note.
TEST(PlanCaps, StatuslineSnapshotsBoundTheCapAndFlagAStepChange) {
  recorded_trace t;
  t.file = "session.jsonl";
  t.format = trace_format::claude_code;
  t.absolute_clock = true;
  t.models = {"claude-opus-4-6"};
  t.sessions.resize(1);
  const double t0 = 1767229200;  // 2026-01-01 01:00 UTC
  for (const auto& [at, in, out] : {std::tuple{1800.0, 600, 400}, std::tuple{5400.0, 9000, 1000}}) {
    recorded_request q;
    q.t_send = t0 + at - 10;
    q.t_end = t0 + at;
    q.tokens.input = in;
    q.tokens.output = out;
    t.sessions[0].requests.push_back(q);
  }
  std::vector<statusline_snapshot> snaps;
  for (int k = 0; k < 3; ++k) {
    statusline_snapshot s;
    s.t = t0 + 3600.0 * k;
    s.five_hour = window_usage{10.0 + 10 * k, t0 + 4 * 3600};
    snaps.push_back(s);
  }
  const auto r = infer_plan_caps({&t, 1}, snaps, "status.jsonl");
  const auto& all = cap(r, "5-hour", "all tokens");
  EXPECT_DOUBLE_EQ(all.low, std::max(100 * 1000.0 / 21.5, 0.0 + 1000));  // the usage bound: 1,000 before the last
  EXPECT_DOUBLE_EQ(all.high, 100 * 11000.0 / 18.5);
  bool noted = false, stepped = false;
  for (const auto& n : r.notes) {
    noted = noted || n == "status.jsonl: used_percent in 1 5-hour window (3 snapshots)";
    stepped = stepped || n.find("status.jsonl: in the 5-hour window that resets at 1767243600 (Unix s), a percentage "
                                "point cost more than 3 times as many tokens from 1767232800 on") != std::string::npos;
  }
  EXPECT_TRUE(noted);
  EXPECT_TRUE(stepped);
}

// ---- the next wall of a running session (forecast.hpp) --------------------------------------------

namespace {
// Ten requests a minute apart, each lasting 10 s: request k (1-based) sends 1,000·k input tokens and
// writes 100. A plan window of 5 hours counting input and output.
recorded_trace ten_growing_requests() {
  recorded_trace t;
  t.file = "growing.jsonl";
  t.sessions.resize(1);
  for (int k = 1; k <= 10; ++k) {
    recorded_request q;
    q.t_send = 60.0 * (k - 1);
    q.t_end = q.t_send + 10;
    q.tokens.input = 1000 * k;
    q.tokens.output = 100;
    t.sessions[0].requests.push_back(q);
  }
  return t;
}
target window_plan(double limit) {
  auto t = plan_target();
  t.limits[0].unit = bucket_unit::tokens;
  t.limits[0].classes = {token_class::input, token_class::cache_read, token_class::cache_write, token_class::output};
  t.limits[0].charging = charging_rule::on_completion;
  t.limits[0].limit = limit;
  return t;
}
} // namespace

// The window counts whole prompts (whatever the cache reads) and outputs. The ten requests used
// 55,000 + 1,000 = 56,000 of a 100,000 window. Each continued request repeats a recorded step
// (+1,000 prompt tokens, 100 out, 50 s of agent time, 10 s long): request 11 (at 600 s) brings it
// to 67,100, 12 to 79,200, 13 to 92,300, and 14 (at 780 s) needs 14,000 more: refused 240 s after
// the last send (540 s), after 3 more requests — in every draw, since every step is the same.
TEST(Forecast, NextWallOfALinearlyGrowingSessionIsComputableByHand) {
  forecast_options o;
  o.pace_sigma = 0;  // every draw at the session's own pace
  const auto f = forecast_next_wall(ten_growing_requests(), window_plan(100000), o);
  EXPECT_EQ(f.requests, 10);
  EXPECT_EQ(f.last_send_s, 540.0);
  ASSERT_EQ(f.buckets.size(), 1u);
  EXPECT_EQ(f.buckets[0].used, 55900.0);  // request 10's output is charged at its end (550 s)
  EXPECT_FALSE(f.refused_at_s.has_value());
  EXPECT_DOUBLE_EQ(f.gap_s, 60.0);
  EXPECT_NEAR(f.growth_per_request, 1000.0, 1e-9);
  EXPECT_EQ(f.hit_share, 1.0);
  EXPECT_EQ(f.bucket, "five_hour");
  EXPECT_DOUBLE_EQ(f.p10_s, 240.0);
  EXPECT_DOUBLE_EQ(f.p50_s, 240.0);
  EXPECT_DOUBLE_EQ(f.p90_s, 240.0);
  EXPECT_EQ(f.requests_p50, 3.0);
}

// Each window's own wall: the session above on the same 5-hour window and a weekly cap of 150,000
// counting the same. Request 14 meets the 5-hour wall at 780 s (240 s after the last send; the week
// then holds 92,300 + 14,000, room enough), waits until the window that opened at 0 s closes at
// 18,000 s and is sent again, opening the next window; then 15 at 18,060 s (after its 10 s and 50 s
// of agent time) and 16 at 18,120 s fit the week (92,300 + 14,100 + 15,100 + 16,000 = 137,500),
// and 17 at 18,180 s needs 17,000 more than 137,600: the weekly wall, 17,640 s after the last send.
TEST(Forecast, EachWindowsWallWaitsOutTheOthersResets) {
  forecast_options o;
  o.pace_sigma = 0;
  o.draws = 20;
  auto plan = window_plan(100000);
  auto weekly = plan.limits[0];
  weekly.name = "weekly";
  weekly.limit = 150000;
  weekly.period_s = 7 * 86400.0;
  plan.limits.push_back(weekly);
  const auto f = forecast_next_wall(ten_growing_requests(), plan, o);
  EXPECT_EQ(f.bucket, "five_hour");
  EXPECT_DOUBLE_EQ(f.p50_s, 240.0);
  ASSERT_EQ(f.buckets.size(), 2u);
  ASSERT_TRUE(f.buckets[0].wall && f.buckets[1].wall);
  for (const double q : {f.buckets[0].wall->p10_s, f.buckets[0].wall->p50_s, f.buckets[0].wall->p90_s})
    EXPECT_DOUBLE_EQ(q, 240.0);
  for (const double q : {f.buckets[1].wall->p10_s, f.buckets[1].wall->p50_s, f.buckets[1].wall->p90_s})
    EXPECT_DOUBLE_EQ(q, 17640.0);
  EXPECT_EQ(f.buckets[1].wall->hit_share, 1.0);
  EXPECT_FALSE(f.buckets[1].wall->p50_at_least);
  std::ostringstream text;
  write_forecast_text(text, f, o.horizon_s);
  EXPECT_NE(text.str().find("  each window, the session waiting out the others' resets: five_hour in 4.0 min (P10 4.0 "
                            "min, P90 4.0 min; 100% of draws); weekly in 4.9 h (P10 4.9 h, P90 4.9 h; 100% of draws)\n"),
            std::string::npos)
      << text.str();
  const auto j = nlohmann::json::parse(forecast_to_json(f, -1));
  EXPECT_EQ(j.at("buckets").at(1).at("wall").at("p50_s"), 17640.0);
  // Not asked for: the draws stop at the first wall, which is the same.
  o.each_window = false;
  const auto g = forecast_next_wall(ten_growing_requests(), plan, o);
  EXPECT_DOUBLE_EQ(g.p50_s, 240.0);
  EXPECT_FALSE(g.buckets[1].wall.has_value());
  // (Both walls come within the first chunk: 10 requests replayed and 64 continued, in each of 20 draws.)
  EXPECT_EQ(f.requests_simulated, 10 + 20 * 74);
  EXPECT_EQ(g.requests_simulated, 10 + 20 * 74);
  EXPECT_TRUE(nlohmann::json::parse(forecast_to_json(g, -1)).at("buckets").at(1).at("wall").is_null());
}

// A smaller window would already have refused request 10 (45,900 used + 10,000 > 50,000); a larger
// one beyond the horizon is never met; a window that opened at the first request closes 5 hours
// later, so with a 2-hour horizon a 10^9 window is never met either.
TEST(Forecast, RefusedSoFarAndNoWallWithinTheHorizon) {
  auto f = forecast_next_wall(ten_growing_requests(), window_plan(50000));
  ASSERT_TRUE(f.refused_at_s.has_value());
  EXPECT_EQ(*f.refused_at_s, 540.0);
  EXPECT_EQ(f.refused_by, "five_hour");
  forecast_options o;
  o.horizon_s = 7200;
  o.pace_sigma = 0;
  f = forecast_next_wall(ten_growing_requests(), window_plan(1e9), o);
  EXPECT_EQ(f.hit_share, 0.0);
  EXPECT_TRUE(std::isinf(f.p50_s));
  EXPECT_EQ(f.bucket, "");
  auto unset = window_plan(1);
  unset.limits[0].limit_unpublished = true;
  EXPECT_EQ(error_of([&] { (void)forecast_next_wall(ten_growing_requests(), unset); }),
            "target test-plan: bucket five_hour has no published limit; set it with --limit five_hour=N (docs/plans.md)");
}

// Requests sent all at once, each ending as it began, give no pace: the forecast says so (no
// steps, no draws), as for a session of one request, rather than "no wall in 200 draws". (The
// forecast fuzz target found it: steps without draws.)
TEST(Forecast, SendsAllAtOnceGiveNoPaceAndNoDraws) {
  auto t = ten_growing_requests();
  for (auto& q : t.sessions[0].requests) q.t_send = q.t_end = 0;
  const auto f = forecast_next_wall(t, window_plan(1e6));
  EXPECT_EQ(f.steps, 0);
  EXPECT_EQ(f.draws, 0);
  EXPECT_TRUE(f.draws_s.empty());
  const auto j = nlohmann::json::parse(forecast_to_json(f, -1));
  EXPECT_TRUE(j.at("gap_s").is_null());
  EXPECT_EQ(j.at("next_wall").at("draws"), 0);
  std::ostringstream text;
  write_forecast_text(text, f, 7 * 86400.0);
  EXPECT_NE(text.str().find("no pace to forecast from yet"), std::string::npos) << text.str();
}

// A draw the work budget stops before a wall or the horizon is censored, never "no wall": with room
// for 1,000 simulated requests a draw (10 replayed and about 650 continued over 64, 256 and 650),
// no draw reaches the 10^9 window or the 7-day horizon, so every quantile is a lower bound at
// where the draws stopped, and the work stays within the budget.
TEST(Forecast, ADrawStoppedByTheWorkBudgetIsCensoredNotNoWall) {
  forecast_options o;
  o.draws = 20;
  o.work_budget = 20 * 1000;
  o.pace_sigma = 0;
  const auto f = forecast_next_wall(ten_growing_requests(), window_plan(1e9), o);
  EXPECT_EQ(f.hit_share, 0.0);
  EXPECT_EQ(f.draws_censored, 20);
  EXPECT_TRUE(f.p10_at_least && f.p50_at_least && f.p90_at_least);
  EXPECT_GT(f.censored_at_s, 10 * 60.0);
  EXPECT_LT(f.censored_at_s, 7 * 86400.0);
  EXPECT_EQ(f.p50_s, f.censored_at_s);  // every draw is the same (one step, repeated)
  EXPECT_LE(f.requests_simulated, 10 + 20 * 1000);
  std::ostringstream text;
  write_forecast_text(text, f, o.horizon_s);
  EXPECT_NE(text.str().find(fmt::format("next wall: none within {:.1f} h (simulated); beyond that unknown (20 of 20 "
                                        "draws stopped by the work budget; a request every 60 s, +1000 tokens per request)",
                                        f.censored_at_s / 3600)),
            std::string::npos)
      << text.str();
  // Options out of range are refused, and so is a log that leaves the budget no room.
  o.draws = 0;
  EXPECT_THROW((void)forecast_next_wall(ten_growing_requests(), window_plan(1e9), o), std::invalid_argument);
  o.draws = 200;
  o.work_budget = 2000;
  try {
    (void)forecast_next_wall(ten_growing_requests(), window_plan(1e9), o);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "growing.jsonl: each of 200 draws replays the log's 10 requests, and the work budget of 2000 "
                           "requests leaves no room to continue them: give fewer draws or a larger budget");
  }
}

// The backtest of the ten requests with the window capped at 0.9 × the 56,000 its first window
// held: 50,400. The whole log's replay is refused at request 10 (45,900 + 10,000), 540 s. Cut after
// 3, 5 and 8 requests (last sends 120, 240, 420 s) the truth is 420, 300 and 120 s, and every draw
// (one step, repeated) says the same: covered, no error, CRPS 0. The burn rate in the window that
// opened at 0 s: 6,200 used at 120 s → (50,400 − 6,200) / (6,200 / 120) = 855.48 s; 15,400 at
// 240 s → 545.45 s; 36,700 at 420 s → 156.78 s.
TEST(Forecast, BacktestOfAnEvenSessionIsExactAndBeatsTheBurnRate) {
  backtest_options o;
  o.caps = {{"five_hour", 0.9}};
  o.forecast.draws = 20;
  o.forecast.pace_sigma = 0;
  const auto r = backtest_forecasts({ten_growing_requests()}, window_plan(1), o);
  ASSERT_EQ(r.rows.size(), 3u) << (r.notes.empty() ? "" : r.notes.front());
  const double truth[3] = {420, 300, 120}, baseline[3] = {44200.0 * 120 / 6200, 35000.0 * 240 / 15400,
                                                           13700.0 * 420 / 36700};
  const std::int64_t requests[3] = {3, 5, 8};
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(r.rows[i].requests, requests[i]);
    EXPECT_NEAR(r.rows[i].truth_s, truth[i], 1e-9);
    EXPECT_NEAR(r.rows[i].p50_s, truth[i], 1e-9);
    EXPECT_TRUE(r.rows[i].covered);
    EXPECT_NEAR(r.rows[i].p50_error, 0, 1e-12);
    EXPECT_NEAR(r.rows[i].crps, 0, 1e-12);
    EXPECT_NEAR(r.rows[i].baseline_s, baseline[i], 1e-9);
    EXPECT_NEAR(r.rows[i].baseline_error, std::abs(baseline[i] - truth[i]) / truth[i], 1e-12);
  }
  EXPECT_EQ(r.coverage, 1.0);
  EXPECT_EQ(r.missed, 0);
  EXPECT_NEAR(r.median_baseline_error, (35000.0 * 240 / 15400 - 300) / 300, 1e-12);
  EXPECT_TRUE(r.windows.empty() && r.rows[0].windows.empty());  // not asked for
  // Each window's own wall: the one window's first refusal, the client waiting for its reset, is
  // request 10's at 540 s as before; every draw says so.
  o.each_window = true;
  const auto w = backtest_forecasts({ten_growing_requests()}, window_plan(1), o);
  ASSERT_EQ(w.rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(w.rows[i].windows.size(), 1u);
    EXPECT_EQ(w.rows[i].windows[0].bucket, "five_hour");
    EXPECT_NEAR(w.rows[i].windows[0].truth_s, truth[i], 1e-9);
    EXPECT_NEAR(w.rows[i].windows[0].p50_s, truth[i], 1e-9);
    EXPECT_TRUE(w.rows[i].windows[0].covered);
  }
  ASSERT_EQ(w.windows.size(), 1u);
  EXPECT_EQ(w.windows[0].forecasts, 3);
  EXPECT_EQ(w.windows[0].coverage, 1.0);
  EXPECT_NEAR(w.windows[0].median_p50_error, 0, 1e-12);
  EXPECT_EQ(nlohmann::json::parse(backtest_to_json(w, o, -1)).at("windows").at(0).at("forecasts"), 3);
  EXPECT_THROW(backtest_forecasts({ten_growing_requests()}, window_plan(1), [] {
                 backtest_options b;
                 b.caps = {{"weekly", 0.9}};
                 return b;
               }()),
               std::invalid_argument);
}

// CRPS of an ensemble: mean |x − y| − mean |x − x'| / 2. {1, 3} against 2: 1 − (0 + 2 + 2 + 0) / 4 / 2 = 0.5;
// a point forecast's is its error; an infinite member counts at the cap.
TEST(Forecast, EnsembleCrpsByHand) {
  EXPECT_DOUBLE_EQ(ensemble_crps({1, 3}, 2), 0.5);
  EXPECT_DOUBLE_EQ(ensemble_crps({5}, 2), 3.0);
  EXPECT_DOUBLE_EQ(ensemble_crps({1, std::numeric_limits<double>::infinity()}, 2, 3), 0.5);
  EXPECT_TRUE(std::isnan(ensemble_crps({}, 2)));
}

// --limit sets the cap in force now; the preset's dated rule still scales it back (finding 6 of
// the fourth reliability round): the Codex rollouts of 2026-02-23, before Claude's 5-hour caps
// doubled on 2026-05-06, replayed on Max 5x with --limit five_hour=60000 meet a cap of 30,000 —
// exactly what an undated copy of the preset with 30,000 gives — and the notes name the rule.
TEST(PlanCaps, ALimitGivenIsTodaysAndDatedRulesScaleItBack) {
  using loopcast::test_support::run_cli;
  const auto logs = (test_support::traces / "codex").string();
  auto dated = run_cli("--models " + test_support::models + " replay --json " + logs +
                       " --on claude-max-5x-opus-4.5 --limit five_hour=60000 --limit weekly=100000000");
  ASSERT_EQ(dated.code, 0) << dated.err;
  auto preset = nlohmann::json::parse(test_support::slurp(test_support::models + "/targets/plans/claude-max-5x-opus-4.5.json"));
  preset["limits"].erase("dated");
  preset["name"] = "max-5x-undated";
  const auto file = test_support::scratch("plans", "max-5x-undated.json");
  std::ofstream(file) << preset.dump();
  auto flat = run_cli("--models " + test_support::models + " replay --json " + logs + " --on " + file.string() +
                      " --limit five_hour=30000 --limit weekly=100000000");
  ASSERT_EQ(flat.code, 0) << flat.err;
  const auto a = nlohmann::json::parse(dated.out)["options"][0], b = nlohmann::json::parse(flat.out)["options"][0];
  EXPECT_EQ(a["buckets"][0]["limit"], 30000.0);
  EXPECT_EQ(a["first_429"], b["first_429"]);
  EXPECT_EQ(a["wall_s"], b["wall_s"]);
  const auto notes = a["route_notes"].dump();
  EXPECT_NE(notes.find("the limit of five_hour at the logs' start (2026-02-23) is 30,000, 0.5 times the 60,000 in force "
                       "now, by a dated rule"),
            std::string::npos) << notes;
}

// Per-target limits: TARGET:BUCKET=N (a pattern allowed) sets one target's cap, two plans with
// different caps give different rows; a target's typo is answered with the closest names; every
// missing cap is named in one message.
TEST(PlanCaps, PerTargetLimitsAndTheirMessages) {
  using loopcast::test_support::run_cli;
  const auto logs = (test_support::traces / "codex").string();
  const auto on = " --on claude-max-5x-opus-4.7 --on claude-max-20x-opus-4.7";
  auto r = run_cli("--models " + test_support::models + " replay --json " + logs + on +
                   " --limit 'claude-max-5x-*:five_hour=60000' --limit claude-max-20x-opus-4.7:five_hour=240000 "
                   "--limit weekly=100000000");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["options"][0]["buckets"][0]["limit"], 30000.0);   // today's 60,000, halved in February
  EXPECT_EQ(j["options"][1]["buckets"][0]["limit"], 120000.0);  // today's 240,000, halved
  EXPECT_NE(j["options"][0]["first_429"], j["options"][1]["first_429"]);
  r = run_cli("--models " + test_support::models + " replay " + logs + on + " --limit claude-max-5-opus-4.7:five_hour=1");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: --limit claude-max-5-opus-4.7:five_hour=1: no target named \"claude-max-5-opus-4.7\"; did "
                   "you mean claude-max-5x-opus-4.7 or claude-max-20x-opus-4.7? (targets: claude-max-5x-opus-4.7, "
                   "claude-max-20x-opus-4.7)\n");
  r = run_cli("--models " + test_support::models + " replay " + logs + on + " --limit five_hour=100000");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: 2 buckets have no published limit: claude-max-5x-opus-4.7:weekly, "
                   "claude-max-20x-opus-4.7:weekly; set each (e.g. --limit claude-max-5x-opus-4.7:weekly=N --limit "
                   "claude-max-20x-opus-4.7:weekly=N), or one for every target with --limit BUCKET=N (docs/plans.md)\n");
  r = run_cli("--models " + test_support::models + " replay " + logs + on + " --limit fivehour=100000");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: --limit fivehour=100000: no target has a bucket \"fivehour\"; did you mean five_hour? "
                   "(buckets: five_hour, weekly)\n");
}

// The headline names a bucket from the same draws as its time (finding 9 of the fourth reliability
// round): on a plan with a 5-hour window and a one-minute window of 22,000 tokens, draws at three
// or more requests a minute meet the minute's first and slower ones the five hours'. Every draw that meets a wall is in first_by once,
// so its shares sum to the hit share, and the headline's bucket is one that refused first.
TEST(Forecast, TheHeadlinesBucketAndTimeComeFromTheSameDraws) {
  auto plan = window_plan(100000);
  auto minute = plan.limits[0];
  minute.name = "per_minute";
  minute.period_s = 60;
  minute.limit = 22000;  // a request at the recorded pace fits (about 12,000); three in a minute do not
  plan.limits.push_back(minute);
  forecast_options o;
  o.draws = 200;
  o.horizon_s = 86400;
  o.pace_sigma = 1.5;
  const auto f = forecast_next_wall(ten_growing_requests(), plan, o);
  ASSERT_GE(f.first_by.size(), 2u);
  double shares = 0;
  for (const auto& [name, share] : f.first_by) shares += share;
  EXPECT_NEAR(shares, f.hit_share, 1e-12);
  ASSERT_TRUE(std::isfinite(f.p50_s));
  EXPECT_TRUE(std::any_of(f.first_by.begin(), f.first_by.end(), [&](const auto& b) { return b.first == f.bucket; }));
  std::ostringstream text;
  write_forecast_text(text, f, o.horizon_s);
  EXPECT_NE(text.str().find(fmt::format("first refused by: {} {:.0f}%, {} {:.0f}%", f.first_by[0].first,
                                        100 * f.first_by[0].second, f.first_by[1].first, 100 * f.first_by[1].second)),
            std::string::npos) << text.str();
  const auto j = nlohmann::json::parse(forecast_to_json(f, -1));
  EXPECT_NEAR(j["next_wall"]["first_refused_by"][f.first_by[0].first].get<double>(), f.first_by[0].second, 1e-12);
}
