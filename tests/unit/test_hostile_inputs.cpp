// Hostile inputs, one test per class of failure: each crashed, hung, lost output or gave a
// silently wrong number before its fix; now each gets a clear error naming the file and place,
// or is handled. The command-line cases check the exit code and the message.
#include "json/parse.hpp"
#include "util/parallel.hpp"

#include "loopcast/budget.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/limits_inference.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/price_lists.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/simulation.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

using namespace loopcast;
namespace fs = std::filesystem;

namespace {

using loopcast::test_support::traces;

using loopcast::test_support::run_cli;
using loopcast::test_support::run_result;
using loopcast::test_support::slurp;

// A scratch folder removed at the end of the test.
struct scratch {
  fs::path dir;
  scratch() {
    dir = fs::temp_directory_path() / ("loopcast_hostile_" + std::to_string(::getpid()) + "_" +
                                       std::to_string(counter()++));
    fs::create_directories(dir);
  }
  ~scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
  fs::path write(const std::string& name, const std::string& text) const {
    const auto p = dir / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
};

// The CLI on the repository's models.
run_result loopcast_cli(const std::string& args, const std::string& input_redirect = "") {
  return run_cli(std::string("--models ") + LOOPCAST_TEST_MODELS_DIR + " " + args, input_redirect);
}

const std::string loopcast_header = R"({"loopcast_trace": 1, "absolute_clock": false})";
std::string loopcast_line(const std::string& extra) {
  return R"({"session":"s","t_send":0,"t_end":1,"input":10,"cache_read":0,"cache_write":0,"output":5,"reasoning":0)" +
         extra + "}";
}

} // namespace

// 1. Times that reach infinity: refused where they enter, with file and line.
TEST(Hostile, InfiniteTimesAreRefusedWhereTheyEnter) {
  scratch s;
  const auto f = s.write("inf.jsonl", loopcast_header + "\n" + loopcast_line("") + "\n" +
                                          R"({"session":"s","t_send":1e308,"t_end":1e308,"input":1,"cache_read":0,)"
                                          R"("cache_write":0,"output":1,"reasoning":0})" "\n");
  try {
    (void)import_trace(f);
    FAIL();
  } catch (const trace_error& e) {
    EXPECT_EQ(std::string(e.what()), f.string() + ":3: session s: send time 1e+308 s is out of range (a finite time within ±10^11 s)");
  }
  // A delay of 1e308 s, and a kv-cache-tester subagent whose start overflows.
  const auto d = s.write("delay.jsonl", loopcast_header + "\n" + loopcast_line(R"(,"delay_before_s":1e308)") + "\n");
  EXPECT_THROW((void)import_trace(d), trace_error);
  const auto kv = s.write("kv.json", R"({"block_size":64,"requests":[{"t":0,"in":10,"out":5,"hash_ids":[1]},)"
                                     R"({"type":"subagent","t":1e308,"requests":[{"t":1e308,"in":10,"out":5,"hash_ids":[1]}]}]})");
  try {
    (void)import_trace(kv);
    FAIL();
  } catch (const trace_error& e) {
    EXPECT_NE(std::string(e.what()).find(kv.string() + ":2001: session kv/2: send time inf s is out of range"),
              std::string::npos)
        << e.what();
  }
  // The simulator checks its own inputs: a script with an infinite delay is refused before the loop.
  session_script sc;
  sc.source = "hand-made";
  request_spec q;
  q.prompt_tokens = 10;
  q.delay_before_s = std::numeric_limits<double>::infinity();
  sc.requests = {q};
  const std::vector<session_plan> plans{{&sc, 0, 1, 0}};
  target t;
  t.name = "t";
  try {
    (void)simulate(t, retry_policy{}, plans);
    FAIL();
  } catch (const simulation_error& e) {
    EXPECT_EQ(std::string(e.what()), "hand-made (session 1), request 1: an agent delay of inf s (expected 0 to 10^7 s)");
  }
  // Recorded times, when given, are one per request, each finite.
  sc.requests[0].delay_before_s = 0;
  sc.recorded = {recorded_timing{0.5, 2.0}, recorded_timing{}};
  try {
    (void)simulate(t, retry_policy{}, plans);
    FAIL();
  } catch (const simulation_error& e) {
    EXPECT_EQ(std::string(e.what()), "hand-made (session 1): recorded times of 2 requests for 1 requests");
  }
  sc.recorded = {recorded_timing{std::numeric_limits<double>::quiet_NaN(), 2.0}};
  try {
    (void)simulate(t, retry_policy{}, plans);
    FAIL();
  } catch (const simulation_error& e) {
    EXPECT_EQ(std::string(e.what()), "hand-made (session 1), request 1: a recorded time of nan s (expected at most 10^7 s)");
  }
  sc.recorded = {recorded_timing{0.5, 2.0}};
  EXPECT_EQ(simulate(t, retry_policy{}, plans).requests.size(), 1u);
}

// A kv-cache-tester think_time of 1e308 no longer matters: the agent time comes from the send times.
TEST(Hostile, AHugeThinkTimeIsNotUsed) {
  scratch s;
  const auto kv = s.write("kv.json", R"({"block_size":64,"requests":[{"t":0,"in":100,"out":5,"hash_ids":[1],"api_time":1},)"
                                     R"({"t":5,"in":110,"out":5,"hash_ids":[1],"api_time":1,"think_time":1e308}]})");
  const std::vector<recorded_trace> t{import_trace(kv)};
  const auto rs = make_replay_sessions(t, 1000);
  EXPECT_EQ(rs.scripts[0].requests[1].delay_before_s, 4.0);
}

// 2. Lineage totals: a trace declaring 10^8 lineages keeps the ones its runs use; 43 of them
// replay together in a blink; a run whose lineages pass 2^31 is refused, never wrapped.
TEST(Hostile, DeclaredLineagesCostOnlyWhatIsUsed) {
  scratch s;
  const auto f = s.write("many.jsonl", R"({"loopcast_trace": 1, "has_prefix": true, "lineages": 100000000})" "\n" +
                                           loopcast_line(R"(,"prefix":[[0,10]])") + "\n");
  const auto t = import_trace(f);
  EXPECT_EQ(t.lineages, 1u);
  std::vector<recorded_trace> many(43, t);
  scenario_option o;
  o.targets.emplace_back();
  o.first().name = "local";
  o.first().kind = target_kind::local;
  o.first().power = power_config{};
  const auto r = run_replay(many, std::vector<scenario_option>{o});
  EXPECT_EQ(r.options[0].sim.requests.size(), 43u);

  session_script big;
  big.source = "big";
  big.lineages = 1u << 31;
  big.requests = {request_spec{}};
  const std::vector<session_plan> plans{{&big, 0, 1, 0}, {&big, 0, 2, 1}};
  try {
    (void)simulate(o.first(), retry_policy{}, plans);
    FAIL();
  } catch (const simulation_error& e) {
    EXPECT_EQ(std::string(e.what()), "4294967296 prefix-cache lineages over all sessions; at most 2147483648 are simulated");
  }
}

// 3. An invalid preset in a library folder is an error naming the file (it was a use after free:
// the node kept a pointer to a temporary path string).
TEST(Hostile, AnInvalidPresetInTheLibraryNamesItsFile) {
  scratch s;
  const auto f = s.write("bad.json", R"({"kind":"target"})");
  try {
    preset_library lib({s.dir});
    FAIL();
  } catch (const config_error& e) {
    EXPECT_EQ(std::string(e.what()), f.string() + ": missing key \"name\"");
  }
  // Duplicate keys are refused, not silently the last value.
  s.write("bad.json", R"({"kind":"client","name":"a","name":"b"})");
  try {
    preset_library lib({s.dir});
    FAIL();
  } catch (const config_error& e) {
    EXPECT_EQ(std::string(e.what()), f.string() + ": duplicate key \"name\" (each key may appear once)");
  }
  // The index reads headers by a fast parse of the whole file; what it refuses, the strict reader
  // parses again and names: a key given twice below the top, a syntax error past the header, a
  // header value of the wrong shape.
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"({"kind":"client","name":"a","backoff":{"base_s":1,"base_s":2}})",
       ": /backoff: duplicate key \"base_s\" (each key may appear once)"},
      {"{\"kind\":\"client\",\"name\":\"a\",\n \"backoff\": {\"base_s\": 1,}}",
       ": not valid JSON at line 2, column 26: syntax error while parsing object key - unexpected '}'; expected string literal"},
      {R"({"kind":"client","name":"a b"})", ": /name: expected a name without spaces or slashes, found \"a b\""},
      {R"({"kind":"client","name":"a","source":[]})", ": /source: expected an array of at least 1 element, found 0"},
      {R"([{"kind":"client"}])", ": expected an object, found an array"},
  };
  for (const auto& [text, message] : cases) {
    s.write("bad.json", text);
    try {
      preset_library lib({s.dir});
      ADD_FAILURE() << text;
    } catch (const config_error& e) {
      EXPECT_EQ(std::string(e.what()), f.string() + message) << text;
    }
  }
}

