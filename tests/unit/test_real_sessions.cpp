// Real sessions end to end: the timing convention of kv-cache-tester traces, `recorded` replay
// speed, context policies, output reservations larger than a bucket, routes by model, pricing at
// each request's own model, a provider cache with a TTL, explained stops, and nulls for
// statistics without samples. Expected values are derived by hand in the comments.
#include "loopcast/compare.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/montecarlo.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/rate_limits.hpp"
#include "loopcast/price_lists.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/report.hpp"
#include "loopcast/simulation.hpp"
#include "loopcast/solve.hpp"
#include "loopcast/speed_fit.hpp"
#include "loopcast/stats.hpp"
#include "loopcast/validate.hpp"

#include "test_support.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

using namespace loopcast;
namespace fs = std::filesystem;

namespace {
using loopcast::test_support::data_dir;
using loopcast::test_support::litellm_prices;
using loopcast::test_support::lib;
using loopcast::test_support::traces;

// A local target with no limits, a cache of 64-token blocks that never expires and a big window.
scenario_option unlimited(std::int64_t window = 1 << 22) {
  scenario_option o;
  o.label = "unlimited";
  o.targets.emplace_back();
  o.first().name = "unlimited";
  o.first().kind = target_kind::local;
  o.first().context_window_tokens = window;
  o.first().cache.block_tokens = 64;
  o.first().cache.ttl_s = 1e9;
  o.first().speed.decode = constant_curve{0.01};
  o.first().speed.prefill = constant_curve{0.0001};
  o.first().power = power_config{};
  o.client.name = "patient";
  o.client.max_retries = -1;
  return o;
}

// A loopcast-format trace of one session whose prompts are given (outputs 1,000 tokens each,
// sent 10 s apart, each taking 5 s).
recorded_trace growing_session(const std::vector<std::int64_t>& prompts) {
  recorded_trace t;
  t.file = "growing.jsonl";
  t.format = trace_format::loopcast;
  t.models = {"m"};
  recorded_session s;
  s.id = "s";
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    recorded_request r;
    r.t_send = 10.0 * static_cast<double>(i);
    r.t_end = r.t_send + 5;
    r.tokens = {prompts[i], 0, 0, 1000, 0};
    s.requests.push_back(r);
  }
  t.sessions.push_back(s);
  return t;
}
} // namespace

// ---- 1. Timing as the trace means it ------------------------------------------------------------

// kv-untimed.json: sends at 0, 10, 30, 40 s; api_time 5, (none), 4, 2 s. The agent waited
// 0 + 5 (10 − 5), 20 (30 − 10: the untimed request's end is unknown, its gap is agent time) and
// 6 (40 − 34) s; the trace's think_time of request 3 says 25 (from the end of request 1).
TEST(RealSessions, KvCacheTesterTimingComesFromTheSendTimes) {
  const std::vector<recorded_trace> t{import_trace(data_dir / "handmade/kv-untimed.json")};
  const auto rs = make_replay_sessions(t, 16384);
  ASSERT_EQ(rs.scripts.size(), 1u);
  const auto& q = rs.scripts[0].requests;
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q[0].delay_before_s, 0.0);
  EXPECT_EQ(q[1].delay_before_s, 5.0);
  EXPECT_EQ(q[2].delay_before_s, 20.0);
  EXPECT_EQ(q[3].delay_before_s, 6.0);
  const auto& rec = rs.scripts[0].recorded;
  ASSERT_EQ(rec.size(), 4u);
  EXPECT_EQ(rec[0].duration_s, 5.0);
  EXPECT_LT(rec[1].duration_s, 0.0);  // unknown
  EXPECT_EQ(rec[3].ttft_s, 0.5);

  // Recorded speed, no limits: sends at 0, 10, 30, 40 and the last end at 42, as recorded.
  replay_options ro;
  ro.speed = replay_speed::recorded;
  const auto r = run_replay(t, std::vector<scenario_option>{unlimited()}, ro);
  EXPECT_EQ(r.recorded.wall_s, 42.0);
  EXPECT_EQ(r.options[0].sim.wall_s, 42.0);
  const auto& sent = r.options[0].sim.requests;
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[1].t_send, 10.0);
  EXPECT_EQ(sent[2].t_send, 30.0);
  EXPECT_EQ(sent[3].t_send, 40.0);
  EXPECT_EQ(sent[3].t_first_token, 40.5);
}

namespace {
void expect_recorded_wall_clock(const fs::path& file) {
  SCOPED_TRACE(file.string());
  const std::vector<recorded_trace> t{import_trace(file)};
  replay_options ro;
  ro.speed = replay_speed::recorded;
  ro.record_attempts = false;
  // A 1M-token window: traces that start above the catalogue's windows replay as recorded; the
  // compaction requests a smaller window adds take no recorded time.
  const auto r = run_replay(t, std::vector<scenario_option>{unlimited(1'000'000)}, ro);
  const auto& o = r.options[0].sim;
  for (const auto& s : o.sessions) ASSERT_EQ(s.outcome, session_outcome::completed);
  EXPECT_NEAR(o.wall_s, r.recorded.wall_s, 1e-3 * r.recorded.wall_s);
}
} // namespace

// Every kv-cache-tester trace in the repository replays with recorded speed and no limits to its
// recorded wall clock within 0.1%.
TEST(RealSessions, RecordedSpeedGivesBackTheRecordedWallClock) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(traces / "claude-code-weka")) {
    if (e.path().extension() != ".json") continue;
    expect_recorded_wall_clock(e.path());
    ++n;
  }
  EXPECT_EQ(n, 5);
}

// The same over the 141 traces of the training corpus, when it is there.
TEST(RealSessions, RecordedSpeedGivesBackTheRecordedWallClockOnTheTrainingCorpus) {
  const fs::path train = LOOPCAST_TRAIN_TRACES_DIR;
  if (!fs::exists(train))
    GTEST_SKIP() << "the training corpus " << train << " is absent (set LOOPCAST_TRAIN_TRACES_DIR)";
  int n = 0;
  for (const auto& e : fs::directory_iterator(train)) {
    if (e.path().extension() != ".json") continue;
    expect_recorded_wall_clock(e.path());
    ++n;
  }
  EXPECT_EQ(n, 141);
}

