// The provider catalogue: every preset carries its provenance, and its buckets and prices behave
// as docs/providers.md says on hand-computed requests.
#include "loopcast/presets.hpp"
#include "loopcast/prices.hpp"
#include "loopcast/rate_limits.hpp"
#include "loopcast/simulation.hpp"

#include "test_support.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

using namespace loopcast;

namespace {
using loopcast::test_support::lib;
const bucket_config& named(const target& t, const std::string& name) {
  const auto it = std::find_if(t.limits.begin(), t.limits.end(), [&](const bucket_config& b) { return b.name == name; });
  if (it == t.limits.end()) throw std::runtime_error(t.name + " has no bucket " + name);
  return *it;
}
// 2026-05-04 is a Monday.
constexpr double monday_utc = 1777852800.0;  // 2026-05-04T00:00:00Z
} // namespace

TEST(Catalogue, EveryProviderOfTheSheetHasPresetsWithProvenance) {
  std::set<std::string> providers;
  for (const auto& e : lib().entries()) {
    if (e.kind != preset_kind::target) continue;
    SCOPED_TRACE(e.name);
    providers.insert(e.provider);
    EXPECT_FALSE(e.origin.source.empty());
    EXPECT_EQ(e.origin.read_on.size(), 10u);
    EXPECT_FALSE(e.provider.empty());
    EXPECT_FALSE(e.tier.empty());
    EXPECT_FALSE(e.model.empty());
    if (e.provider != "local") {
      EXPECT_FALSE(e.origin.verified) << "the sheet is second-hand for every cloud figure";
    }
  }
  for (const char* p : {"cerebras", "anthropic", "openai", "google", "deepseek", "fireworks", "openrouter", "mistral", "local"})
    EXPECT_TRUE(providers.count(p)) << p;
}

// Anthropic: ITPM counts input and cache writes, never cache reads; OTPM reserves max_tokens and
// refunds the unused part. Cerebras' total TPM counts cache reads in full.
TEST(Catalogue, AnthropicItpmIgnoresCacheReadsCerebrasTotalCountsThem) {
  const token_counts t{1000, 100000, 2000, 500, 0};  // input, cache read, cache write, output, reasoning
  const auto sonnet = lib().load_target("anthropic-tier1-claude-sonnet-4.5");
  const auto itpm = charge_for(named(sonnet, "itpm"), t, 4000);
  EXPECT_EQ(itpm.at_admission, 3000);  // 1,000 input + 2,000 cache write
  EXPECT_EQ(itpm.at_completion, 0);
  const auto otpm = charge_for(named(sonnet, "otpm"), t, 4000);
  EXPECT_EQ(otpm.at_admission, 4000);
  EXPECT_EQ(otpm.at_completion, -3500);
  const auto cerebras = lib().load_target("cerebras-developer-qwen-3.8-27b");
  EXPECT_EQ(charge_for(named(cerebras, "total_tpm"), t, 16384).at_admission, 1000 + 100000 + 2000 + 16384);
  EXPECT_EQ(charge_for(named(cerebras, "uncached_tpm"), t, 16384).at_admission, 1000);
  // 30 requests of 1,000 input tokens fill Sonnet's 30K ITPM at t = 0; the 31st waits 1,000 / 500 per s = 2 s,
  // however large its cached prefix.
  bucket b(named(sonnet, "itpm"));
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(b.wait_for(1000, 0), 0.0);
    b.charge(1000, 0, 0);
  }
  EXPECT_DOUBLE_EQ(b.wait_for(charge_for(named(sonnet, "itpm"), {1000, 900000, 0, 10, 0}, 10).at_admission, 0), 2.0);
}

