// "What did my sessions cost?": Claude Code transcripts made by hand with known answers (cache
// writes by lifetime, streamed usage, copies of a transcript, 5-hour blocks, time zones), prices
// from the bundled list, and a real log priced to the cent.
#include "loopcast/presets.hpp"
#include "loopcast/price_lists.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/report.hpp"
#include "loopcast/stats.hpp"
#include "loopcast/trace.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace loopcast;
namespace fs = std::filesystem;

namespace {
using loopcast::test_support::lib;
using loopcast::test_support::litellm_prices;
using loopcast::test_support::run_cli;
using loopcast::test_support::scratch;
using loopcast::test_support::traces;

// One Claude Code response line: a message id, request id, time, usage and the folder it ran in.
struct cc_usage {
  std::int64_t input = 0, read = 0, write_5m = 0, write_1h = 0, output = 0;
};
std::string user_line(const std::string& ts, const std::string& cwd = "/home/u/app") {
  return R"({"type":"user","sessionId":"S","uuid":"u-)" + ts + R"(","isSidechain":false,"cwd":")" + cwd +
         R"(","timestamp":")" + ts + R"(","message":{"role":"user","content":"go"}})";
}
std::string response_line(const std::string& msg, const std::string& req, const std::string& ts, const cc_usage& u,
                          const std::string& model = "claude-opus-4-6", const std::string& cwd = "/home/u/app") {
  nlohmann::json usage = {{"input_tokens", u.input},
                          {"cache_read_input_tokens", u.read},
                          {"cache_creation_input_tokens", u.write_5m + u.write_1h},
                          {"cache_creation", {{"ephemeral_5m_input_tokens", u.write_5m}, {"ephemeral_1h_input_tokens", u.write_1h}}},
                          {"output_tokens", u.output}};
  nlohmann::json j = {{"type", "assistant"}, {"sessionId", "S"},  {"uuid", "a-" + msg + ts}, {"isSidechain", false},
                      {"cwd", cwd},          {"timestamp", ts},   {"requestId", req},
                      {"message", {{"model", model}, {"id", msg}, {"role", "assistant"},
                                    {"content", {{{"type", "text"}, {"text", "ok"}}}}, {"usage", usage}}}};
  return j.dump();
}
fs::path write_log(const std::string& name, const std::vector<std::string>& lines) {
  const auto p = scratch("accounting", name);
  fs::create_directories(p.parent_path());
  std::ofstream out(p);
  for (const auto& l : lines) out << l << "\n";
  return p;
}

// Claude Opus 4.6 in the bundled LiteLLM map: input $5, cache read $0.50, 5-minute write $6.25,
// 1-hour write $10, output $25 per million tokens.
const model_price_book& bundled_book() {
  static const model_price_book b = load_price_book("", lib(), {"claude-opus-4-6"});
  return b;
}
stats_options priced(stats_grouping by = stats_grouping::model, const std::string& tz = "UTC") {
  stats_options o;
  o.prices = &bundled_book();
  o.by = by;
  o.timezone = tz;
  return o;
}

} // namespace

// input 10 × $5 + reads 20,000 × $0.50 + 5-minute writes 1,000 × $6.25 + 1-hour writes 2,000 × $10
// + output 5 × $25, per million: 0.00005 + 0.01 + 0.00625 + 0.02 + 0.000125 = $0.036425.
TEST(Accounting, CacheWritesArePricedByLifetime) {
  const auto log = write_log("split.jsonl", {user_line("2026-03-01T10:00:00.000Z"),
                                             response_line("msg_1", "req_1", "2026-03-01T10:00:05.000Z", {10, 20000, 1000, 2000, 5})});
  const std::vector<recorded_trace> t{import_trace(log)};
  EXPECT_EQ(t[0].sessions[0].requests[0].tokens, (token_counts{10, 20000, 1000, 5, 0, 2000}));
  const auto st = compute_trace_stats(t, priced());
  ASSERT_EQ(st.groups.size(), 2u);
  EXPECT_NEAR(st.groups[0].priced_cost_usd, 0.036425, 1e-12);
  EXPECT_EQ(st.groups[0].unpriced_requests, 0u);
  // Priced from the catalogue's Opus 4.6 preset, which says so.
  ASSERT_EQ(st.pricing.size(), 1u);
  EXPECT_EQ(st.pricing[0].model, "claude-opus-4-6");
  EXPECT_EQ(st.pricing[0].priced_as, "anthropic-tier1-claude-opus-4.6");
  EXPECT_EQ(st.pricing[0].source, "the preset catalogue");
}

