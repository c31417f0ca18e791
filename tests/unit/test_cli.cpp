// The loopcast command: exit codes, one-line errors, --json fields, --timeline, determinism.
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using loopcast::test_support::run_cli;
using loopcast::test_support::run_result;
using loopcast::test_support::slurp;

using loopcast::test_support::models;
using loopcast::test_support::litellm_prices;

} // namespace

TEST(Cli, RunWithoutArgumentsPrintsTheReferenceReport) {
  const auto r = run_cli("run");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* s : {"scenario reference", "== cloud: cerebras-developer-qwen-3.8-27b", "First 429   request",
                        "refused by total_tpm", "uncached_tpm", "effective P10/P50/P90", "Energy", "== cloud vs local =="})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST(Cli, JsonCarriesTheDocumentedFields) {
  const auto r = run_cli("run --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("schema_version"), 1);
  ASSERT_EQ(j.at("options").size(), 2u);
  for (const auto& o : j.at("options")) {
    SCOPED_TRACE(o.at("label").get<std::string>());
    for (const char* k : {"first_429", "sent_before_first_429", "effective_tps", "decode_tps", "prefill_share", "requests",
                          "wall_s", "outcome", "cost_usd", "usd_per_hour", "energy_kwh"})
      EXPECT_TRUE(o.contains(k)) << k;
    for (const char* p : {"p10", "p50", "p90"}) {
      EXPECT_TRUE(o.at("effective_tps").at(p).is_number());
      EXPECT_TRUE(o.at("decode_tps").at(p).is_number());
    }
    EXPECT_TRUE(o.at("prefill_share").at("p50").is_number());
  }
  const auto& cloud = j.at("options").at(0);
  EXPECT_EQ(cloud.at("first_429").at("bucket"), "total_tpm");
  EXPECT_TRUE(cloud.at("first_429").at("request").is_number_integer());
  EXPECT_TRUE(cloud.at("first_429").at("time_s").is_number());
  for (const char* c : {"input", "cache_read", "cache_write", "output", "reasoning"})
    EXPECT_TRUE(cloud.at("sent_before_first_429").at(c).is_number_integer());
  EXPECT_TRUE(cloud.at("energy_kwh").is_null());
  const auto& local = j.at("options").at(1);
  EXPECT_TRUE(local.at("first_429").is_null());
  EXPECT_TRUE(local.at("energy_kwh").is_number());
  EXPECT_EQ(local.at("outcome"), "completed");
  EXPECT_TRUE(j.at("comparison").at("cost_ratio").is_number());
}

TEST(Cli, SameSeedSameOutputOtherSeedOther) {
  const auto a = run_cli("run --json --seed 7"), b = run_cli("run --json --seed 7"), c = run_cli("run --json --seed 8");
  ASSERT_EQ(a.code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  EXPECT_EQ(nlohmann::json::parse(a.out).at("scenario").at("seed"), 7);
}

TEST(Cli, TimelineHasOneRowPerAttempt) {
  const auto path = std::filesystem::temp_directory_path() / "loopcast_cli_timeline.csv";
  const auto r = run_cli("run --json --timeline " + path.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto csv = slurp(path);
  std::filesystem::remove(path);
  std::istringstream lines(csv);
  std::string header, line;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("option,session,request,turn,attempt,compaction,status,t_send_s,", 0), 0u);
  EXPECT_NE(header.find(",used_uncached_tpm,used_total_tpm,used_rpm"), std::string::npos);
  int rows = 0, limited = 0;
  while (std::getline(lines, line)) {
    ++rows;
    limited += line.find(",rate_limited,") != std::string::npos;
  }
  int attempts = 0;
  for (const auto& o : j.at("options")) attempts += o.at("attempts").get<int>();
  EXPECT_EQ(rows, attempts);
  EXPECT_EQ(limited, j.at("options").at(0).at("rate_limited").get<int>());
}

TEST(Cli, BadScenarioIsOneLineNamingFileAndPointer) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto bad = dir / "loopcast_bad_scenario.json";
  std::ofstream(bad) << R"({"kind": "scenario", "name": "bad", "source": "test", "read_on": "2026-11-01",
    "seed": -3, "start_time_utc": "2026-05-04T14:00:00Z", "workload": "reference-agent-loop", "sessions": 1,
    "options": [{"label": "cloud", "target": "cerebras-developer-qwen-3.8-27b", "client": "opencode"}]})";
  const auto r = run_cli("run " + bad.string());
  std::filesystem::remove(bad);
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "loopcast: " + bad.string() + ": /seed: expected a whole number between 0 and 9007199254740992, found -3\n");
}

TEST(Cli, UnknownScenarioName) {
  const auto r = run_cli("run nonesuch");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "loopcast: " + models + ": no scenario preset named \"nonesuch\" (known: engine-burst-rtx4090, reference)\n");
}

