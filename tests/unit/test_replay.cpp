// stats, replay and fit on the real traces. Expected throughput percentiles were computed by a
// throwaway script (out / api_time over requests with out >= 50 and 0.2 s <= api_time <= 3600 s,
// linear interpolation between order statistics), not by loopcast.
#include "loopcast/errors.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/speed_fit.hpp"
#include "loopcast/stats.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

using namespace loopcast;
namespace fs = std::filesystem;

namespace {
using loopcast::test_support::lib;
using loopcast::test_support::traces;

// Opus 4.5 with no limits and the claude-code client: only the cache and the context policy act.
std::vector<scenario_option> opus_without_limits() {
  std::vector<scenario_option> options(1);
  options[0].label = "opus";
  options[0].targets = {lib().load_target("anthropic-tier1-claude-opus-4.5")};
  options[0].targets[0].limits.clear();
  options[0].client = lib().load_client("claude-code");
  return options;
}

// What each attempt of option `k` read from the cache.
std::vector<std::int64_t> cache_reads(const replay_result& r, std::size_t k = 0) {
  std::vector<std::int64_t> reads;
  for (const auto& a : r.options[k].sim.attempts) reads.push_back(a.tokens.cache_read);
  return reads;
}
} // namespace

// trace_0043: 33 requests, 11 without response timing, 22 kept.
//   effective P10 24.655846, P50 45.675194, P90 66.075971; decode P50 67.155431; prefill share P50 0.354668.
TEST(Stats, MatchTheIndependentComputation) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0043.json")};
  const auto cerebras = lib().load_target("cerebras-developer-qwen-3.8-27b");
  const auto st = compute_trace_stats(t, &*cerebras.prices);
  ASSERT_EQ(st.groups.size(), 2u);  // the one model, then "all"
  EXPECT_EQ(st.groups[0].name, "claude-opus-4-5-20251101");
  const auto& g = st.groups.back();
  EXPECT_EQ(g.name, "all");
  EXPECT_EQ(g.requests, 33u);
  EXPECT_EQ(g.metrics.samples.kept, 22u);
  EXPECT_EQ(g.metrics.samples.dropped_no_timing, 11u);
  EXPECT_NEAR(g.metrics.effective_tps.p10, 24.655846, 1e-5);
  EXPECT_NEAR(g.metrics.effective_tps.p50, 45.675194, 1e-5);
  EXPECT_NEAR(g.metrics.effective_tps.p90, 66.075971, 1e-5);
  EXPECT_NEAR(g.metrics.decode_tps.p50, 67.155431, 1e-5);
  EXPECT_NEAR(g.metrics.prefill_share.p50, 0.354668, 1e-6);
  // Priced at Cerebras' $0.99/M prompt (cache reads included) and $1.49/M output:
  // Σ in 1,508,817 × 0.99e-6 + Σ out 17,750 × 1.49e-6 = $1.520176.
  EXPECT_NEAR(g.priced_cost_usd, 1.520176, 1e-6);
  EXPECT_TRUE(std::isnan(g.recorded_cost_usd));
  // The bins partition the requests.
  std::size_t in_bins = 0;
  for (const auto& b : g.bins) in_bins += b.requests;
  EXPECT_EQ(in_bins, 33u);
}

TEST(Stats, TotalsOnlyLogsAreReportedApart) {
  const std::vector<recorded_trace> t{import_trace(traces / "swe-agent/pydicom__pydicom-1458.traj")};
  const auto st = compute_trace_stats(t);
  EXPECT_TRUE(st.groups.empty());
  ASSERT_EQ(st.totals_only.size(), 1u);
}

TEST(Replay, RefusesTotalsOnlyLogs) {
  const std::vector<recorded_trace> t{import_trace(traces / "swe-agent/pydicom__pydicom-1458.traj")};
  try {
    (void)make_replay_sessions(t, 16384);
    FAIL();
  } catch (const trace_error& e) {
    EXPECT_EQ(std::string(e.what()),
              (traces / "swe-agent/pydicom__pydicom-1458.traj").string() +
                  ": swe-agent logs record per-task totals only (12 API calls, 122612 tokens sent, 1369 received): "
                  "per-request sizes and times cannot be derived from them");
  }
}

