// Limits on resources and numbers at the edges: pathological inputs are refused with clear
// errors before they exhaust memory or time; edge values either work or are refused at load.
#include "loopcast/loopcast.hpp"

#include "test_support.hpp"
#include "two_requests.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace loopcast;
using loopcast::test_support::error_of;
namespace fs = std::filesystem;

namespace {
using loopcast::test_support::scratch;
nlohmann::json preset(const std::string& rel) {
  std::ifstream in(std::string(LOOPCAST_TEST_MODELS_DIR) + "/" + rel);
  return nlohmann::json::parse(in);
}
const char* user_line = R"({"type":"user","timestamp":"2026-02-10T21:11:56.846Z","message":{"role":"user","content":"hi"}})";
const char* assistant_line =
    R"({"type":"assistant","timestamp":"2026-02-10T21:11:59.000Z","message":{"id":"m1","model":"x","content":[],)"
    R"("usage":{"input_tokens":10,"output_tokens":60}}})";
} // namespace

// A line longer than 64 MiB is skipped, and reported, without being held in memory.
TEST(Limits, OverlongLogLineIsSkipped) {
  const auto path = scratch("limits", "long.jsonl");
  {
    std::ofstream out(path, std::ios::binary);
    out << user_line << "\n";
    const std::string chunk(1 << 20, 'x');
    out << "{\"junk\": \"";
    for (int i = 0; i < 65; ++i) out << chunk;
    out << "\"}\n" << assistant_line << "\n";
  }
  const auto t = import_trace(path, trace_format::claude_code);
  fs::remove(path);
  EXPECT_EQ(t.request_count(), 1u);
  EXPECT_EQ(t.summary.skipped.at("line too long"), 1);
  EXPECT_EQ(t.summary.issues.at(0).line, 2);
  EXPECT_EQ(t.summary.issues.at(0).reason, "line too long: over 67108864 bytes");
}

TEST(Limits, DeeplyNestedLogLineIsSkipped) {
  const auto path = scratch("limits", "deep.jsonl");
  {
    std::ofstream out(path);
    out << user_line << "\n" << std::string(100000, '[') << std::string(100000, ']') << "\n" << assistant_line << "\n";
  }
  const auto t = import_trace(path, trace_format::claude_code);
  EXPECT_EQ(t.request_count(), 1u);
  EXPECT_EQ(t.summary.issues.at(0).reason, "not JSON: nested deeper than 256 levels");
}

TEST(Limits, ImplausibleTokenCountsAreInvalidNotHuge) {
  const auto path = scratch("limits", "huge.jsonl");
  std::ofstream(path) << user_line << "\n"
                      << R"({"type":"assistant","timestamp":"2026-02-10T21:11:59.000Z","message":{"id":"m1","model":"x",)"
                      << R"("usage":{"input_tokens":1000000000000000,"output_tokens":60}}})" << "\n"
                      << assistant_line << "\n";
  const auto t = import_trace(path, trace_format::claude_code);
  EXPECT_EQ(t.summary.skipped.at("missing or invalid usage field"), 1);
  EXPECT_EQ(t.request_count(), 1u);
}

TEST(Limits, AbsurdTurnCountsAndScenarioSizes) {
  auto w = preset("workloads/reference-agent-loop.json");
  w["turns"] = 1000000000;
  EXPECT_EQ(error_of([&] { (void)parse_workload(w.dump(), "w.json"); }),
            "w.json: /turns: expected a whole number between 1 and 1000000, found 1000000000");
  auto s = preset("scenarios/reference.json");
  s["sessions"] = 1000000;  // 33 million requests: allowed
  EXPECT_EQ(error_of([&] { (void)parse_scenario(s.dump(), "s.json", preset_library({LOOPCAST_TEST_MODELS_DIR})); }),
            "no error");
  s["sessions"] = 1000000;
  w["turns"] = 1000;
  s["workload"] = w;
  EXPECT_EQ(error_of([&] { (void)parse_scenario(s.dump(), "s.json", preset_library({LOOPCAST_TEST_MODELS_DIR})); }),
            "s.json: /sessions: 1000000 sessions × 1000 turns = 1000000000 requests; one run simulates at most 100000000");
}

