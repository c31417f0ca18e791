// Token classes (docs/model.md §2).
#include "loopcast/context.hpp"
#include "loopcast/montecarlo.hpp"
#include "loopcast/price_lists.hpp"
#include "loopcast/rate_limits.hpp"
#include "loopcast/results.hpp"
#include "loopcast/retry.hpp"
#include "loopcast/target.hpp"
#include "loopcast/tokens.hpp"
#include "loopcast/trace.hpp"

#include <gtest/gtest.h>

using namespace loopcast;

TEST(Tokens, PromptGeneratedAndTotal) {
  const token_counts t{100, 800, 50, 20, 30};
  EXPECT_EQ(t.prompt(), 950);     // 100 + 800 + 50
  EXPECT_EQ(t.generated(), 50);   // 20 + 30
  EXPECT_EQ(t.total(), 1000);
  EXPECT_EQ(t[token_class::cache_read], 800);
}

TEST(Tokens, SumIsPerClass) {
  token_counts a{1, 2, 3, 4, 5};
  a += token_counts{10, 20, 30, 40, 50};
  EXPECT_EQ(a, (token_counts{11, 22, 33, 44, 55}));
}

TEST(Tokens, NamesRoundTrip) {
  for (auto c : all_token_classes) EXPECT_EQ(parse_name<token_class>(to_string(c)), c);
  EXPECT_EQ(parse_name<token_class>("cached"), std::nullopt);
}

TEST(Tokens, ClassSetSumsOnlyItsClasses) {
  const token_counts t{100, 800, 50, 20, 30};
  const class_set uncached{token_class::input};
  const class_set anthropic_itpm{token_class::input, token_class::cache_write};
  const class_set otpm{token_class::output, token_class::reasoning};
  EXPECT_EQ(uncached.sum(t), 100);
  EXPECT_EQ(anthropic_itpm.sum(t), 150);
  EXPECT_EQ(otpm.sum(t), 50);
  EXPECT_TRUE(otpm.counts_generated());
  EXPECT_FALSE(anthropic_itpm.counts_generated());
  EXPECT_EQ(class_set::all().sum(t), 1000);
}

// ---- names.hpp: one table per enumeration, everything else derived from it ----------------------

TEST(Names, EveryTableRoundTripsAndIsUnique) {
  auto check = [](auto values) {
    using E = typename decltype(values)::value_type;
    for (std::size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(parse_name<E>(to_string(values[i])), values[i]);
      for (std::size_t k = 0; k < i; ++k) EXPECT_NE(to_string(values[i]), to_string(values[k]));
    }
  };
  check(enum_values<token_class>());
  check(enum_values<bucket_algorithm>());
  check(enum_values<charging_rule>());
  check(enum_values<bucket_unit>());
  check(enum_values<window_anchor>());
  check(enum_values<oversize_rule>());
  check(enum_values<trace_format>());
  check(enum_values<session_outcome>());
  check(enum_values<attempt_status>());
  check(enum_values<jitter_kind>());
}

TEST(Names, SpellingsAsTheyAppearInMessages) {
  EXPECT_EQ(spelling_list<trace_format>(), "auto, claude-code, codex, opencode, kv-cache-tester, swe-agent or loopcast");
  EXPECT_EQ(spelling_list<context_policy>(true), "\"compact\", \"truncate\" or \"fail\"");
  EXPECT_EQ(spelling_list<target_kind>(), "cloud, local or plan");
  EXPECT_EQ(to_string(price_list_format::models_dev), "models.dev");
  EXPECT_EQ(to_string(static_cast<bucket_unit>(9)), "?");
  EXPECT_EQ(parse_name<mc_metric>("usd per task"), std::nullopt);
  EXPECT_EQ(token_class_count, 6u);
}
