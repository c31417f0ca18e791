// Presets: every file in models/ loads; each kind of bad preset gives its documented error.
#include "loopcast/errors.hpp"
#include "loopcast/presets.hpp"

#include "test_support.hpp"
#include "two_requests.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>

using namespace loopcast;

namespace {
using loopcast::test_support::models;

using loopcast::test_support::slurp;
using loopcast::test_support::error_of;

nlohmann::json cerebras() { return nlohmann::json::parse(slurp(models + "/targets/cerebras-developer-qwen-3.8-27b.json")); }
nlohmann::json reference_workload() { return nlohmann::json::parse(slurp(models + "/workloads/reference-agent-loop.json")); }

// The config_error message for a target document.
std::string target_error(const std::string& text) {
  try {
    (void)parse_target(text, "bad.json");
  } catch (const config_error& e) {
    return e.what();
  }
  return "no error";
}
std::string workload_error(const nlohmann::json& j) {
  try {
    (void)parse_workload(j.dump(), "bad.json");
  } catch (const config_error& e) {
    return e.what();
  }
  return "no error";
}
} // namespace

TEST(Presets, EveryPresetLoads) {
  const preset_library lib({models});
  ASSERT_GE(lib.entries().size(), 8u);
  for (const auto& e : lib.entries()) {
    SCOPED_TRACE(e.file.string());
    switch (e.kind) {
    case preset_kind::target: EXPECT_NO_THROW((void)lib.load_target(e.name)); break;
    case preset_kind::client: EXPECT_NO_THROW((void)lib.load_client(e.name)); break;
    case preset_kind::workload: EXPECT_NO_THROW((void)lib.load_workload(e.name)); break;
    case preset_kind::scenario: EXPECT_NO_THROW((void)lib.load_scenario(e.name)); break;
    }
  }
}

TEST(Presets, CerebrasPresetSaysWhatTheSheetSays) {
  const auto t = preset_library({models}).load_target("cerebras-developer-qwen-3.8-27b");
  ASSERT_EQ(t.limits.size(), 3u);
  EXPECT_EQ(t.limits[0].name, "uncached_tpm");
  EXPECT_EQ(t.limits[0].limit, 150000);
  EXPECT_TRUE(t.limits[0].classes.contains(token_class::input));
  EXPECT_FALSE(t.limits[0].classes.contains(token_class::cache_read));
  EXPECT_EQ(t.limits[1].limit, 450000);
  EXPECT_TRUE(t.limits[1].classes.contains(token_class::cache_read));  // total TPM counts cache reads
  EXPECT_EQ(t.limits[1].charging, charging_rule::reserve_then_refund);
  EXPECT_EQ(t.limits[2].unit, bucket_unit::requests);
  EXPECT_EQ(t.limits[2].limit, 450);
  EXPECT_EQ(t.cache.block_tokens, 128);
  EXPECT_EQ(t.cache.ttl_s, 300);
  EXPECT_EQ(t.context_window_tokens, 131072);
  EXPECT_EQ(t.prices->usd_per_million.input, 0.99);
  EXPECT_EQ(t.prices->usd_per_million.cache_read, 0.99);
  EXPECT_EQ(t.prices->usd_per_million.output, 1.49);
  EXPECT_EQ(t.prices->usd_per_million.reasoning, 1.49);
  EXPECT_FALSE(t.origin.verified);
  EXPECT_EQ(t.origin.read_on, "2026-11-01");
}

TEST(Presets, ClientPresetsMatchDesign) {
  const preset_library lib({models});
  const auto openai = lib.load_client("openai-python-sdk");
  EXPECT_EQ(openai.max_retries, 2);
  EXPECT_EQ(openai.retry_after_cap_s, 120);
  EXPECT_EQ(openai.over_cap, over_cap_action::give_up);
  EXPECT_EQ(openai.jitter, jitter_kind::scaled_75);
  const auto anthropic = lib.load_client("anthropic-python-sdk");
  EXPECT_EQ(anthropic.retry_after_cap_s, 60);
  EXPECT_EQ(anthropic.over_cap, over_cap_action::backoff);
  const auto opencode = lib.load_client("opencode");
  EXPECT_EQ(opencode.max_retries, -1);
  EXPECT_TRUE(std::isinf(opencode.retry_after_cap_s));
  EXPECT_EQ(opencode.max_s, 30);
  const auto aider = lib.load_client("aider");
  EXPECT_FALSE(aider.honour_retry_after);
  EXPECT_EQ(aider.base_s, 0.25);
  EXPECT_EQ(aider.give_up_above_s, 60);
}

