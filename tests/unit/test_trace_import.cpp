// Log importers against the real traces in tests/data/traces, with expected
// numbers derived independently (by reading the lines, or a throwaway script, noted per test),
// and fixtures the tests build: an opencode database through the real schema, broken files.
#include "loopcast/errors.hpp"
#include "loopcast/trace.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace loopcast;
namespace fs = std::filesystem;

namespace {
using loopcast::test_support::scratch;
using loopcast::test_support::traces;

std::string trace_error_of(const fs::path& p, trace_format f = trace_format::automatic) {
  try {
    (void)import_trace(p, f);
  } catch (const trace_error& e) {
    return e.what();
  }
  return "no error";
}

token_counts sum(const recorded_trace& t) {
  token_counts s;
  for (const auto& x : t.sessions)
    for (const auto& r : x.requests) s += r.tokens;
  return s;
}

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << "\n" << sql;
}
} // namespace

TEST(ImportDetect, EachFormatFromItsContent) {
  EXPECT_EQ(detect_trace_format(traces / "claude-code-jsonl/short.jsonl"), trace_format::claude_code);
  EXPECT_EQ(detect_trace_format(traces / "codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"),
            trace_format::codex);
  EXPECT_EQ(detect_trace_format(traces / "claude-code-weka/trace_0043.json"), trace_format::kv_cache_tester);
  EXPECT_EQ(detect_trace_format(traces / "swe-agent/pydicom__pydicom-1458.traj"), trace_format::swe_agent);
  EXPECT_EQ(detect_trace_format(traces / "opencode/empty_opencode.db"), trace_format::opencode);
}

// short.jsonl (read line by line): one response, msg_01MKH1ccEGrZGNPvu8pYiiQa, on lines 5–10 (five
// content blocks; every line repeats the same usage). Sent at line 4 (21:11:56.846), first tool_use
// block at line 8 (21:12:01.117): 4.271 s. usage: input 3, cache_creation 13,835 (all 1-hour writes:
// cache_creation.ephemeral_1h_input_tokens 13,835), cache_read 11,515, output 13.
TEST(ImportClaudeCode, DeduplicatesContentBlocksIntoOneRequest) {
  const auto t = import_trace(traces / "claude-code-jsonl/short.jsonl");
  EXPECT_EQ(t.format, trace_format::claude_code);
  ASSERT_EQ(t.request_count(), 1u);
  const auto& r = t.sessions[0].requests[0];
  EXPECT_EQ(r.tokens, (token_counts{3, 11515, 0, 13, 0, 13835}));
  EXPECT_NEAR(r.t_end - r.t_send, 4.271, 1e-6);
  EXPECT_TRUE(std::isnan(r.t_first_token));
  EXPECT_FALSE(t.has_ttft);
  EXPECT_EQ(t.models.at(0), "claude-opus-4-6");
  EXPECT_EQ(r.source_line, 5);
}

// tool_heavy.jsonl: four responses (lines 5; 12–13; 27–30; 34 and 37). The last one's output grows
// from 25 (line 34) to 173 (line 37): the largest count is kept.
//   input 3 + 1 + 3 + 47 = 54; cache_read 17,915 + 25,798 + 18,014 + 26,504 = 88,231;
//   cache writes 7,883 + 208 + 8,490 + 1,115 = 17,696, every one a 1-hour write; output 27 + 1 + 11 + 173 = 212.
TEST(ImportClaudeCode, KeepsTheLargestStreamingCounts) {
  const auto t = import_trace(traces / "claude-code-jsonl/tool_heavy.jsonl");
  ASSERT_EQ(t.request_count(), 4u);
  EXPECT_EQ(sum(t), (token_counts{54, 88231, 0, 212, 0, 17696}));
  const auto& last = t.sessions[0].requests[3];
  EXPECT_EQ(last.tokens.output, 173);
  // Sent at line 33 (22:59:33.333), its first tool_use at line 34 (22:59:36.157).
  EXPECT_NEAR(last.t_end - last.t_send, 2.824, 1e-6);
  // What each response held, from its content blocks' types over all its lines: a tool call; text
  // and a tool call; text, thinking and two tool calls; two tool calls.
  const std::uint8_t kinds[] = {output_tool_use, output_text | output_tool_use,
                                output_text | output_thinking | output_tool_use, output_tool_use};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(t.sessions[0].requests[i].output_kinds, kinds[i]) << i;
}

