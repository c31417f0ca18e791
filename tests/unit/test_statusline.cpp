// Claude Code's statusline command (loopcast-statusline, and `loopcast statusline`): it never
// blocks the bar nor blanks it, whatever its input and its log are, and concurrent calls never
// tear a log line. Each case runs the real program with real descriptors: a pipe never closed, a
// FIFO, a device, a folder, eight writers at once.
#include "loopcast/limits_inference.hpp"

#include "statusline/statusline.hpp"
#include "test_support.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <functional>
#include <filesystem>
#include <fstream>
#include <thread>

extern char** environ;

using namespace loopcast;
namespace fs = std::filesystem;

namespace {
using loopcast::test_support::scratch;
using loopcast::test_support::slurp;

const std::string input = R"({"session_id": "s1", "rate_limits": {"five_hour": {"used_percentage": 23.5, "resets_at": 4102444800},
  "seven_day": {"used_percentage": 41, "resets_at": 4102444800}}})";

struct ran {
  int code = -1;
  std::string out, err;
};

// Runs the program with `args`; `feed` gets the write end of its standard input (and may keep it
// open: the program must not wait for its end; one it closes it sets to -1). A program still running after 60 s is killed
// and the test fails: a guard against a hang, never a measure.
ran run(const std::vector<std::string>& args, const std::function<void(int&)>& feed,
        const char* program = LOOPCAST_STATUSLINE) {
  int in[2];  // (close-on-exec: a child spawned meanwhile by another thread must not hold it open)
  EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
  static std::atomic<int> calls{0};
  const int call = calls++;
  const auto out = scratch("statusline", "out" + std::to_string(call)), err = scratch("statusline", "err" + std::to_string(call));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> all{program};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, program, &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  feed(in[1]);
  int status = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > give_up) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "the statusline command hung";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (in[1] >= 0) ::close(in[1]);
  ran r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

void write_all(int fd, const std::string& s) { ASSERT_EQ(::write(fd, s.data(), s.size()), static_cast<ssize_t>(s.size())); }
auto give(const std::string& s) {
  return [s](int& fd) {
    write_all(fd, s);
    ::close(fd);
    fd = -1;
  };
}
} // namespace

// The JSON object arrives and stdin stays open (Claude Code keeps it so at times): the line is
// printed at once, from the object alone.
TEST(Statusline, AnInputNeverClosedIsReadToItsObject) {
  const auto log = scratch("statusline", "open.jsonl");
  fs::remove(log);
  const auto r = run({"--log", log.string()}, [](int& fd) { write_all(fd, input); });  // never closed before the end
  EXPECT_EQ(r.code, 0) << r.err;
  // (the resets, in 2100, more than a week away: with their date, in the machine's time)
  char when[32];
  const std::time_t t = 4102444800;
  std::tm tm{};
  localtime_r(&t, &tm);
  std::strftime(when, sizeof when, "%b %d %H:%M", &tm);
  EXPECT_EQ(r.out, fmt::format("5h 23% ↻ {} · 7d 41% ↻ {}\n", when, when));
  const auto logged = slurp(log);
  EXPECT_EQ(std::count(logged.begin(), logged.end(), '\n'), 1);
}

// Half an object and a pipe never closed: the deadline ends the wait, the bar still gets a line.
TEST(Statusline, AnIncompleteInputEndsAtItsDeadline) {
  const auto r = run({"--no-log"}, [](int& fd) { write_all(fd, R"({"rate_limits": {"five_hour": )"); });
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "plan usage: no input\n");
  EXPECT_EQ(r.err, "loopcast statusline: no complete JSON object on stdin within 1 s\n");
}

// One window of the wrong type: the other is shown, the bad one named on stderr.
TEST(Statusline, PartialInputShowsWhatItCan) {
  const auto r = run({"--no-log"}, give(R"({"rate_limits": {"five_hour": {"used_percentage": "23", "resets_at": 1},
                                          "seven_day": {"used_percentage": 99.6, "resets_at": 1}}})"));
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "7d 99.6% reset passed\n");  // 99.6% is not full; a reset in the past has passed
  EXPECT_EQ(r.err, "loopcast statusline: <stdin>: /rate_limits/five_hour/used_percentage: expected a number from 0 to 100\n");
  const auto none = run({"--no-log"}, give("not json"));
  EXPECT_EQ(none.code, 0);
  EXPECT_EQ(none.out, "plan usage: no input\n");
  EXPECT_EQ(none.err, "loopcast statusline: expected Claude Code's statusline JSON (an object)\n");
}

