// Routes (docs/routing.md): a request spills to the next target exactly when the primary's
// retry-after exceeds the threshold, and pays there for the prefix the primary had cached;
// cooldowns move retries; scenario files and their errors.
#include "loopcast/errors.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/report.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/simulation.hpp"

#include "two_requests.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

using namespace loopcast;
using loopcast::test_support::error_of;
using loopcast::test_support::honour_forever;
using loopcast::test_support::two_requests;

namespace {

// Overhead 0.5 s, prefill 1,000 tok/s (cache reads free), decode 100 tok/s; 100-token cache blocks
// kept 300 s, writes not charged. The primary admits 1 request per minute (a token bucket: after
// one at t = 0, the next waits until t = 60) at $1 input, $0.1 cache read, $2 output per million;
// the overflow has no limits at $3, $0.3, $6.
target route_target(const std::string& name, bool limited, double scale) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "kind": "target", "source": "test", "read_on": "2026-12-01", "verified": false,
    "type": "cloud", "provider": "test", "tier": "t", "model": "m", "context_window_tokens": 100000,
    "cache": {"enabled": true, "block_tokens": 100, "ttl_s": 300, "write_charged": false},
    "speed": {"overhead_s": 0.5, "prefill": {"kind": "constant", "tokens_per_second": 1000}, "cached_token_s": 0,
              "decode": {"kind": "constant", "tokens_per_second": 100}}
  })");
  j["name"] = name;
  j["prices"] = {{"usd_per_million", {{"input", 1 * scale}, {"cache_read", 0.1 * scale}, {"output", 2 * scale}}}};
  j["limits"] = {{"sends_retry_after", true}, {"buckets", nlohmann::json::array()}};
  if (limited)
    j["limits"]["buckets"].push_back(
        {{"name", "rpm"}, {"unit", "requests"}, {"limit", 1}, {"period_s", 60}, {"algorithm", "token_bucket"}});
  return parse_target(j.dump(), name + ".json");
}

struct routed_run {
  std::vector<target> route{route_target("primary", true, 1), route_target("overflow", false, 3)};
  session_script script = two_requests();
  simulation_result run(const route_policy& p) {
    const session_plan plan{&script, 0.0, 1, 0};
    return simulate_route(route, p, honour_forever(), {&plan, 1});
  }
};

route_policy spill_after(double s) {
  route_policy p;
  p.spill_after_s = s;
  return p;
}

} // namespace