// A streamed response logs one line per content block, the early ones with a partial output
// count (5, then 120): the response counts once, with its final usage.
TEST(Accounting, AStreamedMessageCountsOnceWithItsFinalUsage) {
  const auto log = write_log("stream.jsonl", {user_line("2026-03-01T10:00:00.000Z"),
                                              response_line("msg_1", "req_1", "2026-03-01T10:00:02.000Z", {3, 100, 0, 50, 5}),
                                              response_line("msg_1", "req_1", "2026-03-01T10:00:09.000Z", {3, 100, 0, 50, 120})});
  const auto t = import_trace(log);
  ASSERT_EQ(t.request_count(), 1u);
  EXPECT_EQ(t.sessions[0].requests[0].tokens, (token_counts{3, 100, 0, 120, 0, 50}));
}

// Claude Code copies a session's history into a new file when it is resumed: the copy in another
// project folder adds nothing, and what was dropped is said.
TEST(Accounting, ATranscriptCopiedIntoAnotherProjectCountsOnce) {
  const std::vector<std::string> lines{user_line("2026-03-01T10:00:00.000Z"),
                                       response_line("msg_1", "req_1", "2026-03-01T10:00:05.000Z", {10, 20000, 1000, 2000, 5}),
                                       user_line("2026-03-01T10:01:00.000Z"),
                                       response_line("msg_2", "req_2", "2026-03-01T10:01:04.000Z", {4, 23000, 0, 300, 40})};
  const auto a = write_log("copies/-home-u-app/original.jsonl", lines);
  auto resumed = lines;  // the resumed session: the history, then a response of its own
  resumed.push_back(user_line("2026-03-01T11:00:00.000Z"));
  resumed.push_back(response_line("msg_3", "req_3", "2026-03-01T11:00:03.000Z", {7, 0, 0, 24000, 9}));
  const auto b = write_log("copies/-home-u-other/resumed.jsonl", resumed);
  const auto t = import_traces({a.parent_path().parent_path()});
  ASSERT_EQ(t.size(), 2u);
  std::size_t requests = 0;
  for (const auto& x : t) requests += x.request_count();
  EXPECT_EQ(requests, 3u);  // msg_1, msg_2 once; msg_3
  const auto& copy = t[0].file == b.string() ? t[0] : t[1];
  EXPECT_EQ(copy.summary.skipped.at(std::string(repeated_response_reason)), 2);
  EXPECT_EQ(copy.request_count(), 1u);
  const auto st = compute_trace_stats(t, priced());
  EXPECT_EQ(st.repeated_responses, 2);
  EXPECT_EQ(st.groups.back().requests, 3u);
  // A line without a request id is never taken for a repeat (ccusage's rule).
  std::vector<recorded_trace> twice{import_trace(a), import_trace(a)};
  for (auto& x : twice)
    for (auto& s : x.sessions)
      for (auto& r : s.requests) r.response_key = 0;
  EXPECT_EQ(drop_repeated_responses(twice), 0);
}