// A path that is not there is "no such file", not an unknown preset; a long list of presets is
// answered with the nearest names and a count.
TEST(Cli, AMissingFileAndAMistypedTarget) {
  const auto cwd = std::filesystem::current_path().string();
  const auto r = run_cli("run examples/scenarios/nonesuch.json");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "loopcast: examples/scenarios/nonesuch.json: no such file (from " + cwd +
                       "; a scenario is a .json file or a preset name: engine-burst-rtx4090, reference)\n");
  const auto t = run_cli("replay " + std::string(LOOPCAST_TEST_TRACES_DIR) + "/codex --on nonesuch.json");
  EXPECT_EQ(t.code, 3);
  EXPECT_EQ(t.err, "loopcast: nonesuch.json: no such file (from " + cwd + "; a target is a .json file or a preset name)\n");
  const auto typo = run_cli("replay " + std::string(LOOPCAST_TEST_TRACES_DIR) + "/codex --on cerebras-developer-qwen-3.8");
  EXPECT_EQ(typo.code, 3);
  EXPECT_NE(typo.err.find(": no target preset named \"cerebras-developer-qwen-3.8\"; did you mean "
                          "cerebras-developer-qwen-3.8-27b or"),
            std::string::npos)
      << typo.err;
  EXPECT_NE(typo.err.find(" target presets: `loopcast presets --kind target`)\n"), std::string::npos) << typo.err;
}

TEST(Cli, UsageErrorsAndHelp) {
  EXPECT_EQ(run_cli("run --frobnicate").code, 2);
  EXPECT_EQ(run_cli("").code, 2);
  const auto help = run_cli("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("Exit codes:"), std::string::npos);
  const auto run_help = run_cli("run --help");
  EXPECT_EQ(run_help.code, 0);
  EXPECT_NE(run_help.out.find("--timeline"), std::string::npos);
}

TEST(Cli, UnwritableTimeline) {
  const auto r = run_cli("run --timeline /nonexistent-dir/t.csv");
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "loopcast: /nonexistent-dir/t.csv: cannot create a file in its folder: No such file or directory\n");
}

TEST(Cli, PresetsListsEveryKind) {
  const auto r = run_cli("presets");
  ASSERT_EQ(r.code, 0);
  for (const char* s : {"cerebras-developer-qwen-3.8-27b              cerebras   developer          qwen-3.8-27b               2026-11-01 no    docs/model.md",
                        "deepseek-v4-pro                              deepseek   default            deepseek-v4-pro",
                        "\nopencode                     opencode: retries", "\nreference-agent-loop         The reference",
                        "\nreference                    docs/model.md §9"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST(Cli, PresetsJsonAndShow) {
  const auto r = run_cli("presets --kind target --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j.size(), 20u);
  for (const auto& e : j) {
    SCOPED_TRACE(e.at("name").get<std::string>());
    EXPECT_EQ(e.at("kind"), "target");
    for (const char* k : {"provider", "tier", "model", "source", "read_on", "verified"}) EXPECT_TRUE(e.contains(k)) << k;
    EXPECT_FALSE(e.at("source").get<std::string>().empty());
  }
  // A scenario is shown with its workload, targets and clients inlined.
  const auto s = run_cli("presets show reference");
  ASSERT_EQ(s.code, 0) << s.err;
  const auto sj = nlohmann::json::parse(s.out);
  EXPECT_EQ(sj.at("options")[0].at("target").at("limits").at("buckets")[1].at("name"), "total_tpm");
  EXPECT_EQ(sj.at("workload").at("turns"), 33);
  const auto missing = run_cli("presets show nonesuch");
  EXPECT_EQ(missing.code, 3);
  EXPECT_NE(missing.err.find("no preset named \"nonesuch\""), std::string::npos) << missing.err;
}

// ---- stats, replay, fit, convert -------------------------------------------------------------

namespace {
const std::string trace_dir = loopcast::test_support::traces.string();
}

TEST(CliLogs, StatsJsonPerModelAndOverall) {
  const auto r = run_cli("stats --json " + trace_dir + "/claude-code-weka/trace_0455.json --price cerebras-developer-qwen-3.8-27b");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("groups").size(), 2u);
  EXPECT_EQ(j.at("groups").at(1).at("model"), "all");
  EXPECT_EQ(j.at("groups").at(1).at("requests"), 51);
  EXPECT_EQ(j.at("groups").at(1).at("samples").at("dropped_no_timing"), 8);
  // 2,099,358 prompt tokens × $0.99/M + 8,464 output × $1.49/M = $2.090976 (independently computed).
  EXPECT_NEAR(j.at("groups").at(1).at("priced_cost_usd").get<double>(), 2.090976, 1e-6);
  EXPECT_EQ(j.at("groups").at(1).at("context_bins").size(), 4u);
  EXPECT_EQ(j.at("logs").at(0).at("format"), "kv-cache-tester");
}

TEST(CliLogs, MissingAndUnreadableLogs) {
  auto r = run_cli("stats /nonexistent.jsonl");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "loopcast: /nonexistent.jsonl: no such file or directory\n");
  r = run_cli("stats --format bogus " + trace_dir + "/codex");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: unknown --format \"bogus\" (expected auto, claude-code, codex, opencode, kv-cache-tester, "
                   "swe-agent or loopcast)\n");
  r = run_cli("replay " + trace_dir + "/swe-agent/pydicom__pydicom-1458.traj --on local-workstation-qwen-27b");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("per-task totals only"), std::string::npos);
  r = run_cli("replay " + trace_dir + "/codex --on nonesuch");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("no target preset named \"nonesuch\""), std::string::npos);
}