// The whole training corpus as one run, on every catalogue target whose window holds 128K tokens or
// more (a plan's unpublished caps set to 10^12): every option completes its run, and no request
// comes out with a negative token count (which once stopped two traces: a side request after a
// compaction). Skipped when the corpus is absent.
TEST(RealSessions, TheTrainingCorpusReplaysOnEveryLargeWindowTarget) {
  const fs::path train = LOOPCAST_TRAIN_TRACES_DIR;
  if (!fs::exists(train))
    GTEST_SKIP() << "the training corpus " << train << " is absent (set LOOPCAST_TRAIN_TRACES_DIR)";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(train))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  const auto all = import_traces(files);
  ASSERT_EQ(all.size(), 141u);
  const auto& library = test_support::lib();
  int targets = 0;
  for (const auto& e : library.entries()) {
    if (e.kind != preset_kind::target) continue;
    scenario_option o;
    o.label = e.name;
    o.targets = {library.load_target(e.name)};
    if (o.targets[0].context_window_tokens < 128000) continue;
    for (auto& b : o.targets[0].limits)
      if (b.limit_unpublished) {
        b.limit = 1e12;
        b.limit_unpublished = false;
      }
    o.client = library.load_client("claude-code");
    replay_options ro;
    ro.speed = replay_speed::recorded;
    const auto r = run_replay(all, {o}, ro);
    ASSERT_EQ(r.options.size(), 1u) << e.name;
    EXPECT_FALSE(r.options[0].sim.cut_off) << e.name;
    for (const auto& q : r.options[0].sim.requests) ASSERT_GE(q.prompt, 0) << e.name;
    ++targets;
  }
  EXPECT_GE(targets, 20);
}

// ---- 2. Context policies ------------------------------------------------------------------------

// Prompts 50K, 90K, 110K, 130K on a 131,072-token window, compacting at 0.8 (104,857.6 tokens).
// Request 3 (110K) calls for a compaction first: it reads request 2's prompt + output (91,000)
// and writes 4,000; the kept base is min(first prompt, threshold / 4) = 26,214, so request 3
// continues at 26,214 + 4,000 = 30,214 (79,786 dropped) and request 4 at 130,000 − 79,786 = 50,214.
TEST(RealSessions, ACompactionIsInsertedAtTheThreshold) {
  const std::vector<recorded_trace> t{growing_session({50000, 90000, 110000, 130000})};
  session_shaping sh;
  sh.window_tokens = 131072;
  sh.policy = context_policy::compact;
  sh.compact_at = 0.8;
  sh.summary_tokens = 4000;
  const auto rs = make_replay_sessions(t, sh);
  const auto& q = rs.scripts[0].requests;
  ASSERT_EQ(q.size(), 5u);
  EXPECT_EQ(rs.compactions, 1);
  const std::vector<std::int64_t> prompts{50000, 90000, 91000, 30214, 50214};
  for (std::size_t i = 0; i < q.size(); ++i) EXPECT_EQ(q[i].prompt_tokens, prompts[i]) << i;
  EXPECT_TRUE(q[2].compaction && q[2].inserted);
  EXPECT_EQ(q[2].output_tokens, 4000);
  // The compaction is sent after request 3's agent time (5 s); request 3 right after it.
  EXPECT_EQ(q[2].delay_before_s, 5.0);
  EXPECT_EQ(q[3].delay_before_s, 0.0);
}

// The same session with a last prompt of 140,000 (+ 1,000 output > 131,072).
TEST(RealSessions, TruncateAndFailPolicies) {
  const std::vector<recorded_trace> t{growing_session({50000, 90000, 110000, 140000})};
  auto o = unlimited(131072);
  replay_options ro;
  ro.policy = context_policy::truncate;
  auto r = run_replay(t, std::vector<scenario_option>{o}, ro);
  EXPECT_EQ(r.shaping[0].truncations, 1);
  ASSERT_EQ(r.options[0].sim.requests.size(), 4u);
  EXPECT_EQ(r.options[0].sim.requests[3].prompt, 131072 - 1000);
  EXPECT_EQ(r.options[0].sim.sessions[0].outcome, session_outcome::completed);

  ro.policy = context_policy::fail;
  r = run_replay(t, std::vector<scenario_option>{o}, ro);
  const auto& s = r.options[0].sim.sessions[0];
  EXPECT_EQ(s.outcome, session_outcome::context_overflow);
  EXPECT_EQ(s.stop_request, 4);
  EXPECT_EQ(s.stop_need, 141000.0);
  EXPECT_EQ(s.stop_capacity, 131072.0);
  const auto json = nlohmann::json::parse(replay_to_json(t, r));
  const auto& x = json["options"][0];
  EXPECT_EQ(x["complete"], false);
  EXPECT_EQ(x["requests_served"], 3);
  EXPECT_EQ(x["stop"]["explanation"],
            "session 1 request 4: 141,000 tokens (prompt + output) exceed the target's 131,072-token context window");
}

// A real session that outgrows Cerebras' 131,072-token window compacts (as Claude Code would)
// and completes, where `fail` stops it.
TEST(RealSessions, ARealSessionCompactsOnASmallerWindow) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-jsonl/fa812bfe-b295-4cca-9c2f-fdf01028cb46__subagents__agent-acompact-70d8e7.jsonl")};
  scenario_option o;
  o.targets = {lib().load_target("rtx3090-llamacpp-qwen-3.8-27b-128k")};
  o.label = o.first().name;
  o.client = lib().load_client("claude-code");
  // The recorded request is itself a compaction reading 169,290 tokens: it reads what fits.
  auto r = run_replay(t, std::vector<scenario_option>{o});
  EXPECT_EQ(r.options[0].sim.sessions[0].outcome, session_outcome::completed);
  EXPECT_EQ(r.shaping[0].truncations, 1);
  replay_options ro;
  ro.policy = context_policy::fail;
  r = run_replay(t, std::vector<scenario_option>{o}, ro);
  EXPECT_EQ(r.options[0].sim.sessions[0].outcome, session_outcome::context_overflow);
}

// ---- 3. Output reservations ---------------------------------------------------------------------