// r1 (prompt 1,000, output 100) at t = 0 on the primary: TTFT 0.5 + 1 = 1.5 s, decode 1 s, ends at
// 2.5; its 1,000 tokens are cached there. r2 (prompt 1,500) is sent at 4.5: the bucket refills
// 1/60 per second, so the primary asks it to retry after 60 − 4.5 = 55.5 s.
TEST(Routes, SpillsExactlyWhenRetryAfterExceedsTheThresholdAndLosesTheCache) {
  routed_run rr;
  // Threshold 55.4 s < 55.5 s: r2 spills at once to the overflow, which has nothing cached.
  const auto spilled = rr.run(spill_after(55.4));
  ASSERT_EQ(spilled.attempts.size(), 3u);
  EXPECT_EQ(spilled.attempts[1].status, attempt_status::rate_limited);
  EXPECT_EQ(spilled.attempts[1].target, 0);
  EXPECT_NEAR(spilled.attempts[1].retry_after_s, 55.5, 1e-9);
  EXPECT_EQ(spilled.attempts[1].wait_s, 0.0);
  EXPECT_EQ(spilled.attempts[1].tokens.cache_read, 1000);
  EXPECT_EQ(spilled.attempts[2].status, attempt_status::ok);
  EXPECT_EQ(spilled.attempts[2].target, 1);
  EXPECT_EQ(spilled.attempts[2].t_send, 4.5);
  EXPECT_EQ(spilled.attempts[2].tokens.cache_read, 0);
  EXPECT_EQ(spilled.attempts[2].tokens.input, 1500);
  // On the overflow: TTFT 0.5 + 1.5 = 2 s, decode 1 s: ends at 7.5.
  EXPECT_NEAR(spilled.attempts[2].t_end, 7.5, 1e-12);
  EXPECT_NEAR(spilled.wall_s, 7.5, 1e-12);
  EXPECT_EQ(spilled.sessions[0].stall_s, 0.0);
  ASSERT_EQ(spilled.route.size(), 2u);
  const auto& p = spilled.route[0];
  const auto& o = spilled.route[1];
  EXPECT_EQ(p.target, "primary");
  EXPECT_EQ(p.attempts, 2);
  EXPECT_EQ(p.rate_limited, 1);
  EXPECT_EQ(p.requests_served, 1);
  EXPECT_EQ(p.cooldowns, 1);  // a 429 cools it down at once (the default policy)
  EXPECT_EQ(o.attempts, 1);
  EXPECT_EQ(o.spilled_in, 1);
  EXPECT_EQ(o.requests_served, 1);
  // Primary: 1,000 × $1 + 100 × $2 per million = $0.0012. Overflow: 1,500 × $3 + 100 × $6 = $0.0051.
  EXPECT_NEAR(p.cost_usd, 0.0012, 1e-12);
  EXPECT_NEAR(o.cost_usd, 0.0051, 1e-12);
  EXPECT_NEAR(spilled.cost_usd, 0.0063, 1e-12);
  // The 1,000 tokens the primary had cached cost $3 − $0.3 per million more on the overflow.
  EXPECT_EQ(o.lost_cache_tokens, 1000);
  EXPECT_NEAR(o.lost_cache_usd, 0.0027, 1e-12);
  EXPECT_EQ(p.lost_cache_tokens, 0);
  // The buckets side by side, named TARGET:BUCKET; the overflow has none.
  ASSERT_EQ(spilled.buckets.size(), 1u);
  EXPECT_EQ(spilled.buckets[0].name, "primary:rpm");
  EXPECT_EQ(spilled.attempts[1].refused_by, 0);

  // Threshold 55.6 s > 55.5 s: the client waits 55.5 s; at t = 60 the primary's 5-s cooldown
  // (from 4.5 to 9.5) is over, so the retry goes back to it, where r2's first 1,000 tokens are
  // still cached (kept until 1.5 + 300 s): TTFT 0.5 + 0.5 = 1 s, ends at 62.
  const auto waited = rr.run(spill_after(55.6));
  ASSERT_EQ(waited.attempts.size(), 3u);
  EXPECT_NEAR(waited.attempts[1].wait_s, 55.5, 1e-9);
  EXPECT_EQ(waited.attempts[2].target, 0);
  EXPECT_EQ(waited.attempts[2].tokens.cache_read, 1000);
  EXPECT_NEAR(waited.attempts[2].t_send, 60.0, 1e-9);
  EXPECT_NEAR(waited.wall_s, 62.0, 1e-9);
  EXPECT_NEAR(waited.sessions[0].stall_s, 55.5, 1e-9);
  EXPECT_NEAR(waited.route[0].stall_s, 55.5, 1e-9);
  EXPECT_EQ(waited.route[1].attempts, 0);
  EXPECT_EQ(waited.route[1].lost_cache_tokens, 0);
  // r2 on the primary: 500 × $1 + 1,000 × $0.1 + 100 × $2 per million = $0.0008.
  EXPECT_NEAR(waited.cost_usd, 0.0012 + 0.0008, 1e-12);

  // "never" spills: the same as the wait above.
  const auto never = rr.run(spill_after(std::numeric_limits<double>::infinity()));
  EXPECT_NEAR(never.wall_s, 62.0, 1e-9);
  EXPECT_EQ(never.route[1].attempts, 0);
}

TEST(Routes, ACooledDownTargetSendsTheRetryToTheNextAndItsCacheIsLost) {
  routed_run rr;
  // The client waits 55.5 s, but the primary cools down for 100 s (4.5 → 104.5): the retry at 60
  // goes to the overflow (a new pick, not a spill), which bills the 1,000 cached tokens in full.
  route_policy p = spill_after(60);
  p.cooldown_s = 100;
  const auto r = rr.run(p);
  ASSERT_EQ(r.attempts.size(), 3u);
  EXPECT_EQ(r.attempts[2].target, 1);
  EXPECT_NEAR(r.attempts[2].t_send, 60.0, 1e-9);
  EXPECT_EQ(r.route[1].spilled_in, 0);
  EXPECT_EQ(r.route[1].lost_cache_tokens, 1000);
  EXPECT_NEAR(r.route[1].lost_cache_usd, 0.0027, 1e-12);
  // TTFT 2 s and decode 1 s on the overflow: ends at 63.
  EXPECT_NEAR(r.wall_s, 63.0, 1e-9);

  // Without cooldowns the retry returns to the primary.
  p.cooldown_after_fails = 0;
  const auto back = rr.run(p);
  EXPECT_EQ(back.attempts[2].target, 0);
  EXPECT_EQ(back.route[0].cooldowns, 0);
}