// The scripts keep what was recorded: prompts, outputs, agent times, parallel subagents.
TEST(Replay, ScriptsKeepTheRecordedSequence) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0291.json")};
  const auto rs = make_replay_sessions(t, 16384);
  ASSERT_EQ(rs.scripts.size(), 3u);
  EXPECT_EQ(rs.start_s[0], 0.0);
  EXPECT_NEAR(rs.start_s[1], 1148.013, 1e-9);
  const auto& main = t[0].sessions[0].requests;
  const auto& script = rs.scripts[0].requests;
  ASSERT_EQ(script.size(), main.size());
  for (std::size_t i = 0; i < script.size(); ++i) {
    EXPECT_EQ(script[i].prompt_tokens, main[i].tokens.prompt());
    EXPECT_EQ(script[i].output_tokens, main[i].tokens.output);
  }
  // Request 2 of trace_0291: sent 8.98 s after request 1 ended (t − (previous t + api_time); the
  // trace's think_time rounds it to 9).
  EXPECT_NEAR(script[1].delay_before_s, 8.98, 1e-9);
  EXPECT_DOUBLE_EQ(script[1].delay_before_s, main[1].t_send - main[0].t_end);
}

// A session compacts on a 100K window (threshold 83,000) before its 90,000-token request: the
// compaction keeps the first prompt (10,000) and a 4,000-token summary, removing 76,000 recorded
// tokens from what follows. A request of another model with a 60,000-token prompt then cannot
// extend that history (60,000 − 76,000 < 0, which once failed the run with "a token count of
// -16000"): it goes as recorded on a lineage of its own, and the next main request (95,000) goes
// on from the compacted history, 19,000.
TEST(Replay, ASideRequestAfterACompactionKeepsItsRecordedPrompt) {
  recorded_trace t;
  t.file = "side.jsonl";
  t.models = {"opus", "haiku"};
  t.sessions.resize(1);
  t.sessions[0].id = "s";
  const std::int64_t prompts[5] = {10000, 50000, 90000, 60000, 95000};
  for (int k = 0; k < 5; ++k) {
    recorded_request q;
    q.t_send = 100.0 * k;
    q.t_end = q.t_send + 10;
    q.tokens.input = prompts[k];
    q.tokens.output = 100;
    q.model = k == 3 ? 1 : 0;
    t.sessions[0].requests.push_back(q);
  }
  session_shaping sh;
  sh.window_tokens = 100000;
  sh.policy = context_policy::compact;
  const auto rs = make_replay_sessions({t}, sh);
  ASSERT_EQ(rs.compactions, 1);
  const auto& q = rs.scripts[0].requests;
  ASSERT_EQ(q.size(), 6u);
  const std::int64_t expected[6] = {10000, 50000, 50100, 14000, 60000, 19000};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(q[i].prompt_tokens, expected[i]) << i;
  EXPECT_TRUE(q[2].compaction && q[2].inserted);
  // The side request's single run is a lineage no other request uses.
  const auto& runs = rs.scripts[0].runs;
  const auto side = runs[q[4].runs_begin].lineage;
  for (std::size_t i = 0; i < 6; ++i) {
    if (i == 4) continue;
    for (std::uint32_t k = 0; k < q[i].runs_count; ++k) EXPECT_NE(runs[q[i].runs_begin + k].lineage, side) << i;
  }
  // The whole replays on a 100K-window target, every request served.
  std::vector<scenario_option> options(1);
  options[0].label = "small window";
  options[0].targets = {lib().load_target("anthropic-tier1-claude-opus-4.5")};
  options[0].targets[0].context_window_tokens = 100000;
  options[0].targets[0].limits.clear();
  options[0].client = lib().load_client("claude-code");
  replay_options ro;
  ro.speed = replay_speed::recorded;
  const auto r = run_replay({t}, options, ro);
  EXPECT_EQ(r.options[0].sim.requests.size(), 6u);
}