TEST(ImportClaudeCode, SubagentAndCompactionFilesAreTheirOwnSessions) {
  const auto sub = import_trace(traces / "claude-code-jsonl/ae4a77f8-aedd-4bc1-888f-c94edc91af04__subagents__agent-aac57f5.jsonl");
  ASSERT_EQ(sub.sessions.size(), 1u);
  EXPECT_NE(sub.sessions[0].id.find("sidechain"), std::string::npos);  // isSidechain lines
  const auto compact =
      import_trace(traces / "claude-code-jsonl/fa812bfe-b295-4cca-9c2f-fdf01028cb46__subagents__agent-acompact-70d8e7.jsonl");
  ASSERT_GE(compact.request_count(), 1u);
  for (const auto& r : compact.sessions[0].requests) EXPECT_TRUE(r.compaction);
}

// Codex (script): one request per growth of total_token_usage.total_tokens (each token_count is
// emitted twice); input includes cached, output includes reasoning:
//   28 requests; uncached 99,460; cached 1,651,968; output 10,307; reasoning 4,293; total 1,766,028.
TEST(ImportCodex, CountsEachResponseOnceAndSplitsClasses) {
  const auto t = import_trace(traces / "codex/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl");
  EXPECT_EQ(t.format, trace_format::codex);
  ASSERT_EQ(t.request_count(), 28u);
  const auto s = sum(t);
  EXPECT_EQ(s, (token_counts{99460, 1651968, 0, 10307, 4293}));
  EXPECT_EQ(s.total(), 1766028);
  // First response: turn_context 11:41:32.247, first function_call 11:41:38.901; 17,102 input of
  // which 3,456 cached; 281 output of which 141 reasoning.
  const auto& r = t.sessions[0].requests[0];
  EXPECT_EQ(r.tokens, (token_counts{13646, 3456, 0, 140, 141}));
  EXPECT_NEAR(r.t_end - r.t_send, 6.654, 1e-6);
  EXPECT_EQ(t.models.at(0), "gpt-5.3-codex");
  // rate_limits as recorded (script): 11 distinct snapshots, the 5-hour window's use going from 2% to 6%.
  ASSERT_EQ(t.rate_limits.size(), 11u);
  const auto first = nlohmann::json::parse(t.rate_limits.front().json);
  const auto last = nlohmann::json::parse(t.rate_limits.back().json);
  EXPECT_EQ(first.at("primary").at("used_percent"), 2.0);
  EXPECT_EQ(first.at("primary").at("window_minutes"), 300);
  EXPECT_EQ(last.at("primary").at("used_percent"), 6.0);
}

// kv-cache-tester: the file's own totals block (parent + subagents) equals the imported sums:
// input + cache_read = Σ in, output = Σ out.
TEST(ImportKvCacheTester, TotalsMatchTheTraceAndSubagentsAreParallel) {
  struct expect {
    const char* file;
    std::int64_t in, out;
    std::size_t sessions;
  };
  for (const auto& e : {expect{"trace_0043.json", 1508817, 17750, 1}, expect{"trace_0291.json", 2254119, 19504, 3},
                        expect{"trace_0455.json", 2099358, 8464, 1}, expect{"trace_0527.json", 1420918, 15471, 1},
                        expect{"trace_0729.json", 2241769, 12960, 1}}) {
    SCOPED_TRACE(e.file);
    const auto t = import_trace(traces / "claude-code-weka" / e.file);
    const auto s = sum(t);
    EXPECT_EQ(s.input + s.cache_read, e.in);
    EXPECT_EQ(s.output, e.out);
    EXPECT_EQ(t.sessions.size(), e.sessions);
    EXPECT_TRUE(t.has_prefix);
    EXPECT_EQ(t.summary.skipped.size(), 0u);
  }
  const auto t = import_trace(traces / "claude-code-weka/trace_0291.json");
  EXPECT_EQ(t.sessions[1].parent, 0);
  // Subagent agent_001 starts at 1,148.013 s; its requests' t are relative to that.
  EXPECT_NEAR(t.sessions[1].requests[0].t_send, 1148.013, 1e-9);
  EXPECT_NEAR(t.sessions[1].requests[1].t_send, 1153.013, 1e-9);
}

