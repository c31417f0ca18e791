// Trees of logs as real accounts hold them (import_traces on folders, import_machines): stub
// files, subagents known only from their echoes, copied transcripts, files that are no logs,
// several machines' copies. Every count and cost is derived by hand from the fixtures' lines.
#include "loopcast/errors.hpp"
#include "loopcast/price_book.hpp"
#include "loopcast/report.hpp"
#include "loopcast/stats.hpp"
#include "loopcast/trace.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace loopcast;
namespace fs = std::filesystem;

namespace {
using loopcast::test_support::lib;
using loopcast::test_support::scratch;
using loopcast::test_support::traces;

void write_lines(const fs::path& p, const std::vector<std::string>& lines) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p);
  for (const auto& l : lines) out << l << "\n";
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The subagent file Claude Code would have written beside subagent.jsonl for agent afb92ff: the
// records its echoes carry (data.message), as sidechain lines. Its first response
// (msg_0199s85GE5eqHtZm2Xpv7BsK) is given its final output count, 300, where the echoes show the
// streaming partial 3.
std::vector<std::string> rebuilt_subagent_file() {
  std::vector<std::string> out;
  for (const auto& l : lines_of(traces / "claude-code-jsonl/subagent.jsonl")) {
    auto j = nlohmann::json::parse(l);
    if (j.value("type", "") != "progress" || !j.contains("data") || j["data"].value("type", "") != "agent_progress") continue;
    auto rec = j["data"]["message"];
    rec["isSidechain"] = true;
    rec["sessionId"] = j["sessionId"];
    rec["agentId"] = j["data"]["agentId"];
    if (!rec.contains("timestamp")) rec["timestamp"] = j["timestamp"];
    if (rec["type"] == "assistant" && rec["message"]["id"] == "msg_0199s85GE5eqHtZm2Xpv7BsK")
      rec["message"]["usage"]["output_tokens"] = 300;
    out.push_back(rec.dump());
  }
  return out;
}

const model_price_book& book() {
  static const model_price_book b = load_price_book("", lib(), {"claude-opus-4-6", "claude-haiku-4-5-20251001"});
  return b;
}

// A tree as ~/.claude/projects holds it:
//   p/S.jsonl                        subagent.jsonl: 12 Opus responses, and 5 Haiku ones of subagent
//                                    afb92ff known from its echoes
//   p/S/subagents/agent-afb92ff.jsonl  that subagent's own file (rebuilt_subagent_file)
//   p/S/subagents/agent-afb92ff.meta.json  no log
//   p/T/subagents/agent-b1.jsonl     a stub: a user line and a limit message, no request
//   p/short.jsonl, q/copy.jsonl      short.jsonl and a copy of it (a resumed session): 1 response
fs::path make_tree(const std::string& name) {
  const auto root = scratch("log_trees", name);
  fs::remove_all(root);
  fs::create_directories(root / "p");
  fs::copy_file(traces / "claude-code-jsonl/subagent.jsonl", root / "p/S.jsonl");
  write_lines(root / "p/S/subagents/agent-afb92ff.jsonl", rebuilt_subagent_file());
  write_lines(root / "p/S/subagents/agent-afb92ff.meta.json", {R"({"agentType":"Explore","toolUseId":"toolu_01"})"});
  write_lines(root / "p/T/subagents/agent-b1.jsonl",
              {R"({"type":"user","sessionId":"t","uuid":"u1","isSidechain":true,"timestamp":"2026-03-02T05:00:00.000Z","message":{"role":"user","content":"go"}})",
               R"({"type":"assistant","sessionId":"t","uuid":"u2","isSidechain":true,"timestamp":"2026-03-02T05:00:01.000Z","error":"rate_limit","isApiErrorMessage":true,"message":{"id":"x","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"Claude AI usage limit reached|1772431200"}],"usage":{"input_tokens":0,"output_tokens":0}}})"});
  fs::copy_file(traces / "claude-code-jsonl/short.jsonl", root / "p/short.jsonl");
  fs::create_directories(root / "q");
  fs::copy_file(traces / "claude-code-jsonl/short.jsonl", root / "q/copy.jsonl");
  return root;
}

double priced_total(const std::vector<recorded_trace>& t) {
  stats_options o;
  o.prices = &book();
  return compute_trace_stats(t, o).groups.back().priced_cost_usd;
}
} // namespace

