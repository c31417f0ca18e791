// Price lists users keep: LiteLLM and models.dev fixtures built from their documented fields.
#include "loopcast/errors.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/price_lists.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace loopcast;

namespace {
const std::string prices_dir = LOOPCAST_TEST_DATA_DIR "/prices/";

const imported_model& model(const price_list& l, const std::string& id) {
  const auto it = std::find_if(l.models.begin(), l.models.end(), [&](const imported_model& m) { return m.id == id; });
  if (it == l.models.end()) throw std::runtime_error("no model " + id);
  return *it;
}
std::vector<std::string> warnings_of(const price_list& l, const std::string& id) {
  std::vector<std::string> out;
  for (const auto& w : l.warnings)
    if (w.model == id) out.push_back(w.field + ": " + w.message);
  return out;
}
} // namespace

TEST(PriceLists, LiteLLMPerTokenFieldsBecomePerMillionPrices) {
  const auto l = import_price_list(prices_dir + "litellm.json");
  EXPECT_EQ(l.format, price_list_format::litellm);
  EXPECT_EQ(l.models.size(), 5u);  // sample_spec is not a model
  const auto& s = model(l, "claude-sonnet-4-5");
  EXPECT_EQ(s.provider, "anthropic");
  const auto& c = s.prices.usd_per_million;
  EXPECT_DOUBLE_EQ(c.input, 3.0);
  EXPECT_DOUBLE_EQ(c.cache_read, 0.3);
  EXPECT_DOUBLE_EQ(c.cache_write_5m, 3.75);
  EXPECT_DOUBLE_EQ(c.cache_write_1h, 6.0);
  EXPECT_DOUBLE_EQ(c.output, 15.0);
  EXPECT_DOUBLE_EQ(c.reasoning, 15.0);  // no reasoning price: billed as output
  ASSERT_EQ(s.prices.long_context.size(), 1u);
  const auto& t = s.prices.long_context[0];
  EXPECT_EQ(t.above_prompt_tokens, 200000);
  EXPECT_DOUBLE_EQ(t.usd_per_million.input, 6.0);
  EXPECT_DOUBLE_EQ(t.usd_per_million.cache_read, 0.6);
  EXPECT_DOUBLE_EQ(t.usd_per_million.cache_write_5m, 7.5);
  EXPECT_DOUBLE_EQ(t.usd_per_million.cache_write_1h, 12.0);  // not listed: scaled like input (2×)
  EXPECT_DOUBLE_EQ(t.usd_per_million.output, 22.5);
  EXPECT_DOUBLE_EQ(s.prices.batch_discount, 0.5);
  EXPECT_EQ(s.context_window_tokens, 200000);
  EXPECT_EQ(s.max_output_tokens, 64000);
  EXPECT_TRUE(warnings_of(l, "claude-sonnet-4-5").empty());  // unknown fields are ignored silently

  const auto& g = model(l, "gpt-5.4");
  ASSERT_EQ(g.variants.size(), 1u);
  EXPECT_EQ(g.variants[0].first, "priority");
  EXPECT_DOUBLE_EQ(g.variants[0].second.usd_per_million.input, 5.0);
  EXPECT_DOUBLE_EQ(g.variants[0].second.usd_per_million.cache_read, 0.5);
  EXPECT_DOUBLE_EQ(g.variants[0].second.usd_per_million.output, 30.0);
  EXPECT_EQ(g.prices.long_context.at(0).above_prompt_tokens, 272000);
  EXPECT_DOUBLE_EQ(g.prices.long_context.at(0).usd_per_million.cache_read, 0.5);
  EXPECT_EQ(g.rpm, 500);
  EXPECT_EQ(g.tpm, 30000);

  const auto& tiered = model(l, "gemini-tiered");
  ASSERT_EQ(tiered.prices.long_context.size(), 1u);
  EXPECT_EQ(tiered.prices.long_context[0].above_prompt_tokens, 200000);
  EXPECT_DOUBLE_EQ(tiered.prices.long_context[0].usd_per_million.input, 2.5);
  EXPECT_DOUBLE_EQ(tiered.prices.usd_per_request, 0.0001);
}

TEST(PriceLists, ContradictionsAndImplausibleValuesAreWarnings) {
  const auto l = import_price_list(prices_dir + "litellm.json");
  EXPECT_EQ(warnings_of(l, "claude-3-haiku-20240307"),
            std::vector<std::string>{"cache_creation_input_token_cost_above_1hr: a cache write at 24.0× the input price is "
                                     "implausible (expected at most 4×)"});
  EXPECT_EQ(warnings_of(l, "broken-model"),
            (std::vector<std::string>{
                "input_cost_per_token: expected a number, found string \"free\"; ignored",
                "output_cost_per_token: expected a price >= 0, found -1e-06; ignored",
                "cache_read_input_token_cost: cache reads ($2/M) cost more than input ($0/M)",
                "cache_creation_input_token_cost: a cache write ($1/M) is cheaper than a cache read ($2/M)",
                "input_cost_per_token: no input or output price: the model is listed without token prices"}));
}

