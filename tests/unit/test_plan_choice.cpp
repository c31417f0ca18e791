// "Which plan?" (plan_choice.hpp): recorded sessions replayed on plans with known caps, their waits
// for resets and their monthly dollars derived by hand.
#include "loopcast/plan_choice.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/price_book.hpp"
#include "loopcast/report/plans.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

using namespace loopcast;

namespace {

constexpr double t0 = 1780000000;  // 2026-05-28 20:26:40 UTC, after every dated rule of the presets

// One session of three requests, each lasting 10 s, sent at t0, t0 + 1 h and t0 + 2 h (so 3,590 s
// of agent time before the second and the third).
std::vector<recorded_trace> three_requests() {
  recorded_trace t;
  t.file = "week.jsonl";
  t.project = "/home/u/app";
  t.format = trace_format::claude_code;
  t.absolute_clock = true;
  t.models = {"claude-opus-4-7"};
  t.sessions.resize(1);
  for (int k = 0; k < 3; ++k) {
    recorded_request q;
    q.t_send = t0 + 3600.0 * k;
    q.t_end = q.t_send + 10;
    q.tokens.input = 1000;
    q.tokens.output = 100;
    t.sessions[0].requests.push_back(q);
  }
  return {t};
}

// A plan of N requests per 5-hour window opened by its first request, at a fee of its own.
plan_candidate plan(const std::string& label, double requests, double fee, plan_caps_source caps) {
  auto t = parse_target(R"({
    "kind": "target", "name": "test-plan", "source": "test", "read_on": "2026-12-07", "verified": false,
    "type": "plan", "provider": "test", "tier": "max", "model": "m", "context_window_tokens": 100000,
    "limits": {"sends_retry_after": true, "buckets": [
      {"name": "five_hour", "unit": "requests", "limit": 1, "period_s": 18000, "algorithm": "fixed_window",
       "anchor": "first_use"}]},
    "cache": {"enabled": false},
    "speed": {"overhead_s": 0.5, "prefill": {"kind": "constant", "tokens_per_second": 1000}, "cached_token_s": 0,
              "decode": {"kind": "constant", "tokens_per_second": 100}},
    "plan": {"name": "Test", "monthly_fee_usd": 100}
  })", "plan.json");
  t.limits[0].limit = requests;
  t.plan->monthly_fee_usd = fee;
  plan_candidate c;
  c.label = label;
  if (caps == plan_caps_source::assumed) {  // replayed at half and twice the cap too
    auto lo = t, hi = t;
    lo.limits[0].limit = requests / 2;
    hi.limits[0].limit = requests * 2;
    c.low.emplace_back("*", std::move(lo));
    c.high.emplace_back("*", std::move(hi));
  }
  c.targets.emplace_back("*", std::move(t));
  c.caps = caps;
  c.caps_note = "test";
  return c;
}

plan_choice_options waiting_client(double max_blocked) {
  plan_choice_options o;
  o.client = preset_library({LOOPCAST_TEST_MODELS_DIR}).load_client("claude-code");  // honours retry-after
  o.max_blocked_hours_week = max_blocked;
  return o;
}

} // namespace