TEST(CliLogs, FitWritesAPresetThatReplayLoads) {
  const auto preset = std::filesystem::temp_directory_path() / "loopcast_cli_fit.json";
  auto r = run_cli("fit " + trace_dir + "/claude-code-weka/trace_0455.json -o " + preset.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fitted 43 requests (TTFT and decode separately)"), std::string::npos) << r.out;
  r = run_cli("replay --json " + trace_dir + "/claude-code-weka/trace_0455.json --on " + preset.string() +
               " --on cerebras-developer-qwen-3.8-27b");
  std::filesystem::remove(preset);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("options").size(), 2u);
  EXPECT_EQ(j.at("options").at(0).at("label"), "loopcast_cli_fit");
  EXPECT_EQ(j.at("options").at(0).at("requests"), 51);
  EXPECT_EQ(j.at("recorded").at("requests"), 51);
}

TEST(CliLogs, ConvertThenStatsAgree) {
  const auto out = std::filesystem::temp_directory_path() / "loopcast_cli_convert.jsonl";
  const std::string codex = trace_dir + "/codex/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl";
  auto r = run_cli("convert " + codex + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, codex + ": 28 requests in 1 sessions written to " + out.string() + "\n");
  const auto a = run_cli("stats --json " + codex), b = run_cli("stats --json " + out.string());
  std::filesystem::remove(out);
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja.at("groups"), jb.at("groups"));
}

// Found by fuzzing: a log line holding invalid UTF-8 is skipped as "not JSON", and the parser's
// message quotes the bytes it read; that reason, in the --json output, made the dump throw. Such
// bytes are now replaced by U+FFFD, and the output is valid JSON.
TEST(CliLogs, InvalidUtf8InALogStillGivesValidJson) {
  const auto path = std::filesystem::temp_directory_path() / "loopcast_cli_utf8.jsonl";
  std::ofstream(path) << "{\"type\":\"user\",\"bad\":\"\xff\xfe\"}\n"
                      << R"({"type":"user","timestamp":"2026-02-10T21:11:56.846Z","message":{"role":"user","content":"hi"}})" "\n"
                      << R"({"type":"assistant","timestamp":"2026-02-10T21:11:59.000Z","message":{"id":"m1","model":"x",)"
                      << R"("content":[],"usage":{"input_tokens":10,"output_tokens":60}}})" "\n";
  const auto r = run_cli("stats --json --format claude-code " + path.string());
  std::filesystem::remove(path);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // valid JSON, valid UTF-8
  const auto reason = j.at("logs").at(0).at("issues").at(0).at("reason").get<std::string>();
  EXPECT_EQ(reason.rfind("not JSON: ", 0), 0u);
  EXPECT_NE(reason.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD where the bad bytes were
  EXPECT_EQ(j.at("groups").at(0).at("requests"), 1);
}

TEST(CliMonteCarlo, JsonCsvAndThreadsGiveTheSameNumbers) {
  const auto csv = std::filesystem::temp_directory_path() / ("loopcast_mc_" + std::to_string(::getpid()) + ".csv");
  const auto a = run_cli("montecarlo reference --seeds 30 --threads 1 --json --csv " + csv.string());
  ASSERT_EQ(a.code, 0) << a.err;
  const auto j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j.at("seeds"), 30);
  EXPECT_EQ(j.at("first_seed"), 42);
  ASSERT_EQ(j.at("options").size(), 2u);
  const auto& cloud = j.at("options")[0];
  for (const char* k : {"p_429_within_horizon", "p_session_dies", "first_429_s", "stall_share", "usd_per_task",
                        "tasks_per_hour", "wall_s", "relative_half_width"})
    EXPECT_TRUE(cloud.contains(k)) << k;
  EXPECT_EQ(j.at("options")[1].at("first_429_s").at("p50").at("value"), "never");  // local: never a 429
  const auto rows = slurp(csv);
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 61);  // header + 30 seeds × 2 options
  EXPECT_EQ(rows.rfind("seed,option,label,first_429_s,", 0), 0u);
  const auto b = run_cli("montecarlo reference --seeds 30 --threads 2 --json");
  EXPECT_EQ(a.out, b.out);
  // Without --threads the command line takes every core, with the same numbers.
  const auto c = run_cli("montecarlo reference --seeds 30 --json");
  EXPECT_EQ(a.out, c.out);
  const auto help = run_cli("montecarlo --help");
  EXPECT_NE(help.out.find("--threads UINT:UINT in [0 - 1024]=0\n"), std::string::npos) << help.out;
  std::filesystem::remove(csv);
}

