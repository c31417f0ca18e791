// The forecast's continuation of a log without hash ids (Claude Code, Codex, opencode) keeps the
// cache: a continued request reads what the previous one cached, writes its growth, and breaks the
// cache where the log's client did. Checked against a replay of the same requests as recorded.
#include "loopcast/presets.hpp"
#include "loopcast/random.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/trace.hpp"

#include "study/forecast_parts.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace loopcast;
using loopcast::test_support::lib;
using loopcast::test_support::traces;

namespace {

double replay_cost(const recorded_trace& t, token_counts* served = nullptr) {
  scenario_option o;
  o.label = "api";
  o.targets = {lib().load_target("anthropic-tier4-claude-sonnet-4.5")};
  for (auto& b : o.targets[0].limits) b.limit = 1e15;  // no wall: the cost of the tokens alone
  const auto r = run_replay({t}, std::vector<scenario_option>{o});
  if (served) *served = r.options[0].sim.tokens;
  return r.options[0].sim.token_cost_usd;
}

} // namespace

TEST(Continuation, KeepsTheCacheAsTheRecordingDid) {
  const auto full = import_trace(traces / "codex-rate-limits/EdouardZemb-test-framework/2026/01/30/rollout-2026-01-30T10-40-15-019c0e46-511b-76b0-9b34-e11f79456986.jsonl", trace_format::codex);
  ASSERT_FALSE(full.has_prefix);
  const std::size_t s = detail::active_session(full);
  const std::size_t n = full.sessions[s].requests.size();
  ASSERT_EQ(n, 169u);  // a real Codex session of 169 requests (codex-rate-limits/)
  // Cut at half and continue with the recording's own steps, in order: each step appended alone,
  // so the block drawn is that step.
  const auto steps = detail::recent_steps(full, static_cast<std::int32_t>(full.request_count()));
  ASSERT_EQ(steps.size(), n - 1);  // one session: the step to each request after the first
  const std::size_t keep = n / 2;
  recorded_trace cut = full;
  cut.sessions[s].requests.resize(keep);
  rng g(7);
  for (std::size_t k = keep; k < n; ++k)
    detail::append_continuation(cut, s, std::span(steps).subspan(k - 1, 1), g, 1, std::numeric_limits<double>::infinity());
  ASSERT_EQ(cut.sessions[s].requests.size(), n);
  // The continued requests read from the cache what the recorded ones did, within 3% (a prompt
  // that shrank in the recording, a context restart, goes on at its old length in the
  // continuation: 2.5% more reads here); the continuation before this fix read nothing.
  std::int64_t recorded_reads = 0, continued_reads = 0;
  for (std::size_t k = keep; k < n; ++k) {
    const auto& a = full.sessions[s].requests[k];
    const auto& b = cut.sessions[s].requests[k];
    recorded_reads += a.tokens.cache_read;
    continued_reads += b.tokens.cache_read;
    EXPECT_EQ(b.tokens.output, a.tokens.output);
  }
  ASSERT_GT(recorded_reads, 0);
  EXPECT_NEAR(static_cast<double>(continued_reads), static_cast<double>(recorded_reads), 0.03 * static_cast<double>(recorded_reads));
  // Replayed, the continuation costs what the recording's own requests cost (within 3%); a
  // continuation that sent every prompt uncached would cost several times as much.
  token_counts a, b;
  const double recorded = replay_cost(full, &a), continued = replay_cost(cut, &b);
  EXPECT_NEAR(continued, recorded, 0.03 * recorded) << "recorded " << recorded << " continued " << continued;
  EXPECT_NEAR(static_cast<double>(b.cache_read), static_cast<double>(a.cache_read), 0.03 * static_cast<double>(a.cache_read));
}