// One request a window: the first opens it at t0; the second (t0 + 1 h) waits for t0 + 5 h (4 h)
// and opens the next window there, ending at t0 + 5 h + 10 s; the third follows 3,590 s later
// (t0 + 6 h) and waits for t0 + 10 h (4 h). 8 hours of waiting over logs that span under a day
// (counted as one): 56 hours a week. Three a window: no wait.
TEST(PlanChoice, WaitsAndFeesByHand) {
  const auto logs = three_requests();
  const std::vector<plan_candidate> cands{plan("one a window", 1, 20, plan_caps_source::given),
                                          plan("three a window", 3, 200, plan_caps_source::given)};
  const auto r = choose_plan(logs, cands, waiting_client(2));
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(r.span_days, 1.0);
  EXPECT_EQ(r.requests, 3);
  // Within 2 h a week only the larger plan: it comes first.
  EXPECT_EQ(r.rows[0].label, "three a window");
  EXPECT_TRUE(r.rows[0].within_limit);
  EXPECT_EQ(r.rows[0].walls, 0);
  EXPECT_DOUBLE_EQ(r.rows[0].blocked_hours_week, 0.0);
  EXPECT_DOUBLE_EQ(r.rows[0].usd_month, 200.0);
  const auto& small = r.rows[1];
  EXPECT_FALSE(small.within_limit);
  EXPECT_EQ(small.walls, 2);
  ASSERT_EQ(small.waits_at.size(), 2u);
  EXPECT_NEAR(small.waits_at[0].start_unix_s, t0 + 3600, 1e-6);
  EXPECT_NEAR(small.waits_at[0].hours, 4.0, 1e-9);
  EXPECT_NEAR(small.waits_at[1].start_unix_s, t0 + 6 * 3600.0, 1e-6);
  EXPECT_NEAR(small.waits_at[1].hours, 4.0, 1e-9);
  EXPECT_EQ(small.waits_at[0].bucket, "five_hour");
  EXPECT_NEAR(small.blocked_hours_week, 56.0, 1e-9);
  EXPECT_EQ(small.sessions_cut, 0);
  // The windows before the two waits held the first and the second request: all of app's.
  ASSERT_EQ(small.filled_by.size(), 1u);
  EXPECT_EQ(small.filled_by[0].project, "/home/u/app");
  EXPECT_DOUBLE_EQ(small.filled_by[0].share, 1.0);
  EXPECT_TRUE(r.rows[0].filled_by.empty());
  // Recorded: t0 to t0 + 2 h 10 s; replayed: to t0 + 10 h 10 s, 8 hours later.
  EXPECT_NEAR(small.late_days, 8.0 / 24, 1e-9);
  EXPECT_NEAR(small.pace, 7210.0 / 36010.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.rows[0].pace, 1.0);
  EXPECT_EQ(r.verdict, "three a window at $200 a month: 0.0 h a week waiting for resets, the cheapest within 2 h");

  // Accepting 60 hours a week, the cheaper plan wins.
  const auto lax = choose_plan(logs, cands, waiting_client(60));
  EXPECT_EQ(lax.rows[0].label, "one a window");
  EXPECT_EQ(lax.verdict, "one a window at $20 a month: 56.0 h a week waiting for resets, the cheapest within 60 h");
}

// Assumed caps are replayed at half and at twice their value too. Two a window: the third request
// (t0 + 2 h) waits for t0 + 5 h, 3 h, 21 h a week; at one a window 56 h (above); at four, none.
TEST(PlanChoice, AssumedCapsCarryTheirInterval) {
  const auto r = choose_plan(three_requests(), {plan("two a window", 2, 20, plan_caps_source::assumed)}, waiting_client(2));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_NEAR(r.rows[0].blocked_hours_week, 21.0, 1e-9);
  EXPECT_NEAR(r.rows[0].blocked_high, 56.0, 1e-9);
  EXPECT_NEAR(r.rows[0].blocked_low, 0.0, 1e-9);
  EXPECT_EQ(r.verdict, "no option stays within 2 h a week of waiting; the least is two a window with 21.0 h (0.0–56.0 "
                       "with the caps' uncertainty)");
  const auto text = plan_choice_text(r, "UTC");
  EXPECT_NE(text.find("2026-05-28 22:26 five_hour 3.0 h"), std::string::npos) << text;
}

// At a plan's wall the person waits for the reset however often it refuses: a client that would
// give up at once (no retries) still finishes on a plan, with the same waits as above.
TEST(PlanChoice, APlanWallIsWaitedOutWhateverTheAgentsRetries) {
  auto o = waiting_client(2);
  o.client.max_retries = 0;
  const auto r = choose_plan(three_requests(), {plan("one a window", 1, 20, plan_caps_source::given)}, o);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].sessions_cut, 0);
  EXPECT_EQ(r.rows[0].walls, 2);
  EXPECT_NEAR(r.rows[0].blocked_hours_week, 56.0, 1e-9);
}