// trace_0043 request 1 (t 0, 15,818 in, 247 hash ids): nothing cached yet. Request 2 (t 10, 16,003 in,
// 250 ids) repeats the first 247 ids: 247 × 64 = 15,808 cached, 195 uncached. Request 1 has no
// api_time (no response timing): it keeps its tokens and has no end time. think_time is not read:
// the replay derives the agent's time from the send times (docs/trace-format.md).
TEST(ImportKvCacheTester, IdealCacheFromHashIds) {
  const auto t = import_trace(traces / "claude-code-weka/trace_0043.json");
  const auto& r = t.sessions[0].requests;
  EXPECT_EQ(r[0].tokens, (token_counts{15818, 0, 0, 132, 0}));
  EXPECT_TRUE(std::isnan(r[0].t_end));
  EXPECT_EQ(r[1].tokens, (token_counts{195, 15808, 0, 125, 0}));
  EXPECT_DOUBLE_EQ(r[1].t_end - r[1].t_send, 3.43);
  EXPECT_DOUBLE_EQ(r[1].t_first_token - r[1].t_send, 1.92);
  EXPECT_TRUE(t.has_ttft);
  EXPECT_TRUE(std::isnan(r[2].delay_before_s));
}

TEST(ImportSweAgent, TotalsOnly) {
  const auto t = import_trace(traces / "swe-agent/pydicom__pydicom-1458.traj");
  ASSERT_TRUE(t.totals.has_value());
  EXPECT_EQ(t.totals->api_calls, 12);
  EXPECT_EQ(t.totals->tokens_sent, 122612);
  EXPECT_EQ(t.totals->tokens_received, 1369);
  EXPECT_DOUBLE_EQ(t.totals->cost_usd, 1.26719);
  EXPECT_EQ(t.request_count(), 0u);
}

