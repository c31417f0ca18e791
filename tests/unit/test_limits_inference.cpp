// Limits inferred from captured headers and 429 messages, on the documented header names.
#include "loopcast/errors.hpp"
#include "loopcast/limits_inference.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/price_lists.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace loopcast;

namespace {
const std::string headers_dir = LOOPCAST_TEST_DATA_DIR "/headers/";
using loopcast::test_support::slurp;
} // namespace

TEST(LimitsInference, Durations) {
  EXPECT_DOUBLE_EQ(*parse_duration("6m0s"), 360);
  EXPECT_DOUBLE_EQ(*parse_duration("1.146s"), 1.146);
  EXPECT_DOUBLE_EQ(*parse_duration("120ms"), 0.12);
  EXPECT_DOUBLE_EQ(*parse_duration("2h1m3s"), 7263);
  EXPECT_DOUBLE_EQ(*parse_duration("20"), 20);
  EXPECT_FALSE(parse_duration("soon").has_value());
  EXPECT_FALSE(parse_duration("").has_value());
}

// OpenAI's published 429 messages obey the continuous-bucket law to the millisecond.
TEST(LimitsInference, PublishedOpenAIMessagesAreConsistent) {
  const auto a = parse_rate_limit_message(
      "Rate limit reached for gpt-4 in organization org-x on tokens per min (TPM): Limit 50000, Used 47949, Requested 3006. "
      "Please try again in 1.146s.");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->unit, "tokens");
  EXPECT_EQ(a->period_s, 60);
  EXPECT_NEAR(a->predicted_wait_s, 1.146, 1e-9);
  EXPECT_TRUE(a->consistent);
  const auto b = parse_rate_limit_message("Limit 30,000, Used 22,999, Requested 12,528. Please try again in 11.054s.");
  ASSERT_TRUE(b.has_value());
  EXPECT_NEAR(b->predicted_wait_s, 11.054, 1e-9);
  EXPECT_TRUE(b->consistent);
  // A window would make the client wait for the minute to roll over: not the bucket law.
  const auto c = parse_rate_limit_message("on requests per day (RPD): Limit 10000, Used 10000, Requested 1. Please try again in 6m0s.");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->unit, "requests");
  EXPECT_EQ(c->period_s, 86400);
  EXPECT_NEAR(c->predicted_wait_s, 8.64, 1e-9);
  EXPECT_DOUBLE_EQ(c->stated_wait_s, 360);
  EXPECT_FALSE(c->consistent);
  EXPECT_FALSE(parse_rate_limit_message("Tokens per minute limit exceeded - too many tokens processed.").has_value());
}

TEST(LimitsInference, OpenAIHeaders) {
  const auto text = slurp(headers_dir + "openai.txt");
  const auto snaps = parse_header_snapshots(text, "openai.txt");
  ASSERT_EQ(snaps.size(), 2u);
  EXPECT_EQ(snaps[0].source, "openai.txt:2");
  EXPECT_DOUBLE_EQ(snaps[1].time_unix_s - snaps[0].time_unix_s, 2);
  const auto r = infer_limits(snaps);
  EXPECT_EQ(r.provider, "openai");
  EXPECT_TRUE(r.sends_retry_after);
  ASSERT_EQ(r.buckets.size(), 2u);
  const auto& tpm = r.buckets[1];
  EXPECT_EQ(tpm.config.name, "tpm");
  EXPECT_EQ(tpm.config.limit, 30000);
  // (30,000 − 27,000) / 6 s and (30,000 − 1,000) / 58 s: 500 per second = 30,000 per minute.
  EXPECT_EQ(tpm.implied_rates, (std::vector<double>{500, 500}));
  EXPECT_NE(tpm.evidence.find("consistent"), std::string::npos);
  const auto msgs = find_rate_limit_messages(text, "openai.txt");
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].source, "openai.txt:20");
  EXPECT_TRUE(msgs[0].consistent);
}

