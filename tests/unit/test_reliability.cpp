// Reliability, third round (docs/architecture.md "Robustness"): bounded work, outputs that never
// touch an input, temporary copies no signal leaves behind, and the messages a user meets. One test
// per failure; each failed before its fix.
#include "loopcast/limits_inference.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/trace.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace loopcast;
namespace fs = std::filesystem;

namespace {
using loopcast::test_support::run_cli;
using loopcast::test_support::run_result;
using loopcast::test_support::scratch;
using loopcast::test_support::slurp;
using loopcast::test_support::traces;

run_result cli(const std::string& args, const std::string& redirect = "") {
  return run_cli("--models " + test_support::models + " " + args, redirect);
}
fs::path folder(const std::string& name) {
  const auto d = scratch("reliability", name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// A loopcast JSONL log of `sessions` sessions of two requests each, all at once (a herd).
std::string herd_log(int sessions) {
  std::string out = R"({"loopcast_trace": 1, "absolute_clock": false})" "\n";
  for (int s = 0; s < sessions; ++s)
    for (int k = 0; k < 2; ++k)
      out += R"({"session":"s)" + std::to_string(s) + R"(","t_send":)" + std::to_string(k * 10) + R"(,"t_end":)" +
             std::to_string(k * 10 + 5) + R"(,"input":20000,"cache_read":0,"cache_write":0,"output":500,"reasoning":0})" "\n";
  return out;
}
} // namespace

// 1. A replay on a tier its sessions overwhelm stops at the work budget (--attempt-budget, default
// 200,000,000 attempts), its running sessions cut off and its totals partial; the budget was
// ignored before.
TEST(Reliability, ReplayStopsAtTheWorkBudget) {
  EXPECT_EQ(replay_options{}.max_attempts, default_attempt_budget);
  EXPECT_EQ(default_attempt_budget, 200'000'000u);
  const auto dir = folder("budget");
  write(dir / "herd.jsonl", herd_log(50));
  const auto r = cli("--attempt-budget 500 replay " + (dir / "herd.jsonl").string() +
                     " --on anthropic-tier1-claude-sonnet-4.5 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& o = j["options"][0];
  EXPECT_EQ(o["attempts"], 500);
  EXPECT_EQ(o["complete"], false);
  EXPECT_EQ(o["stop"]["outcome"], "cut_off");
  const auto text = cli("--attempt-budget 500 replay " + (dir / "herd.jsonl").string() + " --on anthropic-tier1-claude-sonnet-4.5");
  EXPECT_NE(text.out.find("a larger attempt budget (--attempt-budget"), std::string::npos) << text.out;
}

// 1. The memory an import may take is checked from the files' sizes before anything is read.
TEST(Reliability, TheImportsMemoryIsCheckedBeforeReading) {
  const auto dir = folder("memory");
  write(dir / "herd.jsonl", herd_log(2000));  // 4,000 requests in about 430 KB
  const auto size = fs::file_size(dir / "herd.jsonl");
  const auto r = cli("stats " + (dir / "herd.jsonl").string());
  ASSERT_EQ(r.code, 0) << r.err;
  // With a budget of 0.5 MiB: about 430 KB / 100 bytes per request at least = 4,3xx requests × 320
  // bytes = 1.4 MB.
  const auto small = std::string("LOOPCAST_MEMORY_BUDGET_GB=0.0005 ") + LOOPCAST_CLI + " --models " +
                     test_support::models + " stats " + (dir / "herd.jsonl").string() + " 2>" + (dir / "err").string();
  EXPECT_EQ(WEXITSTATUS(std::system(small.c_str())), 3);
  const auto err = slurp(dir / "err");
  EXPECT_NE(err.find((dir / "herd.jsonl").string() + ": " + std::to_string(size) + " bytes of logs may hold up to " +
                     std::to_string(size / 100) + " requests"),
            std::string::npos) << err;
  EXPECT_NE(err.find("over the memory budget of 0.0 GiB: set LOOPCAST_MEMORY_BUDGET_GB to allow it"), std::string::npos);
  EXPECT_EQ(err.find("--memory-budget-gb"), std::string::npos);  // (an option that does not exist)
}

// 2. Cut-offs are placed in O(n log n) and summarised in one note, with the bounds worked out by hand.
TEST(Reliability, ManyCutOffsAreOneNote) {
  const auto dir = folder("cutoffs");
  std::ofstream out(dir / "many.jsonl");
  auto iso = [](double u) {
    const auto s = static_cast<std::time_t>(u);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&s));
    return std::string(buf);
  };
  // 2,000 hours from 2026-01-01T00:00Z, a request of 110 tokens on each; every fifth hour (h = 4,
  // 9, …) a cut-off at :30 whose window reopens at the next hour: the window of hours h−4 … h.
  for (int h = 0; h < 2000; ++h) {
    const double t = 1767225600.0 + 3600.0 * h;
    out << R"({"type":"user","timestamp":")" << iso(t) << R"(","message":{"role":"user","content":"go"}})" << "\n";
    out << R"({"type":"assistant","timestamp":")" << iso(t + 5) << R"(","message":{"id":"m)" << h
        << R"(","model":"claude-opus-4-6","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":100,"output_tokens":10}}})"
        << "\n";
    if (h % 5 == 4)
      out << R"({"type":"assistant","timestamp":")" << iso(t + 1800) << R"(","message":{"id":"s)" << h
          << R"(","model":"<synthetic>","content":[{"type":"text","text":"Claude AI usage limit reached|)"
          << static_cast<long long>(t + 3600) << R"("}],"usage":{"input_tokens":0,"output_tokens":0}}})" << "\n";
  }
  out.close();
  const std::vector<recorded_trace> t{import_trace(dir / "many.jsonl", trace_format::claude_code)};
  ASSERT_EQ(t[0].walls.size(), 400u);
  const auto r = infer_plan_caps(t);
  // Three notes: one summary of the cut-offs (not a note each), the usage's, and what would bound
  // the weekly cap.
  ASSERT_EQ(r.notes.size(), 3u);
  EXPECT_EQ(r.notes[0], "400 usage-limit cut-offs read (from 1767241800 to 1774423800, Unix s)");
  EXPECT_EQ(r.notes[1], "usage: 2000 requests in 400 5-hour windows bound the caps from below");
  EXPECT_EQ(r.notes[2].rfind("nothing bounds the weekly cap from above", 0), 0u);
  // Each window held five requests when it refused the sixth: the cap is above the four before
  // the last (440 tokens) and at most the five (550).
  const auto& all = r.caps[0];
  EXPECT_EQ(all.window, "5-hour");
  EXPECT_EQ(all.counts, "all tokens");
  EXPECT_EQ(all.low, 440.0);
  EXPECT_EQ(all.high, 550.0);
  EXPECT_TRUE(all.consistent);
}

