// Workloads fitted to recorded sessions, and their validation against held-out ones
// (include/loopcast/workload_fit.hpp, validate.hpp).
#include "loopcast/errors.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/report.hpp"
#include "loopcast/validate.hpp"
#include "loopcast/workload_fit.hpp"

#include "test_support.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>

using namespace loopcast;
namespace fs = std::filesystem;

namespace {
using loopcast::test_support::data_dir;
using loopcast::test_support::lib;
using loopcast::test_support::traces;
const price_sheet& sonnet_prices() {
  static const auto t = lib().load_target("anthropic-tier1-claude-sonnet-4.5");
  return *t.prices;
}
std::vector<recorded_trace> weka(std::initializer_list<const char*> names) {
  std::vector<fs::path> paths;
  for (const char* n : names) paths.push_back(traces / "claude-code-weka" / n);
  return import_traces(paths);
}
} // namespace

// tests/data/handmade/README.md derives each number.
TEST(WorkloadFit, HandMadeSessions) {
  const auto t = import_traces({data_dir / "handmade" / "fit-workload.jsonl"});
  const auto f = fit_workload(t);
  const auto& w = f.w;
  EXPECT_EQ(f.sessions, 2u);
  EXPECT_EQ(f.requests, 8u);
  EXPECT_EQ(f.compactions, 1u);
  EXPECT_EQ(f.growth_samples, 5u);
  EXPECT_EQ(f.timed_delays, 6u);
  EXPECT_EQ(w.system_prompt_tokens, 2000);
  EXPECT_EQ(quantile(w.task_tokens, 0), 0.0);
  EXPECT_EQ(quantile(w.task_tokens, 1), 500.0);
  EXPECT_EQ(quantile(w.turns, 0), 3.0);
  EXPECT_EQ(quantile(w.turns, 1), 4.0);
  ASSERT_EQ(w.tool_result_bands.size(), 1u);  // 5 samples: every band merged into the first
  EXPECT_EQ(w.tool_result_bands[0].from_turn, 1);
  EXPECT_EQ(quantile(w.tool_result_bands[0].tokens, 0.5), 1000.0);
  EXPECT_EQ(quantile(w.tool_result_bands[0].tokens, 0), 600.0);
  EXPECT_EQ(quantile(w.tool_result_bands[0].tokens, 1), 1500.0);
  EXPECT_EQ(quantile(w.tool_time_s, 0.5), 8.0);
  EXPECT_TRUE(std::holds_alternative<fixed_dist>(w.output_tokens));
  EXPECT_EQ(quantile(w.output_tokens, 0.5), 100.0);
  EXPECT_FALSE(w.output_in_context);
  EXPECT_EQ(w.context_window_tokens, 5120);
  ASSERT_TRUE(w.compaction.enabled);
  EXPECT_EQ(w.compaction.at_fraction, 0.879);
  EXPECT_EQ(w.session_scale.sigma, 0.0);  // fewer than 10 sessions with 4+ growth samples
  EXPECT_EQ(w.cache_breaks.probability, 0.0);  // no exact prefixes in this log
  EXPECT_NE(std::find(f.notes.begin(), f.notes.end(), "the logs carry no exact prefixes: cache breaks are not fitted"),
            f.notes.end());

  // The preset it writes loads back as the same workload: same sessions from the same seeds.
  const auto text = workload_fit_to_json(f, {"fit-workload.jsonl"});
  const auto back = parse_workload(text, "fitted.json");
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto a = generate_session(w, seed), b = generate_session(back, seed);
    ASSERT_EQ(a.requests.size(), b.requests.size());
    for (std::size_t i = 0; i < a.requests.size(); ++i) EXPECT_EQ(a.requests[i].prompt_tokens, b.requests[i].prompt_tokens);
    // A session has 3 or 4 turns, plus its compactions.
    std::size_t turns = 0;
    for (const auto& r : a.requests) turns += r.compaction ? 0 : 1;
    EXPECT_GE(turns, 3u);
    EXPECT_LE(turns, 4u);
  }
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j.at("fitted_on").at("sessions"), 2);
  EXPECT_EQ(j.at("fitted_on").at("compactions"), 1);
  EXPECT_EQ(j.at("source"), nlohmann::json::array({"fit-workload.jsonl"}));
}