// Claude Code compacts once its last response's prompt + output reaches the window minus 33,000
// (167,000 on 200K), not when the next prompt reaches 83% (166,000). Prompts 10,000, 150,000,
// 166,950, 168,000, 170,000 (100 output tokens each):
//   reserve rule: 166,950 goes as recorded (the last context was 150,100); after it the context is
//     167,050, so a compaction reading 167,050 comes before 168,000, which continues from the kept
//     base 10,000 + the 4,000 summary = 14,000 (removed 154,000); then 170,000 − 154,000 = 16,000.
//   fraction rule: 166,950 ≥ 166,000 compacts one request early (reading 150,100), removing
//     152,950: 14,000, then 15,050 and 17,050.
TEST(Replay, ClaudeCodeCompactsOnItsLastResponseNotOneRequestEarly) {
  recorded_trace t;
  t.file = "long.jsonl";
  t.models = {"opus"};
  t.sessions.resize(1);
  t.sessions[0].id = "s";
  for (const std::int64_t p : {10000, 150000, 166950, 168000, 170000}) {
    recorded_request q;
    q.t_send = 100.0 * static_cast<double>(t.sessions[0].requests.size());
    q.t_end = q.t_send + 10;
    q.tokens.input = p;
    q.tokens.output = 100;
    t.sessions[0].requests.push_back(q);
  }
  const auto prompts = [](const replay_sessions& rs) {
    std::vector<std::int64_t> v;
    for (const auto& q : rs.scripts[0].requests) v.push_back(q.prompt_tokens);
    return v;
  };
  session_shaping sh;
  sh.window_tokens = 200000;
  sh.policy = context_policy::compact;
  sh.compact_reserve_tokens = 33000;
  const auto by_reserve = make_replay_sessions({t}, sh);
  EXPECT_EQ(prompts(by_reserve), (std::vector<std::int64_t>{10000, 150000, 166950, 167050, 14000, 16000}));
  EXPECT_TRUE(by_reserve.scripts[0].requests[3].inserted);
  sh.compact_reserve_tokens = 0;
  sh.compact_at = 0.83;
  const auto by_fraction = make_replay_sessions({t}, sh);
  EXPECT_EQ(prompts(by_fraction), (std::vector<std::int64_t>{10000, 150000, 150100, 14000, 15050, 17050}));
  // The claude-code client preset carries the reserve rule into a replay on a 200K target, and
  // --compact-at replaces it with the fraction.
  const auto options = opus_without_limits();
  ASSERT_EQ(options[0].targets[0].context_window_tokens, 200000);
  replay_options ro;
  ro.speed = replay_speed::recorded;
  EXPECT_EQ(run_replay({t}, options, ro).options[0].sim.requests.at(3).prompt, 167050);
  ro.compact_at = 0.83;
  EXPECT_EQ(run_replay({t}, options, ro).options[0].sim.requests.at(2).prompt, 150100);
}