// 4. Block counts that overflow, and price-list counts beyond int64.
TEST(Hostile, HugeBlockSizesAndCountsAreRefused) {
  scratch s;
  const auto kv = s.write("kv.json", R"({"block_size":10000000000000,"requests":[{"t":0,"in":10,"out":5,"hash_ids":[1,2,3]}]})");
  try {
    (void)import_trace(kv);
    FAIL();
  } catch (const trace_error& e) {
    EXPECT_EQ(std::string(e.what()),
              kv.string() + ": missing or invalid \"block_size\" (a whole number of tokens from 1 to 1048576)");
  }
  const auto list = parse_price_list(R"({"m":{"input_cost_per_token":1e-6,"output_cost_per_token":2e-6,"max_input_tokens":2e85}})",
                                     "p.json");
  ASSERT_EQ(list.models.size(), 1u);
  EXPECT_EQ(list.models[0].context_window_tokens, 0);
  ASSERT_EQ(list.warnings.size(), 1u);
  EXPECT_EQ(list.warnings[0].message, "expected a token count from 0 to 10^13, found number 2e+85; ignored");
}

// 5. A thread that cannot be started: the others share the work, with the same results.
TEST(Hostile, ThreadsThatCannotStartDegradeGracefully) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers reserve more address space than the limit this test sets";
#else
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // A small address-space limit: 8 MiB thread stacks cannot be mapped, so thread creation fails.
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t now = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGE_SIZE));
    const rlimit lim{now + (24u << 20), now + (24u << 20)};
    ::setrlimit(RLIMIT_AS, &lim);
    std::atomic<long> sum{0};
    try {
      detail::parallel_for(1000, 200, [&](std::size_t i) { sum += static_cast<long>(i); });
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(sum == 999L * 1000 / 2 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
}

// The pool that solve keeps from one evaluation to the next: every index once per run, worker
// indices below workers(), an exception rethrown on the caller once the others have stopped, and
// the pool still whole for the next run.
TEST(Hostile, AWorkerPoolRunsLoopAfterLoop) {
  detail::worker_pool pool(2);
  ASSERT_EQ(pool.workers(), 2u);
  for (const std::size_t n : {0u, 1u, 2u, 7u, 1000u}) {
    std::vector<std::atomic<int>> seen(n);
    std::atomic<bool> worker_ok{true};
    pool.run(n, [&](std::size_t i, std::size_t w) {
      ++seen[i];
      if (w >= pool.workers()) worker_ok = false;
    });
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i].load(), 1) << "index " << i << " of " << n;
    EXPECT_TRUE(worker_ok);
  }
  std::atomic<int> calls{0};
  try {
    pool.run(100, [&](std::size_t i) {
      ++calls;
      if (i == 10) throw std::runtime_error("index 10");
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "index 10");
  }
  EXPECT_GE(calls.load(), 11);
  std::atomic<long> sum{0};
  pool.run(100, [&](std::size_t i) { sum += static_cast<long>(i); });
  EXPECT_EQ(sum.load(), 99L * 100 / 2);
}