TEST(PresetErrors, UnknownKey) {
  auto j = cerebras();
  j["limits"]["buckets"][0]["limitt"] = 5;
  EXPECT_EQ(target_error(j.dump()),
            "bad.json: /limits/buckets/0/limitt: unknown key \"limitt\" (allowed here: name, unit, counts, limit, "
            "period_s, algorithm, charging, count_rejected, anchor, anchor_offset_s, oversize, weight)");
}

TEST(PresetErrors, MissingKey) {
  auto j = cerebras();
  j["limits"]["buckets"][1].erase("period_s");
  EXPECT_EQ(target_error(j.dump()), "bad.json: /limits/buckets/1: missing key \"period_s\"");
}

TEST(PresetErrors, WrongType) {
  auto j = cerebras();
  j["limits"]["buckets"][0]["limit"] = "150000";
  EXPECT_EQ(target_error(j.dump()), "bad.json: /limits/buckets/0/limit: expected a number, found string \"150000\"");
}

TEST(PresetErrors, NegativeLimit) {
  auto j = cerebras();
  j["limits"]["buckets"][0]["limit"] = -5;
  EXPECT_EQ(target_error(j.dump()),
            "bad.json: /limits/buckets/0/limit: expected a whole number between 1 and 1000000000000, found -5");
}

TEST(PresetErrors, NegativePrice) {
  auto j = cerebras();
  j["prices"]["usd_per_million"]["output"] = -1.49;
  EXPECT_EQ(target_error(j.dump()),
            "bad.json: /prices/usd_per_million/output: expected a number between 0 and 1000000, found -1.49");
}

TEST(PresetErrors, InfiniteAndNaN) {
  auto text = cerebras().dump();
  const auto at = text.find("\"limit\":150000");
  ASSERT_NE(at, std::string::npos);
  auto inf_text = text;
  inf_text.replace(at, 14, "\"limit\":1e999");
  EXPECT_EQ(target_error(inf_text), "bad.json: not valid JSON at line 1, column 1012: number overflow parsing '1e999'");
  auto nan_text = text;
  nan_text.replace(at, 14, "\"limit\":NaN");
  EXPECT_EQ(target_error(nan_text).rfind("bad.json: not valid JSON at line 1, column ", 0), 0u) << target_error(nan_text);
}

TEST(PresetErrors, SyntaxErrorNamesLineAndColumn) {
  EXPECT_EQ(target_error("{\n  \"kind\": \"target\",\n  \"name\": oops\n}"),
            "bad.json: not valid JSON at line 3, column 11: syntax error while parsing value - invalid literal; "
            "last read: '\"name\": o'");
}

TEST(PresetErrors, ZeroTtlWithCachingOn) {
  auto j = cerebras();
  j["cache"]["ttl_s"] = 0;
  EXPECT_EQ(target_error(j.dump()),
            "bad.json: /cache/ttl_s: expected a TTL > 0 s while caching is enabled, found 0 (set \"enabled\": false to "
            "turn caching off)");
}

TEST(PresetErrors, TheOneHourLifetimeIsLongerAndPriced) {
  auto j = nlohmann::json::parse(slurp(models + "/targets/anthropic/anthropic-tier1-claude-opus-4.5.json"));
  j["cache"]["ttl_1h_s"] = 300;
  EXPECT_EQ(target_error(j.dump()), "bad.json: /cache/ttl_1h_s: the 1-hour lifetime (300 s) must be longer than ttl_s (300 s)");
  j["cache"]["ttl_1h_s"] = 3600;
  j["prices"]["usd_per_million"].erase("cache_write_1h");
  EXPECT_EQ(target_error(j.dump()),
            "bad.json: /prices: the cache sells 1-hour writes (ttl_1h_s), so usd_per_million needs \"cache_write_1h\"");
  j["cache"].erase("ttl_1h_s");  // one lifetime sold: the 1-hour price is not needed
  EXPECT_EQ(target_error(j.dump()), "no error");
}

TEST(PresetErrors, ChargingOnABucketWithoutOutput) {
  auto j = cerebras();
  j["limits"]["buckets"][0]["charging"] = "reserve";
  EXPECT_EQ(target_error(j.dump()),
            "bad.json: /limits/buckets/0/charging: a charging rule applies only to buckets that count output or reasoning");
}

TEST(PresetErrors, UnknownAlgorithm) {
  auto j = cerebras();
  j["limits"]["buckets"][1]["algorithm"] = "leaky";
  EXPECT_EQ(target_error(j.dump()),
            "bad.json: /limits/buckets/1/algorithm: expected one of token_bucket, fixed_window, sliding_window, "
            "concurrency, found \"leaky\"");
}