// A log without hash ids (Claude Code JSONL) says how much each request read from the cache, and the
// replay builds the prefix from it. Opus requests 20K, 30K, 40K, 50K, 60K and one Haiku request (5K):
//   30K read 20K: the whole previous prompt, one lineage goes on;
//   40K read only 18K 10 s later: a break the client made (within the 5-minute lifetime), carried:
//     the first 18K stay on the old lineage, the rest on a new one;
//   Haiku's 5K is on its own model's lineage, not a prefix of Opus's conversation;
//   60K, sent 400 s after 50K ended (past the lifetime), read nothing: the cache's own expiry,
//     which the target decides, so the lineage goes on.
// On the Opus target (5-minute cache) the replay reads 0, 20,000, 18,000, 40,000, 0, and 0 for 60K
// (expired there too).
TEST(Replay, RecordedCacheBreaksAreCarriedAndEachModelHasItsCache) {
  recorded_trace t;
  t.file = "breaks.jsonl";
  t.models = {"claude-opus-4-5", "claude-haiku-4-5"};
  t.sessions.resize(1);
  t.sessions[0].id = "s";
  struct row { double t_send; std::int64_t prompt, read; std::int32_t model; };
  const row rows[] = {{0, 20000, 0, 0}, {20, 30000, 20000, 0}, {40, 40000, 18000, 0},
                      {60, 50000, 40000, 0}, {80, 5000, 0, 1}, {500, 60000, 0, 0}};
  for (const auto& x : rows) {
    recorded_request q;
    q.t_send = x.t_send;
    q.t_end = x.t_send + 10;
    q.tokens.cache_read = x.read;
    q.tokens.input = x.prompt - x.read;
    q.tokens.output = 100;
    q.model = x.model;
    t.sessions[0].requests.push_back(q);
  }
  const auto rs = make_replay_sessions({t}, session_shaping{});
  const auto& sc = rs.scripts[0];
  const auto runs_of = [&](std::size_t i) {
    std::vector<std::pair<std::uint32_t, std::int64_t>> v;
    for (std::uint32_t k = 0; k < sc.requests[i].runs_count; ++k)
      v.emplace_back(sc.runs[sc.requests[i].runs_begin + k].lineage, sc.runs[sc.requests[i].runs_begin + k].end_tokens);
    return v;
  };
  const auto opus = runs_of(0)[0].first;
  EXPECT_EQ(runs_of(1), (std::vector<std::pair<std::uint32_t, std::int64_t>>{{opus, 30000}}));
  const auto branch = runs_of(2).back().first;
  EXPECT_NE(branch, opus);
  EXPECT_EQ(runs_of(2), (std::vector<std::pair<std::uint32_t, std::int64_t>>{{opus, 18000}, {branch, 40000}}));
  EXPECT_EQ(runs_of(3), (std::vector<std::pair<std::uint32_t, std::int64_t>>{{opus, 18000}, {branch, 50000}}));
  ASSERT_EQ(runs_of(4).size(), 1u);
  EXPECT_NE(runs_of(4)[0].first, opus);
  EXPECT_NE(runs_of(4)[0].first, branch);
  EXPECT_EQ(runs_of(5), (std::vector<std::pair<std::uint32_t, std::int64_t>>{{opus, 18000}, {branch, 60000}}));
  const auto options = opus_without_limits();
  ASSERT_EQ(options[0].targets[0].cache.ttl_s, 300);
  replay_options ro;
  ro.speed = replay_speed::recorded;
  const auto r = run_replay({t}, options, ro);
  EXPECT_EQ(cache_reads(r), (std::vector<std::int64_t>{0, 20000, 18000, 40000, 0, 0}));
}

// What stays cached across a recorded compaction: the system prompt and tools, as the logs show.
// Opus requests 30,000 (read 0), 60,000 (read 30,000), the compaction 60,100 (read 60,000, writes a
// 4,000-token summary), then 25,000 reading 20,000 (the system prompt and tools) and 30,000 reading
// 25,000. The replay reads 0, 30,000, 60,000, 20,000, 25,000: the first 20,000 tokens stay on the
// conversation's lineage, the summary starts a new one (without the rule: 0 after the compaction).
TEST(Replay, TheSystemPromptStaysCachedAcrossARecordedCompaction) {
  recorded_trace t;
  t.file = "compacted.jsonl";
  t.models = {"claude-opus-4-5"};
  t.sessions.resize(1);
  t.sessions[0].id = "s";
  struct row { double t_send; std::int64_t prompt, read, output; bool compaction; };
  for (const row x : {row{0, 30000, 0, 100, false}, row{20, 60000, 30000, 100, false}, row{40, 60100, 60000, 4000, true},
                      row{60, 25000, 20000, 100, false}, row{80, 30000, 25000, 100, false}}) {
    recorded_request q;
    q.t_send = x.t_send;
    q.t_end = x.t_send + 10;
    q.tokens.cache_read = x.read;
    q.tokens.cache_write = x.prompt - x.read;
    q.tokens.output = x.output;
    q.compaction = x.compaction;
    t.sessions[0].requests.push_back(q);
  }
  const auto options = opus_without_limits();
  replay_options ro;
  ro.speed = replay_speed::recorded;
  const auto r = run_replay({t}, options, ro);
  EXPECT_EQ(r.shaping[0].compactions, 0);
  EXPECT_EQ(cache_reads(r), (std::vector<std::int64_t>{0, 30000, 60000, 20000, 25000}));
}