// 2. The newer cut-off messages, with a reset given as a time of day in a named zone.
TEST(Reliability, NewerCutOffMessagesArePlaced) {
  const auto dir = folder("newer");
  std::ofstream out(dir / "newer.jsonl");
  auto synthetic = [&](const char* ts, const char* text) {
    out << R"({"type":"assistant","timestamp":")" << ts << R"(","message":{"id":"x)" << ts
        << R"(","model":"<synthetic>","content":[{"type":"text","text":")" << text
        << R"("}],"usage":{"input_tokens":0,"output_tokens":0}}})" << "\n";
  };
  out << R"({"type":"user","timestamp":"2026-03-02T08:00:00Z","message":{"role":"user","content":"go"}})" << "\n";
  out << R"({"type":"assistant","timestamp":"2026-03-02T08:00:05Z","message":{"id":"a","model":"claude-opus-4-6",)"
         R"("content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":10,"output_tokens":1}}})" << "\n";
  synthetic("2026-03-02T09:10:00Z", "You've hit your limit · resets 11:30am (Europe/Berlin)");
  synthetic("2026-03-02T23:10:00Z", "5-hour limit reached ∙ resets 2am (UTC)");
  synthetic("2026-03-03T10:00:00Z", "Claude usage limit reached. Your limit will reset at 3pm (America/Bogota).");
  synthetic("2026-03-04T10:00:00Z", "Weekly limit reached ∙ resets 9am (UTC)");
  synthetic("2026-03-04T11:00:00Z", "You've hit your limit · resets soon");
  out.close();
  const auto t = import_trace(dir / "newer.jsonl", trace_format::claude_code);
  ASSERT_EQ(t.walls.size(), 4u);
  EXPECT_EQ(t.walls[0].resets_at_unix, 1772447400.0);  // 11:30 in Berlin (UTC+1) = 10:30Z the same day
  EXPECT_EQ(t.walls[1].resets_at_unix, 1772503200.0);  // 02:00Z the next day
  EXPECT_EQ(t.walls[2].resets_at_unix, 1772568000.0);  // 15:00 in Bogotá (UTC−5) = 20:00Z
  EXPECT_EQ(t.walls[3].kind, wall_kind::weekly);
  bool noted = false;
  for (const auto& i : t.summary.issues)
    noted = noted || i.reason == "a usage-limit message without a reset time of day to read: not used";
  EXPECT_TRUE(noted);
}