// Plan windows: a block opens at the whole hour of the first request after the last block ended
// and lasts 5 hours. Requests at 10:20, 14:59 (block 10:00–15:00), 15:10 (block 15:00–20:00), then
// after a gap 23:40 and 02:00 the next day (block 23:00–04:00).
TEST(Accounting, BlocksAreFiveHourWindowsFromTheHour) {
  std::vector<std::string> lines;
  int k = 0;
  for (const char* ts : {"2026-03-01T10:20:00.000Z", "2026-03-01T14:59:00.000Z", "2026-03-01T15:10:00.000Z",
                         "2026-03-01T23:40:00.000Z", "2026-03-02T02:00:00.000Z"}) {
    ++k;
    lines.push_back(user_line(ts));
    lines.push_back(response_line("msg_" + std::to_string(k), "req_" + std::to_string(k), ts, {1, 0, 0, 0, 1}));
  }
  const std::vector<recorded_trace> t{import_trace(write_log("blocks.jsonl", lines))};
  const auto st = compute_trace_stats(t, priced(stats_grouping::block));
  ASSERT_EQ(st.groups.size(), 4u);  // three blocks and "all"
  EXPECT_EQ(st.groups[0].name, "2026-03-01 10:00");
  EXPECT_EQ(st.groups[0].requests, 2u);
  EXPECT_EQ(st.groups[1].name, "2026-03-01 15:00");
  EXPECT_EQ(st.groups[1].requests, 1u);
  EXPECT_EQ(st.groups[2].name, "2026-03-01 23:00");
  EXPECT_EQ(st.groups[2].requests, 2u);
  EXPECT_EQ(st.groups[2].start_unix, 1772406000.0);  // 2026-03-01T23:00:00Z
  EXPECT_EQ(st.groups[2].end_unix - st.groups[2].start_unix, 5 * 3600.0);
  // The same blocks named in Tokyo's time (+9 h).
  const auto tokyo = compute_trace_stats(t, priced(stats_grouping::block, "Asia/Tokyo"));
  EXPECT_EQ(tokyo.groups[2].name, "2026-03-02 08:00");
}

// Days are local: 23:30 and 00:30 UTC fall on two UTC days, on one day in New York (18:30 and
// 19:30 on 1 March, UTC−5) and on one in Tokyo (08:30 and 09:30 on 2 March, UTC+9).
TEST(Accounting, DaysFollowTheTimeZoneAcrossMidnight) {
  const std::vector<recorded_trace> t{import_trace(
      write_log("midnight.jsonl", {user_line("2026-03-01T23:30:00.000Z"),
                                   response_line("msg_1", "req_1", "2026-03-01T23:30:01.000Z", {1, 0, 0, 0, 1}),
                                   user_line("2026-03-02T00:30:00.000Z"),
                                   response_line("msg_2", "req_2", "2026-03-02T00:30:01.000Z", {1, 0, 0, 0, 1})}))};
  auto names = [&](const std::string& tz, stats_grouping by) {
    std::vector<std::string> out;
    for (const auto& g : compute_trace_stats(t, priced(by, tz)).groups) out.push_back(g.name);
    return out;
  };
  EXPECT_EQ(names("UTC", stats_grouping::day), (std::vector<std::string>{"2026-03-01", "2026-03-02", "all"}));
  EXPECT_EQ(names("America/New_York", stats_grouping::day), (std::vector<std::string>{"2026-03-01", "all"}));
  EXPECT_EQ(names("Asia/Tokyo", stats_grouping::day), (std::vector<std::string>{"2026-03-02", "all"}));
  // Weeks from Monday: 1 March 2026 is a Sunday (week of 23 February), 2 March a Monday.
  EXPECT_EQ(names("UTC", stats_grouping::week), (std::vector<std::string>{"2026-02-23", "2026-03-02", "all"}));
  EXPECT_EQ(names("UTC", stats_grouping::month), (std::vector<std::string>{"2026-03", "all"}));
  // --since/--until are local days: New York's 1 March holds both requests.
  EXPECT_EQ(local_day_start("--since", "2026-03-01", "America/New_York"), 1772341200.0);  // 05:00 UTC
  EXPECT_EQ(local_day_start("--until", "2026-03-01", "America/New_York", 1), 1772427600.0);
  EXPECT_THROW((void)local_day_start("--since", "2026-02-30", "UTC"), std::invalid_argument);
  EXPECT_THROW((void)time_zone_name("Mars/Olympus"), std::invalid_argument);
}