namespace {
// One request of 1,000 prompt tokens and 500 output, max_tokens 16,384, on an 8,000 OTPM bucket
// that reserves max_tokens.
simulation_result one_big_reservation(oversize_rule rule, int max_retries) {
  target tgt;
  tgt.name = "t";
  tgt.context_window_tokens = 200000;
  bucket_config b;
  b.name = "otpm";
  b.limit = 8000;
  b.period_s = 60;
  b.classes = class_set{token_class::output, token_class::reasoning};
  b.charging = charging_rule::reserve_then_refund;
  b.oversize = rule;
  tgt.limits.push_back(b);
  tgt.speed.decode = constant_curve{0.01};
  static session_script s;
  s.requests.clear();
  s.runs.clear();
  request_spec q;
  q.prompt_tokens = 1000;
  q.output_tokens = 500;
  q.max_tokens = 16384;
  q.runs_count = 1;
  s.runs.push_back({0, 1000});
  s.requests = {q, q};
  s.runs.push_back({0, 1000});
  s.requests[1].runs_begin = 1;
  s.lineages = 1;
  retry_policy c;
  c.name = "c";
  c.max_retries = max_retries;
  const std::vector<session_plan> plans{{&s, 0, 1, 0}};
  return simulate(tgt, c, plans);
}
} // namespace

TEST(RealSessions, AReservationLargerThanTheBucketFollowsItsOversizeRule) {
  // refuse: the request fails at once.
  auto r = one_big_reservation(oversize_rule::refuse, 2);
  EXPECT_EQ(r.sessions[0].outcome, session_outcome::request_too_large);
  EXPECT_EQ(r.sessions[0].stop_need, 16384.0);
  EXPECT_EQ(r.sessions[0].stop_capacity, 8000.0);
  EXPECT_EQ(r.sessions[0].rate_limited, 0);
  // rate_limited: a 429 each attempt (retry_after = the period), then the client gives up after
  // its 2 retries: 3 429s and 120 s of stall.
  r = one_big_reservation(oversize_rule::rate_limited, 2);
  EXPECT_EQ(r.sessions[0].outcome, session_outcome::died_after_retries);
  EXPECT_EQ(r.sessions[0].rate_limited, 3);
  EXPECT_EQ(r.sessions[0].stall_s, 120.0);
  // A client that never gives up would retry forever: the session stops after the first 429.
  r = one_big_reservation(oversize_rule::rate_limited, -1);
  EXPECT_EQ(r.sessions[0].outcome, session_outcome::request_too_large);
  EXPECT_EQ(r.sessions[0].rate_limited, 1);
  // debt: admitted on a full bucket; the level goes to 8,000 − 16,384 = −8,384, the refund of
  // 15,884 unused at the end (5 s later) brings it to min(8,000, −8,384 + 666.67 + 15,884) =
  // 8,000. The second request is admitted at once.
  r = one_big_reservation(oversize_rule::debt, 2);
  EXPECT_EQ(r.sessions[0].outcome, session_outcome::completed);
  EXPECT_EQ(r.sessions[0].rate_limited, 0);
  EXPECT_EQ(r.sessions[0].requests_served, 2);
}

TEST(RealSessions, DebtBucketArithmetic) {
  bucket_config c;
  c.name = "otpm";
  c.limit = 8000;
  c.period_s = 60;
  c.oversize = oversize_rule::debt;
  bucket b(c);
  EXPECT_EQ(b.wait_for(16384, 0), 0.0);  // full: admitted
  b.charge(16384, 0, 0);
  EXPECT_EQ(b.used(0), 16384.0);       // level −8,384
  // 100 more need a level of 100: (100 + 8,384) / (8,000 / 60) = 63.63 s.
  EXPECT_NEAR(b.wait_for(100, 0), 8484.0 / (8000.0 / 60.0), 1e-9);
  // Another oversize charge waits for a full bucket: (8,000 + 8,384) / 133.33 = 122.88 s.
  EXPECT_NEAR(b.wait_for(16384, 0), 16384.0 / (8000.0 / 60.0), 1e-9);
  c.oversize = oversize_rule::refuse;
  bucket refused(c);
  EXPECT_EQ(refused.wait_for(16384, 0), bucket::never);
}

// max_tokens: the override, else the client's (Claude Code 32,000), capped at the target's
// maximum output, and never below what the request generated.
TEST(RealSessions, MaxTokensComeFromTheClientCappedByTheModel) {
  const std::vector<recorded_trace> t{growing_session({1000, 2000})};
  session_shaping sh;
  sh.agent_max_tokens = 32000;
  EXPECT_EQ(make_replay_sessions(t, sh).scripts[0].requests[0].max_tokens, 32000);
  sh.max_output_tokens = 8192;
  EXPECT_EQ(make_replay_sessions(t, sh).scripts[0].requests[0].max_tokens, 8192);
  sh.max_output_tokens = 500;  // below the recorded 1,000 output: the request keeps what it wrote
  EXPECT_EQ(make_replay_sessions(t, sh).scripts[0].requests[0].max_tokens, 1000);
  sh.max_tokens_override = 5000;
  sh.max_output_tokens = 0;
  EXPECT_EQ(make_replay_sessions(t, sh).scripts[0].requests[0].max_tokens, 5000);
  EXPECT_EQ(lib().load_client("claude-code").agent_max_tokens, 32000);
  EXPECT_EQ(lib().load_target("anthropic-tier1-claude-sonnet-4.5").max_output_tokens, 64000);
}

// Claude Code's 32,000 max_tokens on Anthropic Tier 1 (8,000 OTPM): requests run, not a refusal
// of every request.
TEST(RealSessions, ClaudeCodeRunsOnAnthropicTier1) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0455.json")};
  scenario_option o;
  o.targets = {lib().load_target("anthropic-tier1-claude-sonnet-4.5")};
  o.label = o.first().name;
  o.client = lib().load_client("claude-code");
  const auto r = run_replay(t, std::vector<scenario_option>{o});
  const auto& s = r.options[0].sim.sessions[0];
  EXPECT_EQ(s.outcome, session_outcome::completed);
  EXPECT_EQ(s.requests_served, 51);
  // Each request reserves 32,000 on the 8,000 bucket (a debt), refunded at its end down to its
  // real output: one agent waiting for its tools rarely meets the bucket below full.
  EXPECT_EQ(s.rate_limited, 0);
}

// ---- 4. Each request at its own model -----------------------------------------------------------