// An opencode database built from the real (empty) one: two sessions (s2 a subagent of s1).
//   m1 (s1): created 1,771,840,000.000 s, text part starts at +1.5 s, tool parts at +5.0 and +5.2 s,
//            finish tool-calls → end +5.0 s; tokens input 1,200, cache read 20,000, write 500,
//            output 300, reasoning 150; cost $0.0123.
//   m2 (s1): user message: not a request.
//   m3 (s1): finish stop, created +10 s, completed +14 s, no parts: end +14 s, no first token.
//   m4 (s1): no time.completed: skipped as unfinished.
//   m5 (s2): created +6 s, completed +8 s; input 100, output 60.
TEST(ImportOpencode, DatabaseThroughTheRealSchema) {
  const auto db_path = scratch("import", "opencode.db");
  fs::copy_file(traces / "opencode/empty_opencode.db", db_path, fs::copy_options::overwrite_existing);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  exec(db, "INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('p', '/w', 0, 0, '[]')");
  exec(db, "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated) "
           "VALUES ('s1', 'p', NULL, 'a', '/w', 'main', '1', 1, 1), ('s2', 'p', 's1', 'b', '/w', 'sub', '1', 2, 2)");
  const std::string m1 = R"({"role":"assistant","time":{"created":1771840000000,"completed":1771840006000},)"
                         R"("modelID":"claude-sonnet-4-5","providerID":"anthropic","cost":0.0123,)"
                         R"("tokens":{"input":1200,"output":300,"reasoning":150,"cache":{"read":20000,"write":500}},"finish":"tool-calls"})";
  const std::string m2 = R"({"role":"user","time":{"created":1771840009000}})";
  const std::string m3 = R"({"role":"assistant","time":{"created":1771840010000,"completed":1771840014000},"modelID":"claude-sonnet-4-5",)"
                         R"("tokens":{"input":800,"output":120,"reasoning":0,"cache":{"read":21500,"write":0}},"finish":"stop"})";
  const std::string m4 = R"({"role":"assistant","time":{"created":1771840020000},"modelID":"claude-sonnet-4-5",)"
                         R"("tokens":{"input":1,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}})";
  const std::string m5 = R"({"role":"assistant","time":{"created":1771840006000,"completed":1771840008000},"modelID":"claude-haiku-4-5",)"
                         R"("tokens":{"input":100,"output":60,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"})";
  exec(db, "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES "
           "('m1', 's1', 1, 1, '" + m1 + "'), ('m2', 's1', 2, 2, '" + m2 + "'), ('m3', 's1', 3, 3, '" + m3 +
           "'), ('m4', 's1', 4, 4, '" + m4 + "'), ('m5', 's2', 5, 5, '" + m5 + "')");
  exec(db, "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES "
           R"(('p1', 'm1', 's1', 1, 1, '{"type":"text","text":"x","time":{"start":1771840001500,"end":1771840004000}}'),)"
           R"(('p2', 'm1', 's1', 1, 1, '{"type":"tool","tool":"read","state":{"status":"completed","time":{"start":1771840005200,"end":1771840007000}}}'),)"
           R"(('p3', 'm1', 's1', 1, 1, '{"type":"tool","tool":"bash","state":{"status":"completed","time":{"start":1771840005000,"end":1771840009000}}}'))");
  sqlite3_close(db);

  const auto t = import_trace(db_path);
  EXPECT_EQ(t.format, trace_format::opencode);
  ASSERT_EQ(t.sessions.size(), 2u);
  ASSERT_EQ(t.sessions[0].requests.size(), 2u);
  const auto& r1 = t.sessions[0].requests[0];
  EXPECT_EQ(r1.tokens, (token_counts{1200, 20000, 500, 300, 150}));
  EXPECT_DOUBLE_EQ(r1.t_send, 1771840000.0);
  EXPECT_DOUBLE_EQ(r1.t_first_token, 1771840001.5);
  EXPECT_DOUBLE_EQ(r1.t_end, 1771840005.0);
  EXPECT_DOUBLE_EQ(r1.cost_usd, 0.0123);
  const auto& r3 = t.sessions[0].requests[1];
  EXPECT_DOUBLE_EQ(r3.t_end - r3.t_send, 4.0);
  EXPECT_TRUE(std::isnan(r3.t_first_token));
  EXPECT_EQ(t.sessions[1].parent, 0);
  EXPECT_EQ(t.sessions[1].requests[0].tokens, (token_counts{100, 0, 0, 60, 0}));
  EXPECT_EQ(t.summary.skipped.at("unfinished assistant message (no time.completed)"), 1);
  EXPECT_EQ(t.summary.issues.at(0).line, 4);  // the message's row
  EXPECT_EQ(t.models, (std::vector<std::string>{"claude-sonnet-4-5", "claude-haiku-4-5"}));
}

TEST(ImportOpencode, EmptyDatabaseYieldsNoRequestsAndSaysSo) {
  EXPECT_EQ(trace_error_of(traces / "opencode/empty_opencode.db"),
            (traces / "opencode/empty_opencode.db").string() + ": no usable request in 0 records read");
}

TEST(ImportOpencode, ASqliteFileThatIsNotOpencodes) {
  const auto path = scratch("import", "other.db");
  fs::remove(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, "CREATE TABLE foo (x INTEGER)");
  sqlite3_close(db);
  EXPECT_EQ(trace_error_of(path), path.string() + ": not an opencode database (it lacks the session, message and part tables)");
}

