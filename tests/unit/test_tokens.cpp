#include "loopcast/tokens.hpp"
#include <gtest/gtest.h>
TEST(Tokens, PromptIsInputPlusCache) {
  loopcast::token_counts t{100, 800, 50, 20, 30};
  EXPECT_EQ(t.prompt(), 950);
}