// trace_0291: an Opus main session (20 requests) and two Haiku subagents (5 and 7).
TEST(RealSessions, RoutesSendEachSessionToItsModelsTarget) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0291.json")};
  auto a = unlimited();
  a.first().name = "for-opus";
  a.first().cache.enabled = false;
  auto b = unlimited();
  b.first().name = "for-haiku";
  model_map rt{"routed", {{"claude-opus-*", a}, {"claude-haiku-*", b}}};
  const auto r = run_replay(t, std::vector<model_map>{rt});
  const auto& sim = r.options[0].sim;
  ASSERT_EQ(sim.sessions.size(), 3u);
  for (const auto& s : sim.sessions) EXPECT_EQ(s.outcome, session_outcome::completed);
  EXPECT_EQ(sim.sessions[0].requests_served, 20);
  EXPECT_EQ(sim.sessions[1].requests_served, 5);
  EXPECT_EQ(sim.sessions[2].requests_served, 7);
  // The Opus target has no cache: its session reads nothing from it; the Haiku sessions do.
  EXPECT_EQ(sim.sessions[0].tokens.cache_read, 0);
  EXPECT_GT(sim.sessions[1].tokens.cache_read + sim.sessions[2].tokens.cache_read, 0);
  ASSERT_EQ(r.shaping[0].routes.size(), 2u);
  EXPECT_EQ(r.shaping[0].routes[0], "claude-opus-* → for-opus");

  // A model no pattern matches is named.
  model_map partial{"opus only", {{"claude-opus-*", a}}};
  try {
    (void)run_replay(t, std::vector<model_map>{partial});
    FAIL() << "expected a config_error";
  } catch (const config_error& e) {
    EXPECT_EQ(std::string(e.what()), "--on: opus only: no mapping for the model claude-haiku-4-5-20251001 (2 sessions); "
                                     "add a pattern for it, or '*=TARGET'");
  }
}

// ---- 5. Cost of what was recorded ---------------------------------------------------------------

// Each request is priced at its own model from the catalogue: Opus 4.5 at $5 / $0.50 / $25 per
// million input / cache read / output, Haiku 4.5 at its own prices; the "all" group is the sum.
TEST(RealSessions, StatsPriceEachRequestAtItsOwnModel) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0291.json")};
  const auto book = catalogue_price_book(lib());
  stats_options so;
  so.prices = &book;
  const auto st = compute_trace_stats(t, so);
  ASSERT_EQ(st.groups.size(), 3u);  // haiku, opus, all
  EXPECT_TRUE(st.unpriced_models.empty());
  double sum = 0;
  for (const auto& name : {"anthropic-tier1-claude-haiku-4.5", "anthropic-tier1-claude-opus-4.5"}) {
    const auto p = lib().load_target(name).prices->usd_per_million;
    const auto& g = st.groups[name == std::string("anthropic-tier1-claude-haiku-4.5") ? 0 : 1];
    const double expected = (static_cast<double>(g.tokens.input) * p.input +
                             static_cast<double>(g.tokens.cache_read) * p.cache_read +
                             static_cast<double>(g.tokens.output) * p.output) / 1e6;
    EXPECT_NEAR(g.priced_cost_usd, expected, 1e-9) << g.name;
    EXPECT_EQ(g.priced_from, name);
    sum += expected;
  }
  EXPECT_NEAR(st.groups[2].priced_cost_usd, sum, 1e-9);

  // A model the catalogue does not know is listed, and never priced at zero.
  const std::vector<recorded_trace> sonnet4{import_trace(traces / "claude-code-weka/trace_0455.json")};
  const auto st2 = compute_trace_stats(sonnet4, so);
  ASSERT_EQ(st2.unpriced_models, std::vector<std::string>{"claude-sonnet-4-20250514"});
  EXPECT_TRUE(std::isnan(st2.groups[0].priced_cost_usd));
  // A price list that knows it prices it (LiteLLM's real map lists claude-sonnet-4-20250514).
  const auto list = price_book_of(import_price_list(litellm_prices.string()));
  stats_options sl;
  sl.prices = &list;
  const auto st3 = compute_trace_stats(sonnet4, sl);
  EXPECT_TRUE(st3.unpriced_models.empty()) << st3.unpriced_models.front();
  EXPECT_GT(st3.groups[0].priced_cost_usd, 0.0);
}

TEST(RealSessions, ModelNamesAreNormalised) {
  EXPECT_EQ(normalize_model_name("claude-opus-4-5-20251101"), "claude-opus-4-5");
  EXPECT_EQ(normalize_model_name("claude-opus-4.5"), "claude-opus-4-5");
  EXPECT_EQ(normalize_model_name("anthropic/Claude_Haiku-4.5"), "claude-haiku-4-5");
  EXPECT_EQ(normalize_model_name("gpt-5.4"), "gpt-5-4");
}

// ---- 9. A provider cache with a TTL -------------------------------------------------------------

// kv-untimed.json, 64-token blocks. Each prompt is cached from its send (+ TTFT where recorded).
// TTL 15 s: request 2 (t 10) reads request 1's 15 blocks (960 tokens); request 3 (t 30) misses
// (request 2 expired at 25); request 4 (t 40) reads request 3's 21 blocks (1,344). Hit rate
// (960 + 1,344) / (1,000 + 1,200 + 1,400 + 1,500) = 2,304 / 5,100. TTL 8 s: every gap is longer.
TEST(RealSessions, StatsWithAProviderCacheTtl) {
  const std::vector<recorded_trace> t{import_trace(data_dir / "handmade/kv-untimed.json")};
  stats_options so;
  so.cache_ttl_s = 15;
  so.cache_block_tokens = 64;
  auto st = compute_trace_stats(t, so);
  EXPECT_NEAR(st.groups.back().ttl_cache_hit_rate, 2304.0 / 5100.0, 1e-12);
  // The ideal prefix reuse (no expiry) is 960 + 1,152 + 1,344 = 3,456.
  EXPECT_NEAR(st.groups.back().metrics.cache_hit_rate, 3456.0 / 5100.0, 1e-12);
  so.cache_ttl_s = 8;
  st = compute_trace_stats(t, so);
  EXPECT_EQ(st.groups.back().ttl_cache_hit_rate, 0.0);
  // Priced with the TTL's split: Opus 4.5 bills the misses as cache writes ($6.25/M).
  const auto book = catalogue_price_book(lib());
  so.prices = &book;
  so.cache_ttl_s = 15;
  st = compute_trace_stats(t, so);
  const double expected = (2304 * 0.5 + (5100 - 2304) * 6.25 + 400 * 25.0) / 1e6;
  EXPECT_NEAR(st.groups.back().ttl_priced_cost_usd, expected, 1e-12);
}

// ---- 6. Every stop explained; partial totals marked ---------------------------------------------