// 6. Streams: /dev/zero ends with an error after a bounded read, /dev/null is empty, a pipe and
// standard input are read once.
TEST(Hostile, StreamsAreReadOnceAndBounded) {
  // The temporary copies of streams are removed, also when the stream is refused.
  auto copies = [] {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
      n += e.path().filename().string().rfind("loopcast-stream-", 0) == 0 ? 1 : 0;
    return n;
  };
  const auto copies_before = copies();
  auto r = loopcast_cli("stats /dev/null");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "loopcast: /dev/null: empty input\n");
  r = loopcast_cli("stats /dev/zero");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "loopcast: /dev/zero: more than 536870912 bytes without an end: not a log (at most 512 MiB are read "
                   "from a stream)\n");
  const auto log = (traces / "claude-code-weka/trace_0043.json").string();
  r = loopcast_cli("stats - --json", " <" + log);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"file\": \"standard input\""), std::string::npos);
  EXPECT_NE(r.out.find("\"requests\": 33"), std::string::npos);
  scratch s;
  const auto fifo = s.dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  r = loopcast_cli("stats " + fifo.string());  // no writer: empty, not a hang
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "loopcast: " + fifo.string() + ": empty input\n");
  const std::string cmd = "cat " + log + " > " + fifo.string() + " &";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  r = loopcast_cli("stats " + fifo.string() + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"requests\": 33"), std::string::npos);
  EXPECT_EQ(copies(), copies_before);
}