TEST(Routes, CooldownNeedsTheGivenNumberOfRefusalsWithinTheWindow) {
  // Three sessions of one request each, starting at t = 0, 1 and 2, on a primary that admits one
  // request a minute: the first is admitted, the second and third are refused at 1 and 2. With
  // after_fails = 2 within 60 s, the primary cools down at t = 2 (its second 429), not at t = 1.
  routed_run rr;
  session_script one = two_requests();
  one.requests.resize(1);
  std::vector<session_plan> plans;
  for (int i = 0; i < 3; ++i) plans.push_back({&one, static_cast<double>(i), static_cast<std::uint64_t>(i + 1), 0});
  route_policy p = spill_after(std::numeric_limits<double>::infinity());
  p.cooldown_after_fails = 2;
  p.cooldown_s = 1000;
  const auto r = simulate_route(rr.route, p, honour_forever(), plans);
  EXPECT_EQ(r.route[0].cooldowns, 1);
  EXPECT_EQ(r.route[0].rate_limited, 2);
  // Session 2 (refused at 1, no cooldown yet) waits 59 s for the primary; at t = 60 the primary is
  // cooling down (2 → 1,002), so its retry and session 3's go to the overflow.
  EXPECT_EQ(r.route[1].requests_served, 2);
  EXPECT_EQ(r.route[0].requests_served, 1);
}

TEST(Routes, RefusesAnInvalidRoute) {
  routed_run rr;
  const session_plan plan{&rr.script, 0.0, 1, 0};
  route_policy p;
  p.spill_after_s = -1;
  EXPECT_EQ(error_of([&] { simulate_route(rr.route, p, honour_forever(), {&plan, 1}); }),
            "a route's spill_after_s is -1; expected 0 s or more (infinity: never spill)");
  p = {};
  p.cooldown_s = std::nan("");
  EXPECT_EQ(error_of([&] { simulate_route(rr.route, p, honour_forever(), {&plan, 1}); }),
            "a route's cooldown_s is nan; expected a finite time from 0 s");
  EXPECT_EQ(error_of([&] { simulate_route({}, route_policy{}, honour_forever(), {&plan, 1}); }),
            "a route has 0 targets; expected 1 to 8");
}

TEST(Routes, ScenarioFileRunsARouteAndNamesItsErrors) {
  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  auto scenario_with = [](const std::string& option) {
    return R"({"kind": "scenario", "name": "r", "source": "test", "read_on": "2026-12-01", "verified": false,
      "seed": 1, "start_time_utc": "2026-05-04T14:00:00Z", "workload": "reference-agent-loop", "sessions": 2,
      "options": [)" + option + "]}";
  };
  const auto s = parse_scenario(scenario_with(R"({"label": "r", "client": "opencode", "route": {
      "targets": ["cerebras-developer-qwen-3.8-27b", "local-workstation-qwen-27b"], "spill_after_s": "never",
      "cooldown": {"after_fails": 3, "window_s": 30, "for_s": 7}},
      "limits": {"cerebras-developer-qwen-3.8-27b:rpm": 9}})"),
                                "r.json", lib);
  const auto& o = s.options[0];
  ASSERT_EQ(o.targets.size(), 2u);
  EXPECT_TRUE(std::isinf(o.routing.spill_after_s));
  EXPECT_EQ(o.routing.cooldown_after_fails, 3);
  EXPECT_EQ(o.routing.cooldown_window_s, 30);
  EXPECT_EQ(o.routing.cooldown_s, 7);
  EXPECT_EQ(o.targets[0].find_bucket("rpm")->limit, 9);
  EXPECT_EQ(o.name(), "cerebras-developer-qwen-3.8-27b → local-workstation-qwen-27b");
  EXPECT_EQ(o.buckets()[2].name, "cerebras-developer-qwen-3.8-27b:rpm");
  EXPECT_EQ(o.buckets()[2].limit, 9);
  // Every request is served by one of the two targets; tokens are conserved across them.
  const auto res = run_scenario(s);
  const auto& r = res.options[0].sim;
  ASSERT_EQ(r.route.size(), 2u);
  EXPECT_EQ(r.route[0].requests_served + r.route[1].requests_served, static_cast<std::int32_t>(r.requests.size()));
  EXPECT_EQ(r.route[0].tokens.total() + r.route[1].tokens.total(), r.tokens.total());
  EXPECT_EQ(r.route[0].attempts + r.route[1].attempts, static_cast<std::int32_t>(r.attempts.size()));
  EXPECT_NEAR(r.route[0].cost_usd + r.route[1].cost_usd, r.cost_usd, 1e-9);

  auto error = [&](const std::string& option) {
    return error_of([&] { parse_scenario(scenario_with(option), "r.json", lib); });
  };
  EXPECT_EQ(error(R"({"label": "r", "client": "opencode", "target": "local-workstation-qwen-27b",
                      "route": {"targets": ["local-workstation-qwen-27b"]}})"),
            "r.json: /options/0/target: give either \"target\" or \"route\", not both");
  EXPECT_EQ(error(R"({"label": "r", "client": "opencode"})"), "r.json: /options/0: missing key \"target\" (or \"route\")");
  EXPECT_EQ(error(R"({"label": "r", "client": "opencode", "route": {"targets": ["local-workstation-qwen-27b"],
                      "spill_after_s": "soon"}})"),
            "r.json: /options/0/route/spill_after_s: expected seconds or \"never\", found \"soon\"");
  EXPECT_EQ(error(R"({"label": "r", "client": "opencode", "route": {"targets": ["cerebras-developer-qwen-3.8-27b"]},
                      "limits": {"rpm": 5}})"),
            "r.json: /options/0/limits: a route's limits are named \"TARGET:BUCKET\" (e.g. "
            "\"cerebras-developer-qwen-3.8-27b:uncached_tpm\"), found \"rpm\"");
  EXPECT_EQ(error(R"({"label": "r", "client": "opencode", "route": {"targets": ["cerebras-developer-qwen-3.8-27b"]},
                      "limits": {"other:rpm": 5}})"),
            "r.json: /options/0/limits: the route has no target \"other\" (its targets: cerebras-developer-qwen-3.8-27b)");
  EXPECT_EQ(error(R"({"label": "r", "client": "opencode", "route": {"targets": ["local-workstation-qwen-27b"]},
                      "batch": true})"),
            "r.json: /options/0/batch: a route runs without the batch API");
}