TEST(RealSessions, StopsAreExplainedAndPartialTotalsMarked) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0455.json")};
  scenario_option o;
  o.targets = {lib().load_target("anthropic-tier1-claude-sonnet-4.5")};
  for (auto& b : o.first().limits) b.oversize = oversize_rule::refuse;  // as before the evidence: refused outright
  o.label = o.first().name;
  o.client = lib().load_client("claude-code");
  replay_options ro;
  ro.max_tokens = 16384;
  const auto r = run_replay(t, std::vector<scenario_option>{o}, ro);
  const auto j = nlohmann::json::parse(replay_to_json(t, r));
  const auto& x = j["options"][0];
  EXPECT_EQ(x["complete"], false);
  EXPECT_EQ(x["requests_served"], 0);
  EXPECT_EQ(x["stop"]["outcome"], "request_too_large");
  EXPECT_EQ(x["stop"]["bucket"], "otpm");
  EXPECT_EQ(x["stop"]["explanation"],
            "session 1 request 1: charges 16,384 tokens (output + reasoning) on otpm, whose whole capacity is 8,000 "
            "per 60 s: it can never be admitted");
  EXPECT_EQ(x["stop"]["what_would_change_it"],
            "a smaller max_tokens (--max-tokens; the reserve counts on otpm), a shorter prompt, or a tier with a larger otpm");
  std::ostringstream text;
  write_replay_text(text, t, r);
  EXPECT_NE(text.str().find("$0.0000 partial"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("what would change it: a smaller max_tokens"), std::string::npos);
}

// Every real session of tests/data/traces (each format that has requests) on Cerebras' Developer
// tier, Anthropic Tier 1 (Haiku sessions on Haiku, the rest on Sonnet) and a local coding preset
// completes or stops with an explanation; no total of a run that stopped reads as complete.
TEST(RealSessions, EverySessionOnTheThreeTargetsCompletesOrIsExplained) {
  const auto cerebras = lib().load_target("cerebras-developer-qwen-3.8-27b");
  const auto sonnet = lib().load_target("anthropic-tier1-claude-sonnet-4.5");
  const auto haiku = lib().load_target("anthropic-tier1-claude-haiku-4.5");
  const auto local = lib().load_target("rtx3090-llamacpp-qwen-3.8-27b-128k");
  const auto client = lib().load_client("claude-code");
  auto opt = [&](const target& tg) {
    scenario_option o;
    o.targets = {tg};
    o.label = tg.name;
    o.client = client;
    return o;
  };
  std::vector<model_map> on{{cerebras.name, {{"*", opt(cerebras)}}},
                                {"anthropic", {{"claude-haiku-*", opt(haiku)}, {"*", opt(sonnet)}}},
                                {local.name, {{"*", opt(local)}}}};
  // The outcome of each log on the three options, as measured (completed, or the stop's outcome).
  // Anthropic Tier 1's 30,000 input tokens a minute stop four: a prompt whose uncached part is
  // larger (a 58K tool result in trace_0291, a 169K compaction read cold, a 34K first Codex request).
  const std::map<std::string, std::vector<std::string>> expected{
      {"ae4a77f8-aedd-4bc1-888f-c94edc91af04__subagents__agent-aac57f5.jsonl", {"completed", "completed", "completed"}},
      {"fa812bfe-b295-4cca-9c2f-fdf01028cb46__subagents__agent-acompact-70d8e7.jsonl",
       {"completed", "died_after_retries", "completed"}},
      {"short.jsonl", {"completed", "completed", "completed"}},
      {"subagent.jsonl", {"completed", "completed", "completed"}},
      {"tool_heavy.jsonl", {"completed", "completed", "completed"}},
      {"trace_0043.json", {"completed", "died_after_retries", "completed"}},
      {"trace_0291.json", {"completed", "died_after_retries", "completed"}},
      {"trace_0455.json", {"completed", "completed", "completed"}},
      {"trace_0527.json", {"completed", "completed", "completed"}},
      {"trace_0729.json", {"completed", "completed", "completed"}},
      {"rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl", {"completed", "completed", "completed"}},
      {"rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
       {"completed", "died_after_retries", "completed"}}};
  int logs = 0, complete = 0, stopped = 0;
  for (const auto* dir : {"claude-code-jsonl", "claude-code-weka", "codex"})
    for (const auto& e : fs::directory_iterator(traces / dir)) {
      if (e.path().filename() == "LICENSE" || e.path().extension() == ".md") continue;
      SCOPED_TRACE(e.path().string());
      const std::vector<recorded_trace> t{import_trace(e.path())};
      const auto r = run_replay(t, on);
      const auto j = nlohmann::json::parse(replay_to_json(t, r));
      std::ostringstream text;
      write_replay_text(text, t, r);
      const auto& want = expected.at(e.path().filename().string());
      for (std::size_t k = 0; k < 3; ++k) {
        const auto& o = j["options"][k];
        EXPECT_EQ(o["stop"].is_null() ? std::string("completed") : o["stop"]["outcome"].get<std::string>(), want[k])
            << o["label"];
      }
      for (const auto& o : j["options"]) {
        const bool done = o["complete"];
        EXPECT_EQ(done, o["requests_served"] == o["requests_total"]);
        if (done) {
          ++complete;
          EXPECT_TRUE(o["stop"].is_null());
          continue;
        }
        ++stopped;
        EXPECT_FALSE(o["stop"]["explanation"].get<std::string>().empty());
        EXPECT_FALSE(o["stop"]["what_would_change_it"].get<std::string>().empty());
        EXPECT_NE(text.str().find(o["label"].get<std::string>() + ": " + o["stop"]["outcome"].get<std::string>()),
                  std::string::npos);
      }
      EXPECT_EQ(text.str().find(" partial") == std::string::npos, stopped == 0 || j["options"].size() == 0 ||
                                                                      std::all_of(j["options"].begin(), j["options"].end(),
                                                                                  [](const auto& o) { return o["complete"].template get<bool>(); }));
      ++logs;
    }
  EXPECT_EQ(logs, 12);
  EXPECT_EQ(complete, 32);
  EXPECT_EQ(stopped, 4);
}

// ---- 7. Missing is null -------------------------------------------------------------------------

namespace {
// Fails on any percentile object with count 0 and a number, at any depth.
void expect_nulls_without_samples(const nlohmann::json& j, const std::string& where) {
  if (j.is_object()) {
    if (j.contains("count") && j["count"] == 0)
      for (const auto* k : {"p10", "p25", "p50", "p75", "p90"})
        if (j.contains(k)) {
          EXPECT_TRUE(j[k].is_null()) << where << "/" << k << " = " << j[k];
        }
    for (const auto& [k, v] : j.items()) expect_nulls_without_samples(v, where + "/" + k);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) expect_nulls_without_samples(j[i], where + "/" + std::to_string(i));
  }
}
} // namespace