// 7. Parsing is linear: 200,000 empty objects parse (the depth callback made this quadratic).
TEST(Hostile, ManyMembersParse) {
  std::string text = "[";
  for (int i = 0; i < 200000; ++i) text += i ? ",{}" : "{}";
  text += "]";
  const auto r = detail::parse_json_text(text, 64, true);
  ASSERT_TRUE(r.value.has_value()) << r.message;
  EXPECT_EQ(r.value->size(), 200000u);
  std::string deep(100000, '[');
  const auto d = detail::parse_json_text(deep, 64, true);
  EXPECT_TRUE(d.too_deep);
}

// 8. Runs beyond the caps are refused at once with the numbers, in every entry point.
TEST(Hostile, RunsBeyondTheCapsAreRefusedAtOnce) {
  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  auto scn = lib.load_scenario("reference");
  scn.fleet[0].sessions = 100;
  scn.fleet[0].wl.turns = fixed_dist{1'000'000};
  try {
    (void)run_scenario(scn);
    FAIL();
  } catch (const config_error& e) {
    EXPECT_EQ(std::string(e.what()), "scenario reference: 110000000 requests in one run; at most 100000000 are simulated");
  }
  scn.fleet[0].wl.turns = fixed_dist{100'000};  // 1.1·10^7 requests: within the cap, over a 1 GiB budget
  set_memory_budget_bytes(std::int64_t{1} << 30);
  try {
    (void)run_scenario(scn);
    FAIL();
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("over the memory budget of 1.0 GiB"), std::string::npos) << e.what();
  }
  set_memory_budget_bytes(0);
  // compare applies the cap too (it built its own fleet without it), and the CLI says it with exit 3.
  scratch s;
  auto wl = slurp(fs::path(LOOPCAST_TEST_MODELS_DIR) / "workloads/task-code-completion.json");
  const auto at = wl.find("\"turns\"");
  ASSERT_NE(at, std::string::npos);
  wl.replace(at, wl.find(',', at) - at, "\"turns\": 1000000");
  const auto f = s.write("long.json", wl);
  const auto r = loopcast_cli("compare " + f.string() + " --on cerebras-developer-qwen-3.8-27b --sessions 200 --seeds 1");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("requests in one run; at most 100000000 are simulated"), std::string::npos) << r.err;
}

