// The synthetic workload generator (docs/model.md §7).
#include "loopcast/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace loopcast;

namespace {
workload fixed_workload() {
  workload w;
  w.name = "fixed";
  w.system_prompt_tokens = 1000;
  w.task_tokens = fixed_dist{500};
  w.turns = fixed_dist{4};
  w.output_tokens = fixed_dist{100};
  w.reasoning_tokens = fixed_dist{50};
  w.tool_result_tokens = fixed_dist{1000};
  w.tool_time_s = fixed_dist{2.0};
  w.max_tokens = 4096;
  w.context_window_tokens = 100000;
  return w;
}

// fixed_workload in a 5,000-token window compacting at 60% into 200-token summaries.
workload compacting_workload() {
  auto w = fixed_workload();
  w.context_window_tokens = 5000;
  w.compaction.enabled = true;
  w.compaction.at_fraction = 0.6;
  w.compaction.summary_tokens = fixed_dist{200};
  return w;
}
} // namespace

// Each prompt is the previous prompt + its output + the tool result (reasoning dropped):
// 1,500; 2,600; 3,700; 4,800.
TEST(Workload, ContextSnowballs) {
  const auto s = generate_session(fixed_workload(), 1);
  ASSERT_EQ(s.requests.size(), 4u);
  const std::int64_t expected[] = {1500, 2600, 3700, 4800};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.requests[i].prompt_tokens, expected[i]);
    EXPECT_EQ(s.requests[i].output_tokens, 100);
    EXPECT_EQ(s.requests[i].reasoning_tokens, 50);
    EXPECT_EQ(s.requests[i].delay_before_s, i == 0 ? 0.0 : 2.0);
    EXPECT_EQ(s.requests[i].turn, static_cast<int>(i + 1));
    // Two runs: the shared system prompt (lineage 0), then the conversation (lineage 1), ending
    // at the prompt. With no break or compaction, the four requests share one copy.
    std::vector<prefix_run> runs;
    s.runs_of(s.requests[i], runs);
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(s.requests[i].runs_begin, 0u);
    EXPECT_EQ(runs[0].lineage, 0u);
    EXPECT_EQ(runs[0].end_tokens, 1000);
    EXPECT_EQ(runs[1].lineage, 1u);
    EXPECT_EQ(runs[1].end_tokens, expected[i]);
  }
  EXPECT_EQ(s.runs.size(), 2u);
  EXPECT_EQ(s.shared_lineages, 1u);
  EXPECT_EQ(s.lineages, 2u);
}

TEST(Workload, ReasoningInContextAddsIt) {
  auto w = fixed_workload();
  w.reasoning_in_context = true;
  const auto s = generate_session(w, 1);
  EXPECT_EQ(s.requests[1].prompt_tokens, 1500 + 100 + 50 + 1000);
}

// Tool result of turn n × (1 + (3 − 1)·exp(−(n − 1)/1)): 3,000 then 1,000·(1 + 2/e) = 1,735.76 → 1,736.
TEST(Workload, FrontLoadedToolResults) {
  auto w = fixed_workload();
  w.front_load_factor = 3;
  w.front_load_decay_turns = 1;
  const auto s = generate_session(w, 1);
  EXPECT_EQ(s.requests[1].prompt_tokens - s.requests[0].prompt_tokens, 100 + 3000);
  EXPECT_EQ(s.requests[2].prompt_tokens - s.requests[1].prompt_tokens, 100 + 1736);
}

// Tool time of turn n × (1 + (3 − 1)·(1 − exp(−(n − 1)))): 2 s, then 2·(1 + 2(1 − 1/e)) = 4.528482 s.
TEST(Workload, ToolTimeRamp) {
  auto w = fixed_workload();
  w.tool_time_ramp_factor = 3;
  w.tool_time_ramp_turns = 1;
  const auto s = generate_session(w, 1);
  EXPECT_DOUBLE_EQ(s.requests[1].delay_before_s, 2.0);
  EXPECT_NEAR(s.requests[2].delay_before_s, 2.0 * (1.0 + 2.0 * (1.0 - std::exp(-1.0))), 1e-12);
}