TEST(PresetErrors, CloudTargetWithoutPrices) {
  auto j = cerebras();
  j.erase("prices");
  EXPECT_EQ(target_error(j.dump()), "bad.json: a cloud target needs \"prices\"");
}

TEST(PresetErrors, WindowSmallerThanTheSystemPrompt) {
  auto j = reference_workload();
  j["context_window_tokens"] = 5000;
  EXPECT_EQ(workload_error(j), "bad.json: /context_window_tokens: the window (5000 tokens) does not hold the system "
                               "prompt and task (11000 tokens)");
}

TEST(PresetErrors, LognormalP90BelowMedian) {
  auto j = reference_workload();
  j["output_tokens"]["p90"] = 100;
  EXPECT_EQ(workload_error(j), "bad.json: /output_tokens/p90: expected p90 >= median (140), found 100");
}

TEST(PresetErrors, WrongKindOfPreset) {
  try {
    (void)load_target_file(models + "/clients/opencode.json");
    FAIL() << "a client file loaded as a target";
  } catch (const config_error& e) {
    EXPECT_EQ(e.pointer(), "/kind");
    EXPECT_EQ(e.reason(), "expected a target preset, found kind \"client\"");
  }
}

TEST(PresetErrors, UnknownPresetNameListsTheKnownOnes) {
  const preset_library lib({models});
  try {
    (void)lib.load_client("curl");
    FAIL();
  } catch (const config_error& e) {
    EXPECT_EQ(e.reason(), "no client preset named \"curl\" (known: aider, anthropic-python-sdk, claude-code, codex, openai-python-sdk, opencode)");
  }
}

TEST(PresetErrors, TooDeeplyNested) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  EXPECT_EQ(target_error(deep), "bad.json: JSON nested deeper than 64 levels");
}

TEST(PresetErrors, MissingFile) {
  try {
    (void)load_target_file(models + "/targets/nope.json");
    FAIL();
  } catch (const config_error& e) {
    EXPECT_EQ(e.file(), models + "/targets/nope.json");
    EXPECT_EQ(e.reason().rfind("cannot read file: ", 0), 0u);
  }
}

// Where presets are found when nothing is configured: an installed copy beside itself, a build
// tree's the source tree, anything else the install prefix, never the checkout it was built from.
TEST(PresetsDir, InstalledCopiesFindTheirOwnPresetsNotTheCheckout) {
  const std::set<std::filesystem::path> dirs{"/src/loopcast/models", "/opt/lc/share/loopcast/models",
                                             "/usr/local/share/loopcast/models"};
  const auto exists = [&](const std::filesystem::path& p) { return dirs.count(p) > 0; };
  models_dir_search s;
  s.build_dir = "/src/loopcast/build";
  s.source_models = "/src/loopcast/models";
  s.install_models = "/usr/local/share/loopcast/models";
  // A program installed under another prefix than configured: the presets beside it.
  s.binaries = {"/opt/lc/bin/loopcast"};
  EXPECT_EQ(choose_models_dir(s, exists), "/opt/lc/share/loopcast/models");
  // A shared library in a multiarch folder, linked by a program elsewhere.
  s.binaries = {"/opt/lc/lib/x86_64-linux-gnu/libloopcast.so", "/home/u/tool/plan"};
  EXPECT_EQ(choose_models_dir(s, exists), "/opt/lc/share/loopcast/models");
  // A user's program that linked the static library: the install prefix, though the checkout is there.
  s.binaries = {"/home/u/tool/plan", "/home/u/tool/plan"};
  EXPECT_EQ(choose_models_dir(s, exists), "/usr/local/share/loopcast/models");
  // loopcast's own build tree: the source tree's presets ("build-other" is not inside "build").
  s.binaries = {"/src/loopcast/build/tests/loopcast_tests"};
  EXPECT_EQ(choose_models_dir(s, exists), "/src/loopcast/models");
  s.binaries = {"/src/loopcast/build-other/loopcast"};
  EXPECT_EQ(choose_models_dir(s, exists), "/usr/local/share/loopcast/models");
  // $LOOPCAST_MODELS first, existing or not (the library then says it does not exist).
  s.env = "/nowhere";
  EXPECT_EQ(choose_models_dir(s, exists), "/nowhere");
  EXPECT_EQ(error_of([] { preset_library lib({"/nowhere"}); }),
            "/nowhere: presets directory does not exist (set $LOOPCAST_MODELS or pass a models directory)");
}