// 8 (continued). A timeline grows with attempts, not requests: on a tier the fleet overwhelms it is
// refused when it would grow past its share of what the rest of the run leaves of the budget.
TEST(Hostile, ATimelineAHerdGrowsPastTheBudgetIsRefused) {
  const preset_library lib({LOOPCAST_TEST_MODELS_DIR});
  auto scn = lib.load_scenario("reference");  // two options: the Developer tier, a workstation
  scn.fleet[0].sessions = 200;
  scn.fleet[0].stagger_s = 1;
  const std::int64_t budget = std::int64_t{64} << 20;
  set_memory_budget_bytes(budget);
  // Each option's share: (64 MiB less the run's estimate without a timeline) / 2.
  const double room =
      static_cast<double>((budget - estimate_run_bytes(run_size_of(scn, false, true))) / 2) / (1 << 30);
  run_options opt;
  opt.record_attempts = true;
  try {
    (void)run_scenario(scn, opt);
    set_memory_budget_bytes(0);
    FAIL() << "a timeline of about 100 attempts a request was not refused";
  } catch (const config_error& e) {
    set_memory_budget_bytes(0);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("scenario reference, option cloud: simulation on cerebras-developer-qwen-3.8-27b: the "
                         "timeline reached ",
                         0),
              0u)
        << what;
    EXPECT_NE(what.find(fmt::format(" GiB, past the {:.2f} GiB the memory budget leaves it: a tier the fleet "
                                    "overwhelms makes many 429s a request; set LOOPCAST_MEMORY_BUDGET_GB to allow "
                                    "it, lower the attempt budget, or drop the timeline",
                                    room)),
              std::string::npos)
        << what;
  }
  // The command line says so with exit code 3 (bad input), before the timeline takes the machine.
  scratch s;
  auto text = slurp(fs::path(LOOPCAST_TEST_MODELS_DIR) / "scenarios/reference.json");
  const auto at = text.find("\"sessions\": 1,");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 14, "\"sessions\": 200, \"stagger_s\": 1,");
  const auto f = s.write("herd.json", text);
  ::setenv("LOOPCAST_MEMORY_BUDGET_GB", "0.05", 1);
  const auto r = loopcast_cli("run " + f.string() + " --timeline " + (s.dir / "t.csv").string());
  ::unsetenv("LOOPCAST_MEMORY_BUDGET_GB");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("the memory budget leaves it"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(s.dir / "t.csv"));
}

// 9 and 10. Outputs never overwrite inputs, and lost output is exit 4.
TEST(Hostile, OutputsNeverOverwriteInputsAndLostOutputFails) {
  scratch s;
  const auto log = s.write("log.jsonl", slurp(traces / "claude-code-jsonl/short.jsonl"));
  const auto before = slurp(log);
  auto r = loopcast_cli("convert " + log.string() + " -o " + log.string());
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "loopcast: " + log.string() + ": is also an input; refusing to overwrite it\n");
  r = loopcast_cli("replay " + log.string() + " --on local-workstation-qwen-27b --timeline " + log.string());
  EXPECT_EQ(r.code, 4);
  r = loopcast_cli("fit " + log.string() + " -o " + log.string());
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(slurp(log), before);
  const auto scn = s.write("scn.json", slurp(fs::path(LOOPCAST_TEST_MODELS_DIR) / "scenarios/reference.json"));
  r = loopcast_cli("montecarlo " + scn.string() + " --seeds 2 --csv " + scn.string());
  EXPECT_EQ(r.code, 4);
  r = loopcast_cli("run --json", " >/dev/full");
  EXPECT_EQ(r.code, 4);
  r = loopcast_cli("run --timeline /dev/full");
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "loopcast: /dev/full: write failed: No space left on device\n");
}