TEST(ImportBadInput, TruncatedAndNonJsonLinesAreSkippedWithTheirLine) {
  // tool_heavy.jsonl with line 12 cut in half and a line of garbage after line 20.
  std::ifstream in(traces / "claude-code-jsonl/tool_heavy.jsonl");
  std::ostringstream out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (n == 12) line = line.substr(0, line.size() / 2);
    out << line << "\n";
    if (n == 20) out << "this is not json\n";
  }
  const auto path = scratch("import", "broken.jsonl");
  std::ofstream(path) << out.str();
  const auto t = import_trace(path, trace_format::claude_code);
  EXPECT_EQ(t.summary.skipped.at("not JSON"), 2);
  EXPECT_EQ(t.summary.issues.at(0).line, 12);
  EXPECT_EQ(t.summary.issues.at(1).line, 21);
  EXPECT_EQ(t.summary.issues.at(0).reason.rfind("not JSON: column ", 0), 0u);
  EXPECT_EQ(t.summary.issues.at(1).reason,
            "not JSON: column 2: syntax error while parsing value - invalid literal; last read: 'th'");
  // Response msg_01NU… survives through line 13 (line 12 is lost): still 4 requests.
  EXPECT_EQ(t.request_count(), 4u);
}

TEST(ImportBadInput, EmptyUnknownAndUnusableFiles) {
  const auto empty = scratch("import", "empty.jsonl");
  std::ofstream(empty).close();
  EXPECT_EQ(trace_error_of(empty), empty.string() + ": empty file");
  const auto unknown = scratch("import", "unknown.jsonl");
  std::ofstream(unknown) << "{\"hello\": 1}\n{\"world\": 2}\n";
  EXPECT_EQ(trace_error_of(unknown),
            unknown.string() + ": unknown log format (expected Claude Code or Codex JSONL, an opencode database, a "
                               "kv-cache-tester or SWE-agent JSON, or a loopcast trace); use --format to say which");
  // A Claude Code file whose assistant lines lack usage: no request at all is an error, not zero.
  const auto no_usage = scratch("import", "no_usage.jsonl");
  std::ofstream(no_usage) << R"({"type":"user","timestamp":"2026-02-10T21:11:56.846Z","message":{"role":"user","content":"hi"}})" "\n"
                          << R"({"type":"assistant","timestamp":"2026-02-10T21:11:58.000Z","message":{"id":"m","model":"x","content":[]}})" "\n";
  EXPECT_EQ(trace_error_of(no_usage, trace_format::claude_code),
            no_usage.string() + ": no usable request in 2 records read (skipped: 1 missing usage)");
  EXPECT_EQ(trace_error_of(scratch("import", "missing.jsonl")), scratch("import", "missing.jsonl").string() + ": cannot open file");
}

TEST(ImportBadInput, OutOfOrderTimestampsAreSortedAndNoted) {
  const auto path = scratch("import", "order.jsonl");
  std::ofstream(path) << R"({"loopcast_trace":1})" "\n"
                      << R"({"session":"s","model":"m","t_send":10,"t_end":12,"input":10,"cache_read":0,"cache_write":0,"output":60,"reasoning":0})" "\n"
                      << R"({"session":"s","model":"m","t_send":5,"t_end":7,"input":20,"cache_read":0,"cache_write":0,"output":60,"reasoning":0})" "\n";
  const auto t = import_trace(path);
  ASSERT_EQ(t.request_count(), 2u);
  EXPECT_EQ(t.sessions[0].requests[0].t_send, 5.0);
  EXPECT_EQ(t.summary.issues.at(0).line, 3);
  EXPECT_EQ(t.summary.issues.at(0).reason, "timestamp earlier than the previous request's; requests sorted by send time");
}