TEST(Workload, OutputIsCappedByMaxTokens) {
  auto w = fixed_workload();
  w.max_tokens = 120;  // output 100 fits, reasoning keeps the remaining 20
  const auto s = generate_session(w, 1);
  EXPECT_EQ(s.requests[0].output_tokens, 100);
  EXPECT_EQ(s.requests[0].reasoning_tokens, 20);
  EXPECT_EQ(s.requests[0].max_tokens, 120);
}

// Window 5,000 at 0.6 → compact when the prompt would reach 3,000. Turn 3's prompt (3,700) would:
// a compaction request reads 3,700 and writes a 200-token summary; the history restarts as
// system 1,000 + task 500 + summary 200 = 1,700, and turn 4 sends 1,700 + 100 + 1,000 = 2,800.
TEST(Workload, CompactionReplacesTheHistory) {
  const auto s = generate_session(compacting_workload(), 1);
  ASSERT_EQ(s.requests.size(), 5u);
  EXPECT_TRUE(s.requests[2].compaction);
  EXPECT_EQ(s.requests[2].prompt_tokens, 3700);
  EXPECT_EQ(s.requests[2].output_tokens, 200);
  EXPECT_EQ(s.requests[2].reasoning_tokens, 0);
  EXPECT_EQ(s.requests[2].turn, 3);
  EXPECT_EQ(s.requests[3].prompt_tokens, 1700);
  EXPECT_EQ(s.requests[3].delay_before_s, 0.0);
  EXPECT_EQ(s.requests[4].prompt_tokens, 2800);
  // The new epoch is a new lineage; the system prompt's lineage is shared.
  EXPECT_EQ(s.runs_of(s.requests[3])[1].lineage, 2u);
  EXPECT_EQ(s.runs_of(s.requests[3])[0].lineage, 0u);
  EXPECT_EQ(s.lineages, 3u);
  // Each epoch keeps one copy of its runs: requests 1-3 (the compaction reads the old history)
  // end at 3,700, requests 4-5 at 2,800.
  ASSERT_EQ(s.runs.size(), 4u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(s.requests[i].runs_begin, i < 3 ? 0u : 2u);
  EXPECT_EQ(s.runs[1].end_tokens, 3700);
  EXPECT_EQ(s.runs[3].end_tokens, 2800);
}

// Breaks only once the session has compacted (probability 0 before, 1 after), keeping 75%: the
// session of CompactionReplacesTheHistory keeps one run of conversation up to its compaction;
// turn 4 (2,800 tokens) keeps 0.75 × 1,700 = 1,275 of the previous prompt (lineage 2) and
// writes the rest under lineage 3.
TEST(Workload, CacheBreaksAfterTheFirstCompaction) {
  auto w = compacting_workload();
  w.cache_breaks = {0.0, fixed_dist{0.75}, 1.0};
  const auto s = generate_session(w, 1);
  ASSERT_EQ(s.requests.size(), 5u);
  EXPECT_EQ(s.runs_of(s.requests[1]).size(), 2u);  // no break before the compaction
  ASSERT_TRUE(s.requests[2].compaction);
  EXPECT_EQ(s.runs_of(s.requests[3]).size(), 2u);  // the compaction's own restart
  const auto runs = s.runs_of(s.requests[4]);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].end_tokens, 1000);
  EXPECT_EQ(runs[1].lineage, 2u);
  EXPECT_EQ(runs[1].end_tokens, 1275);
  EXPECT_EQ(runs[2].lineage, 3u);
  EXPECT_EQ(runs[2].end_tokens, 2800);
  EXPECT_EQ(s.lineages, 4u);
  // Unset (< 0), the one probability holds throughout: 0 means no break at all.
  w.cache_breaks.after_compaction_probability = -1;
  const auto u = generate_session(w, 1);
  EXPECT_EQ(u.runs_of(u.requests[4]).size(), 2u);
}