// 11. Negative delays, prefix ends beyond the token cap, costs out of range, a first token outside
// its request: refused with file and line.
TEST(Hostile, OutOfRangeValuesInALogAreRefused) {
  scratch s;
  auto expect = [&](const std::string& extra, const std::string& message) {
    const auto f = s.write("v.jsonl", loopcast_header + "\n" + loopcast_line(extra) + "\n");
    try {
      (void)import_trace(f);
      ADD_FAILURE() << extra;
    } catch (const trace_error& e) {
      EXPECT_EQ(std::string(e.what()), f.string() + ":2: session s: " + message);
    }
  };
  expect(R"(,"delay_before_s":-1)", "delay_before_s -1 is out of range (0 to 10^7 s)");
  expect(R"(,"cost_usd":-5)", "cost_usd -5 is out of range (0 to 10^6 USD per request)");
  expect(R"(,"cost_usd":1e308)", "cost_usd 1e+308 is out of range (0 to 10^6 USD per request)");
  expect(R"(,"t_first_token":7)", "first token at 7 s lies outside its request (sent 0 s, ended 1 s)");
  // A prefix run ending at 2^64 − 1 tokens is a malformed record (it became −1 before).
  const auto f = s.write("p.jsonl", R"({"loopcast_trace": 1, "has_prefix": true, "lineages": 1})" "\n" +
                                        loopcast_line(R"(,"prefix":[[0,18446744073709551615]])") + "\n");
  try {
    (void)import_trace(f);
    FAIL();
  } catch (const trace_error& e) {
    EXPECT_NE(std::string(e.what()).find("no usable request in 1 record read (skipped: 1 malformed prefix run)"),
              std::string::npos) << e.what();
  }
  // fit blames the logs, not its output file, for what the logs contain.
  const auto r = loopcast_cli("fit " + (traces / "claude-code-jsonl/short.jsonl").string() + " -o " + (s.dir / "o.json").string());
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err.find((s.dir / "o.json").string()), std::string::npos) << r.err;
}

// 12. A rejected price never becomes 0; limits infer emits only limits the loader accepts.
TEST(Hostile, RejectedPricesAndLimitsAreNotInvented) {
  const auto list = parse_price_list(R"({"m":{"input_cost_per_token":-1,"output_cost_per_token":2e-6}})", "p.json");
  ASSERT_EQ(list.models.size(), 1u);
  EXPECT_FALSE(list.models[0].priced);
  EXPECT_TRUE(price_book_of(list).entries.empty());
  const auto r = infer_limits(parse_header_snapshots("x-ratelimit-limit-tokens: 1e308\n", "h.txt"));
  EXPECT_TRUE(r.buckets.empty());
  EXPECT_EQ(r.notes.at(0), "h.txt:1: x-ratelimit-limit-tokens: \"1e308\" is not a limit (a whole number from 1 to 10^12); ignored");
}