// 1-hour cache writes keep their lifetime where the target sells it. A log that wrote to the 1-hour
// cache: 20,000 at 0 (ends at 10), 30,000 sent 1,200 s later reading 20,000, 40,000 sent 6,780 s
// after that (past any lifetime). On Opus (5 minutes, and 1 hour on request) the replay reads
// 0, 20,000, 0 and writes 20,000, 10,000, 40,000 at $10 per million: $0.2025 + $0.1125 + $0.4025
// (with 100 output tokens at $25 per million each) = $0.7175. On a copy that sells 5 minutes only,
// the 1,200 s pause loses the cache: reads 0, 0, 0, writes 20,000, 30,000, 40,000 at $6.25:
// $0.1275 + $0.19 + $0.2525 = $0.57, and the replay says what it did instead.
TEST(Replay, OneHourWritesLiveAnHourWhereTheTargetSellsThem) {
  recorded_trace t;
  t.file = "hour.jsonl";
  t.models = {"claude-opus-4-5"};
  t.sessions.resize(1);
  t.sessions[0].id = "s";
  struct row { double t_send; std::int64_t read, write_1h; };
  for (const row x : {row{0, 0, 20000}, row{1210, 20000, 10000}, row{8000, 0, 40000}}) {
    recorded_request q;
    q.t_send = x.t_send;
    q.t_end = x.t_send + 10;
    q.tokens.cache_read = x.read;
    q.tokens.cache_write_1h = x.write_1h;
    q.tokens.output = 100;
    t.sessions[0].requests.push_back(q);
  }
  std::vector<scenario_option> options(2);
  options[0].targets = {lib().load_target("anthropic-tier1-claude-opus-4.5")};
  options[0].targets[0].limits.clear();
  ASSERT_EQ(options[0].targets[0].cache.ttl_1h_s, 3600);
  options[1].targets = options[0].targets;
  options[1].targets[0].name = "opus-5m-only";
  options[1].targets[0].cache.ttl_1h_s = 0;
  for (auto& o : options) {
    o.label = o.targets[0].name;
    o.client = lib().load_client("claude-code");
  }
  replay_options ro;
  ro.speed = replay_speed::recorded;
  const auto r = run_replay({t}, options, ro);
  const auto column = [&](std::size_t k, std::int64_t token_counts::*field) {
    std::vector<std::int64_t> v;
    for (const auto& a : r.options[k].sim.attempts) v.push_back(a.tokens.*field);
    return v;
  };
  using v = std::vector<std::int64_t>;
  EXPECT_EQ(column(0, &token_counts::cache_read), (v{0, 20000, 0}));
  EXPECT_EQ(column(0, &token_counts::cache_write_1h), (v{20000, 10000, 40000}));
  EXPECT_EQ(column(0, &token_counts::cache_write), (v{0, 0, 0}));
  EXPECT_NEAR(r.options[0].sim.token_cost_usd, 0.7175, 1e-9);
  EXPECT_TRUE(r.shaping[0].notes.empty());
  EXPECT_EQ(column(1, &token_counts::cache_read), (v{0, 0, 0}));
  EXPECT_EQ(column(1, &token_counts::cache_write), (v{20000, 30000, 40000}));
  EXPECT_EQ(column(1, &token_counts::cache_write_1h), (v{0, 0, 0}));
  EXPECT_NEAR(r.options[1].sim.token_cost_usd, 0.57, 1e-9);
  EXPECT_EQ(r.shaping[1].notes, (std::vector<std::string>{
      "3 of 3 requests asked for 1-hour cache writes, which opus-5m-only does not sell: they were cached for its 300 s "
      "and billed at its 5-minute write price"}));
}