// Requests, by hand: subagent.jsonl's 12 Opus responses, its 5 echoed Haiku ones (which give way
// to the subagent's own file: counted once, at the larger output count), short.jsonl's 1 (its copy
// left out): 18. Cost: subagent.jsonl $0.5577563 (tests/unit/test_accounting.cpp), plus 297 more
// Haiku output tokens × $5 per million = $0.001485, plus short.jsonl: input 3 × $5, cache reads
// 11,515 × $0.50, 1-hour writes 13,835 × $10, output 13 × $25 per million = $0.1444475: $0.7037188.
TEST(LogTrees, StubsEchoesAndCopiesCountEachResponseOnce) {
  const auto root = make_tree("tree");
  import_notes notes;
  const auto t = import_traces({root}, trace_format::automatic, &notes, 1);
  std::size_t requests = 0, without = 0, cutoffs = 0;
  for (const auto& x : t) {
    requests += x.request_count();
    if (x.request_count() == 0) ++without;
    cutoffs += x.walls.size();
  }
  EXPECT_EQ(requests, 18u);
  EXPECT_EQ(t.size(), 5u);    // the five .jsonl files; the copy and the stub stay, without requests
  EXPECT_EQ(without, 2u);     // the stub, and the copy (its one response counted in short.jsonl)
  EXPECT_EQ(cutoffs, 1u);     // the stub's limit message is kept
  ASSERT_EQ(notes.not_logs.size(), 1u);
  EXPECT_EQ(notes.not_logs[0].file, (root / "p/S/subagents/agent-afb92ff.meta.json").string());
  EXPECT_NEAR(priced_total(t), 0.5577563 + 0.001485 + 0.1444475, 1e-9);
  // The same from two threads, to the byte.
  const auto two = import_traces({root}, trace_format::automatic, nullptr, 2);
  stats_options o;
  o.prices = &book();
  EXPECT_EQ(stats_to_json(t, compute_trace_stats(t, o)), stats_to_json(two, compute_trace_stats(two, o)));
  // A stub named on its own is refused, saying why; among others it is counted.
  try {
    (void)import_trace(root / "p/T/subagents/agent-b1.jsonl");
    ADD_FAILURE() << "a stub alone imported";
  } catch (const trace_error& e) {
    EXPECT_EQ(std::string(e.what()), (root / "p/T/subagents/agent-b1.jsonl").string() +
                                         ": no usable request in 2 records read (skipped: 1 synthetic message (no API call))");
  }
  const auto summary = [&] {
    std::ostringstream os;
    write_logs_summary(os, t, {notes, false});
    return os.str();
  }();
  EXPECT_EQ(summary, "\n  read 6 files: 18 requests in 3 sessions; 2 files with no request, skipped (1 whose responses "
                     "another file holds, 1 with limit messages only); 1 file no log, passed over (first: " +
                         (root / "p/S/subagents/agent-afb92ff.meta.json").string() +
                         ": unknown log format (expected Claude Code or Codex JSONL, an opencode database, a kv-cache-tester "
                         "or SWE-agent JSON, or a loopcast trace); use --format to say which)\n"
                         "  left out: 6 responses logged again in another file; records skipped: 1 × synthetic message "
                         "(no API call)\n  each file's import, with its skipped lines: --verbose (or --json)\n");
}

// Two machines' copies: laptop holds short.jsonl and tool_heavy.jsonl, desktop a copy of
// short.jsonl whose clock reads an hour later, and subagent.jsonl. short.jsonl's response counts once,
// on the laptop (its send is the earlier): laptop 1 + 4 requests, desktop 17; and the response both
// logged shows desktop's clock 3,600 s ahead.
TEST(LogTrees, MachinesCountEachResponseOnceAndShowTheirClocks) {
  const auto root = scratch("log_trees", "machines");
  fs::remove_all(root);
  fs::create_directories(root / "laptop/p");
  fs::copy_file(traces / "claude-code-jsonl/short.jsonl", root / "laptop/p/short.jsonl");
  fs::copy_file(traces / "claude-code-jsonl/tool_heavy.jsonl", root / "laptop/p/tool_heavy.jsonl");
  std::vector<std::string> shifted;
  for (const auto& l : lines_of(traces / "claude-code-jsonl/short.jsonl")) {
    auto j = nlohmann::json::parse(l);
    if (j.contains("timestamp")) {
      auto ts = j["timestamp"].get<std::string>();  // "2026-02-10T21:11:56.846Z": an hour later
      const int hour = std::stoi(ts.substr(11, 2)) + 1;
      ASSERT_LT(hour, 24) << ts;
      ts.replace(11, 2, (hour < 10 ? "0" : "") + std::to_string(hour));
      j["timestamp"] = ts;
    }
    shifted.push_back(j.dump());
  }
  write_lines(root / "desktop/p/short-copy.jsonl", shifted);
  fs::copy_file(traces / "claude-code-jsonl/subagent.jsonl", root / "desktop/p/subagent.jsonl");
  import_notes notes;
  const auto t = import_machines({{"laptop", root / "laptop"}, {"desktop", root / "desktop"}}, trace_format::automatic, &notes);
  stats_options o;
  o.prices = &book();
  o.by = stats_grouping::machine;
  const auto st = compute_trace_stats(t, o);
  ASSERT_EQ(st.groups.size(), 3u);
  EXPECT_EQ(st.groups[0].name, "desktop");
  EXPECT_EQ(st.groups[0].requests, 17u);
  EXPECT_EQ(st.groups[1].name, "laptop");
  EXPECT_EQ(st.groups[1].requests, 5u);
  EXPECT_EQ(st.groups[2].requests, 22u);
  ASSERT_EQ(notes.clock_offsets.size(), 1u);
  EXPECT_EQ(notes.clock_offsets[0].machine, "desktop");
  EXPECT_EQ(notes.clock_offsets[0].against, "laptop");
  EXPECT_EQ(notes.clock_offsets[0].responses, 1);
  EXPECT_NEAR(notes.clock_offsets[0].median_s, 3600.0, 1e-6);
  std::ostringstream os;
  write_logs_summary(os, t, {notes, false});
  EXPECT_NE(os.str().find("  clocks: desktop logged 1 response that laptop logged too, 3600.0 s later (median)\n"),
            std::string::npos) << os.str();
}