// 13. Command-line numbers, symlink loops and opencode ids.
TEST(Hostile, SmallerCases) {
  for (const auto& args : {std::string("montecarlo reference --confidence nan"), std::string("run --seed -1"),
                           std::string("run --seed 18446744073709551616"),
                           std::string("solve max-agents reference --p429 nan"),
                           std::string("compare task-code-completion --on cerebras-developer-qwen-3.8-27b --score m=nan")}) {
    const auto r = loopcast_cli(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
  }
  scratch s;
  fs::create_directory_symlink(s.dir / "loop", s.dir / "loop");
  const auto r = loopcast_cli("stats " + s.dir.string());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(r.err.find("filesystem error"), std::string::npos) << r.err;

  // An opencode message whose id is a path does not reach outside the storage folder.
  const auto root = s.dir / "oc";
  fs::create_directories(root / "message" / "ses1");
  fs::create_directories(root / "part");
  std::ofstream(root / "message" / "ses1" / "msg1.json")
      << R"({"id":"/proc/self","role":"assistant","time":{"created":1000,"completed":3000},"tokens":{"input":5,"output":70}})";
  const auto t = import_trace(root);
  ASSERT_EQ(t.request_count(), 1u);
  ASSERT_FALSE(t.summary.issues.empty());
  EXPECT_EQ(t.summary.issues[0].reason, "message id is not a plain name; its parts are looked up by the file's name");
}

// Compressed logs are read transparently (gzip and zstd, from their magic bytes), and give what
// the plain log gives; a truncated one is an error that names the file.
TEST(CompressedLogs, GzipAndZstdReadLikeThePlainLog) {
  const std::filesystem::path dir = std::string(LOOPCAST_TEST_DATA_DIR) + "/handmade";
  const auto plain = import_trace(dir / "kv-untimed.json");
  for (const char* name : {"kv-untimed.json.gz", "kv-untimed.json.zst"}) {
    SCOPED_TRACE(name);
    const auto t = import_trace(dir / name);
    EXPECT_EQ(t.file, (dir / name).string());
    EXPECT_EQ(t.format, trace_format::kv_cache_tester);
    ASSERT_EQ(t.request_count(), plain.request_count());
    for (std::size_t i = 0; i < plain.sessions[0].requests.size(); ++i) {
      EXPECT_EQ(t.sessions[0].requests[i].tokens.prompt(), plain.sessions[0].requests[i].tokens.prompt());
      EXPECT_EQ(t.sessions[0].requests[i].t_send, plain.sessions[0].requests[i].t_send);
    }
  }
  scratch s;
  std::ifstream in(dir / "kv-untimed.json.gz", std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto cut = s.write("cut.json.gz", gz.substr(0, gz.size() / 2));
  try {
    (void)import_trace(cut);
    FAIL() << "expected a trace_error";
  } catch (const trace_error& e) {
    EXPECT_EQ(std::string(e.what()), cut.string() + ": truncated gzip data (the stream ends before its end marker)");
  }
  std::ifstream zin(dir / "kv-untimed.json.zst", std::ios::binary);
  std::string zst((std::istreambuf_iterator<char>(zin)), std::istreambuf_iterator<char>());
  const auto zcut = s.write("cut.json.zst", zst.substr(0, zst.size() / 2));
  try {
    (void)import_trace(zcut);
    FAIL() << "expected a trace_error";
  } catch (const trace_error& e) {
    EXPECT_EQ(std::string(e.what()), zcut.string() + ": truncated zstd data (the stream ends inside a frame)");
  }
}

// kv-cache-tester traces and Claude Code logs are read with simdjson: the same rules as the strict
// reader (a repeated key keeps its last value; the strict reader's messages for invalid JSON), and
// a kv-cache-tester trace is recognised from its leading keys without parsing it.
TEST(Hostile, FastReadersFollowTheStrictReadersRules) {
  scratch s;
  // A repeated key keeps its last value: "in" is 100, so 100 − 64 = 36 tokens miss the cache.
  const auto kv = s.write("kv.json", R"({"id":"x","models":["a",{"b":[1]}],"block_size":64,"requests":[)"
                                     R"({"t":0,"in":10,"in":100,"out":5,"hash_ids":[1,2]},)"
                                     R"({"t":1,"in":100,"out":5,"hash_ids":[1,2],"model":"m"}]})");
  EXPECT_EQ(detect_trace_format(kv), trace_format::kv_cache_tester);
  const auto t = import_trace(kv);
  ASSERT_EQ(t.request_count(), 2u);
  EXPECT_EQ(t.sessions[0].requests[0].tokens.input, 100);
  EXPECT_EQ(t.sessions[0].requests[1].tokens.cache_read, 100);  // min(2 blocks × 64, 100)
  EXPECT_EQ(t.models, (std::vector<std::string>{"unknown", "m"}));
  // Invalid JSON: the strict reader's located message.
  const auto broken = s.write("broken.json", "{\"block_size\":64,\n\"requests\":[{\"t\":0,]}");
  try {
    (void)import_trace(broken, trace_format::kv_cache_tester);
    FAIL();
  } catch (const trace_error& e) {
    EXPECT_EQ(std::string(e.what()), broken.string() + ":2: not valid JSON at column 20: syntax error "
                                                       "while parsing object key - unexpected ']'; expected string literal")
        << e.what();
  }
  // An integer beyond 64 bits, which the strict reader takes as a float: refused with simdjson's reason.
  const auto big = s.write("big.json", R"({"block_size":64,"requests":[{"t":0,"in":10,"out":5,"hash_ids":[123456789012345678901234]}]})");
  try {
    (void)import_trace(big, trace_format::kv_cache_tester);
    FAIL();
  } catch (const trace_error& e) {
    EXPECT_EQ(std::string(e.what()), big.string() + ": not read: Problem while parsing a number (a number beyond what 64-bit "
                                                    "integers and doubles hold)");
  }
  // A JSONL log whose first record holds those keys deeper down is not a kv-cache-tester trace.
  const auto cc = s.write("cc.jsonl", R"({"type":"user","sessionId":"s","message":{"block_size":1,"requests":[]},)"
                                      R"("timestamp":"2026-01-01T00:00:00Z"})" "\n");
  EXPECT_EQ(detect_trace_format(cc), trace_format::claude_code);
}