TEST(WorkloadFit, RealTracesConserveTheirCounts) {
  const auto t = weka({"trace_0043.json", "trace_0291.json", "trace_0455.json", "trace_0527.json", "trace_0729.json"});
  std::size_t requests = 0;
  std::int64_t smallest_first = std::numeric_limits<std::int64_t>::max();
  for (const auto& tr : t)
    for (const auto& s : tr.sessions)
      if (s.parent < 0) {
        requests += s.requests.size();
        smallest_first = std::min(smallest_first, s.requests.front().tokens.prompt());
      }
  const auto f = fit_workload(t);
  EXPECT_EQ(f.sessions, 5u);
  EXPECT_EQ(f.requests, requests);
  EXPECT_EQ(f.w.system_prompt_tokens, smallest_first);
  EXPECT_EQ(f.break_candidates + f.compactions + f.sessions, f.requests);  // every later request is one or the other
  EXPECT_GT(f.cache_breaks, 0u);  // kv-cache-tester hash ids show them
  EXPECT_LE(upper_bound(f.w.cache_breaks.kept_fraction), 1.0);
}

namespace {
// One session with exact prefixes: 21 requests growing by 1,000 from 10,000 (request 10 breaks
// the cache: a new lineage after the 2,000-token system prompt), a restart at 5,000 (a compaction
// the prompt's drop shows), then `after` requests growing by 1,000, every 4th of them breaking.
recorded_trace breaking_session(int after) {
  recorded_trace t;
  t.file = "handmade";
  t.models = {"m"};
  t.has_prefix = true;
  auto& s = t.sessions.emplace_back();
  std::uint32_t lineage = 1;
  auto add = [&](std::int64_t prompt, bool breaks) {
    if (breaks) ++lineage;
    recorded_request r;
    r.t_send = 10.0 * static_cast<double>(s.requests.size());
    r.t_end = r.t_send + 2;
    r.tokens.input = prompt;
    r.tokens.output = 100;
    r.runs_begin = static_cast<std::uint32_t>(t.runs.size());
    r.runs_count = 2;
    t.runs.push_back({0, 2000});
    t.runs.push_back({lineage, prompt});
    s.requests.push_back(r);
  };
  for (int i = 0; i <= 20; ++i) add(10000 + 1000 * i, i == 10);
  add(5000, true);
  for (int k = 1; k <= after; ++k) add(5000 + 1000 * k, k % 4 == 0);
  t.lineages = lineage + 1;
  return t;
}
} // namespace

// Cache breaks before and after a session's first compaction, by hand: 1 of 20 requests before
// (0.05), 10 of 40 after (0.25). With 29 after (7 breaks) the split has too few samples (< 30):
// one rate, 8 of 49 = 0.16327.
TEST(WorkloadFit, CacheBreaksBeforeAndAfterTheFirstCompaction) {
  auto f = fit_workload({breaking_session(40)});
  EXPECT_EQ(f.compactions, 1u);
  EXPECT_EQ(f.break_candidates, 60u);
  EXPECT_EQ(f.cache_breaks, 11u);
  EXPECT_EQ(f.candidates_after_compaction, 40u);
  EXPECT_EQ(f.breaks_after_compaction, 10u);
  EXPECT_EQ(f.w.cache_breaks.probability, 0.05);
  EXPECT_EQ(f.w.cache_breaks.after_compaction_probability, 0.25);
  EXPECT_NE(std::find(f.notes.begin(), f.notes.end(),
                      "cache breaks: 1 of 20 requests before a session's first compaction, 10 of 40 after it"),
            f.notes.end());
  // The fitted preset carries both rates and reads back.
  const auto back = parse_workload(workload_fit_to_json(f, {"handmade"}), "fitted.json");
  EXPECT_EQ(back.cache_breaks.probability, 0.05);
  EXPECT_EQ(back.cache_breaks.after_compaction_probability, 0.25);
  f = fit_workload({breaking_session(29)});
  EXPECT_EQ(f.cache_breaks, 8u);
  EXPECT_EQ(f.w.cache_breaks.probability, 0.16327);
  EXPECT_LT(f.w.cache_breaks.after_compaction_probability, 0.0);
}