TEST(Limits, ContextOfTenToTheFifteenthIsRefusedAtLoad) {
  auto t = preset("targets/cerebras-developer-qwen-3.8-27b.json");
  t["context_window_tokens"] = 1e15;
  EXPECT_EQ(error_of([&] { (void)parse_target(t.dump(), "t.json"); }),
            "t.json: /context_window_tokens: expected a whole number between 1 and 1000000000000, found 1e+15");
}

// ---- numbers at the edges -------------------------------------------------------------------

TEST(Edges, ZeroLengthPeriodAndDenormalSpeedAreRefused) {
  auto t = preset("targets/cerebras-developer-qwen-3.8-27b.json");
  t["limits"]["buckets"][0]["period_s"] = 0;
  EXPECT_EQ(error_of([&] { (void)parse_target(t.dump(), "t.json"); }),
            "t.json: /limits/buckets/0/period_s: expected a number between 0.001 and 31622400, found 0");
  t = preset("targets/cerebras-developer-qwen-3.8-27b.json");
  t["speed"]["decode"] = {{"kind", "constant"}, {"tokens_per_second", 1e-300}};
  EXPECT_EQ(error_of([&] { (void)parse_target(t.dump(), "t.json"); }),
            "t.json: /speed/decode/tokens_per_second: expected a number between 0.001 and 1000000000, found 1e-300");
  t = preset("targets/cerebras-developer-qwen-3.8-27b.json");
  t["prices"]["usd_per_million"]["input"] = 1e300;
  EXPECT_EQ(error_of([&] { (void)parse_target(t.dump(), "t.json"); }),
            "t.json: /prices/usd_per_million/input: expected a number between 0 and 1000000, found 1e+300");
}

// A limit of 1 request per minute works: the second request waits the 60 s refill.
TEST(Edges, LimitOfOneRequestPerMinute) {
  target t;
  t.name = "one-rpm";
  t.speed.prefill = constant_curve{1e-4};
  t.speed.decode = constant_curve{1e-3};
  bucket_config rpm;
  rpm.name = "rpm";
  rpm.unit = bucket_unit::requests;
  rpm.limit = 1;
  rpm.period_s = 60;
  t.limits = {rpm};
  session_script s;
  s.lineages = 1;
  s.runs = {{0, 100}, {0, 200}};
  s.requests = {{100, 10, 0, 100, 0, 0, 1, 1, false}, {200, 10, 0, 100, 0, 1, 1, 2, false}};
  const session_plan plan{&s, 0, 1, 0};
  retry_policy p;
  p.max_retries = -1;
  const auto r = simulate(t, p, {&plan, 1});
  ASSERT_EQ(r.sessions[0].outcome, session_outcome::completed);
  // r1 at 0 takes 0.01 + 0.01 = 0.02 s; r2 at 0.02 waits until the bucket refills one unit at 60 s.
  EXPECT_NEAR(r.attempts.back().t_send, 60.0, 1e-9);
}

// Zero tokens everywhere: the simulation runs, and every reported number is finite.
TEST(Edges, ZeroTokensEverywhere) {
  auto w = preset("workloads/reference-agent-loop.json");
  w["system_prompt_tokens"] = 0;
  w["task_tokens"] = 0;
  for (const char* k : {"output_tokens", "reasoning_tokens", "tool_result_tokens", "tool_time_s"})
    w[k] = {{"kind", "fixed"}, {"value", 0}};
  w["compaction"] = {{"enabled", false}};
  auto s = preset("scenarios/reference.json");
  s["workload"] = w;
  const auto scn = parse_scenario(s.dump(), "s.json", preset_library({LOOPCAST_TEST_MODELS_DIR}));
  const auto res = run_scenario(scn);
  const auto j = nlohmann::json::parse(to_json(res));
  for (const auto& o : j["options"]) {
    EXPECT_EQ(o["outcome"], "completed");
    EXPECT_EQ(o["requests"], 33);
    EXPECT_TRUE(o["wall_s"].is_number() && o["cost_usd"].is_number() && o["usd_per_hour"].is_number());
    EXPECT_EQ(o["effective_tps"]["count"], 0);  // nothing generated: no throughput samples, and no NaN
    EXPECT_TRUE(o["context_output_ratio"].is_null());  // nothing generated: no ratio, never 0
  }
}