TEST(Workload, SameSeedSameSessionOtherSeedAnother) {
  auto w = fixed_workload();
  w.output_tokens = lognormal_dist{200, 800};
  w.tool_result_tokens = lognormal_dist{1500, 6000};
  w.turns = fixed_dist{30};
  const auto a = generate_session(w, 5), b = generate_session(w, 5), c = generate_session(w, 6);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  bool differs = false;
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].prompt_tokens, b.requests[i].prompt_tokens);
    EXPECT_EQ(a.requests[i].output_tokens, b.requests[i].output_tokens);
    differs = differs || a.requests[i].prompt_tokens != c.requests[i].prompt_tokens;
  }
  EXPECT_TRUE(differs);
}

// Tool results by turn band: turn 1 adds 5,000, later turns 300 (outputs 100 each):
// 1,500; 6,600; 7,000; 7,400.
TEST(Workload, ToolResultBandsByTurn) {
  auto w = fixed_workload();
  w.tool_result_bands = {{1, fixed_dist{5000}}, {2, fixed_dist{300}}};
  const auto s = generate_session(w, 1);
  const std::int64_t expected[] = {1500, 6600, 7000, 7400};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(s.requests[i].prompt_tokens, expected[i]);
}

// A cache break every request, keeping half the previous prompt: request 2 (2,600 tokens) keeps
// 750 of request 1's 1,500 — less than the 1,000-token system prompt, so the system prompt is
// kept; request 3 keeps 1,300 of 2,600, inside lineage 2, and starts lineage 3.
TEST(Workload, CacheBreaksStartLineages) {
  auto w = fixed_workload();
  w.cache_breaks = {1.0, fixed_dist{0.5}};
  const auto s = generate_session(w, 1);
  ASSERT_EQ(s.requests.size(), 4u);
  std::vector<prefix_run> runs;  // with their ends (open_last_run: the last ends at the prompt)
  s.runs_of(s.requests[1], runs);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].end_tokens, 1000);
  EXPECT_EQ(runs[1].lineage, 2u);
  EXPECT_EQ(runs[1].end_tokens, 2600);
  s.runs_of(s.requests[2], runs);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[1].lineage, 2u);
  EXPECT_EQ(runs[1].end_tokens, 1300);
  EXPECT_EQ(runs[2].lineage, 3u);
  EXPECT_EQ(runs[2].end_tokens, 3700);
  EXPECT_EQ(s.lineages, 5u);  // 0, 1 and one per break
  // Request 2's break dropped lineage 1 (a new copy of the stack); requests 3 and 4 kept every run
  // and cut the last one short: they grew request 2's copy, where lineage 2 is stored ending at 1,300
  // (request 2 reads it as its prompt, 2,600).
  EXPECT_TRUE(s.open_last_run);
  ASSERT_EQ(s.runs.size(), 6u);
  for (std::size_t i = 1; i < 4; ++i) EXPECT_EQ(s.requests[i].runs_begin, 2u);
  EXPECT_EQ(s.runs[3].end_tokens, 1300);
  EXPECT_EQ(s.end_of(s.requests[1], 1), 2600);
  // The context grows as without breaks: only its cacheable prefix changes.
  EXPECT_EQ(s.requests[3].prompt_tokens, 4800);
}