TEST(PriceLists, ModelsDevPerMillionFields) {
  const auto l = import_price_list(prices_dir + "models-dev.json");
  EXPECT_EQ(l.format, price_list_format::models_dev);
  const auto& q = model(l, "cerebras/qwen-3.8-27b");
  EXPECT_DOUBLE_EQ(q.prices.usd_per_million.input, 0.99);
  EXPECT_DOUBLE_EQ(q.prices.usd_per_million.cache_read, 0.99);  // not listed: priced as input, with a note
  EXPECT_EQ(q.notes, std::vector<std::string>{"no cache-read price: cache reads are priced as input"});
  EXPECT_DOUBLE_EQ(q.prices.usd_per_million.output, 1.49);
  EXPECT_EQ(q.context_window_tokens, 65536);
  const auto& g = model(l, "google/gemini-2.5-pro");
  ASSERT_EQ(g.prices.long_context.size(), 1u);
  EXPECT_EQ(g.prices.long_context[0].above_prompt_tokens, 200000);
  EXPECT_DOUBLE_EQ(g.prices.long_context[0].usd_per_million.cache_read, 0.25);
  const auto& w = model(l, "google/weird");
  EXPECT_DOUBLE_EQ(w.prices.usd_per_million.reasoning, 3);
  EXPECT_DOUBLE_EQ(w.prices.usd_per_million.cache_write_5m, 0.1);
  EXPECT_EQ(warnings_of(l, "google/weird"),
            std::vector<std::string>{"cost.cache_write: a cache write ($0.1/M) is cheaper than a cache read ($0.5/M)"});
  EXPECT_EQ(warnings_of(l, "deepseek/deepseek-v4-flash"),
            std::vector<std::string>{"cost: no cost object: the model is listed without prices"});
}

TEST(PriceLists, ImportedPricesLoadInATargetPreset) {
  const auto l = import_price_list(prices_dir + "litellm.json", price_list_format::automatic, {"claude-sonnet-4-5"});
  ASSERT_EQ(l.models.size(), 1u);
  auto t = nlohmann::json::parse(std::ifstream(LOOPCAST_TEST_MODELS_DIR "/targets/anthropic/anthropic-tier1-claude-sonnet-4.5-1m.json"));
  t["prices"] = nlohmann::json::parse(price_sheet_json(l.models[0].prices));
  t["prices"]["batch_discounts_cache"] = true;
  const auto loaded = parse_target(t.dump(), "imported.json");
  // The same prices as the catalogue's preset, which was written from docs/providers.md by hand.
  const auto preset = preset_library({LOOPCAST_TEST_MODELS_DIR}).load_target("anthropic-tier1-claude-sonnet-4.5-1m");
  const token_counts tokens{250000, 10000, 5000, 2000, 1000};
  EXPECT_NEAR(price_request(*loaded.prices, tokens, 0).total_usd, price_request(*preset.prices, tokens, 0).total_usd, 1e-12);
  EXPECT_NEAR(price_request(*loaded.prices, {1000, 0, 0, 0, 0}, 0, true).total_usd, 0.0015, 1e-12);
}

TEST(PriceLists, Errors) {
  try {
    (void)import_price_list(prices_dir + "litellm.json", price_list_format::automatic, {"gpt-7"});
    FAIL();
  } catch (const config_error& e) {
    EXPECT_EQ(e.reason(), "no model \"gpt-7\" in this litellm price list");
  }
  try {
    (void)parse_price_list("[1, 2]", "list.json");
    FAIL();
  } catch (const config_error& e) {
    EXPECT_STREQ(e.what(), "list.json: expected a JSON object of models, found an array");
  }
  try {
    (void)parse_price_list(R"({"a": {"b": 1}})", "list.json", price_list_format::models_dev);
    FAIL();
  } catch (const config_error& e) {
    EXPECT_STREQ(e.what(), "list.json: no provider with \"models\" in this file (expected models.dev's api.json)");
  }
  EXPECT_THROW((void)parse_price_list("{\"a\": ", "list.json"), config_error);
}

// Real lists: entries of other modes are left out unless asked for, and a cache read priced at 0
// while input is not is a warning (a replay's cost fell 46× on such an entry).
TEST(PriceLists, ModesAndFreeCacheReads) {
  const std::string text = R"({"img": {"mode": "image_generation", "input_cost_per_token": 1e-6},
                               "chat": {"mode": "chat", "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}})";
  const auto l = parse_price_list(text, "l.json");
  ASSERT_EQ(l.models.size(), 1u);
  EXPECT_EQ(l.models[0].id, "chat");
  EXPECT_EQ(l.skipped_modes.at("image_generation"), 1u);
  EXPECT_EQ(parse_price_list(text, "l.json", price_list_format::automatic, {}, true).models.size(), 2u);
  const auto md = parse_price_list(R"({"p": {"models": {"m": {"cost": {"input": 2.0, "output": 8.0, "cache_read": 0}}}}})",
                                   "api.json");
  ASSERT_EQ(md.warnings.size(), 1u);
  EXPECT_EQ(md.warnings[0].message, "cache reads priced at $0 while input costs $2/M: probably a missing price (a replay "
                                    "would read its cache for free)");
}