TEST(RealSessions, StatisticsWithoutSamplesAreNullInEveryJsonWriter) {
  // Claude Code logs have no first-token times: decode_tps has no samples; bins without
  // requests have none at all.
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-jsonl/subagent.jsonl")};
  const auto st = compute_trace_stats(t);
  const auto stats = nlohmann::json::parse(stats_to_json(t, st));
  EXPECT_EQ(stats["groups"][0]["decode_tps"]["count"], 0);
  expect_nulls_without_samples(stats, "stats");
  int empty_bins = 0;
  for (const auto& b : stats["groups"][0]["context_bins"])
    if (b["requests"] == 0) {
      ++empty_bins;
      EXPECT_TRUE(b["cache_hit_rate"].is_null());
      EXPECT_TRUE(b["context_output_ratio"].is_null());
    }
  EXPECT_GT(empty_bins, 0);

  const auto r = run_replay(t, std::vector<scenario_option>{unlimited()});
  expect_nulls_without_samples(nlohmann::json::parse(replay_to_json(t, r)), "replay");

  const auto scn = lib().load_scenario("reference");
  expect_nulls_without_samples(nlohmann::json::parse(to_json(run_scenario(scn))), "run");
  montecarlo_options mo;
  mo.seeds = 5;
  expect_nulls_without_samples(nlohmann::json::parse(montecarlo_to_json(scn, run_montecarlo(scn, mo))), "montecarlo");
  // A task that generates nothing has no throughput samples at all.
  auto wl = lib().load_workload("task-code-completion");
  wl.output_tokens = fixed_dist{0};
  wl.reasoning_tokens = fixed_dist{0};
  std::vector<scenario_option> opts{scn.options.front()};
  compare_options co;
  co.seeds = 2;
  max_agents_query mq;
  mq.seeds = 2;
  mq.max_agents = 2;
  expect_nulls_without_samples(nlohmann::json::parse(solve_to_json(scn, solve_max_agents(scn, mq))), "solve");
  const auto cmp = nlohmann::json::parse(compare_to_json(compare_on(wl, opts, co)));
  expect_nulls_without_samples(cmp, "compare");
  EXPECT_TRUE(cmp["options"][0]["effective_tps"].is_null() || cmp["options"][0]["effective_tps"]["count"] == 0)
      << cmp["options"][0]["effective_tps"];
}

// ---- validation and speed noise -----------------------------------------------------------------

// A small fold of the real traces: per-model speeds fitted on three logs, checked on two. The
// report has a row per held-out log and a summary; a deliberately wrong speed (ten times slower
// decode) scores worse than the fitted one.
TEST(Validate, FittedSpeedsBeatAWrongPresetOutOfSample) {
  const std::vector<recorded_trace> held{import_trace(traces / "claude-code-weka/trace_0043.json"),
                                         import_trace(traces / "claude-code-weka/trace_0291.json")};
  const std::vector<recorded_trace> train{import_trace(traces / "claude-code-weka/trace_0455.json"),
                                          import_trace(traces / "claude-code-weka/trace_0527.json"),
                                          import_trace(traces / "claude-code-weka/trace_0729.json")};
  std::vector<std::string> notes;
  const auto fitted = fitted_targets(train, 30, true, &notes);
  ASSERT_EQ(fitted.entries.size(), 4u);  // three models with >= 30 requests, then the pooled fit
  EXPECT_EQ(fitted.entries.back().pattern, "*");
  validation_options vo;
  vo.seeds = 5;
  const auto good = validate_replay(held, fitted, vo);
  ASSERT_EQ(good.traces.size(), 2u);
  EXPECT_EQ(good.summary.traces, 2u);
  EXPECT_EQ(good.summary.requests, 54u);  // 22 timed requests in trace_0043, 32 in trace_0291
  EXPECT_EQ(good.seeds, 5);
  EXPECT_FALSE(std::isnan(good.summary.coverage));
  for (const auto& t : good.traces) {
    EXPECT_GE(t.ks, 0.0);
    EXPECT_LE(t.ks, 1.0);
    EXPECT_NEAR(t.cache_share_diff, 0.0, 0.01);  // the replay's cache holds what the recording's ideal one did
  }
  auto wrong = fitted;
  for (auto& r : wrong.entries) {
    r.option.first().speed.decode = constant_curve{0.2};  // 5 tokens/s
    r.option.first().speed.noise_sigma = 0;
    r.option.first().speed.session_sigma = 0;
  }
  const auto bad = validate_replay(held, wrong, vo);
  EXPECT_EQ(bad.seeds, 1);  // no noise: one replay per log
  EXPECT_GT(bad.summary.ape_p50_median, 2 * good.summary.ape_p50_median);
  EXPECT_GT(bad.summary.total_error_abs_median, good.summary.total_error_abs_median);
}

// Speed noise: the same seed gives the same durations, another seed others; the median factor
// scales the times; the preset reads median and P90.
TEST(Validate, SpeedNoiseIsSeededAndScalesTimes) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0455.json")};
  auto o = unlimited();
  o.first().speed.decode = constant_curve{0.01};
  o.first().speed.noise_median = 1.0;
  o.first().speed.noise_sigma = 0.3;
  replay_options a, b;
  a.seed = 1;
  b.seed = 2;
  const auto r1 = run_replay(t, std::vector<scenario_option>{o}, a);
  const auto r1b = run_replay(t, std::vector<scenario_option>{o}, a);
  const auto r2 = run_replay(t, std::vector<scenario_option>{o}, b);
  const auto& x = r1.options[0].sim.requests;
  ASSERT_EQ(x.size(), r1b.options[0].sim.requests.size());
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i].t_end, r1b.options[0].sim.requests[i].t_end);
  EXPECT_NE(r1.options[0].sim.wall_s, r2.options[0].sim.wall_s);
  // A median factor of 2 with no spread doubles every request's time.
  auto slow = unlimited();
  slow.first().speed = o.first().speed;
  slow.first().speed.noise_sigma = 0;
  slow.first().speed.noise_median = 2;
  auto plain = slow;
  plain.first().speed.noise_median = 1;
  const auto s = run_replay(t, std::vector<scenario_option>{slow}).options[0].sim.requests;
  const auto p = run_replay(t, std::vector<scenario_option>{plain}).options[0].sim.requests;
  ASSERT_EQ(s.size(), p.size());
  EXPECT_NEAR(s[0].t_end - s[0].t_send, 2 * (p[0].t_end - p[0].t_send), 1e-9);
  const auto tgt = parse_target(R"({"kind":"target","name":"n","source":"s","read_on":"2026-11-30","type":"local","provider":"p",
    "tier":"t","model":"m","context_window_tokens":1000,"limits":{"sends_retry_after":false,"buckets":[]},
    "cache":{"enabled":false},"speed":{"overhead_s":0,"prefill":{"kind":"constant","tokens_per_second":1000},
    "cached_token_s":0,"decode":{"kind":"constant","tokens_per_second":50},"noise":{"kind":"lognormal","median":0.9,"p90":1.2}},
    "power":{"load_power_w":0,"idle_power_w":0,"usd_per_kwh":0}})", "n.json");
  EXPECT_DOUBLE_EQ(tgt.speed.noise_median, 0.9);
  EXPECT_NEAR(tgt.speed.noise_sigma, std::log(1.2 / 0.9) / 1.2815515655446004, 1e-12);
}