// The fragment is a valid "limits" object: it loads in a target preset.
TEST(LimitsInference, FragmentLoadsInATargetPreset) {
  const auto r = infer_limits(parse_header_snapshots(slurp(headers_dir + "anthropic.txt"), "anthropic.txt"));
  EXPECT_EQ(r.provider, "anthropic");
  ASSERT_EQ(r.buckets.size(), 3u);
  EXPECT_EQ(r.buckets[1].config.name, "itpm");
  EXPECT_TRUE(r.buckets[1].config.classes.contains(token_class::cache_write));
  EXPECT_FALSE(r.buckets[1].config.classes.contains(token_class::cache_read));
  EXPECT_EQ(r.buckets[1].implied_rates, std::vector<double>{500});  // 10,000 tokens in 20 s
  auto t = nlohmann::json::parse(slurp(LOOPCAST_TEST_MODELS_DIR "/targets/anthropic/anthropic-tier1-claude-sonnet-4.5.json"));
  t["limits"] = nlohmann::json::parse(limits_fragment_json(r));
  const auto loaded = parse_target(t.dump(), "inferred.json");
  ASSERT_EQ(loaded.limits.size(), 3u);
  EXPECT_EQ(loaded.limits[2].charging, charging_rule::reserve_then_refund);
  EXPECT_EQ(loaded.limits[2].limit, 8000);
}

TEST(LimitsInference, CerebrasJsonSnapshots) {
  const auto r = infer_limits(parse_header_snapshots(slurp(headers_dir + "cerebras.json"), "cerebras.json"));
  EXPECT_EQ(r.provider, "cerebras");
  EXPECT_TRUE(r.sends_retry_after);
  ASSERT_EQ(r.buckets.size(), 2u);
  EXPECT_EQ(r.buckets[0].implied_rates, (std::vector<double>{7500, 7500}));  // 150,000 / 20 s, 435,000 / 58 s
  EXPECT_EQ(r.buckets[1].config.period_s, 86400);
}

TEST(LimitsInference, Errors) {
  try {
    (void)parse_header_snapshots("[{\"a\": 1}, 5]", "h.json");
    FAIL();
  } catch (const config_error& e) {
    EXPECT_STREQ(e.what(), "h.json: /1: expected an object of header names and values, found number 5");
  }
  const auto r = infer_limits(parse_header_snapshots("content-type: text/plain\n", "h.txt"));
  EXPECT_EQ(r.provider, "unknown");
  EXPECT_TRUE(r.buckets.empty());
  const auto bad = infer_limits(parse_header_snapshots("x-ratelimit-limit-tokens: lots\n", "h.txt"));
  ASSERT_EQ(bad.notes.size(), 2u);
  EXPECT_EQ(bad.notes[0], "h.txt:1: x-ratelimit-limit-tokens: \"lots\" is not a limit (a whole number from 1 to 10^12); ignored");
}

// Whatever the bytes, the catalogue's parsers answer or refuse with a loopcast error: every saved
// fuzzing input and a few truncations of the fixtures.
TEST(LimitsInference, ArbitraryInputNeverCrashes) {
  std::vector<std::string> inputs;
  for (const auto& e : std::filesystem::recursive_directory_iterator(LOOPCAST_FUZZ_REGRESSIONS_DIR))
    if (e.is_regular_file()) inputs.push_back(slurp(e.path().string()));
  for (const char* f : {"openai.txt", "cerebras.json", "anthropic.txt"}) {
    const auto t = slurp(headers_dir + f);
    for (std::size_t n : {std::size_t{0}, t.size() / 3, t.size() / 2, t.size() - 1}) inputs.push_back(t.substr(0, n));
  }
  inputs.push_back("Limit 0, Used 5, Requested 1. Please try again in 1s");
  inputs.push_back("limit: 1e309, used: 1, requested 1 try again in 99999999999999999999h");
  for (const auto& in : inputs) {
    try {
      (void)infer_limits(parse_header_snapshots(in, "x"));
    } catch (const loopcast::error&) {
    }
    for (const auto& m : find_rate_limit_messages(in, "x"))  // (a limit-only message has no wait to check)
      EXPECT_TRUE(!m.checkable || std::isfinite(m.predicted_wait_s));
    try {
      (void)parse_price_list(in, "x");
    } catch (const loopcast::error&) {
    }
  }
}