TEST(ImportDirectory, MixedFormatsEachOnItsOwn) {
  const auto all = import_traces({traces / "codex", traces / "swe-agent"});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].format, trace_format::codex);
  EXPECT_EQ(all[2].format, trace_format::swe_agent);
}

TEST(ConvertRoundTrip, EveryImporterWritesLoopcastJsonlThatReadsBack) {
  for (const auto& f : {traces / "claude-code-weka/trace_0291.json", traces / "claude-code-jsonl/subagent.jsonl",
                        traces / "codex/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl"}) {
    SCOPED_TRACE(f.string());
    const auto a = import_trace(f);
    const auto path = scratch("import", "round.jsonl");
    {
      std::ofstream out(path);
      write_loopcast_jsonl(out, a);
    }
    const auto b = import_trace(path);
    EXPECT_EQ(b.format, trace_format::loopcast);
    ASSERT_EQ(a.sessions.size(), b.sessions.size());
    for (std::size_t s = 0; s < a.sessions.size(); ++s) {
      ASSERT_EQ(a.sessions[s].requests.size(), b.sessions[s].requests.size());
      EXPECT_EQ(a.sessions[s].parent, b.sessions[s].parent);
      for (std::size_t i = 0; i < a.sessions[s].requests.size(); ++i) {
        const auto& x = a.sessions[s].requests[i];
        const auto& y = b.sessions[s].requests[i];
        EXPECT_EQ(x.tokens, y.tokens);
        EXPECT_EQ(x.t_send, y.t_send);
        EXPECT_TRUE(x.t_end == y.t_end || (std::isnan(x.t_end) && std::isnan(y.t_end)));
        EXPECT_EQ(x.runs_count, y.runs_count);
      }
    }
    EXPECT_EQ(a.runs.size(), b.runs.size());
    EXPECT_EQ(a.lineages, b.lineages);
  }
}

// The older opencode storage folder: storage/message/<session>/<message>.json,
// storage/part/<message>/<part>.json, storage/session/<project>/<session>.json (parentID).
// The same records as the database test: m1 (tool-calls, tool parts at +5.0 and +5.2 s), m5 in a subagent.
TEST(ImportOpencode, StorageFolder) {
  const auto root = scratch("import", "opencode_folder");
  fs::remove_all(root);
  const auto storage = root / "storage";
  fs::create_directories(storage / "message/s1");
  fs::create_directories(storage / "message/s2");
  fs::create_directories(storage / "part/m1");
  fs::create_directories(storage / "session/p");
  std::ofstream(storage / "message/s1/m1.json")
      << R"({"id":"m1","sessionID":"s1","role":"assistant","time":{"created":1771840000000,"completed":1771840006000},)"
      << R"("modelID":"claude-sonnet-4-5","cost":0.0123,"tokens":{"input":1200,"output":300,"reasoning":150,)"
      << R"("cache":{"read":20000,"write":500}},"finish":"tool-calls"})";
  std::ofstream(storage / "message/s1/m2.json") << R"({"id":"m2","sessionID":"s1","role":"user","time":{"created":1771840009000}})";
  std::ofstream(storage / "message/s2/m5.json")
      << R"({"id":"m5","sessionID":"s2","role":"assistant","time":{"created":1771840006000,"completed":1771840008000},)"
      << R"("modelID":"claude-haiku-4-5","tokens":{"input":100,"output":60,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"})";
  std::ofstream(storage / "message/s2/broken.json") << "{not json";
  std::ofstream(storage / "part/m1/p1.json") << R"({"type":"text","time":{"start":1771840001500,"end":1771840004000}})";
  std::ofstream(storage / "part/m1/p2.json") << R"({"type":"tool","state":{"status":"completed","time":{"start":1771840005200}}})";
  std::ofstream(storage / "part/m1/p3.json") << R"({"type":"tool","state":{"status":"completed","time":{"start":1771840005000}}})";
  std::ofstream(storage / "session/p/s1.json") << R"({"id":"s1"})";
  std::ofstream(storage / "session/p/s2.json") << R"({"id":"s2","parentID":"s1"})";

  EXPECT_EQ(detect_trace_format(root), trace_format::opencode);
  const auto t = import_trace(root);
  ASSERT_EQ(t.sessions.size(), 2u);
  ASSERT_EQ(t.sessions[0].requests.size(), 1u);
  const auto& r1 = t.sessions[0].requests[0];
  EXPECT_EQ(r1.tokens, (token_counts{1200, 20000, 500, 300, 150}));
  EXPECT_DOUBLE_EQ(r1.t_first_token, 1771840001.5);
  EXPECT_DOUBLE_EQ(r1.t_end, 1771840005.0);
  EXPECT_EQ(t.sessions[1].parent, 0);
  EXPECT_EQ(t.sessions[1].requests[0].tokens, (token_counts{100, 0, 0, 60, 0}));
  EXPECT_EQ(t.summary.skipped.at("unreadable message file"), 1);
  fs::remove_all(root);
}