// A rule that changes mid-replay (Ultra's 5-hour window stops binding): from t0 + 1.5 h the window
// is a thousand times its cap. The second request (t0 + 1 h) still waits for t0 + 5 h (4 h); the
// third (t0 + 6 h) finds the window of t0 + 5 h holding one request of its 1,000: no second wait.
TEST(PlanChoice, ARuleThatChangesMidReplayIsTakenWhenItComes) {
  auto c = plan("one a window until t0 + 1.5 h", 1, 20, plan_caps_source::given);
  dated_limit d;
  d.bucket = "five_hour";
  d.from_unix_s = t0 + 5400;
  d.factor = 1000;
  d.source = "test";
  c.targets[0].second.dated_limits.push_back(d);
  const auto r = choose_plan(three_requests(), {c}, waiting_client(2));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].walls, 1);
  EXPECT_NEAR(r.rows[0].waits_at[0].hours, 4.0, 1e-9);
  EXPECT_NEAR(r.rows[0].blocked_hours_week, 28.0, 1e-9);
}

// With extra usage, the wall spills instead: the first request (t0) is the plan's; the second
// (t0 + 1 h) and the third (t0 + 2 h) are refused by the 5-hour window and go at once to the API at
// $1 input and $10 output per million: 1,000 × $1/M + 100 × $10/M = $0.002 each, $0.004 over logs
// counted as one day, $0.1217 a month (× 30.436875) above the $20 fee, and no wait.
TEST(PlanChoice, ExtraUsageSpillsTheWallToTheApiByHand) {
  auto c = plan("one a window + extra usage", 1, 20, plan_caps_source::given);
  c.spill.push_back(parse_target(R"({
    "kind": "target", "name": "test-api", "source": "test", "read_on": "2026-12-08", "verified": false,
    "type": "cloud", "provider": "test", "tier": "t", "model": "m", "context_window_tokens": 100000,
    "limits": {"sends_retry_after": true, "buckets": []},
    "cache": {"enabled": false},
    "speed": {"overhead_s": 0.5, "prefill": {"kind": "constant", "tokens_per_second": 1000}, "cached_token_s": 0,
              "decode": {"kind": "constant", "tokens_per_second": 100}},
    "prices": {"usd_per_million": {"input": 1, "cache_read": 0.1, "output": 10}}
  })", "api.json"));
  c.spills_from = "one a window";
  const auto r = choose_plan(three_requests(), {plan("one a window", 1, 20, plan_caps_source::given), c}, waiting_client(2));
  ASSERT_EQ(r.rows.size(), 2u);
  const auto& spilled = r.rows[0];
  EXPECT_EQ(spilled.label, "one a window + extra usage");
  EXPECT_EQ(spilled.walls, 0);
  EXPECT_DOUBLE_EQ(spilled.blocked_hours_week, 0.0);
  EXPECT_DOUBLE_EQ(spilled.fee_usd_month, 20.0);
  EXPECT_NEAR(spilled.metered_usd_month, 0.004 * 30.436875, 1e-9);
  EXPECT_NEAR(spilled.usd_month, 20 + 0.004 * 30.436875, 1e-9);
  EXPECT_DOUBLE_EQ(spilled.pace, 1.0);
  EXPECT_EQ(r.rows[1].walls, 2);  // the plan alone waits, as in WaitsAndFeesByHand

  // A plan that never waits spills nothing: its extra-usage row is the same, and left out.
  auto big = c;
  big.targets[0].second.limits[0].limit = 3;
  const auto same = choose_plan(three_requests(), {plan("one a window", 3, 20, plan_caps_source::given), big},
                                waiting_client(2));
  ASSERT_EQ(same.rows.size(), 1u);
  EXPECT_EQ(same.rows[0].label, "one a window");
}