// 7. An output never lands on an input it was not told about: a log inside an input folder, the
// price list, a model map, a preset under --models.
TEST(Reliability, OutputsKnowEveryInput) {
  const auto dir = folder("inputs");
  fs::create_directories(dir / "logs");
  fs::copy_file(traces / "claude-code-jsonl/short.jsonl", dir / "logs/short.jsonl");
  const auto log = (dir / "logs/short.jsonl").string();
  const auto before = slurp(log);
  auto r = cli("fit " + (dir / "logs").string() + " -o " + log);
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "loopcast: " + log + ": lies in the input folder " + (dir / "logs").string() +
                       "; refusing to overwrite it\n");
  r = cli("fit-workload " + (dir / "logs").string() + " -o " + log);
  EXPECT_EQ(r.code, 4);
  r = cli("replay " + (dir / "logs").string() + " --on local-workstation-qwen-27b --timeline " + log);
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(slurp(log), before);
  fs::copy_file(test_support::litellm_prices, dir / "prices.json");
  const auto prices = (dir / "prices.json").string();
  r = cli("replay " + log + " --on local-workstation-qwen-27b --price-list " + prices + " --timeline " + prices);
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "loopcast: " + prices + ": is also an input; refusing to overwrite it\n");
  write(dir / "map.json", R"({"*": "local-workstation-qwen-27b"})");
  r = cli("replay " + log + " --on " + (dir / "map.json").string() + " --timeline " + (dir / "map.json").string());
  EXPECT_EQ(r.code, 4);
  fs::create_directories(dir / "models");
  fs::copy(test_support::models, dir / "models", fs::copy_options::recursive);
  const auto preset = (dir / "models/targets/local-workstation-qwen-27b.json").string();
  r = run_cli("--models " + (dir / "models").string() + " replay " + log + " --on local-workstation-qwen-27b --timeline " + preset);
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.err.find("lies in the input folder " + (dir / "models").string()), std::string::npos) << r.err;
}

// 8. -o onto an existing file: through a symlink to its target, keeping its mode and its other hard
// links, and with a name of 255 characters.
TEST(Reliability, OutputsKeepLinksModesAndLongNames) {
  const auto dir = folder("links");
  const auto log = (traces / "claude-code-jsonl/short.jsonl").string();
  write(dir / "target.jsonl", "old\n");
  ::chmod((dir / "target.jsonl").c_str(), 0600);
  fs::create_symlink("target.jsonl", dir / "link.jsonl");
  fs::create_hard_link(dir / "target.jsonl", dir / "hard.jsonl");
  ASSERT_EQ(cli("convert " + log + " -o " + (dir / "link.jsonl").string()).code, 0);
  EXPECT_TRUE(fs::is_symlink(dir / "link.jsonl"));
  const auto text = slurp(dir / "target.jsonl");
  EXPECT_EQ(text.rfind("{\"loopcast_trace\":1,", 0), 0u);
  EXPECT_EQ(slurp(dir / "hard.jsonl"), text);  // the other name of the file sees the new content
  struct stat st{};
  ASSERT_EQ(::stat((dir / "target.jsonl").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_nlink, 2u);
  const auto long_name = dir / (std::string(249, 'x') + ".jsonl");  // 255 characters
  ASSERT_EQ(cli("convert " + log + " -o " + long_name.string()).code, 0);
  EXPECT_EQ(slurp(long_name), text);
  for (const auto& e : fs::directory_iterator(dir))  // no temporary file left beside them
    EXPECT_EQ(e.path().filename().string().rfind(".loopcast-", 0), std::string::npos) << e.path();
}

// 9. A stream's temporary copy has no name while it is read: a signal leaves nothing behind.
TEST(Reliability, AStreamsCopyHasNoName) {
  const auto dir = folder("stream");
  const auto tmp = dir / "tmp";
  fs::create_directories(tmp);
  const auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("TMPDIR", tmp.c_str(), 1);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(LOOPCAST_CLI, LOOPCAST_CLI, "--models", test_support::models.c_str(), "stats", fifo.c_str(), nullptr);
    ::_exit(127);
  }
  // Write half a log; once the reader holds its copy open (a descriptor of a file in tmp), it has
  // no name there.
  const int w = ::open(fifo.c_str(), O_WRONLY);
  ASSERT_GE(w, 0);
  const auto text = slurp(traces / "claude-code-jsonl/short.jsonl");
  ASSERT_EQ(::write(w, text.data(), text.size() / 2), static_cast<ssize_t>(text.size() / 2));
  const fs::path fds = "/proc/" + std::to_string(pid) + "/fd";
  auto holds_copy = [&] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fds, ec)) {
      std::error_code e2;
      if (fs::read_symlink(e.path(), e2).string().rfind(tmp.string(), 0) == 0) return true;
    }
    return false;
  };
  int status = 0;
  while (!holds_copy()) {  // (driven by the reader's progress, not by a clock)
    ASSERT_NE(::waitpid(pid, &status, WNOHANG), pid) << "the reader ended before it made its copy";
    ::sched_yield();
  }
  EXPECT_TRUE(fs::is_empty(tmp));  // the copy is open, but has no name
  ::kill(pid, SIGTERM);
  ::close(w);
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(fs::is_empty(tmp));
  // A bad TMPDIR is named.
  const auto bad = std::string("TMPDIR=") + (dir / "nowhere").string() + " " + LOOPCAST_CLI + " stats - < " +
                   (traces / "claude-code-jsonl/short.jsonl").string() + " 2>" + (dir / "err").string();
  EXPECT_EQ(WEXITSTATUS(std::system(bad.c_str())), 3);
  EXPECT_EQ(slurp(dir / "err"), "loopcast: standard input: cannot make a temporary copy in " + (dir / "nowhere").string() +
                                    " ($TMPDIR): No such file or directory\n");
}