// Every Anthropic tier preset carries its tier's row of the published table (RPM / ITPM / OTPM; Opus
// and Sonnet 4.x share a row, Haiku 4.5 has its own), cites the table and leaves prices to the model.
TEST(Catalogue, AnthropicTiersOneToFourCarryThePublishedTable) {
  struct row { int rpm, itpm, otpm; };
  const row opus_sonnet[] = {{50, 30000, 8000}, {1000, 450000, 90000}, {2000, 800000, 160000}, {4000, 2000000, 400000}};
  // Opus 4.x since about 2026-05-06 (second-hand); the table above before it, as a dated rule.
  const row opus_raised[] = {{50, 500000, 80000}, {1000, 2000000, 200000}, {2000, 5000000, 400000}, {4000, 10000000, 800000}};
  const row haiku[] = {{50, 50000, 10000}, {1000, 450000, 90000}, {2000, 1000000, 200000}, {4000, 4000000, 800000}};
  const std::string models[] = {"claude-opus-4.5", "claude-opus-4.6",   "claude-opus-4.6-1m",   "claude-opus-4.7",
                                "claude-opus-4.7-1m", "claude-sonnet-4.5", "claude-sonnet-4.5-1m", "claude-sonnet-4.6",
                                "claude-sonnet-4.6-1m", "claude-haiku-4.5"};
  for (int tier = 1; tier <= 4; ++tier)
    for (const auto& m : models) {
      const auto t = lib().load_target(fmt::format("anthropic-tier{}-{}", tier, m));
      const bool opus = m.find("opus") != std::string::npos;
      const auto& r = (m.find("haiku") != std::string::npos ? haiku : opus ? opus_raised : opus_sonnet)[tier - 1];
      SCOPED_TRACE(t.name);
      EXPECT_EQ(t.tier, fmt::format("tier-{}", tier));
      EXPECT_EQ(named(t, "rpm").limit, r.rpm);
      EXPECT_EQ(named(t, "itpm").limit, r.itpm);
      EXPECT_EQ(named(t, "otpm").limit, r.otpm);
      EXPECT_NE(t.origin.source.find("rate-limits.apis.io/rate-limits/claude/claude-rate-limits"), std::string::npos);
      EXPECT_EQ(t.origin.read_on, opus ? "2026-12-08" : "2026-12-04");
      if (opus) {  // 2026-02-01, before the raise: the table's figures
        const auto before = target_at(t, 1769904000);
        const auto& o = opus_sonnet[tier - 1];
        EXPECT_DOUBLE_EQ(named(before, "itpm").limit, o.itpm);
        EXPECT_DOUBLE_EQ(named(before, "otpm").limit, o.otpm);
        EXPECT_DOUBLE_EQ(named(before, "rpm").limit, o.rpm);
      }
      EXPECT_FALSE(t.origin.verified);
      EXPECT_EQ(t.context_window_tokens, m.ends_with("-1m") ? 1000000 : 200000);
    }
  // Opus 4.6 writes up to 128K; its 1M window costs the standard prices: a 500K-token prompt and
  // 1,000 output tokens at $5 / $25 per million = $2.525. Sonnet 4.5's 1M window keeps its premium:
  // $6 / $22.50 = $3.0225.
  const auto opus = lib().load_target("anthropic-tier4-claude-opus-4.6-1m");
  EXPECT_EQ(opus.max_output_tokens, 128000);
  EXPECT_NEAR(price_request(*opus.prices, {500000, 0, 0, 1000, 0}, 0).total_usd, 2.525, 1e-12);
  const auto sonnet45 = lib().load_target("anthropic-tier4-claude-sonnet-4.5-1m");
  EXPECT_NEAR(price_request(*sonnet45.prices, {500000, 0, 0, 1000, 0}, 0).total_usd, 3.0225, 1e-12);
}

// OpenAI's Tiers 1–5 for GPT-5 (RPM, TPM), with the TPM each tier had before the raise of
// 2025-09-12 kept as a dated rule; a daily cap only at Tier 1.
TEST(Catalogue, OpenAITiersOneToFiveCarryThePublishedTable) {
  const int rpm[] = {500, 5000, 5000, 10000, 15000};
  const int tpm[] = {500000, 1000000, 2000000, 4000000, 40000000};
  const int before[] = {30000, 450000, 800000, 2000000, 40000000};
  for (int tier = 1; tier <= 5; ++tier) {
    const auto t = lib().load_target(fmt::format("openai-tier{}-gpt-5", tier));
    SCOPED_TRACE(t.name);
    EXPECT_EQ(named(t, "rpm").limit, rpm[tier - 1]);
    EXPECT_EQ(named(t, "tpm").limit, tpm[tier - 1]);
    EXPECT_NEAR(named(target_at(t, 1735689600.0), "tpm").limit, before[tier - 1], 1e-6);  // 2025-01-01
    EXPECT_EQ(t.find_bucket("rpd") != nullptr, tier == 1);
    EXPECT_NE(t.origin.source.find("simonwillison.net/b/9012"), std::string::npos);
    for (const std::string v : {"gpt-5.4", "gpt-5.4-priority"}) {
      const auto u = lib().load_target(fmt::format("openai-tier{}-{}", tier, v));
      EXPECT_EQ(named(u, "tpm").limit, tpm[tier - 1]);
      EXPECT_EQ(named(u, "rpm").limit, tier == 1 ? 1000 : rpm[tier - 1]);
      EXPECT_TRUE(u.dated_limits.empty());
    }
  }
}

// OpenAI's published 429 messages, out of the preset's continuous TPM bucket. They date from before
// OpenAI raised Tier 1's GPT-5 TPM from 30K to 500K on 2025-09-12, which the preset's dated rule keeps.
TEST(Catalogue, OpenAIPublishedWaitsComeOutOfTheBucketExactly) {
  EXPECT_EQ(named(lib().load_target("openai-tier1-gpt-5"), "tpm").limit, 500000);
  const auto gpt5 = target_at(lib().load_target("openai-tier1-gpt-5"), 1735689600.0);  // 2025-01-01
  auto tpm = named(gpt5, "tpm");
  EXPECT_EQ(tpm.limit, 30000);  // the second published example's limit
  {
    bucket b(tpm);
    b.charge(22999, 0, 0);
    EXPECT_NEAR(b.wait_for(12528, 0), 11.054, 1e-9);
  }
  tpm.limit = 50000;
  bucket b(tpm);
  b.charge(47949, 0, 0);
  EXPECT_NEAR(b.wait_for(3006, 0), 1.146, 1e-9);
}

