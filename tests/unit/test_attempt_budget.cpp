// The attempt budget (sim_options::max_attempts, a scenario's "attempt_budget"): a run stops after
// that many attempts, its running sessions cut off; Monte Carlo counts the runs it stopped.
#include "loopcast/errors.hpp"
#include "loopcast/montecarlo.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/report.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/simulation.hpp"

#include "test_support.hpp"
#include "two_requests.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

using namespace loopcast;
using loopcast::test_support::honour_forever;
using loopcast::test_support::two_requests;

namespace {

using loopcast::test_support::models;

// One request per minute (a token bucket of 1), retry-after sent; requests take 0.5 + 1 + 1 = 2.5 s.
target one_per_minute() {
  return parse_target(R"({
    "kind": "target", "name": "rpm1", "source": "test", "read_on": "2026-12-01", "verified": false,
    "type": "cloud", "provider": "test", "tier": "t", "model": "m", "context_window_tokens": 100000,
    "cache": {"enabled": true, "block_tokens": 100, "ttl_s": 300, "write_charged": false},
    "speed": {"overhead_s": 0.5, "prefill": {"kind": "constant", "tokens_per_second": 1000}, "cached_token_s": 0,
              "decode": {"kind": "constant", "tokens_per_second": 100}},
    "prices": {"usd_per_million": {"input": 1, "cache_read": 0.1, "output": 2}},
    "limits": {"sends_retry_after": true, "buckets": [
      {"name": "rpm", "unit": "requests", "limit": 1, "period_s": 60, "algorithm": "token_bucket"}]}
  })", "rpm1.json");
}

simulation_result two_sessions(std::uint64_t budget) {
  static const session_script script = two_requests();
  const session_plan plans[] = {{&script, 0.0, 1, 0}, {&script, 0.0, 2, 0}};
  sim_options opt;
  opt.max_attempts = budget;
  return simulate(one_per_minute(), honour_forever(), plans, opt);
}

} // namespace

// By hand: at 0 s A's r1 is admitted and B's is refused (retry after 60 s); at 4.5 s A's r2 is
// refused (retry after 55.5 s). A budget of 3 attempts stops the run there.
TEST(AttemptBudget, StopsTheRunAtTheBudgetAndCutsOffTheRunningSessions) {
  const auto full = two_sessions(0);
  EXPECT_FALSE(full.cut_off);
  EXPECT_EQ(full.requests.size(), 4u);
  for (const auto& s : full.sessions) EXPECT_EQ(s.outcome, session_outcome::completed);

  const auto cut = two_sessions(3);
  EXPECT_TRUE(cut.cut_off);
  EXPECT_EQ(cut.cut_off_s, 4.5);
  ASSERT_EQ(cut.attempts.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {  // the same attempts as the full run's first three
    EXPECT_EQ(cut.attempts[i].session, full.attempts[i].session);
    EXPECT_EQ(cut.attempts[i].status, full.attempts[i].status);
    EXPECT_EQ(cut.attempts[i].t_send, full.attempts[i].t_send);
  }
  EXPECT_EQ(cut.attempts[2].retry_after_s, 55.5);
  ASSERT_EQ(cut.requests.size(), 1u);  // A's r1 only
  ASSERT_EQ(cut.sessions.size(), 2u);
  EXPECT_EQ(cut.sessions[0].outcome, session_outcome::cut_off);
  EXPECT_EQ(cut.sessions[0].stop_request, 2);
  EXPECT_EQ(cut.sessions[0].end_s, 4.5);
  EXPECT_EQ(cut.sessions[0].attempts, 2);
  EXPECT_EQ(cut.sessions[1].outcome, session_outcome::cut_off);
  EXPECT_EQ(cut.sessions[1].stop_request, 1);
  EXPECT_EQ(cut.sessions[1].attempts, 1);
  EXPECT_EQ(cut.wall_s, 4.5);
  EXPECT_EQ(cut.busy_s, 2.5);
  EXPECT_EQ(cut.tokens.output, 100);  // only what was served

  // A budget of 4 stops at 60 s with B's r1 admitted but not served: it is in flight.
  const auto in_flight = two_sessions(4);
  EXPECT_EQ(in_flight.cut_off_s, 60.0);
  EXPECT_EQ(in_flight.requests.size(), 1u);
  EXPECT_EQ(in_flight.busy_s, 2.5);  // B's request started at the cut: 0 s more

  // A budget the run never reaches changes nothing.
  const auto roomy = two_sessions(1000);
  EXPECT_FALSE(roomy.cut_off);
  EXPECT_EQ(roomy.attempts.size(), full.attempts.size());
  EXPECT_EQ(roomy.cost_usd, full.cost_usd);
}

TEST(AttemptBudget, ScenariosCarryItAndMonteCarloCountsTheRunsItStopped) {
  const preset_library lib({models});
  const auto base = load_scenario_file(models + "/../examples/scenarios/five-agents.json", lib);
  EXPECT_EQ(base.attempt_budget, 0u);
  auto text = nlohmann::json::parse(
      R"({"kind":"scenario","name":"budgeted","source":"test","read_on":"2026-12-01","verified":false,"seed":42,
          "start_time_utc":"2026-05-04T14:00:00Z","workload":"reference-agent-loop","sessions":5,"stagger_s":20,
          "attempt_budget":40,"options":[{"label":"developer","target":"cerebras-developer-qwen-3.8-27b","client":"opencode"}]})");
  const auto s = parse_scenario(text.dump(), "budgeted.json", lib);
  EXPECT_EQ(s.attempt_budget, 40u);
  const auto r = run_scenario(s);
  const auto& sim = r.options[0].sim;
  ASSERT_TRUE(sim.cut_off);
  std::int64_t attempts = 0;
  for (const auto& x : sim.sessions) attempts += x.attempts;
  EXPECT_EQ(attempts, 40);  // five sessions of 34 requests need at least 170
  std::ostringstream report;
  write_text_report(report, r);
  EXPECT_NE(report.str().find("  CUT OFF     at "), std::string::npos) << report.str();
  EXPECT_NE(report.str().find("when the run reached its attempt budget (40 attempts): 5 running sessions stopped there"),
            std::string::npos)
      << report.str();

  montecarlo_options mo;
  mo.seeds = 3;
  const auto mc = run_montecarlo(s, mo);
  EXPECT_EQ(mc.options[0].runs_cut_off, 3);
  for (const auto& row : mc.rows) EXPECT_TRUE(row.cut_off);
  EXPECT_EQ(mc.options[0].p_session_dies.value, 1.0);  // a cut-off session did not complete
  const auto uncut = run_montecarlo(base, mo);
  EXPECT_EQ(uncut.options[0].runs_cut_off, 0);

  // Refused values name the key.
  text["attempt_budget"] = 0;
  try {
    (void)parse_scenario(text.dump(), "budgeted.json", lib);
    FAIL();
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("/attempt_budget"), std::string::npos) << e.what();
  }
}