// Each group split by model, and a model no list knows: named, the totals that lack it partial.
TEST(Accounting, BreakdownAndPartialTotals) {
  const std::vector<recorded_trace> t{import_trace(
      write_log("mixed.jsonl", {user_line("2026-03-01T10:00:00.000Z"),
                                response_line("msg_1", "req_1", "2026-03-01T10:00:05.000Z", {10, 20000, 1000, 2000, 5}),
                                user_line("2026-03-01T10:01:00.000Z"),
                                response_line("msg_2", "req_2", "2026-03-01T10:01:05.000Z", {100, 0, 0, 0, 10},
                                              "claude-imaginary-9")}))};
  auto o = priced(stats_grouping::day);
  o.breakdown = true;
  const auto st = compute_trace_stats(t, o);
  EXPECT_EQ(st.unpriced_models, std::vector<std::string>{"claude-imaginary-9"});
  ASSERT_EQ(st.groups.size(), 2u);
  const auto& day = st.groups[0];
  EXPECT_NEAR(day.priced_cost_usd, 0.036425, 1e-12);  // the Opus request alone
  EXPECT_EQ(day.unpriced_requests, 1u);
  ASSERT_EQ(day.models.size(), 2u);
  EXPECT_EQ(day.models[0].name, "claude-imaginary-9");
  EXPECT_TRUE(std::isnan(day.models[0].priced_cost_usd));
  EXPECT_EQ(day.models[1].name, "claude-opus-4-6");
  EXPECT_NEAR(day.models[1].priced_cost_usd, 0.036425, 1e-12);
  std::ostringstream text;
  write_stats_text(text, t, st);
  EXPECT_NE(text.str().find("$0.0364*"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("not priced (no price list knows these models; give --price-list FILE): "
                            "claude-imaginary-9; totals that lack them are partial (*)"),
            std::string::npos);
}

// The provider's own entry before a reseller's: LiteLLM lists azure_ai/claude-opus-4-6 before
// claude-opus-4-6; a log that names the reseller's entry gets it.
TEST(Accounting, TheProvidersOwnEntryBeforeAResellers) {
  const auto book = price_book_of(import_price_list(litellm_prices.string()), "LiteLLM", "2026-07-24");
  const auto* e = book.find("claude-opus-4-6");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->model, "claude-opus-4-6");
  EXPECT_EQ(book.find("azure_ai/claude-opus-4-6")->model, "azure_ai/claude-opus-4-6");
  EXPECT_TRUE(is_reseller("vertex_ai-anthropic_models"));
  EXPECT_TRUE(is_reseller("openrouter/anthropic/claude-opus-4.5"));
  EXPECT_FALSE(is_reseller("anthropic"));
  // The catalogue before the bundled list: Sonnet 4.5 from its preset, the one with the
  // long-context tier (a logged prompt above 200K ran in the 1M window): 250K input tokens and
  // 1,000 output at $6 / $22.50 per million = $1.5225, not $0.765 at the base prices.
  const auto catalogue = load_price_book("", lib());
  const auto* sonnet = catalogue.find("claude-sonnet-4-5-20250929");
  ASSERT_NE(sonnet, nullptr);
  EXPECT_EQ(sonnet->from, "anthropic-tier1-claude-sonnet-4.5-1m");
  EXPECT_NEAR(price_request(sonnet->prices, {250000, 0, 0, 1000, 0}, 0).total_usd, 1.5225, 1e-12);
}