TEST(CliMonteCarlo, SeedsAndPrecisionExcludeEachOther) {
  const auto r = run_cli("montecarlo reference --seeds 10 --precision 0.1");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: --seeds excludes --precision\n");
}

TEST(CliCatalogue, CompareTellsWhichOptionsMeetTheContract) {
  const auto r = run_cli("compare task-code-completion --on rtx4090-vllm-llama-3.1-8b --on anthropic-tier1-claude-sonnet-4.5 "
                          "--seeds 2 --score llama-3.1-8b-instruct=40 --bar 30 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("contract").at("task"), "code completion");
  EXPECT_EQ(j.at("sessions"), 30);
  ASSERT_EQ(j.at("options").size(), 2u);
  EXPECT_EQ(j.at("options")[0].at("gate"), "pass");
  EXPECT_EQ(j.at("options")[0].at("meets"), true);
  EXPECT_EQ(j.at("options")[1].at("gate"), "not rated");
  EXPECT_EQ(j.at("options")[1].at("meets"), false);
  const auto text = run_cli("compare task-code-completion --on rtx4090-vllm-llama-3.1-8b --seeds 1");
  EXPECT_NE(text.out.find("Contract: TTFT P50 ≤ 0.2 s, TTFT P90 ≤ 0.4 s, every session completes"), std::string::npos) << text.out;
  const auto bad = run_cli("compare task-code-completion --on rtx4090-vllm-llama-3.1-8b --score nonsense");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "loopcast: --score expects MODEL=NUMBER with a finite number, found \"nonsense\"\n");
  const auto no_contract = run_cli("compare burst-chat-256-512 --on rtx4090-vllm-llama-3.1-8b");
  EXPECT_EQ(no_contract.code, 1);
}

// prices import --base writes a target: the base's limits, cache and speed with the list's prices
// (LiteLLM's claude-sonnet-4-5: $3 / $0.30 / $3.75 / $6 / $15 per million, 2× input above 200K).
TEST(CliCatalogue, PricesImportWritesATargetOnABase) {
  const std::string data = LOOPCAST_TEST_DATA_DIR;
  const auto out = (std::filesystem::temp_directory_path() / "loopcast-sonnet-litellm.json").string();
  std::filesystem::remove(out);
  const auto r = run_cli("prices import " + data + "/prices/litellm.json --model claude-sonnet-4-5 --base "
                          "anthropic-tier1-claude-sonnet-4.5 -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("loopcast: wrote " + out + ": target \"loopcast-sonnet-litellm\", the limits, cache and speed of "
                       "anthropic-tier1-claude-sonnet-4.5 with the prices of claude-sonnet-4-5"),
            std::string::npos) << r.err;
  std::ifstream in(out);
  const auto t = nlohmann::json::parse(in);
  const auto shown = run_cli("presets show anthropic-tier1-claude-sonnet-4.5");
  ASSERT_EQ(shown.code, 0) << shown.err;
  const auto base = nlohmann::json::parse(shown.out);
  EXPECT_EQ(t.at("name"), "loopcast-sonnet-litellm");
  EXPECT_EQ(t.at("model"), "claude-sonnet-4-5");
  EXPECT_EQ(t.at("verified"), false);
  const auto& c = t.at("prices").at("usd_per_million");
  EXPECT_EQ(c.at("input"), 3.0);
  EXPECT_EQ(c.at("cache_read"), 0.3);
  EXPECT_EQ(c.at("cache_write_5m"), 3.75);
  EXPECT_EQ(c.at("cache_write_1h"), 6.0);
  EXPECT_EQ(c.at("output"), 15.0);
  EXPECT_EQ(t.at("prices").at("long_context").at(0).at("above_prompt_tokens"), 200000);
  EXPECT_EQ(t.at("prices").at("long_context").at(0).at("usd_per_million").at("input"), 6.0);
  EXPECT_EQ(t.at("prices").at("batch_discount"), 0.5);
  for (const char* kept : {"limits", "cache", "speed", "context_window_tokens", "max_output_tokens", "provider", "tier"})
    EXPECT_EQ(t.at(kept), base.at(kept)) << kept;
  // It loads as a target, and since LiteLLM's prices for this model are Anthropic's, a replay on
  // it costs what the same replay costs on the base.
  const std::string log = std::string(LOOPCAST_TEST_TRACES_DIR) + "/claude-code-jsonl/subagent.jsonl";
  const auto on_new = run_cli("replay " + log + " --on " + out + " --json");
  const auto on_base = run_cli("replay " + log + " --on anthropic-tier1-claude-sonnet-4.5 --json");
  ASSERT_EQ(on_new.code, 0) << on_new.err;
  ASSERT_EQ(on_base.code, 0) << on_base.err;
  const double cost_new = nlohmann::json::parse(on_new.out).at("options").at(0).at("cost_usd");
  const double cost_base = nlohmann::json::parse(on_base.out).at("options").at(0).at("cost_usd");
  EXPECT_GT(cost_new, 0.3);
  EXPECT_DOUBLE_EQ(cost_new, cost_base);

  // One model, a cloud base: anything else is refused with a reason and nothing is written.
  const auto many = run_cli("prices import " + data + "/prices/litellm.json --base anthropic-tier1-claude-sonnet-4.5");
  EXPECT_EQ(many.code, 2);
  EXPECT_NE(many.err.find("loopcast: --base writes one target: give --model ID (the list has 5 models)"), std::string::npos)
      << many.err;
  const auto local = run_cli("prices import " + data + "/prices/litellm.json --model claude-sonnet-4-5 --base "
                              "local-workstation-qwen-27b -o " + out + ".local");
  EXPECT_EQ(local.code, 3);
  EXPECT_NE(local.err.find("/type: a local target is priced by its power, not by a price list: give a cloud target"),
            std::string::npos) << local.err;
  EXPECT_FALSE(std::filesystem::exists(out + ".local"));
  std::filesystem::remove(out);
}