// A log with hash ids (kv-cache-tester) keeps one cache per model: Opus writes 10,000 tokens, Haiku
// sends the same 10,000 (the same hash ids) 20 s later, Opus sends 12,000 that extend them. On one
// target the replay reads 0, 0 (Haiku's cache is its own) and 10,000; Haiku's prompt is on lineage
// 1 (lineage 0 for the second model), Opus's on lineage 0.
TEST(Replay, HashIdLogsKeepOneCachePerModel) {
  recorded_trace t;
  t.file = "kv.json";
  t.models = {"claude-opus-4-5", "claude-haiku-4-5"};
  t.has_prefix = true;
  t.lineages = 1;
  t.sessions.resize(1);
  t.sessions[0].id = "s";
  struct row { double t_send; std::int64_t prompt; std::int32_t model; };
  for (const row x : {row{0, 10000, 0}, row{20, 10000, 1}, row{40, 12000, 0}}) {
    recorded_request q;
    q.t_send = x.t_send;
    q.t_end = x.t_send + 10;
    q.tokens.input = x.prompt;
    q.tokens.output = 100;
    q.model = x.model;
    q.runs_begin = static_cast<std::uint32_t>(t.runs.size());
    q.runs_count = 1;
    t.runs.push_back({0, x.prompt});
    t.sessions[0].requests.push_back(q);
  }
  const auto rs = make_replay_sessions({t}, session_shaping{});
  const auto& sc = rs.scripts[0];
  EXPECT_EQ(sc.shared_lineages, 2u);
  EXPECT_EQ(sc.runs[sc.requests[0].runs_begin].lineage, 0u);
  EXPECT_EQ(sc.runs[sc.requests[1].runs_begin].lineage, 1u);
  EXPECT_EQ(sc.runs[sc.requests[2].runs_begin].lineage, 0u);
  const auto options = opus_without_limits();
  replay_options ro;
  ro.speed = replay_speed::recorded;
  const auto r = run_replay({t}, options, ro);
  EXPECT_EQ(cache_reads(r), (std::vector<std::int64_t>{0, 0, 10000}));
}

