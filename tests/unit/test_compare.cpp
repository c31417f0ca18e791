// compare: verdicts on a case built so that the answer is known.
#include "loopcast/budget.hpp"
#include "loopcast/compare.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/presets.hpp"

#include "single_request_workload.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace loopcast;

namespace {
// One request: 1,000 prompt tokens, 100 output; contract: TTFT P50 <= 0.5 s, $0.01 per task, complete.
workload task() {
  workload w = test_support::single_request_workload("task");
  task_contract c;
  c.task = "test";
  c.ttft_p50_max_s = 0.5;
  c.usd_per_task_max = 0.01;
  c.sessions = 2;
  w.contract = c;
  return w;
}
// TTFT = prefill_s_per_token × 1,000; $ per task = input price per M × 1,000 / 1e6.
scenario_option option(const std::string& label, const std::string& model, double prefill_s_per_token,
                       double usd_per_million_input, std::vector<bucket_config> limits = {}) {
  scenario_option o;
  o.label = label;
  o.targets.emplace_back();
  o.first().name = label;
  o.first().model = model;
  o.first().context_window_tokens = 8192;
  o.first().cache.enabled = false;
  o.first().speed.prefill = constant_curve{prefill_s_per_token};
  o.first().speed.decode = constant_curve{0.01};
  o.first().limits = std::move(limits);
  o.first().prices = price_sheet{};
  o.first().prices->usd_per_million.input = usd_per_million_input;
  o.client.name = std::string("client");
  return o;
}
} // namespace

TEST(Compare, VerdictsOnAKnownCase) {
  bucket_config small;
  small.name = "tpm";
  small.limit = 500;  // a 1,100-token request never fits
  small.classes = class_set::all();
  small.charging = charging_rule::actual;
  const std::vector<scenario_option> opts = {
      option("good", "m-smart", 1e-4, 5),          // TTFT 0.1 s, $0.005
      option("slow", "m-smart", 1e-3, 5),          // TTFT 1.0 s
      option("dear", "m-smart", 1e-4, 20),         // $0.02
      option("tiny-tier", "m-smart", 1e-4, 5, {small}),
      option("dumb", "m-dumb", 1e-4, 1)};          // meets everything but the gate
  compare_options co;
  co.seeds = 3;
  co.intelligence = {{"m-smart", 70}, {"m-dumb", 40}};
  co.bar = 50;
  const auto r = compare_on(task(), opts, co);
  EXPECT_EQ(r.sessions, 2);  // from the contract
  ASSERT_EQ(r.rows.size(), 5u);
  EXPECT_TRUE(r.rows[0].meets);
  EXPECT_NEAR(r.rows[0].ttft_s.p50, 0.1, 1e-9);
  EXPECT_NEAR(r.rows[0].usd_per_task, 0.005, 1e-12);
  EXPECT_EQ(r.rows[0].gate, "pass");
  EXPECT_EQ(r.rows[1].failures, std::vector<std::string>{"TTFT P50 1.00 s > 0.50 s"});
  EXPECT_EQ(r.rows[2].failures, std::vector<std::string>{"$ per task 0.0200 > 0.0100"});
  ASSERT_EQ(r.rows[3].failures.size(), 1u);
  EXPECT_EQ(r.rows[3].failures[0], "100% of sessions died (request_too_large for tpm)");
  EXPECT_DOUBLE_EQ(r.rows[3].stopped_share, 1.0);
  EXPECT_EQ(r.rows[4].gate, "fail");
  EXPECT_EQ(r.rows[4].failures, std::vector<std::string>{"intelligence 40 < bar 50 (m-dumb)"});
  // Without a bar nothing is gated; an unscored model is "not rated".
  co.bar.reset();
  EXPECT_TRUE(compare_on(task(), opts, co).rows[4].meets);
  co.bar = 50;
  co.intelligence.erase("m-dumb");
  const auto unrated = compare_on(task(), opts, co).rows[4];
  EXPECT_EQ(unrated.gate, "not rated");
  EXPECT_TRUE(unrated.meets);
}

TEST(Compare, NamedTaskWorkloadsCarryContracts) {
  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  for (const char* name : {"task-code-completion", "reference-agent-loop", "task-long-document-batch", "task-one-off-script"}) {
    SCOPED_TRACE(name);
    const auto w = lib.load_workload(name);
    ASSERT_TRUE(w.contract.has_value());
    EXPECT_FALSE(w.contract->task.empty());
  }
  EXPECT_DOUBLE_EQ(*lib.load_workload("task-code-completion").contract->ttft_p50_max_s, 0.2);
  workload none = lib.load_workload("burst-chat-256-512");
  try {
    (void)compare_on(none, std::vector<scenario_option>{}, {});
    FAIL();
  } catch (const simulation_error& e) {
    EXPECT_STREQ(e.what(), "workload burst-chat-256-512 has no \"contract\" to compare against (docs/presets.md)");
  }
}

// Code completion: the 4090 with vLLM meets the 200 ms TTFT contract, a cloud tier 0.6 s away does not.
TEST(Compare, CodeCompletionPrefersTheLocalEngine) {
  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  const auto wl = lib.load_workload("task-code-completion");
  std::vector<scenario_option> opts(2);
  opts[0].targets = {lib.load_target("rtx4090-vllm-llama-3.1-8b")};
  opts[1].targets = {lib.load_target("anthropic-tier1-claude-sonnet-4.5")};
  for (auto& o : opts) {
    o.label = o.first().name;
    o.client = lib.load_client("openai-python-sdk");
  }
  compare_options co;
  co.seeds = 2;
  const auto r = compare_on(wl, opts, co);
  EXPECT_TRUE(r.rows[0].failures.empty()) << r.rows[0].failures.at(0);
  EXPECT_TRUE(r.rows[0].meets);
  EXPECT_FALSE(r.rows[1].meets);
  EXPECT_EQ(r.rows[1].failures.at(0).rfind("TTFT P50", 0), 0u) << r.rows[1].failures.at(0);
}

// compare runs its seeds on its threads side by side: the memory budget is checked for a run on
// each of them (named in the refusal), before any seed runs.
TEST(Compare, TheMemoryBudgetCountsTheRunsInFlight) {
  const std::vector<scenario_option> opts = {option("good", "m-smart", 1e-4, 5)};
  compare_options co;
  co.seeds = 2;
  co.threads = 2;
  set_memory_budget_bytes(1);
  try {
    (void)compare_on(task(), opts, co);
    ADD_FAILURE() << "no error";
  } catch (const config_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("scenario compare: this run needs about ", 0), 0u) << what;
    EXPECT_NE(what.find("(2 requests in 2 sessions, 2 runs at once), over the memory budget of 0.0 GiB"),
              std::string::npos) << what;
  }
  set_memory_budget_bytes(0);
  EXPECT_EQ(compare_on(task(), opts, co).rows.size(), 1u);
}