TEST(CliCatalogue, PricesImportAndLimitsInfer) {
  const std::string data = LOOPCAST_TEST_DATA_DIR;
  const auto p = run_cli("prices import " + data + "/prices/litellm.json --model claude-3-haiku-20240307 --json");
  ASSERT_EQ(p.code, 0) << p.err;
  const auto j = nlohmann::json::parse(p.out);
  EXPECT_EQ(j.at("format"), "litellm");
  EXPECT_EQ(j.at("models")[0].at("prices").at("usd_per_million").at("cache_write_1h"), 6.0);
  EXPECT_EQ(j.at("warnings").size(), 1u);
  EXPECT_NE(p.err.find("warning: " + data + "/prices/litellm.json: claude-3-haiku-20240307: "
                       "cache_creation_input_token_cost_above_1hr: a cache write at 24.0× the input price"),
            std::string::npos) << p.err;
  const auto l = run_cli("limits infer " + data + "/headers/openai.txt --json");
  ASSERT_EQ(l.code, 0) << l.err;
  const auto lj = nlohmann::json::parse(l.out);
  EXPECT_EQ(lj.at("provider"), "openai");
  EXPECT_EQ(lj.at("limits").at("buckets")[1].at("limit"), 30000);
  EXPECT_EQ(lj.at("messages")[0].at("consistent"), true);
  const auto none = run_cli("limits infer " + models + "/clients/opencode.json");
  EXPECT_EQ(none.code, 3);
  EXPECT_EQ(none.err, "loopcast: " + models + "/clients/opencode.json: no rate-limit header of Cerebras, OpenAI or "
                      "Anthropic and no 429 message (\"Limit L, Used U, Requested R … try again in T\")\n");
}

// --on takes a mapping by model inline or from a file; the flags of real-session replays are
// checked (exit 2), and a stop is explained in the text report.
TEST(CliLogs, ReplayRoutesAndExplains) {
  const auto trace = trace_dir + "/claude-code-weka/trace_0291.json";
  const auto map = std::filesystem::temp_directory_path() / ("loopcast_map_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream f(map);
    f << R"({"claude-opus-*": "local-workstation-qwen-27b", "claude-haiku-*": "rtx3090-llamacpp-qwen-3.8-27b-128k"})";
  }
  auto r = run_cli("--models " + models + " replay " + trace + " --on " + map.string() + " --json");
  std::filesystem::remove(map);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& o = j["options"][0];
  EXPECT_EQ(o["routes"], nlohmann::json::array({"claude-opus-* → local-workstation-qwen-27b",
                                                "claude-haiku-* → rtx3090-llamacpp-qwen-3.8-27b-128k"}));
  EXPECT_EQ(o["complete"], true);
  EXPECT_EQ(o["requests_served"], 32);

  r = run_cli("--models " + models + " replay " + trace + " --on 'claude-opus-*=local-workstation-qwen-27b'");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "loopcast: --on: local-workstation-qwen-27b: no mapping for the model claude-haiku-4-5-20251001 "
                   "(2 sessions); add a pattern for it, or '*=TARGET'\n");
  r = run_cli("--models " + models + " replay " + trace + " --on 'claude-opus-*'");
  EXPECT_EQ(r.code, 3);  // a preset name that does not exist
  r = run_cli("--models " + models + " replay " + trace + " --on local-workstation-qwen-27b --speed fast");
  EXPECT_EQ(r.code, 2);
  r = run_cli("--models " + models + " replay " + trace + " --on local-workstation-qwen-27b --compact-at 1.5");
  EXPECT_EQ(r.code, 2);

  // Sonnet 4.5 on Tier 1 with the reservation refused outright is explained where the user looks.
  r = run_cli("--models " + models + " replay " + trace_dir +
               "/claude-code-weka/trace_0455.json --on cerebras-free-qwen-3.8-27b --max-tokens 16384");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Why options stopped"), std::string::npos) << r.out;
}

