// Plan walls read from their texts (walls.hpp): every form real logs hold, its reset resolved to
// an instant by hand, classified, and copies counted once.
#include "loopcast/walls.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace loopcast;

namespace {

plan_wall wall_of(std::string_view text, double t, const std::string& zone = "UTC") {
  const auto r = read_wall_text(text, t, zone);
  EXPECT_TRUE(r.wall.has_value()) << text << ": " << r.problem;
  return r.wall.value_or(plan_wall{});
}

} // namespace

TEST(Walls, EveryTextSeenInRealLogs) {
  // Legacy: the Unix time it reopens, 1 h after the message.
  auto w = wall_of("Claude AI usage limit reached|1749924000", 1749920400);
  EXPECT_EQ(w.resets_at_unix, 1749924000.0);
  EXPECT_EQ(w.kind, wall_kind::five_hour);
  EXPECT_EQ(w.window_start(), 1749924000.0 - 5 * 3600);
  // 03:00Z = 11:00 in Shanghai (UTC+8): 2pm there is 06:00Z, 3 h later: a 5-hour wall.
  w = wall_of("You've hit your limit · resets 2pm (Asia/Shanghai)", 1768878000);
  EXPECT_EQ(w.resets_at_unix, 1768888800.0);
  EXPECT_EQ(w.kind, wall_kind::five_hour);
  EXPECT_EQ(w.window_start(), 1768888800.0 - 5 * 3600);
  // A date: Jan 22, 16:00 in Shanghai = 08:00Z, two days on: weekly.
  w = wall_of("You've hit your limit · resets Jan 22, 4pm (Asia/Shanghai)", 1768878000);
  EXPECT_EQ(w.resets_at_unix, 1769068800.0);
  EXPECT_EQ(w.kind, wall_kind::weekly);
  EXPECT_TRUE(std::isnan(w.window_start()));
  // 14:00Z = 15:00 in Madrid (UTC+1); 17:40 there = 16:40Z. The window opened at the hour: 11:00Z.
  w = wall_of("You've hit your session limit · resets 5:40pm (Europe/Madrid)", 1768917600);
  EXPECT_EQ(w.resets_at_unix, 1768927200.0);
  EXPECT_EQ(w.kind, wall_kind::five_hour);
  EXPECT_EQ(w.window_start(), 1768927200.0 - 5 * 3600 - 40 * 60);
  // Sep 17 at 10pm in New York (EDT, UTC−4) = Sep 18 02:00Z.
  w = wall_of("You've hit your weekly limit · resets Sep 17 at 10pm (America/New_York)", 1789387200);
  EXPECT_EQ(w.resets_at_unix, 1789696800.0);
  EXPECT_EQ(w.kind, wall_kind::weekly);
  w = wall_of("You've hit your Opus limit · resets Sep 17 at 10pm (America/New_York)", 1789387200);
  EXPECT_EQ(w.kind, wall_kind::weekly_scoped);
  w = wall_of("You're out of extra usage · resets 3pm (UTC)", 1768917600);
  EXPECT_EQ(w.kind, wall_kind::extra_usage);
  EXPECT_EQ(w.resets_at_unix, 1768921200.0);
  // A spend cap that does not say when: 00:00 UTC on the next month's 1st.
  w = wall_of("You've hit your monthly spend limit", 1768917600);
  EXPECT_EQ(w.kind, wall_kind::spend_cap);
  EXPECT_EQ(w.resets_at_unix, 1769904000.0);
  EXPECT_EQ(wall_period_s(w.kind), 0.0);
  // Codex, with a year and no zone: the zone given (here UTC).
  w = wall_of("You've hit your usage limit. Upgrade to Pro or try again at Jun 18th, 2026 8:41 AM.", 1781758800);
  EXPECT_EQ(w.resets_at_unix, 1781772060.0);
  EXPECT_EQ(w.kind, wall_kind::five_hour);
}

TEST(Walls, WhatIsNotAWall) {
  EXPECT_FALSE(read_wall_text("Extra usage is required for 1M context · enable it in /usage", 1768917600).wall);
  EXPECT_TRUE(read_wall_text("Extra usage is required for 1M context", 1768917600).problem.empty());
  EXPECT_FALSE(read_wall_text("API Error: 500 internal server error", 1768917600).wall);
  const auto soon = read_wall_text("You've hit your limit · resets soon", 1768917600);
  EXPECT_FALSE(soon.wall);
  EXPECT_EQ(soon.problem, "a usage-limit message without a reset time of day to read: not used");
  const auto zone = read_wall_text("You've hit your limit · resets 2pm (Mars/Olympus)", 1768917600);
  EXPECT_EQ(zone.problem, "a usage-limit message naming an unknown time zone \"Mars/Olympus\": not used");
  EXPECT_EQ(read_wall_text("Claude AI usage limit reached|12", 1768917600).problem,
            "a usage-limit message whose reset time is not a Unix time between 2001 and 5138: not used");
}

TEST(Walls, CopiesOfOneWallCountOnce) {
  // The same wall written in a sidechain 20 s later and in a resumed file a minute later, its reset
  // jittering by a second; a second wall at the next window; an unrelated weekly wall.
  std::vector<plan_wall> w;
  auto add = [&](double t, double reset, wall_kind k) {
    plan_wall x;
    x.t = t;
    x.resets_at_unix = reset;
    x.kind = k;
    w.push_back(x);
  };
  add(1000, 10800, wall_kind::five_hour);
  add(1060, 10801, wall_kind::five_hour);
  add(1020, 10800, wall_kind::five_hour);
  add(20000, 28800, wall_kind::five_hour);
  add(1030, 10800, wall_kind::weekly);
  const auto d = dedupe_walls(w);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].t, 1000.0);
  EXPECT_EQ(d[0].copies, 3);
  EXPECT_EQ(d[1].kind, wall_kind::weekly);
  EXPECT_EQ(d[2].t, 20000.0);
  EXPECT_EQ(d[2].copies, 1);
}