// 11. The messages: a repeated --limit, a free model with --base, a list's fault blamed on the list,
// an unreadable folder, a gzip log with trailing zeros.
TEST(Reliability, Messages) {
  auto r = cli("replay " + (traces / "codex").string() + " --on claude-max-5x-opus-4.5 --limit five_hour=1000 "
               "--limit weekly=5000 --limit five_hour=2000");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: --limit five_hour=1000 and --limit five_hour=2000: the bucket five_hour of claude-max-5x-opus-4.5 is set "
            "twice\n");
  const auto dir = folder("messages");
  const auto out = (dir / "free.json").string();
  r = cli("prices import " + test_support::litellm_prices.string() + " --model codestral/codestral-latest --base "
          "anthropic-tier1-claude-sonnet-4.5 -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto free = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(free["prices"]["usd_per_million"]["cache_write_5m"], 0.0);
  EXPECT_NE(free["notes"].dump().find("codestral/codestral-latest lists no cache_write_5m price"), std::string::npos);
  // An unreadable folder inside the logs is named, never skipped in silence.
  fs::create_directories(dir / "logs/locked");
  fs::copy_file(traces / "claude-code-jsonl/short.jsonl", dir / "logs/short.jsonl");
  ::chmod((dir / "logs/locked").c_str(), 0);
  if (::access((dir / "logs/locked").c_str(), R_OK) != 0) {  // (root reads every folder)
    r = cli("stats " + (dir / "logs").string());
    EXPECT_EQ(r.code, 3);
    EXPECT_EQ(r.err, "loopcast: " + (dir / "logs/locked").string() + ": cannot list the folder: Permission denied\n");
  }
  ::chmod((dir / "logs/locked").c_str(), 0700);
  // gzip accepts zeros after the last member (tape padding), with a warning; so does the import.
  const auto gz = dir / "padded.jsonl.gz";
  ASSERT_EQ(std::system(("gzip -c " + (traces / "claude-code-jsonl/short.jsonl").string() + " > " + gz.string() +
                         " && head -c 512 /dev/zero >> " + gz.string()).c_str()), 0);
  r = cli("stats " + gz.string() + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["groups"].back()["requests"], 1);
  std::ofstream(gz, std::ios::app) << "x";
  r = cli("stats " + gz.string());
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "loopcast: " + gz.string() + ": corrupt gzip data: data after the trailing zeros\n");
}

// 11. Codex windows whose snapshots are not valid are said, not dropped in silence.
TEST(Reliability, InvalidCodexWindowsAreNoted) {
  auto t = import_trace(traces / "codex/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl");
  t.rate_limits.push_back({t.rate_limits.back().t + 1, R"({"primary":{"used_percent":250,"window_minutes":300,"resets_at":1}})"});
  const auto r = infer_plan_caps({&t, 1});
  bool noted = false;
  for (const auto& n : r.notes)
    noted = noted || n.find("1 window snapshot without a used_percent from 0 to 100") != std::string::npos;
  EXPECT_TRUE(noted);
}