// The bundled Claude options load with every cap set (none left unpublished): assumed from Pro's
// 200K and 2M by the stated 1 : 5 : 20, with their ½ and 2× variants.
TEST(PlanChoice, TheClaudeOptionsLoadWithTheirCaps) {
  const auto c = plan_candidates(preset_library({LOOPCAST_TEST_MODELS_DIR}), plan_agent::claude_code);
  ASSERT_EQ(c.size(), 9u);
  EXPECT_EQ(c[0].label, "Claude Pro");
  EXPECT_EQ(c[1].label, "Claude Max (5x)");
  EXPECT_EQ(c[2].label, "Claude Ultra (Max 20x)");
  EXPECT_EQ(c[3].label, "Claude Pro + extra usage");
  EXPECT_EQ(c[3].spills_from, "Claude Pro");
  ASSERT_EQ(c[3].spill.size(), 1u);
  EXPECT_EQ(c[3].spill[0].name, "anthropic-tier4-claude-sonnet-4.6");
  EXPECT_EQ(c[4].spill[0].name, "anthropic-tier4-claude-opus-4.7");
  EXPECT_EQ(c[6].label, "API pay-as-you-go");
  EXPECT_EQ(c[7].label, "Cerebras Code Pro (GLM 4.7)");
  EXPECT_DOUBLE_EQ(c[7].targets[0].second.find_bucket("daily")->limit, 24e6);  // published: no interval
  EXPECT_TRUE(c[7].low.empty());
  EXPECT_DOUBLE_EQ(c[8].targets[0].second.find_bucket("daily")->limit, 120e6);
  EXPECT_DOUBLE_EQ(c[8].targets[0].second.plan->monthly_fee_usd, 200.0);
  for (const auto& o : c)
    for (const auto& [pattern, t] : o.targets)
      for (const auto& b : t.limits) EXPECT_FALSE(b.limit_unpublished) << o.label << " " << b.name;
  EXPECT_DOUBLE_EQ(c[0].targets[0].second.find_bucket("five_hour")->limit, 200000.0);
  EXPECT_DOUBLE_EQ(c[0].low[0].second.find_bucket("five_hour")->limit, 100000.0);
  EXPECT_DOUBLE_EQ(c[0].high[0].second.find_bucket("weekly")->limit, 4000000.0);
  EXPECT_DOUBLE_EQ(c[1].targets[0].second.find_bucket("weekly")->limit, 10000000.0);
  EXPECT_DOUBLE_EQ(c[2].targets[0].second.find_bucket("five_hour")->limit, 4000000.0);
  EXPECT_EQ(c[0].caps, plan_caps_source::assumed);
  EXPECT_EQ(c[6].caps, plan_caps_source::none);
  EXPECT_TRUE(c[6].low.empty());
}

namespace {
// A fit of one account's 5-hour window: 8 windows, 6 inliers, 1.25M (1.13M–1.38M) counting cache
// reads at 0, measured at t0 (after the 2026-05-06 rule change).
plan_fit five_hour_fit(const std::string& account_plan) {
  plan_fit f;
  plan_account a;
  a.name = "acct";
  a.plan = account_plan;
  f.accounts.push_back(a);
  window_fit w;
  w.account = "acct";
  w.window = "5-hour";
  w.period_s = 18000;
  w.evidence = "used_percent";
  rule_fit r;
  r.rule.cache_read = 0;
  r.samples = 8;
  r.inliers = 6;
  r.cap = 1.25e6;
  r.cap_low = 1.13e6;
  r.cap_high = 1.38e6;
  w.rules.push_back(r);
  cap_sample s;
  s.t0 = t0 - 3600;
  s.t1 = t0;
  w.samples.push_back(s);
  f.windows.push_back(w);
  return f;
}
} // namespace

// Fitted caps are the home plan's, and the others' by the stated ratio: Plus 1.25M, Pro 5x 6.25M,
// Pro 20x 25M per 5 hours, counting what the fit counted (no cache reads); the weekly window, which
// nothing measured, is assumed (Plus 10.26M a week). Fitted on a Pro 5x account, Plus is a fifth.
TEST(PlanChoice, FittedCapsScaleByTheStatedRatio) {
  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  const auto fit = five_hour_fit("");
  plan_caps_input in;
  in.fit = &fit;
  const auto c = plan_candidates(lib, plan_agent::codex, in);
  ASSERT_EQ(c.size(), 9u);
  EXPECT_EQ(c[0].label, "ChatGPT Plus");
  const auto* plus = c[0].targets[0].second.find_bucket("five_hour");
  EXPECT_DOUBLE_EQ(plus->limit, 1.25e6);
  EXPECT_FALSE(plus->classes.contains(token_class::cache_read));
  EXPECT_TRUE(plus->classes.contains(token_class::input));
  EXPECT_DOUBLE_EQ(c[0].low[0].second.find_bucket("five_hour")->limit, 1.13e6);
  EXPECT_DOUBLE_EQ(c[1].targets[0].second.find_bucket("five_hour")->limit, 6.25e6);
  EXPECT_DOUBLE_EQ(c[1].high[0].second.find_bucket("five_hour")->limit, 6.9e6);
  EXPECT_DOUBLE_EQ(c[2].targets[0].second.find_bucket("five_hour")->limit, 25e6);
  EXPECT_DOUBLE_EQ(c[0].targets[0].second.find_bucket("weekly")->limit, 10.26e6);
  EXPECT_EQ(c[0].caps, plan_caps_source::assumed);  // the weekly cap is still assumed
  EXPECT_NE(c[1].caps_note.find("five_hour 6.25M fitted (5.65M–6.9M; 6 of 8 used_percent windows of acct, × 5 for "
                                "ChatGPT Pro 5x over ChatGPT Plus, cache reads at 0)"),
            std::string::npos)
      << c[1].caps_note;

  in.home_plan = "pro 5x";
  const auto on_pro = plan_candidates(lib, plan_agent::codex, in);
  EXPECT_DOUBLE_EQ(on_pro[0].targets[0].second.find_bucket("five_hour")->limit, 0.25e6);
  EXPECT_DOUBLE_EQ(on_pro[1].targets[0].second.find_bucket("five_hour")->limit, 1.25e6);

  in.home_plan = "team";
  try {
    (void)plan_candidates(lib, plan_agent::codex, in);
    FAIL() << "a home plan of no Codex plan";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--plan team: not a plan of this agent (ChatGPT Plus, ChatGPT Pro 5x, ChatGPT Pro 20x)");
  }
}