// The session factor: every request of a session is scaled by one draw, drawn once per session;
// sessions differ; the preset reads it as the factor's P90.
TEST(Validate, SessionSpeedFactorScalesAWholeSession) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0291.json")};
  auto plain = unlimited();
  plain.first().speed.decode = constant_curve{0.01};
  auto varied = plain;
  varied.first().speed.session_sigma = 0.3;
  // Each session's request durations in send order (sessions overlap, so the timeline's order differs).
  const auto by_session = [&](const scenario_option& o) {
    std::map<std::uint32_t, std::vector<double>> d;
    auto rs = run_replay(t, std::vector<scenario_option>{o}).options[0].sim.requests;
    std::stable_sort(rs.begin(), rs.end(), [](const auto& a, const auto& b) { return a.t_send < b.t_send; });
    for (const auto& r : rs) d[r.session].push_back(r.t_end - r.t_send);
    return d;
  };
  const auto p = by_session(plain), v = by_session(varied);
  ASSERT_EQ(p.size(), v.size());
  std::map<std::uint32_t, double> factor;
  for (const auto& [session, durations] : p) {
    const auto& other = v.at(session);
    ASSERT_EQ(durations.size(), other.size());
    factor[session] = other[0] / durations[0];
    for (std::size_t i = 1; i < durations.size(); ++i)
      EXPECT_NEAR(other[i] / durations[i], factor[session], 1e-9) << "session " << session << " request " << i;
  }
  ASSERT_GE(factor.size(), 2u);  // a main session and its subagents
  EXPECT_NE(factor.begin()->second, std::next(factor.begin())->second);
  const auto tgt = parse_target(R"({"kind":"target","name":"n","source":"s","read_on":"2026-11-30","type":"local","provider":"p",
    "tier":"t","model":"m","context_window_tokens":1000,"limits":{"sends_retry_after":false,"buckets":[]},
    "cache":{"enabled":false},"speed":{"overhead_s":0,"prefill":{"kind":"constant","tokens_per_second":1000},
    "cached_token_s":0,"decode":{"kind":"constant","tokens_per_second":50},
    "noise":{"kind":"lognormal","median":1,"p90":1.2,"session_p90":1.5}},
    "power":{"load_power_w":0,"idle_power_w":0,"usd_per_kwh":0}})", "n.json");
  EXPECT_NEAR(tgt.speed.session_sigma, std::log(1.5) / 1.2815515655446004, 1e-12);
}

// Time of day: with factor 1 + h in UTC hour h, each replayed request takes (1 + its send's UTC
// hour) times as long as without factors; started at 13:30 UTC the first request runs 14 times
// as long. A preset gives the 24 factors and refuses any other number.
TEST(Validate, HourFactorsScaleEachRequestByItsUtcHour) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0291.json")};
  auto plain = unlimited();
  plain.first().speed.decode = constant_curve{0.01};
  auto hourly = plain;
  for (int h = 0; h < 24; ++h) hourly.first().speed.hour_factors.push_back(1.0 + h);
  replay_options ro;
  ro.start_unix_s = 1'793'577'600.0 + 13.5 * 3600;  // 2026-11-02 13:30 UTC
  const auto p = run_replay(t, std::vector<scenario_option>{plain}, ro).options[0].sim.requests;
  const auto h = run_replay(t, std::vector<scenario_option>{hourly}, ro).options[0].sim.requests;
  ASSERT_EQ(p.size(), h.size());
  ASSERT_GT(p.size(), 10u);
  // Requests start later when earlier ones took longer: each session's k-th request against its
  // k-th, at the hour of its own send.
  const auto by_session = [](std::vector<request_sample> rs) {
    std::stable_sort(rs.begin(), rs.end(), [](const auto& a, const auto& b) {
      return a.session != b.session ? a.session < b.session : a.t_send < b.t_send;
    });
    return rs;
  };
  const auto ps = by_session(p), hs = by_session(h);
  std::vector<double> ratios;
  for (std::size_t i = 0; i < hs.size(); ++i) {
    ASSERT_EQ(hs[i].session, ps[i].session);
    const double ratio = (hs[i].t_end - hs[i].t_send) / (ps[i].t_end - ps[i].t_send);
    EXPECT_NEAR(ratio, 1.0 + static_cast<double>(utc_hour(ro.start_unix_s + hs[i].t_send)), 1e-9) << i;
    ratios.push_back(ratio);
  }
  EXPECT_NEAR(*std::min_element(ratios.begin(), ratios.end()), 14.0, 1e-9);
  try {
    (void)parse_target(R"({"kind":"target","name":"n","source":"s","read_on":"2026-11-30","type":"local","provider":"p",
      "tier":"t","model":"m","context_window_tokens":1000,"limits":{"sends_retry_after":false,"buckets":[]},
      "cache":{"enabled":false},"speed":{"overhead_s":0,"prefill":{"kind":"constant","tokens_per_second":1000},
      "cached_token_s":0,"decode":{"kind":"constant","tokens_per_second":50},"hour_factors":[1,2,3]},
      "power":{"load_power_w":0,"idle_power_w":0,"usd_per_kwh":0}})", "n.json");
    FAIL() << "expected a config_error";
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("expected 24 factors, one per UTC hour 0-23, found 3"), std::string::npos) << e.what();
  }
}