// The grammar of `--on`, one for the CLI and Python (replay.hpp): every form, and each error.
TEST(Routes, ModelMapSpecSplitsEveryFormOfOn) {
  auto entries = [](const model_map_spec& m) {
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    for (const auto& e : m.entries) out.emplace_back(e.pattern, e.targets);
    return out;
  };
  using list = std::vector<std::pair<std::string, std::vector<std::string>>>;
  auto message_of = [](const std::string& spec) {  // malformed: std::invalid_argument (the CLI's exit 2)
    try {
      split_model_map(spec);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(entries(split_model_map("a")), (list{{"*", {"a"}}}));
  EXPECT_EQ(entries(split_model_map("a>b>c")), (list{{"*", {"a", "b", "c"}}}));
  EXPECT_EQ(entries(split_model_map("claude-*=a>b,gpt-*=c")), (list{{"claude-*", {"a", "b"}}, {"gpt-*", {"c"}}}));
  EXPECT_EQ(split_model_map("claude-*=a").file_label, "");
  EXPECT_EQ(message_of("a>"), "--on \"a>\": expected TARGET>TARGET[>TARGET…]");
  EXPECT_EQ(message_of("x=a,=b"),
            "--on \"x=a,=b\": expected PATTERN=TARGET[,PATTERN=TARGET…], found \"=b\"");
  EXPECT_EQ(message_of("a>b>c>d>e>f>g>h>i"),
            "--on \"a>b>c>d>e>f>g>h>i\": 9 targets; a route has at most 8");

  const auto dir = std::filesystem::temp_directory_path() / "loopcast-test-model-map" / "run=3>x";
  std::filesystem::create_directories(dir);
  const auto routes = (dir / "by-model.json").string();
  std::ofstream(routes) << R"({"claude-opus-*": "a>b", "*": "c"})";
  const auto m = split_model_map(routes);
  EXPECT_EQ(entries(m), (list{{"claude-opus-*", {"a", "b"}}, {"*", {"c"}}}));
  EXPECT_EQ(m.file_label, "by-model");
  // A target's own file is one target, whatever its folder's name holds.
  const auto target_file = (dir / "mine.json").string();
  std::ofstream(target_file) << R"({"kind": "target", "name": "mine"})";
  EXPECT_EQ(entries(split_model_map(target_file)), (list{{"*", {target_file}}}));
  std::ofstream(routes) << R"({"claude-opus-*": 3})";
  EXPECT_EQ(message_of(routes),
            routes + ": /claude-opus-*: expected \"MODEL-PATTERN\": \"TARGET\" (a preset name or .json path)");
  std::filesystem::remove_all(dir.parent_path());
}
