// A local engine under concurrency: first-come prefill, processor-shared decode, slots and KV
// pool, memory checks; and the three RTX 4090 engines of docs/model.md §9 against the article.
#include "loopcast/errors.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/simulation.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

using namespace loopcast;

namespace {
using loopcast::test_support::models;

// Prefill 1 ms/token, decode 10 ms/token, no overhead; an engine with slowdown 1 (two sequences
// each decode at half speed), 8 slots and a pool of 10,000 tokens.
target engine_target() {
  target t;
  t.name = "gpu";
  t.kind = target_kind::local;
  t.context_window_tokens = 1000;
  t.cache.enabled = false;
  t.speed.prefill = constant_curve{1e-3};
  t.speed.decode = constant_curve{1e-2};
  t.power = power_config{100, 100, 0.1, 0, 0};
  engine_config e;
  e.name = "test";
  e.max_sequences = 8;
  e.batch_slowdown = 1.0;
  e.memory = {24, 10, 1, 1e-3, 100};  // 1 MB of pool at 100 bytes per token = 10,000 tokens
  t.engine = e;
  return t;
}

// One request: prompt 100 (prefill 0.1 s), output 100 (decode 1 s alone).
session_script one_request_script() {
  session_script s;
  s.lineages = 1;
  s.runs = {{0, 100}};
  request_spec r;
  r.prompt_tokens = 100;
  r.output_tokens = 100;
  r.max_tokens = 100;
  r.runs_count = 1;
  r.turn = 1;
  s.requests = {r};
  return s;
}

simulation_result two_at_once(const target& t) {
  static const session_script script = one_request_script();
  const session_plan plans[] = {{&script, 0, 1, 0}, {&script, 0, 2, 0}};
  retry_policy client;
  client.name = "c";
  return simulate(t, client, plans);
}

using loopcast::test_support::slurp;

std::string gpu_target_error(const nlohmann::json& j) {
  try {
    (void)parse_target(j.dump(), "gpu.json");
  } catch (const config_error& e) {
    return e.what();
  }
  return "no error";
}
} // namespace

// A: prefill 0–0.1, decodes alone until B joins at 0.2 (0.1 s of work done), then both at half
// speed: A's remaining 0.9 s of work takes 1.8 s → ends at 2.0; B has 0.1 s left → ends at 2.1.
TEST(Engine, PrefillQueuesAndDecodeIsShared) {
  const auto r = two_at_once(engine_target());
  ASSERT_EQ(r.requests.size(), 2u);
  EXPECT_DOUBLE_EQ(r.requests[0].t_first_token, 0.1);
  EXPECT_NEAR(r.requests[1].t_first_token, 0.2, 1e-12);
  EXPECT_NEAR(r.requests[0].t_end, 2.0, 1e-9);
  EXPECT_NEAR(r.requests[1].t_end, 2.1, 1e-9);
  ASSERT_TRUE(r.engine.has_value());
  EXPECT_EQ(r.engine->peak_sequences, 2);
  EXPECT_EQ(r.engine->peak_queue, 0);
  EXPECT_EQ(r.engine->peak_kv_tokens, 400);
  EXPECT_NEAR(r.engine->queue_wait_s, 0.1, 1e-12);  // B's prefill waited for A's
  // The timeline carries the engine's times.
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_NEAR(r.attempts[1].t_first_token, 0.2, 1e-12);
  EXPECT_NEAR(r.attempts[1].t_end, 2.1, 1e-9);
  EXPECT_DOUBLE_EQ(r.engine->vram_gb, 11.001);
}

// With one slot B waits until A ends at 1.1, then prefills to 1.2 and decodes alone to 2.2.
TEST(Engine, OneSlotServesOneAtATime) {
  auto t = engine_target();
  t.engine->max_sequences = 1;
  const auto r = two_at_once(t);
  EXPECT_NEAR(r.requests[0].t_end, 1.1, 1e-9);
  EXPECT_NEAR(r.requests[1].t_first_token, 1.2, 1e-9);
  EXPECT_NEAR(r.requests[1].t_end, 2.2, 1e-9);
  EXPECT_EQ(r.engine->peak_sequences, 1);
  EXPECT_EQ(r.engine->peak_queue, 1);
  EXPECT_NEAR(r.engine->queue_wait_s, 1.1, 1e-9);
}

// A pool of 300 tokens holds one request of 200 tokens: the second waits as with one slot.
TEST(Engine, FullKvPoolQueues) {
  auto t = engine_target();
  t.engine->memory.kv_pool_gb = 300 * 100 / 1e9;
  const auto r = two_at_once(t);
  EXPECT_NEAR(r.requests[1].t_first_token, 1.2, 1e-9);
  EXPECT_EQ(r.engine->peak_kv_tokens, 200);
}