// Output kinds: with factors 2 for thinking, 3 for text and 5 for a tool call, each replayed
// request of trace_0291 takes the product of its recorded kinds' factors times as long (its 32
// timed requests: 12 thinking + tool call = 10×, 10 text + tool call = 15×, 5 all three = 30×,
// 3 text + thinking = 6×, 2 text = 3×); the kinds come from kv-cache-tester's output_types. A
// preset names the four factors.
TEST(Validate, OutputKindsScaleEachReplayedRequest) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0291.json")};
  auto plain = unlimited();
  plain.first().speed.decode = constant_curve{0.01};
  auto kinds = plain;
  kinds.first().speed.output = {2, 3, 5, 7};
  const auto p = run_replay(t, std::vector<scenario_option>{plain}, {}).options[0].sim.requests;
  const auto k = run_replay(t, std::vector<scenario_option>{kinds}, {}).options[0].sim.requests;
  ASSERT_EQ(p.size(), k.size());
  // Each session's i-th request against its i-th (later sends when earlier requests took longer).
  std::map<std::uint32_t, std::vector<double>> plain_time;
  for (const auto& r : p) plain_time[r.session].push_back(r.t_end - r.t_send);
  std::map<std::uint32_t, std::size_t> seen;
  std::map<long, int> ratios;
  for (const auto& r : k) ratios[std::lround((r.t_end - r.t_send) / plain_time.at(r.session).at(seen[r.session]++) * 1000)]++;
  EXPECT_EQ(ratios, (std::map<long, int>{{3000, 2}, {6000, 3}, {10000, 12}, {15000, 10}, {30000, 5}}));
  const auto tgt = parse_target(R"({"kind":"target","name":"n","source":"s","read_on":"2026-11-30","type":"local","provider":"p",
    "tier":"t","model":"m","context_window_tokens":1000,"limits":{"sends_retry_after":false,"buckets":[]},
    "cache":{"enabled":false},"speed":{"overhead_s":0,"prefill":{"kind":"constant","tokens_per_second":1000},
    "cached_token_s":0,"decode":{"kind":"constant","tokens_per_second":50},
    "output_factors":{"thinking":1.2,"text":0.9,"tool_use":1,"unknown":1.05}},
    "power":{"load_power_w":0,"idle_power_w":0,"usd_per_kwh":0}})", "n.json");
  EXPECT_EQ(tgt.speed.output.thinking, 1.2);
  EXPECT_EQ(tgt.speed.output.unknown, 1.05);
  EXPECT_EQ(output_factor(tgt.speed.output, output_thinking | output_text), 1.2 * 0.9);
  try {
    (void)parse_target(R"({"kind":"target","name":"n","source":"s","read_on":"2026-11-30","type":"local","provider":"p",
      "tier":"t","model":"m","context_window_tokens":1000,"limits":{"sends_retry_after":false,"buckets":[]},
      "cache":{"enabled":false},"speed":{"overhead_s":0,"prefill":{"kind":"constant","tokens_per_second":1000},
      "cached_token_s":0,"decode":{"kind":"constant","tokens_per_second":50},
      "output_factors":{"thinking":0,"text":1,"tool_use":1,"unknown":1}},
      "power":{"load_power_w":0,"idle_power_w":0,"usd_per_kwh":0}})", "n.json");
    FAIL() << "expected a config_error";
  } catch (const config_error& e) {
    EXPECT_EQ(std::string(e.what()), "n.json: /speed/output_factors/thinking: expected a number between 0.05 and 20, found 0");
  }
}

// Speeds fitted up to a context: a replay says how many requests reach past it (counted here from
// the recording, prompt + output + reasoning) and holds their per-token times at the edge, so
// they take less time than the straight line would give them.
TEST(Validate, ReplaySaysWhichRequestsPassTheFittedContexts) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0291.json")};
  auto o = unlimited();
  o.first().name = "fitted";
  o.first().speed.decode = linear_curve{0.01, 1e-7};
  auto bounded = o;
  bounded.first().speed.context_max_tokens = 50000;
  std::size_t past = 0, total = 0;
  std::int64_t largest = 0;
  for (const auto& s : t[0].sessions)
    for (const auto& r : s.requests) {
      ++total;
      const auto c = r.tokens.prompt() + r.tokens.generated();
      if (c > 50000) ++past, largest = std::max(largest, c);
    }
  ASSERT_GT(past, 0u);
  const auto b = run_replay(t, std::vector<scenario_option>{bounded});
  EXPECT_EQ(b.shaping[0].notes, std::vector<std::string>{fmt::format(
                                    "{} of {} requests on fitted reach past the contexts its speeds were fitted on (50000 "
                                    "tokens; largest {}): their per-token times are held at the fitted edge, not extrapolated",
                                    past, total, largest)});
  const auto u = run_replay(t, std::vector<scenario_option>{o});
  EXPECT_TRUE(u.shaping[0].notes.empty());
  EXPECT_LT(b.options[0].sim.busy_s, u.options[0].sim.busy_s);
  // A preset gives the bound as speed.context_max_tokens (`loopcast fit` writes it).
  const auto tgt = parse_target(R"({"kind":"target","name":"n","source":"s","read_on":"2026-11-30","type":"local","provider":"p",
    "tier":"t","model":"m","context_window_tokens":1000,"limits":{"sends_retry_after":false,"buckets":[]},
    "cache":{"enabled":false},"speed":{"overhead_s":0,"prefill":{"kind":"constant","tokens_per_second":1000},
    "cached_token_s":0,"decode":{"kind":"constant","tokens_per_second":50},"context_max_tokens":120000},
    "power":{"load_power_w":0,"idle_power_w":0,"usd_per_kwh":0}})", "n.json");
  EXPECT_EQ(tgt.speed.context_max_tokens, 120000.0);
}

// fit per model: a pattern keeps that model's requests; pooling models says so.
TEST(Validate, FitPerModel) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-weka/trace_0291.json")};
  const auto opus = fit_speed_model(t, "claude-opus-*");
  EXPECT_EQ(opus.models, std::vector<std::string>{"claude-opus-4-5-20251101"});
  const auto all = fit_speed_model(t);
  ASSERT_EQ(all.models.size(), 2u);
  EXPECT_NE(all.notes.front().find("2 models pooled into one curve"), std::string::npos);
  EXPECT_GT(all.noise_sigma, 0.0);
  EXPECT_THROW((void)fit_speed_model(t, "gpt-*"), error);
}