// Several logs of one account as one trace: subagent.jsonl (a main session and its sidechain) and
// tool_heavy.jsonl side by side, each session with its requests, models merged by name, the
// sidechain's parent moved with it; a copied transcript of tool_heavy counts once; a log with
// relative times is refused by name.
TEST(MergeLogs, PutsAnAccountsLogsOnOneClock) {
  const auto sub = import_trace(traces / "claude-code-jsonl/subagent.jsonl");
  const auto heavy = import_trace(traces / "claude-code-jsonl/tool_heavy.jsonl");
  const auto m = merge_logs({sub, heavy});
  ASSERT_EQ(m.sessions.size(), sub.sessions.size() + heavy.sessions.size());
  EXPECT_EQ(m.request_count(), sub.request_count() + heavy.request_count());
  EXPECT_TRUE(m.absolute_clock);
  EXPECT_EQ(m.file, "2 logs (" + sub.file + ", " + heavy.file + ")");
  for (std::size_t i = 0; i < heavy.sessions.size(); ++i) {
    const auto& s = m.sessions[sub.sessions.size() + i];
    ASSERT_EQ(s.requests.size(), heavy.sessions[i].requests.size());
    for (std::size_t k = 0; k < s.requests.size(); ++k) {
      EXPECT_EQ(s.requests[k].tokens, heavy.sessions[i].requests[k].tokens);
      EXPECT_EQ(m.models.at(static_cast<std::size_t>(s.requests[k].model)),
                heavy.models.at(static_cast<std::size_t>(heavy.sessions[i].requests[k].model)));
    }
    EXPECT_EQ(s.parent, heavy.sessions[i].parent < 0 ? -1 : heavy.sessions[i].parent + static_cast<std::int32_t>(sub.sessions.size()));
  }
  for (std::size_t i = 0; i < sub.sessions.size(); ++i) EXPECT_EQ(m.sessions[i].parent, sub.sessions[i].parent);
  // Each model once, by name.
  std::vector<std::string> names = m.models;
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  // A transcript copied into another file (a resumed session) counts once.
  const auto copy = scratch("merge", "resumed.jsonl");
  fs::copy_file(traces / "claude-code-jsonl/tool_heavy.jsonl", copy, fs::copy_options::overwrite_existing);
  const auto both = import_traces({traces / "claude-code-jsonl/tool_heavy.jsonl", copy});
  ASSERT_EQ(both.size(), 2u);  // the copy is left without requests, and merging passes it over
  EXPECT_EQ(merge_logs(both).request_count(), heavy.request_count());
  // kv-cache-tester times are relative to each trace's start: no common clock.
  const auto kv = import_trace(traces / "claude-code-weka/trace_0291.json");
  try {
    (void)merge_logs({heavy, kv});
    FAIL() << "expected a trace_error";
  } catch (const trace_error& e) {
    EXPECT_EQ(std::string(e.what()), kv.file + ": its times are relative to its start (as kv-cache-tester's): it cannot be "
                                               "put on one clock with other logs");
  }
}