// `loopcast stats` with no LOG reads the agents' default places under HOME (a fake home laid out
// like the real tools'): Claude Code's projects, Codex's sessions; an empty session file is
// skipped with a note. Counts per project are those of the files (tests/data), summed in "all".
TEST(CliLogs, StatsWithoutLogsReadsTheDefaultPlaces) {
  namespace fs = std::filesystem;
  const auto home = fs::temp_directory_path() / ("lc_home_" + std::to_string(::getpid()));
  fs::remove_all(home);
  const fs::path data = trace_dir;
  fs::create_directories(home / ".claude/projects/-home-u-alpha");
  fs::create_directories(home / ".claude/projects/-home-u-beta");
  fs::create_directories(home / ".codex/sessions/2026/02/23");
  fs::copy_file(data / "claude-code-jsonl/short.jsonl", home / ".claude/projects/-home-u-alpha/short.jsonl");
  fs::copy_file(data / "claude-code-jsonl/tool_heavy.jsonl", home / ".claude/projects/-home-u-beta/tool_heavy.jsonl");
  std::ofstream(home / ".claude/projects/-home-u-beta/empty.jsonl").close();
  for (const auto& e : fs::directory_iterator(data / "codex"))
    if (e.path().extension() == ".jsonl") fs::copy_file(e.path(), home / ".codex/sessions/2026/02/23" / e.path().filename());
  auto run = [&](const std::string& args, const fs::path& h) {
    const auto out = fs::temp_directory_path() / ("lc_home_out_" + std::to_string(::getpid()));
    const auto err = fs::temp_directory_path() / ("lc_home_err_" + std::to_string(::getpid()));
    const std::string cmd = "env -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u XDG_DATA_HOME HOME=" + h.string() + " " +
                            LOOPCAST_CLI + " --models " + models + " " + args + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    run_result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
    fs::remove(out);
    fs::remove(err);
    return r;
  };
  auto r = run("stats --by project --csv", home);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "project,requests,input,cache_read,cache_write,cache_write_1h,output,reasoning,recorded_cost_usd,"
            "priced_cost_usd,unpriced_requests,effective_tps_p50,context_tokens_p50,cache_hit_rate");
  // A project is the folder the agent ran in, as the logs record it (cwd): short.jsonl and
  // tool_heavy.jsonl both ran in /home/marco/projects/spotter, though copied to two folders here:
  // 1 + 4 requests, input 3 + 54, cache reads 11,515 + 88,231, 1-hour writes 13,835 + 17,696,
  // output 13 + 212. The two Codex rollouts (28 + 1 requests) ran in /redacted/path/da0ba47443.
  EXPECT_NE(r.out.find("\n/home/marco/projects/spotter,5,57,99746,0,31531,225,0,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n/redacted/path/da0ba47443,29,130473,1655424,0,0,10474,4557,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nall,34,130530,"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("reading claude-code logs in " + (home / ".claude/projects").string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("reading codex logs in " + (home / ".codex/sessions").string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("read 5 files: 34 requests in 4 sessions; 1 file with no request, skipped (1 empty)\n"),
            std::string::npos) << r.err;
  // --since/--until keep every request in exactly one of counted and left out.
  r = run("stats --since 2026-02-11 --until 20260223 --by day --json", home);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("by"), "day");
  std::int64_t counted = 0;
  for (const auto& g : j.at("groups")) {
    if (g.at("group") == "all") counted = g.at("requests");
    EXPECT_FALSE(g.contains("model"));
  }
  EXPECT_EQ(counted + j.at("filtered_out").get<std::int64_t>(), 34);
  EXPECT_GT(counted, 0);
  EXPECT_GT(j.at("filtered_out").get<std::int64_t>(), 0);
  r = run("stats --since 2026-13-01", home);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: --since 2026-13-01: expected a date as YYYY-MM-DD or YYYYMMDD\n");
  // An empty home has nothing to read: the message says where it looked.
  fs::create_directories(home / "empty");
  r = run("stats", home / "empty");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no LOG given, and no agent logs in the default places (~/.config/claude/projects"), std::string::npos)
      << r.err;
  fs::remove_all(home);
}

// `loopcast fit-workload` writes a preset that validate --workload reads back; the text report
// names the four measures.
TEST(CliLogs, FitWorkloadThenValidateIt) {
  const auto w = trace_dir + "/claude-code-weka/";
  const auto out = std::filesystem::temp_directory_path() / ("lc_fitw_" + std::to_string(::getpid()) + ".json");
  auto r = run_cli("--models " + models + " fit-workload " + w + "trace_0043.json " + w + "trace_0291.json " + w +
                    "trace_0455.json -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fitted 3 sessions"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote " + out.string()), std::string::npos) << r.out;
  r = run_cli("--models " + models + " validate " + w + "trace_0527.json " + w + "trace_0729.json --workload " + out.string() +
               " --sessions 50");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"2 real sessions of 2 held-out logs, 50 synthetic sessions", "requests per session",
                        "context growth per request", "prompt tokens per request", "cost per session"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  r = run_cli("--models " + models + " validate " + w + "trace_0527.json --workload " + out.string() +
               " --price local-workstation-qwen-27b");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: --price local-workstation-qwen-27b: the target has no prices (a local target is priced by "
                   "its power)\n");
  // The output is never one of the inputs.
  r = run_cli("fit-workload " + w + "trace_0043.json -o " + w + "trace_0043.json");
  EXPECT_NE(r.code, 0);
  std::filesystem::remove(out);
}

// `loopcast validate` needs one source of speeds, and reports a row per held-out log.
TEST(CliLogs, ValidateReportsPerLogAndOverall) {
  const auto w = trace_dir + "/claude-code-weka/";
  auto r = run_cli("validate " + w + "trace_0043.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: validate needs one of --fit-on LOG... or --on TARGET (speeds), --workload PRESET or "
                   "--workload-fit-on LOG... (workloads)\n");
  r = run_cli("validate " + w + "trace_0043.json --fit-on " + w + "trace_0455.json " + w + "trace_0527.json --seeds 3 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["seeds"], 3);
  ASSERT_EQ(j["traces"].size(), 1u);
  EXPECT_EQ(j["traces"][0]["requests"], 22);
  for (const char* k : {"ape_p50_median", "total_error_abs_median", "ks_median", "coverage_p10_p90"})
    EXPECT_TRUE(j["summary"][k].is_number()) << k;
}

// The real LiteLLM map (2,983 entries) imports with at most a few dozen lines of warnings: the
// hundreds of image/audio entries and unpriced models are summarised.
TEST(CliCatalogue, RealLiteLlmImportIsQuiet) {
  const auto r = run_cli("prices import " + litellm_prices.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = std::count(r.err.begin(), r.err.end(), '\n');
  EXPECT_LE(lines, 50);
  EXPECT_NE(r.err.find("entries of other modes left out (image_generation 209, embedding 124"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("143 models listed without token prices, not priced"), std::string::npos);
}

namespace {
// What a command writes to a terminal: script(1) runs it on a pseudo-terminal and copies what it
// shows to stdout (stdout of the command itself goes to /dev/null).
std::string on_a_terminal(const std::string& env, const std::string& args) {
  const auto out = std::filesystem::temp_directory_path() / ("loopcast_cli_pty_" + std::to_string(::getpid()));
  const std::string inner = std::string(LOOPCAST_CLI) + " --models " + models + " " + args + " >/dev/null";
  const std::string cmd = env + " script -qec '" + inner + "' /dev/null >" + out.string() + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto text = slurp(out);
  std::filesystem::remove(out);
  return text;
}
} // namespace

// Progress: a line on stderr redrawn in place when stderr is a terminal and the work has run long
// enough (LOOPCAST_PROGRESS_AFTER_S, default 2 s), cleared when the work ends; never into a pipe
// or a file, never with --quiet.
TEST(Cli, ProgressAppearsOnATerminalOnly) {
  const auto shown = on_a_terminal("LOOPCAST_PROGRESS_AFTER_S=0", "montecarlo reference --seeds 3000");
  // (On several threads — the default — the first line may count a seed or two already done.)
  EXPECT_EQ(shown.rfind("\r\033[Kloopcast: Monte Carlo ", 0), 0u) << shown;
  EXPECT_NE(shown.find("/3000 (0%), "), std::string::npos) << shown;
  EXPECT_NE(shown.find("/s, ETA "), std::string::npos) << shown;
  EXPECT_TRUE(shown.ends_with("\r\033[K")) << shown;  // the line is cleared at the end
  EXPECT_EQ(on_a_terminal("LOOPCAST_PROGRESS_AFTER_S=0", "--quiet montecarlo reference --seeds 3000"), "");
  // The default waits 2 s: a 0.1 s run shows nothing.
  EXPECT_EQ(on_a_terminal("", "montecarlo reference --seeds 1000"), "");
  // One long simulation reports the requests it has served: 300 agents × 34 requests.
  const auto big = (std::filesystem::temp_directory_path() / ("loopcast_big_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(big) << R"({"kind": "scenario", "name": "big", "description": "300 agents", "source": "test",
    "read_on": "2026-11-30", "verified": false, "seed": 1, "start_time_utc": "2026-05-04T14:00:00Z",
    "fleet": [{"label": "agents", "workload": "reference-agent-loop", "sessions": 300, "stagger_s": 1}],
    "options": [{"label": "developer", "target": "cerebras-developer-qwen-3.8-27b", "client": "opencode"}]})";
  const auto run = on_a_terminal("LOOPCAST_PROGRESS_AFTER_S=0", "run " + big);
  std::filesystem::remove(big);
  EXPECT_EQ(run.rfind("\r\033[Kloopcast: simulation ", 0), 0u) << run;
  EXPECT_NE(run.find("/10200 ("), std::string::npos) << run;
  // Not a terminal: nothing on stderr.
  const auto r = run_cli("--models " + models + " montecarlo reference --seeds 3000");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// A plan's unpublished caps: replay refuses to guess them, --limit sets them, and bad settings are
// named.
TEST(CliLogs, ReplayLimitSetsAPlansCaps) {
  const std::string log = trace_dir + "/claude-code-weka/trace_0043.json";
  auto r = run_cli("replay " + log + " --on claude-max-5x-opus-4.5 --limit five_hour=300000");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: target claude-max-5x-opus-4.5: bucket weekly has no published limit; set it with --limit "
                   "weekly=N (docs/plans.md)\n");
  r = run_cli("replay " + log + " --on claude-max-5x-opus-4.5 --limit five_hour=1.5");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: --limit five_hour=1.5: expected BUCKET=N or TARGET:BUCKET=N with N a whole number from 1 "
                   "to 10^12\n");
  r = run_cli("replay " + log + " --on claude-max-5x-opus-4.5 --limit weekly=3000000 --limit hourly=5");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: --limit hourly=5: no target has a bucket \"hourly\" (buckets: five_hour, weekly)\n");
  r = run_cli("replay --json " + log + " --on claude-max-5x-opus-4.5 --limit five_hour=300000 --limit weekly=3000000");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& o = j["options"][0];
  EXPECT_EQ(o["buckets"][0]["limit"], 300000.0);
  EXPECT_EQ(o["plan"]["name"], "Claude Max 5x");
  // The fee by wall clock: $100 × wall / (365.25 / 12 days).
  EXPECT_DOUBLE_EQ(o["plan"]["fee_share_usd"].get<double>(), 100.0 * o["wall_s"].get<double>() / 2629800.0);
}

// `limits infer --logs`: a plan's caps bounded by the Codex rollout's used_percent snapshots.
TEST(CliLogs, LimitsInferLogsBoundsAPlansCaps) {
  auto r = run_cli("limits infer --logs " + trace_dir + "/codex");
  ASSERT_EQ(r.code, 0) << r.err;
  // The answer first: the fitted cap (one window: no interval), the pooled bounds under --verbose.
  EXPECT_EQ(r.out.find("A plan's caps, learnt from 1 account"), 0u) << r.out;
  EXPECT_NE(r.out.find("from 1 window: too few to give an interval\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Bounds consistent"), std::string::npos) << r.out;
  r = run_cli("limits infer --logs --verbose " + trace_dir + "/codex");
  ASSERT_EQ(r.code, 0) << r.err;
  // Two observations: the snapshots, and the usage itself (a lower bound).
  EXPECT_NE(r.out.find("  5-hour    all tokens           24,134,655 to 57,389,440 (2 observations)\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  weekly    all but cache reads  above "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: nothing bounds the weekly cap from above: a cut-off in the logs"), std::string::npos);
  // Logs with no cut-off still bound the caps from below: tool_heavy.jsonl's four requests fall in
  // one 5-hour window, which held 7 + 61,727 + 16,581 + 39 = 78,354 tokens before admitting the last.
  r = run_cli("limits infer --logs -v " + trace_dir + "/claude-code-jsonl/tool_heavy.jsonl");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  5-hour    all tokens           above 78,354 (1 observation)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  5-hour    all but cache reads  above 16,627 (1 observation)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: usage: 4 requests in 1 5-hour window bound the caps from below\n"), std::string::npos);
  // Logs on a relative clock have no dates to place a window.
  r = run_cli("limits infer --logs " + trace_dir + "/claude-code-weka/trace_0043.json");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "loopcast: " + trace_dir +
                       "/claude-code-weka/trace_0043.json: no dated requests, rate-limit snapshots (Codex) or usage-limit "
                       "cut-offs (Claude Code) to learn a plan's caps from\n");
}