// The login method a Claude log names is the home plan ("Claude Pro account": Pro), and a cap
// measured before 2026-05-06, when Claude's 5-hour caps were half of today's, is doubled.
TEST(PlanChoice, AClaudeFitIsTheLoggedPlansAtTodaysRules) {
  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  auto fit = five_hour_fit("Claude Pro account");
  fit.windows[0].samples[0].t1 = 1770000000;  // 2026-02-02
  plan_caps_input in;
  in.fit = &fit;
  const auto c = plan_candidates(lib, plan_agent::claude_code, in);
  EXPECT_DOUBLE_EQ(c[0].targets[0].second.find_bucket("five_hour")->limit, 2.5e6);
  EXPECT_DOUBLE_EQ(c[1].targets[0].second.find_bucket("five_hour")->limit, 12.5e6);
}

// A cap the user gives is replayed as given (no interval for it); the rest keep their sources.
TEST(PlanChoice, GivenCapsAreKeptAsGiven) {
  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  plan_caps_input in;
  in.set_given = [](std::span<target* const> ts) {
    for (auto* t : ts)
      if (t->name == "claude-pro-sonnet-4.6")
        for (auto& b : t->limits) {
          b.limit = 300000;
          b.limit_unpublished = false;
        }
  };
  const auto c = plan_candidates(lib, plan_agent::claude_code, in);
  EXPECT_EQ(c[0].caps, plan_caps_source::given);
  EXPECT_EQ(c[0].caps_note, "five_hour 300K given; weekly 300K given");
  EXPECT_TRUE(c[0].low.empty());
  EXPECT_EQ(c[1].caps, plan_caps_source::assumed);
}

// The real Codex accounts (tests/data/traces/codex-rate-limits): the one whose 5-hour window moved
// enough fits 1.25M tokens a window, then about 3.81M after a change near 2026-02-01; the cap in
// force is the later one. Replayed on Plus (its plan taken as Plus) at that cap, the account meets
// no wall, as its logged used_percent never passed 54%; at the earlier level it would have.
TEST(PlanChoice, RealCodexAccountsOnTheirOwnPlanMeetNoWall) {
  namespace fs = std::filesystem;
  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  const auto logs = import_traces({fs::path(LOOPCAST_TEST_TRACES_DIR) / "codex-rate-limits"}, trace_format::automatic);
  const auto fit = fit_plan(logs);
  plan_caps_input in;
  in.fit = &fit;
  const auto c = plan_candidates(lib, plan_agent::codex, in);
  EXPECT_NEAR(c[0].targets[0].second.find_bucket("five_hour")->limit, 3.81e6, 0.01e6);
  plan_choice_options o;
  o.client = lib.load_client("codex");
  const auto r = choose_plan(logs, {c[0]}, o);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].walls, 0);
  EXPECT_DOUBLE_EQ(r.rows[0].pace, 1.0);
  EXPECT_EQ(r.rows[0].sessions, 40);

  auto early = c[0];
  early.low.clear();
  early.high.clear();
  const auto five = std::find_if(fit.windows.begin(), fit.windows.end(), [](const window_fit& w) { return w.window == "5-hour"; });
  ASSERT_NE(five, fit.windows.end());
  EXPECT_NEAR(five->rules.front().cap, 1.25e6, 0.01e6);
  early.targets[0].second.find_bucket("five_hour")->limit = five->rules.front().cap;
  const auto r_early = choose_plan(logs, {early}, o);
  EXPECT_EQ(r_early.rows[0].walls, 2);
  EXPECT_EQ(r_early.rows[0].waits_at[0].bucket, "five_hour");
}