// Turns drawn per session; the session's tool-result scale is tied to them (ρ = −1: the longest
// sessions have the smallest tool results). Same seed, same session.
TEST(Workload, TurnsAndScalePerSession) {
  auto w = fixed_workload();
  w.turns = quantile_dist{{0, 1}, {2, 60}};
  w.session_scale = {0.5, -1.0};
  std::vector<std::pair<std::size_t, double>> seen;  // turns, first tool result
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const auto s = generate_session(w, seed);
    ASSERT_GE(s.requests.size(), 2u);
    ASSERT_LE(s.requests.size(), 60u);
    seen.emplace_back(s.requests.size(), static_cast<double>(s.requests[1].prompt_tokens - 1600));
    EXPECT_EQ(s.requests.size(), generate_session(w, seed).requests.size());
  }
  // With ρ = −1 the scale is a falling function of the session's score, and the turns a rising
  // one: a session with more turns never has larger tool results than one with fewer.
  std::sort(seen.begin(), seen.end(), [](auto& a, auto& b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
  for (std::size_t i = 1; i < seen.size(); ++i)
    if (seen[i].first != seen[i - 1].first) {
      EXPECT_LE(seen[i].second, seen[i - 1].second + 1) << i;
    }
  EXPECT_LT(seen.back().second, 1000);
  EXPECT_GT(seen.front().second, 1000);
  EXPECT_EQ(turns_cap(w), 60);
}

// Breaks that keep everything would add a run per request; past 32 runs a break keeps only the
// system prompt, so a prompt never has more than 32 runs and the script stays linear in size.
TEST(Workload, CacheBreaksKeepTheRunsBounded) {
  auto w = fixed_workload();
  w.turns = fixed_dist{300};
  w.context_window_tokens = 10'000'000;
  w.cache_breaks = {1.0, fixed_dist{1.0}};
  const auto s = generate_session(w, 3);
  ASSERT_EQ(s.requests.size(), 300u);
  std::uint32_t most = 0;
  for (const auto& r : s.requests) most = std::max(most, r.runs_count);
  EXPECT_EQ(most, 32u);
  EXPECT_LE(s.runs.size(), 300u * 32u);
  // Request n has n + 1 runs up to request 31 (32 runs); request 32's break keeps only the system
  // prompt: back to two runs.
  EXPECT_EQ(s.requests[30].runs_count, 32u);
  EXPECT_EQ(s.requests[31].runs_count, 2u);
}

// A generator that tabulates its per-turn factors (a fleet's) gives the scripts generate_session
// gives, request for request, inside and past its table (5 turns of 40), with log-normal draws,
// a front-load, a tool-time ramp, bands and compactions.
TEST(Workload, ATabulatingGeneratorGivesTheSameScripts) {
  auto w = fixed_workload();
  w.turns = fixed_dist{40};
  w.output_tokens = lognormal_dist{200, 800};
  w.reasoning_tokens = lognormal_dist{300, 3000};
  w.tool_result_tokens = lognormal_dist{1500, 6000};
  w.tool_time_s = lognormal_dist{0.5, 2.0};
  w.front_load_factor = 6;
  w.front_load_decay_turns = 4;
  w.tool_time_ramp_factor = 5;
  w.tool_time_ramp_turns = 9;
  w.context_window_tokens = 30000;
  w.compaction.enabled = true;
  w.compaction.at_fraction = 0.8;
  w.compaction.summary_tokens = lognormal_dist{2000, 3000};
  const session_generator tabulating(w, 5);
  for (const bool bands : {false, true}) {
    if (bands) w.tool_result_bands = {{1, lognormal_dist{4000, 8000}}, {10, lognormal_dist{700, 2000}}};
    const session_generator with_bands(w, 5);
    const session_generator& g = bands ? with_bands : tabulating;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const auto a = g(seed), b = generate_session(w, seed);
      ASSERT_EQ(a.requests.size(), b.requests.size()) << "seed " << seed;
      ASSERT_GT(a.requests.size(), 40u);  // compactions add requests
      for (std::size_t i = 0; i < a.requests.size(); ++i) {
        EXPECT_EQ(a.requests[i].prompt_tokens, b.requests[i].prompt_tokens) << "seed " << seed << " request " << i;
        EXPECT_EQ(a.requests[i].output_tokens, b.requests[i].output_tokens);
        EXPECT_EQ(a.requests[i].reasoning_tokens, b.requests[i].reasoning_tokens);
        EXPECT_EQ(a.requests[i].delay_before_s, b.requests[i].delay_before_s);
        EXPECT_EQ(a.requests[i].compaction, b.requests[i].compaction);
      }
      EXPECT_EQ(a.lineages, b.lineages);
    }
  }
}