// DeepSeek: 500 in flight; the 501st waits for the first to end. No retry-after is sent.
TEST(Catalogue, DeepSeekIsAConcurrencyLimit) {
  const auto pro = lib().load_target("deepseek-v4-pro");
  EXPECT_FALSE(pro.sends_retry_after);
  bucket b(named(pro, "in_flight"));
  for (int i = 0; i < 500; ++i) b.charge(1, 0, 10.0 + i);
  EXPECT_DOUBLE_EQ(b.wait_for(1, 1.0), 9.0);
  EXPECT_DOUBLE_EQ(b.wait_for(1, 10.0), 0.0);
}

// DeepSeek prices: peak Mon–Fri 01–04 and 06–10 UTC, half price otherwise.
TEST(Catalogue, DeepSeekOffPeakIsHalfPrice) {
  const auto flash = *lib().load_target("deepseek-v4-flash").prices;
  const token_counts t{1'000'000, 0, 0, 1'000'000, 0};
  EXPECT_NEAR(price_request(flash, t, monday_utc + 2 * 3600).total_usd, 0.30 + 1.20, 1e-12);   // Monday 02:00: peak
  EXPECT_NEAR(price_request(flash, t, monday_utc + 12 * 3600).total_usd, 0.75, 1e-12);        // Monday 12:00
  EXPECT_NEAR(price_request(flash, t, monday_utc + 5 * 86400 + 2 * 3600).total_usd, 0.75, 1e-12);  // Saturday 02:00
}

// Gemini's daily count resets at midnight Pacific (08:00 UTC): at 07:59 UTC a full day waits 60 s.
TEST(Catalogue, GeminiRequestsPerDayResetAtMidnightPacific) {
  const auto g = lib().load_target("gemini-tier1-gemini-2.5-pro");
  const double start = monday_utc + 7 * 3600 + 59 * 60;
  bucket rpd(named(g, "rpd"), start);
  rpd.charge(10000, 0, 0);
  EXPECT_DOUBLE_EQ(rpd.wait_for(1, 0), 60.0);
  EXPECT_EQ(charge_for(named(g, "tpm_input"), {100, 50, 0, 9999, 9999}, 20000).at_admission, 150);  // input only
}

// Sonnet above 200K prompt tokens, in the 1M window a user opts in to: the whole request at
// $6 / $22.50. Without the opt-in (Claude Code's default) the window is 200K and no request
// reaches that tier.
TEST(Catalogue, ClaudeLongContextPrices) {
  const auto standard = lib().load_target("anthropic-tier1-claude-sonnet-4.5");
  EXPECT_EQ(standard.context_window_tokens, 200000);
  EXPECT_TRUE(standard.prices->long_context.empty());
  const auto one_m = lib().load_target("anthropic-tier1-claude-sonnet-4.5-1m");
  EXPECT_EQ(one_m.context_window_tokens, 1000000);
  const auto p = *one_m.prices;
  EXPECT_NEAR(price_request(p, {100000, 0, 0, 1000, 0}, 0).total_usd, 0.3 + 0.015, 1e-12);
  EXPECT_NEAR(price_request(p, {250000, 0, 0, 1000, 0}, 0).total_usd, 1.5 + 0.0225, 1e-12);
  // Batch: half of everything, cache reads included.
  EXPECT_NEAR(price_request(p, {0, 100'000, 0, 0, 0}, 0, true).total_usd, 0.015, 1e-12);  // batch halves cache reads too
}

// Gemini explicit caching: a 10,000-token prompt stored for its 1-hour TTL at $4.50 per M per hour.
TEST(Catalogue, GeminiExplicitCacheStorage) {
  const auto g = lib().load_target("gemini-tier1-gemini-2.5-pro-explicit-cache");
  session_script s;
  s.lineages = 1;
  s.runs = {{0, 10000}};
  request_spec r;
  r.prompt_tokens = 10000;
  r.output_tokens = 100;
  r.max_tokens = 100;
  r.runs_count = 1;
  s.requests = {r};
  const session_plan plan{&s, 0, 1, 0};
  retry_policy c;
  c.name = "c";
  const auto res = simulate(g, c, {&plan, 1});
  EXPECT_NEAR(res.cache_storage_usd, 10000 * 4.5 / 1e6, 1e-12);
  EXPECT_NEAR(res.token_cost_usd, 10000 * 1.25 / 1e6 + 100 * 10.0 / 1e6 + 0.045, 1e-12);
}

// Fireworks: three token buckets; generated tokens are charged when they complete.
TEST(Catalogue, FireworksPromptAndGeneratedBuckets) {
  const auto f = lib().load_target("fireworks-serverless-llama-3.1-70b");
  const token_counts t{1000, 9000, 0, 300, 200};
  EXPECT_EQ(charge_for(named(f, "total_prompt_tpm"), t, 4096).at_admission, 10000);
  EXPECT_EQ(charge_for(named(f, "uncached_prompt_tpm"), t, 4096).at_admission, 1000);
  const auto gen = charge_for(named(f, "generated_tpm"), t, 4096);
  EXPECT_EQ(gen.at_admission, 0);
  EXPECT_EQ(gen.at_completion, 500);
}