// --since keeps the sessions that started at or after it: of the six sample Claude Code sessions,
// four start on 2026-02-10 (left out, said in a note) and two on 2026-02-12; past the last, none is
// left, which is an error naming the option.
TEST(PlanChoice, SinceKeepsTheSessionsThatStartedAfterIt) {
  namespace fs = std::filesystem;
  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  const auto logs = import_traces({fs::path(LOOPCAST_TEST_TRACES_DIR) / "claude-code-jsonl"}, trace_format::automatic);
  compare_plans_options o;
  o.since_unix_s = 1770854400;  // 2026-02-12 00:00 UTC
  const auto r = compare_plans(logs, lib, o);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].agent, "Claude Code");
  EXPECT_EQ(r[0].rows[0].sessions, 2);
  EXPECT_NE(std::find(r[0].notes.begin(), r[0].notes.end(),
                      "4 sessions that started before 2026-02-12 00:00 UTC left out (--since)"),
            r[0].notes.end());
  o.since_unix_s = 1780000000;
  try {
    (void)compare_plans(logs, lib, o);
    FAIL() << "no session after --since";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--since: no Claude Code or Codex session starts at or after 2026-05-28 20:26 UTC (6 start "
                           "before it)");
  }
}

// When the cheapest option runs the work on another vendor's model, the verdict says so and names
// the best option on the logs' own models too.
TEST(PlanChoice, AnotherModelsPlanIsNamedAsSuch) {
  auto other = plan("cheap elsewhere", 3, 10, plan_caps_source::given);
  other.other_model = "glm";
  const auto r = choose_plan(three_requests(), {plan("own", 3, 50, plan_caps_source::given), other}, waiting_client(2));
  EXPECT_EQ(r.verdict, "cheap elsewhere at $10 a month: 0.0 h a week waiting for resets, the cheapest within 2 h, on "
                       "another model (glm); on the logs' own models, own at $50 with 0.0 h");
  EXPECT_EQ(r.rows[0].other_model, "glm");
  EXPECT_EQ(plan_choice_to_json(r, -1).find("\"other_model\":null") != std::string::npos, true);
}

// Stranded quota: a plan of one request per 5 hours and ten a week. The three requests wait twice
// for the 5-hour window within one week, which counts 3 of its 10: 70% of the week unused.
TEST(PlanChoice, TheWeeklyAllowanceA5HourWallStrandsByHand) {
  auto c = plan("one per 5 h, ten a week", 1, 20, plan_caps_source::given);
  auto weekly = c.targets[0].second.limits[0];
  weekly.name = "weekly";
  weekly.limit = 10;
  weekly.period_s = 604800;
  c.targets[0].second.limits.push_back(weekly);
  const auto r = choose_plan(three_requests(), {c}, waiting_client(2));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].walls, 2);
  EXPECT_EQ(r.rows[0].stranded_weeks, 1);
  EXPECT_DOUBLE_EQ(r.rows[0].stranded_share, 0.7);
  EXPECT_NE(plan_choice_text(r, "UTC").find("stranded on one per 5 h, ten a week: 70% of the weekly allowance unused "
                                            "in the 1 week its 5-hour window refused"),
            std::string::npos);
  // Without a weekly window nothing can be stranded: NaN, never 0.
  const auto alone = choose_plan(three_requests(), {plan("one per 5 h", 1, 20, plan_caps_source::given)}, waiting_client(2));
  EXPECT_TRUE(std::isnan(alone.rows[0].stranded_share));
  EXPECT_EQ(alone.rows[0].stranded_weeks, 0);
}