TEST(WorkloadFit, NothingToFitIsAnError) {
  const auto t = import_traces({data_dir / "handmade" / "fit-workload.jsonl"});
  workload_fit_options o;
  o.model_pattern = "gpt-*";
  try {
    (void)fit_workload(t, o);
    FAIL() << "expected a trace_error";
  } catch (const trace_error& e) {
    EXPECT_STREQ(e.what(), (t.front().file + ": no top-level session of a model matching 'gpt-*'").c_str());
  }
}

// A small fold: fit on three real sessions, compare with two held out. The fitted workload must
// come closer to them than a deliberately wrong one (two-turn sessions with tiny results).
TEST(WorkloadFit, ValidateScoresTheFittedWorkloadBetterThanAWrongOne) {
  const auto train = weka({"trace_0043.json", "trace_0291.json", "trace_0455.json"});
  const auto held = weka({"trace_0527.json", "trace_0729.json"});
  const auto fitted = fit_workload(train).w;
  auto wrong = fitted;
  wrong.turns = fixed_dist{2};
  wrong.tool_result_bands = {{1, fixed_dist{10}}};
  const auto a = validate_workload(held, fitted, sonnet_prices(), 200, 1);
  const auto b = validate_workload(held, wrong, sonnet_prices(), 200, 1);
  ASSERT_EQ(a.measures.size(), 4u);
  const char* names[] = {"requests per session", "context growth per request", "prompt tokens per request", "cost per session"};
  double ks_a = 0, ks_b = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a.measures[i].name, names[i]);
    ASSERT_FALSE(std::isnan(a.measures[i].ks));
    EXPECT_GE(a.measures[i].ks, 0.0);
    EXPECT_LE(a.measures[i].ks, 1.0);
    EXPECT_LE(a.measures[i].real.p10, a.measures[i].real.p90);
    ks_a += a.measures[i].ks;
    ks_b += b.measures[i].ks;
  }
  EXPECT_EQ(a.real_sessions, 2u);
  EXPECT_EQ(a.synthetic_sessions, 200u);
  EXPECT_LT(ks_a, ks_b);
  // Every wrong session has 2 requests; the real ones have more: KS of session length is 1.
  EXPECT_EQ(b.measures[0].ks, 1.0);
  // Same seed, same answer.
  EXPECT_EQ(workload_validation_to_json(a), workload_validation_to_json(validate_workload(held, fitted, sonnet_prices(), 200, 1)));
}

// The cost of a synthetic session at given prices, by hand: a fixed 2-turn workload with a
// 1,000-token system prompt, 500-token task, 100 output and 1,000-token tool results.
// Request 1: 1,500 input; request 2: 2,600 prompt of which 1,500 read from the cache.
TEST(WorkloadFit, ShapeOfASyntheticSession) {
  workload w;
  w.system_prompt_tokens = 1000;
  w.task_tokens = fixed_dist{500};
  w.turns = fixed_dist{2};
  w.output_tokens = fixed_dist{100};
  w.tool_result_tokens = fixed_dist{1000};
  w.context_window_tokens = 100000;
  price_sheet p;
  p.usd_per_million = {3, 0.3, 3.75, 6, 15, 15};
  const auto sh = shape_of(generate_session(w, 1), p);
  EXPECT_EQ(sh.requests, 2.0);
  EXPECT_EQ(sh.prompts, (std::vector<double>{1500, 2600}));
  EXPECT_EQ(sh.growth, (std::vector<double>{1100}));
  EXPECT_NEAR(sh.cost_usd, (1500 * 3 + 100 * 15 + 1100 * 3 + 1500 * 0.3 + 100 * 15) / 1e6, 1e-12);
}