// A `curl -i` capture of an Anthropic 429 (hand-made after Anthropic's documented headers and
// error body): the JSON body is not a second header snapshot, and its message states the limit.
TEST(LimitsInference, CurlCaptureOfAnAnthropic429) {
  const std::string file = std::string(LOOPCAST_TEST_DATA_DIR) + "/headers/anthropic-429-curl.txt";
  const auto e = loopcast::infer_limits_from_files({file});
  EXPECT_EQ(e.snapshots, 1u);
  EXPECT_EQ(e.inferred.provider, "anthropic");
  ASSERT_EQ(e.messages.size(), 1u);
  const auto& m = e.messages[0];
  EXPECT_EQ(m.source, file + ":10");
  EXPECT_FALSE(m.checkable);
  EXPECT_EQ(m.limit, 30000);
  EXPECT_EQ(m.unit, "input tokens");
  EXPECT_EQ(m.period_s, 60);
  EXPECT_TRUE(std::isnan(m.used) && std::isnan(m.stated_wait_s));
  EXPECT_FALSE(m.consistent);
}

TEST(LimitsInference, StatedLimitsAndTheirPeriods) {
  const auto out = loopcast::parse_rate_limit_message(
      "This request would exceed your organization's rate limit of 8,000 output tokens per minute (org: x).");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->limit, 8000);
  EXPECT_EQ(out->unit, "output tokens");
  EXPECT_EQ(out->period_s, 60);
  const auto day = loopcast::parse_rate_limit_message("exceeded the rate limit of 1,000 requests per day");
  ASSERT_TRUE(day);
  EXPECT_EQ(day->period_s, 86400);
  EXPECT_EQ(day->unit, "requests");
  EXPECT_FALSE(loopcast::parse_rate_limit_message("the rate limit of our patience per minute"));
  // A checkable message still wins: Limit, Used, Requested and the wait.
  const auto full = loopcast::parse_rate_limit_message(
      "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. "
      "Please try again in 2s.");
  ASSERT_TRUE(full);
  EXPECT_TRUE(full->checkable);
  EXPECT_TRUE(full->consistent);  // (29000 + 2000 − 30000) / (30000/60) = 2 s
}

// Groq sends OpenAI's header names, but its requests limit is per day (console.groq.com/docs/
// rate-limits): 5 of 1,000 used with a reset in 7m12s implies 5 / 432 = 0.01157 requests/s, which
// is 1,000 per 86,400 s, not per minute (16.67/s). The tool proposes the period that fits.
TEST(LimitsInference, SaysWhichPeriodFits) {
  const auto e = loopcast::infer_limits_from_files({std::string(LOOPCAST_TEST_DATA_DIR) + "/headers/groq-rpd.txt"});
  ASSERT_EQ(e.inferred.buckets.size(), 2u);
  const auto& requests = e.inferred.buckets[0];
  EXPECT_EQ(requests.config.name, "rpd");
  EXPECT_EQ(requests.config.limit, 1000);
  EXPECT_EQ(requests.config.period_s, 86400);
  EXPECT_NE(requests.evidence.find("consistent with a limit of 1000 per day"), std::string::npos) << requests.evidence;
  const auto& tokens = e.inferred.buckets[1];
  EXPECT_EQ(tokens.config.name, "tpm");  // 200 / 2 s = 100/s = 6,000 per minute: as assumed
  EXPECT_EQ(tokens.config.period_s, 60);
}
