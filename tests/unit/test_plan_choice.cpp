// "Which plan?" (plan_choice.hpp): recorded sessions replayed on plans with known caps, their waits
// for resets and their monthly dollars derived by hand.
#include "loopcast/plan_choice.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/report/plans.hpp"

#include <gtest/gtest.h>

using namespace loopcast;

namespace {

constexpr double t0 = 1780000000;  // 2026-05-28 20:26:40 UTC, after every dated rule of the presets

// One session of three requests, each lasting 10 s, sent at t0, t0 + 1 h and t0 + 2 h (so 3,590 s
// of agent time before the second and the third).
std::vector<recorded_trace> three_requests() {
  recorded_trace t;
  t.file = "week.jsonl";
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
  ASSERT_EQ(small.first_walls.size(), 2u);
  EXPECT_NEAR(small.first_walls[0].start_unix_s, t0 + 3600, 1e-6);
  EXPECT_NEAR(small.first_walls[0].hours, 4.0, 1e-9);
  EXPECT_NEAR(small.first_walls[1].start_unix_s, t0 + 6 * 3600.0, 1e-6);
  EXPECT_NEAR(small.first_walls[1].hours, 4.0, 1e-9);
  EXPECT_EQ(small.first_walls[0].bucket, "five_hour");
  EXPECT_NEAR(small.blocked_hours_week, 56.0, 1e-9);
  EXPECT_EQ(small.sessions_cut, 0);
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

// The bundled options load, and every plan's caps are set (none is left unpublished).
TEST(PlanChoice, TheClaudeOptionsLoadWithTheirCaps) {
  const auto c = claude_plan_candidates(preset_library({LOOPCAST_TEST_MODELS_DIR}));
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].label, "Claude Pro");
  for (const auto& o : c)
    for (const auto& [pattern, t] : o.targets)
      for (const auto& b : t.limits) EXPECT_FALSE(b.limit_unpublished) << o.label << " " << b.name;
  EXPECT_DOUBLE_EQ(c[0].targets[0].second.find_bucket("five_hour")->limit, 200000.0);
  EXPECT_DOUBLE_EQ(c[2].targets[0].second.find_bucket("five_hour")->limit, 4000000.0);
}