// A log that cannot take the line — a FIFO nobody reads (opened without blocking), a device, a
// folder, a path through a file, a symlink loop: the line is printed, stderr says why once, exit 0.
TEST(Statusline, ALogThatCannotBeWrittenNeverBlanksTheBar) {
  const auto dir = scratch("statusline", "bad-logs");
  fs::remove_all(dir);
  fs::create_directories(dir / "folder.jsonl");
  const auto fifo = dir / "fifo.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::ofstream(dir / "file").put('x');
  fs::create_symlink(dir / "loop-b", dir / "loop-a");
  fs::create_symlink(dir / "loop-a", dir / "loop-b");
  const std::vector<std::pair<std::string, std::string>> cases{
      {fifo.string(), "a FIFO that nobody reads"},
      {"/dev/full", "not a regular file"},
      {(dir / "folder.jsonl").string(), "Is a directory"},
      {(dir / "file/log.jsonl").string(), "Not a directory"},
      {(dir / "loop-a").string(), "Too many levels of symbolic links"}};
  for (const auto& [path, why] : cases) {
    const auto r = run({"--log", path}, give(input));
    EXPECT_EQ(r.code, 0) << path;
    EXPECT_EQ(r.out.substr(0, 7), "5h 23% ") << path;
    EXPECT_EQ(r.err, "loopcast statusline: " + path + ": snapshot not recorded: " + why + "\n");
  }
  // The whole tool says the same.
  const auto r = run({"statusline", "--log", fifo.string()}, give(input), LOOPCAST_CLI);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "loopcast statusline: " + fifo.string() + ": snapshot not recorded: a FIFO that nobody reads\n");
}

// Eight writers at once, 50 calls each, every line about 4 KiB (long session ids): each line is
// written with one write on O_APPEND, so all 400 come back whole. A session id that would make a
// line longer than 4,096 bytes is cut to fit, and said.
TEST(Statusline, ConcurrentWritersNeverTearALine) {
  const auto log = scratch("statusline", "eight.jsonl");
  fs::remove(log);
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w)
    writers.emplace_back([&, w] {
      for (int k = 0; k < 50; ++k) {
        const std::string id(3900 + w, static_cast<char>('a' + w));
        const auto r = run({"--log", log.string()}, give(R"({"session_id": ")" + id + R"(", "rate_limits": {"five_hour": )"
                                                         R"({"used_percentage": 10, "resets_at": 4102444800}}})"));
        EXPECT_EQ(r.code, 0);
      }
    });
  for (auto& t : writers) t.join();
  std::size_t skipped = 9;
  const auto back = read_statusline_log(log.string(), &skipped);
  EXPECT_EQ(back.size(), 400u);
  EXPECT_EQ(skipped, 0u);
  for (const auto& s : back) {
    ASSERT_GE(s.session_id.size(), 3900u);
    EXPECT_EQ(s.session_id, std::string(s.session_id.size(), s.session_id[0]));
  }
  const auto huge = run({"--log", log.string()},
                        give(R"({"session_id": ")" + std::string(10000, 'z') +
                             R"(", "rate_limits": {"five_hour": {"used_percentage": 10, "resets_at": 4102444800}}})"));
  EXPECT_EQ(huge.err, "loopcast statusline: the session id was cut to fit one 4096-byte line\n");
  const auto again = read_statusline_log(log.string(), &skipped);
  ASSERT_EQ(again.size(), 401u);
  EXPECT_EQ(skipped, 0u);
  std::ifstream in(log);
  std::size_t longest = 0;
  for (std::string l; std::getline(in, l);) longest = std::max(longest, l.size() + 1);
  EXPECT_EQ(longest, detail::statusline_line_max);
}

// The reader: a torn line and a line of 1 MiB (over its 64 KiB cap, never held whole) are skipped
// and counted, and reading goes on to the snapshots after them.
TEST(Statusline, TheLogReaderSkipsHugeAndTornLines) {
  const auto log = scratch("statusline", "reader.jsonl");
  statusline_snapshot s;
  s.t = 1767230000;
  s.five_hour = window_usage{12, 1767240000};
  {
    std::ofstream out(log);
    out << statusline_log_line(s) << "\n";
    out << std::string(1u << 20, 'x') << "\n";
    out << R"({"t": 1767230001, "rate_limits": {"five_hour": {"used_perc)" << "\n";
    s.t += 60;
    out << statusline_log_line(s) << "\n";
  }
  std::size_t skipped = 0;
  const auto back = read_statusline_log(log.string(), &skipped);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(skipped, 2u);
  EXPECT_EQ(back[1].t, 1767230060.0);
  try {
    (void)read_statusline_log(log.parent_path().string());
    ADD_FAILURE() << "a folder read as a log";
  } catch (const trace_error& e) {
    EXPECT_EQ(std::string(e.what()), log.parent_path().string() + ": cannot read the statusline log: a folder");
  }
}