TEST(Engine, NoSlowdownMeansIndependentDecode) {
  auto t = engine_target();
  t.engine->batch_slowdown = 0;
  const auto r = two_at_once(t);
  EXPECT_NEAR(r.requests[0].t_end, 1.1, 1e-9);
  EXPECT_NEAR(r.requests[1].t_end, 1.2, 1e-9);
}

TEST(Engine, RequestLargerThanThePoolIsAnError) {
  auto t = engine_target();
  t.engine->memory.kv_pool_gb = 150 * 100 / 1e9;
  try {
    (void)two_at_once(t);
    FAIL();
  } catch (const simulation_error& e) {
    EXPECT_STREQ(e.what(), "session 0 request 1: 200 tokens need 0.00 GB of KV cache; the test engine's pool holds 150 "
                           "tokens (1.5e-05 GB)");
  }
}

// ---- presets: memory is checked when loading ----------------------------------------------------

TEST(EnginePresets, ConfigurationThatDoesNotFitIsRefused) {
  auto j = nlohmann::json::parse(slurp(models + "/targets/local/rtx4090-vllm-llama-3.1-8b.json"));
  j["engine"]["memory"]["kv_pool_gb"] = 8;
  EXPECT_EQ(gpu_target_error(j), "gpu.json: /engine/memory: weights 16.06 GB + overhead 0.74 GB + KV pool 8 GB = 24.80 GB "
                             "do not fit the GPU's 24 GB");
  j["engine"]["memory"]["kv_pool_gb"] = 1;
  EXPECT_EQ(gpu_target_error(j), "gpu.json: /engine/memory/kv_pool_gb: the KV pool holds 7629 tokens (1 GB at 131072 bytes "
                             "per token), fewer than one request of the whole context window (8192 tokens, 1.07 GB): "
                             "shrink context_window_tokens or grow the pool");
  auto cloud = nlohmann::json::parse(slurp(models + "/targets/cerebras-developer-qwen-3.8-27b.json"));
  cloud["engine"] = j["engine"];
  EXPECT_EQ(gpu_target_error(cloud), "gpu.json: /engine: only a local target has an engine");
}

// The companion article of docs/model.md §9: 32 concurrent requests on one RTX 4090, Llama-3.1-8B.
// Each engine's simulated burst must give its TTFT, aggregate throughput and VRAM within ±15%.
TEST(EnginePresets, BurstReproducesTheArticleWithin15Percent) {
  const preset_library lib({models});
  const auto s = lib.load_scenario("engine-burst-rtx4090");
  const auto r = run_scenario(s);
  struct fact {
    const char* label;
    double ttft_s, tok_per_s, vram_gb;
  };
  const fact facts[] = {{"vllm", 0.42, 1850, 21.3}, {"sglang", 0.38, 1920, 20.8}, {"llama.cpp", 0.65, 620, 8.2}};
  ASSERT_EQ(r.options.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& o = r.options[i];
    SCOPED_TRACE(o.label);
    EXPECT_EQ(o.label, facts[i].label);
    const auto f = compute_fleet_metrics(o.sim);
    EXPECT_EQ(f.completed, 32);
    EXPECT_NEAR(o.metrics.ttft_s.p50, facts[i].ttft_s, 0.15 * facts[i].ttft_s);
    EXPECT_NEAR(f.output_tps, facts[i].tok_per_s, 0.15 * facts[i].tok_per_s);
    ASSERT_TRUE(o.sim.engine.has_value());
    EXPECT_NEAR(o.sim.engine->vram_gb, facts[i].vram_gb, 0.15 * facts[i].vram_gb);
    EXPECT_EQ(o.sim.engine->peak_sequences, 32);
    // Batching slows each request: every request decodes slower than one alone would.
    EXPECT_LT(o.metrics.decode_tps.p90, tokens_per_second_at(o.option->first().speed.decode, 0));
  }
}

// A concurrency bucket is released at a request's end, which an engine only knows later.
TEST(Engine, ConcurrencyBucketAndEngineAreRefused) {
  auto t = engine_target();
  bucket_config b;
  b.name = "in_flight";
  b.unit = bucket_unit::concurrent_requests;
  b.algorithm = bucket_algorithm::concurrency;
  b.limit = 4;
  t.limits = {b};
  try {
    (void)two_at_once(t);
    FAIL();
  } catch (const simulation_error& e) {
    EXPECT_STREQ(e.what(), "target gpu has an engine and a concurrency bucket (in_flight); the engine's max_sequences "
                           "limits requests in flight");
  }
  auto j = nlohmann::json::parse(slurp(models + "/targets/local/rtx4090-vllm-llama-3.1-8b.json"));
  j["limits"]["buckets"] = nlohmann::json::parse(R"([{"name": "in_flight", "unit": "concurrent_requests", "limit": 4,
                                                       "algorithm": "concurrency"}])");
  EXPECT_EQ(gpu_target_error(j), "gpu.json: /engine: a target with an engine cannot also have a concurrency bucket (in_flight): "
                             "the engine's max_sequences limits requests in flight");
}