// The Claude Code logs in tests/data replayed at their recorded window (200K), with no limits and
// recorded speed, so that only the cache model can differ: no compaction is added, and every request
// reads from the cache and sends uncached within 1,024 tokens of what it recorded. Each model's first
// request in a log is left out: what it read was written by a session the log does not hold.
// Before recorded cache breaks were carried, tool_heavy's request 3 read 26,007 (recorded 18,014)
// and sent 500 uncached (recorded 8,493).
TEST(Replay, ClaudeCodeLogsKeepTheirRecordedCacheAtTheirWindow) {
  std::vector<scenario_option> options(1);
  options[0].label = "recorded window";
  options[0].targets = {lib().load_target("anthropic-tier1-claude-opus-4.5")};
  options[0].targets[0].limits.clear();
  options[0].client = lib().load_client("claude-code");
  replay_options ro;
  ro.speed = replay_speed::recorded;
  std::int32_t compared = 0;
  for (const auto& e : fs::directory_iterator(traces / "claude-code-jsonl")) {
    if (e.path().extension() != ".jsonl") continue;
    const std::vector<recorded_trace> t{import_trace(e.path())};
    const auto r = run_replay(t, options, ro);
    EXPECT_EQ(r.shaping[0].compactions, 0) << e.path();
    std::set<std::pair<std::uint32_t, std::int32_t>> seen_model;  // (session, model): its first request
    for (const auto& a : r.options[0].sim.attempts) {
      ASSERT_EQ(a.status, attempt_status::ok) << e.path();
      const auto& rec = t[0].sessions.at(a.session).requests.at(static_cast<std::size_t>(a.request - 1));
      if (seen_model.insert({a.session, rec.model}).second) continue;
      EXPECT_LE(std::abs(a.tokens.cache_read - rec.tokens.cache_read), 1024) << e.path() << " request " << a.request;
      EXPECT_LE(std::abs((a.tokens.input + a.tokens.cache_writes()) - (rec.tokens.input + rec.tokens.cache_writes())), 1024)
          << e.path() << " request " << a.request;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 20);  // 26 requests in 6 (session, model) pairs (subagent.jsonl's echoed subagent among them)
}

// Replaying a log on a target whose speed was fitted to it reproduces its request times:
// trace_0455 has TTFT, so prefill and decode are fitted separately. The replay's cache (64-token
// blocks, no expiry) hits exactly what the import's ideal cache did, so each simulated request
// takes the fitted model's time; we require the median request within 15% of its recorded
// duration, 90% of requests within 25%, and the total model time within 5%.
TEST(Fit, ReplayWithTheFittedCurveReproducesRecordedTimes) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0455.json")};
  const auto fit = fit_speed_model(t);
  EXPECT_TRUE(fit.used_ttft);
  EXPECT_EQ(fit.samples, 43u);
  EXPECT_GT(fit.r_squared, 0.8);

  scenario_option o;
  o.label = "fitted";
  o.targets.emplace_back();
  o.first().name = "fitted";
  o.first().kind = target_kind::local;
  o.first().context_window_tokens = 1 << 20;
  o.first().cache.block_tokens = 64;
  o.first().cache.ttl_s = 1e9;
  o.first().speed = fit.model;
  o.first().power = power_config{};
  o.client.max_retries = 0;
  const auto r = run_replay(t, {o});
  const auto& rec = t[0].sessions[0].requests;
  const auto& sim = r.options[0].sim;
  ASSERT_EQ(sim.requests.size(), rec.size());
  std::vector<double> err;
  double sim_total = 0, rec_total = 0;
  for (std::size_t i = 0; i < rec.size(); ++i) {
    EXPECT_EQ(sim.requests[i].cache_read, rec[i].tokens.cache_read) << "request " << i + 1;
    if (std::isnan(rec[i].t_end)) continue;
    const double d_rec = rec[i].t_end - rec[i].t_send;
    const double d_sim = sim.requests[i].t_end - sim.requests[i].t_send;
    err.push_back(std::abs(d_sim - d_rec) / d_rec);
    sim_total += d_sim;
    rec_total += d_rec;
  }
  ASSERT_EQ(err.size(), 43u);
  EXPECT_LT(percentile(err, 0.5), 0.15);
  EXPECT_LT(percentile(err, 0.9), 0.25);
  EXPECT_NEAR(sim_total / rec_total, 1.0, 0.05);
}

TEST(Fit, LogsWithoutTimesCannotBeFitted) {
  const std::vector<recorded_trace> t{import_trace(traces / "swe-agent/pydicom__pydicom-1458.traj")};
  EXPECT_THROW((void)fit_speed_model(t), trace_error);
}

// A real Claude Code subagent session replayed on Cerebras' Developer tier and the local
// workstation: every recorded token is sent again, and the recorded side is measured as logged.
TEST(Replay, RealSessionOnTheReferenceTargets) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-jsonl/subagent.jsonl")};
  std::vector<scenario_option> options(2);
  options[0].label = "cloud";
  options[0].targets = {lib().load_target("cerebras-developer-qwen-3.8-27b")};
  options[0].client = lib().load_client("opencode");
  options[1].label = "local";
  options[1].targets = {lib().load_target("local-workstation-qwen-27b")};
  options[1].client = lib().load_client("opencode");
  const auto r = run_replay(t, options);
  token_counts recorded;
  for (const auto& s : t[0].sessions)
    for (const auto& q : s.requests) recorded += q.tokens;
  EXPECT_EQ(r.recorded.tokens, recorded);
  for (const auto& o : r.options) {
    SCOPED_TRACE(o.label);
    EXPECT_EQ(o.sim.tokens.prompt(), recorded.prompt());
    EXPECT_EQ(o.sim.tokens.generated(), recorded.generated());
    EXPECT_EQ(o.sim.sessions[0].outcome, session_outcome::completed);
  }
  EXPECT_GT(r.options[1].sim.energy->energy_kwh, 0.0);
}
