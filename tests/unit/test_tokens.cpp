// Token classes (docs/model.md §2).
#include "loopcast/tokens.hpp"

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
  for (auto c : all_token_classes) EXPECT_EQ(parse_token_class(to_string(c)), c);
  EXPECT_EQ(parse_token_class("cached"), std::nullopt);
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