// subagent.jsonl, by hand from its usage fields (each response at its largest counts): 12
// responses of claude-opus-4-6, input 1,576 × $5, cache reads 427,286 × $0.50, 1-hour writes
// 25,842 × $10, output 1,586 × $25 per million = 0.00788 + 0.213643 + 0.25842 + 0.03965 =
// $0.519593; and 5 of claude-haiku-4-5 that a subagent (afb92ff) sent, known only from their
// echoes in `progress` records (no subagents/ file): input 24 × $1, cache reads 95,343 × $0.10,
// 1-hour writes 14,285 × $2, output 7 × $5 = 0.000024 + 0.0095343 + 0.02857 + 0.000035 =
// $0.0381633. ccusage 20.0.11's daily view of the file gives the same two model costs.
TEST(Accounting, ARealClaudeCodeLogPricedToTheCent) {
  const std::vector<recorded_trace> t{import_trace(traces / "claude-code-jsonl/subagent.jsonl")};
  const auto st = compute_trace_stats(t, priced());
  ASSERT_EQ(st.groups.size(), 3u);  // haiku, opus, all
  EXPECT_EQ(st.groups[1].tokens, (token_counts{1576, 427286, 0, 1586, 0, 25842}));
  EXPECT_NEAR(st.groups[1].priced_cost_usd, 0.519593, 1e-9);
  EXPECT_EQ(st.groups[0].tokens, (token_counts{24, 95343, 0, 7, 0, 14285}));
  EXPECT_NEAR(st.groups[0].priced_cost_usd, 0.0381633, 1e-9);
  EXPECT_NEAR(st.groups.back().priced_cost_usd, 0.5577563, 1e-9);
  const auto r = run_cli("--models " + test_support::models + " stats " + (traces / "claude-code-jsonl/subagent.jsonl").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("priced $0.5578 (prices of anthropic-tier1-claude-haiku-4.5, anthropic-tier1-claude-opus-4.6)"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("prices: claude-opus-4-6 as anthropic-tier1-claude-opus-4.6 (the preset catalogue)"),
            std::string::npos);
}

// A log folder whose name starts with '-' (Claude Code's project folders do) works after "--";
// before it, it is refused as a path taken for an option, never help with exit 0.
TEST(Accounting, PathsThatLookLikeOptions) {
  const auto dir = scratch("accounting", "-home-u-dash");
  fs::create_directories(dir);
  fs::copy_file(traces / "claude-code-jsonl/short.jsonl", dir / "short.jsonl", fs::copy_options::overwrite_existing);
  const auto cd = "cd " + dir.parent_path().string() + " && ";  // run where the folder is
  const auto r = [&](const std::string& args) {
    const auto out = scratch("accounting", "out"), err = scratch("accounting", "err");
    const int status = std::system((cd + LOOPCAST_CLI + " --models " + test_support::models + " " + args + " >" +
                                    out.string() + " 2>" + err.string()).c_str());
    return test_support::run_result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, test_support::slurp(out),
                                    test_support::slurp(err)};
  };
  const auto before = r("stats -home-u-dash");
  EXPECT_EQ(before.code, 2);
  EXPECT_EQ(before.err, "loopcast: -home-u-dash: not an option, but an existing file or folder: put paths that start "
                        "with '-' after \"--\" (e.g. loopcast stats -- -home-u-dash)\n");
  const auto after = r("stats --verbose -- -home-u-dash");
  EXPECT_EQ(after.code, 0) << after.err;
  EXPECT_NE(after.out.find("-home-u-dash/short.jsonl (claude-code): 1 request from 15 records"), std::string::npos) << after.out;
}

// The README's headline replay on a folder with subagents: each request runs on its own model's
// target inside one session, and the report says what each target served.
TEST(Accounting, AModelMapRunsEachRequestOnItsModelsTarget) {
  const auto r = run_cli("--models " + test_support::models + " replay " + (traces / "claude-code-jsonl").string() +
                         " --on 'claude-sonnet-*=anthropic-tier1-claude-sonnet-4.5,*=anthropic-tier1-claude-opus-4.5' "
                         "--no-limits --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& route = j["options"][0]["route"]["targets"];
  ASSERT_EQ(route.size(), 2u);
  // Three requests of Sonnet 4.5 (one subagent's), eighteen of Opus 4.6 and five of Haiku 4.5 (a
  // subagent known from its echoes in subagent.jsonl) on the Opus target.
  EXPECT_EQ(route[0]["target"], "anthropic-tier1-claude-sonnet-4.5");
  EXPECT_EQ(route[0]["requests_served"], 3);
  EXPECT_EQ(route[1]["target"], "anthropic-tier1-claude-opus-4.5");
  EXPECT_EQ(route[1]["requests_served"], 23);
}
