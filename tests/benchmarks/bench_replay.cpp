// Importing and replaying real logs (goal: the five kv-cache-tester traces of tests/data on three
// presets well under a second). Run: build/tests/benchmarks/loopcast_bench --benchmark_filter=Replay
#include <loopcast/loopcast.hpp>

#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <filesystem>

namespace {

const std::filesystem::path weka = std::filesystem::path(LOOPCAST_BENCH_TRACES_DIR) / "claude-code-weka";

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir, const char* extension);
std::vector<std::filesystem::path> weka_files() { return files_in(weka, ".json"); }

std::vector<loopcast::scenario_option> three_presets() {
  const loopcast::preset_library lib({LOOPCAST_BENCH_MODELS_DIR});
  std::vector<loopcast::scenario_option> options;
  for (const char* name : {"cerebras-developer-qwen-3.8-27b", "local-workstation-qwen-27b"}) {
    loopcast::scenario_option o;
    o.targets = {lib.load_target(name)};
    o.label = o.first().name;
    o.client = lib.load_client("opencode");
    options.push_back(o);
  }
  auto doubled = options[0];  // a third: Cerebras with every limit doubled
  for (auto& b : doubled.first().limits) b.limit *= 2;
  doubled.label = "cerebras-x2";
  options.push_back(doubled);
  return options;
}

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir, const char* extension) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(dir)) return files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == extension) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Import only: bytes and requests per second, the format given (arg 0) or detected (arg 1).
void import_files(benchmark::State& state, const std::vector<std::filesystem::path>& files, loopcast::trace_format f) {
  if (files.empty()) return state.SkipWithError("no trace files (the training traces are beside the checkout)");
  std::int64_t bytes = 0;
  for (const auto& p : files) bytes += static_cast<std::int64_t>(std::filesystem::file_size(p));
  const auto format = state.range(0) == 0 ? f : loopcast::trace_format::automatic;
  std::int64_t requests = 0;
  for (auto _ : state) {
    for (const auto& p : files) {
      auto t = loopcast::import_trace(p, format);
      requests += static_cast<std::int64_t>(t.request_count());
      benchmark::DoNotOptimize(t.sessions.data());
    }
  }
  state.SetItemsProcessed(requests);
  state.SetBytesProcessed(bytes * static_cast<std::int64_t>(state.iterations()));
}

// The five kv-cache-tester traces of tests/data (0.5 MB).
void BM_ImportKvCacheTraces(benchmark::State& state) {
  import_files(state, weka_files(), loopcast::trace_format::kv_cache_tester);
}
BENCHMARK(BM_ImportKvCacheTraces)->ArgName("detect")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The 141 training traces beside the checkout (83 MB), when they are there.
void BM_ImportKvCacheTrainingTraces(benchmark::State& state) {
  const auto dir = std::filesystem::path(LOOPCAST_BENCH_TRACES_DIR) / "../../../../shared/data/traces/kv-cache-tester-train";
  import_files(state, files_in(dir, ".json"), loopcast::trace_format::kv_cache_tester);
}
BENCHMARK(BM_ImportKvCacheTrainingTraces)->ArgName("detect")->Arg(1)->Unit(benchmark::kMillisecond);

// The yardstick for the import: the same 141 files read and parsed by simdjson alone (its DOM, no
// walk), one parser reused, as the importer does (issue 42: the import at >= 0.8x this).
void BM_SimdjsonParseTrainingTraces(benchmark::State& state) {
  const auto dir = std::filesystem::path(LOOPCAST_BENCH_TRACES_DIR) / "../../../../shared/data/traces/kv-cache-tester-train";
  const auto files = files_in(dir, ".json");
  if (files.empty()) return state.SkipWithError("no trace files (the training traces are beside the checkout)");
  std::int64_t bytes = 0;
  for (const auto& p : files) bytes += static_cast<std::int64_t>(std::filesystem::file_size(p));
  simdjson::dom::parser parser;
  for (auto _ : state)
    for (const auto& p : files) {
      simdjson::dom::element doc;
      if (parser.load(p.string()).get(doc)) return state.SkipWithError("simdjson refused a training trace");
      benchmark::DoNotOptimize(doc);
    }
  state.SetBytesProcessed(bytes * static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_SimdjsonParseTrainingTraces)->Unit(benchmark::kMillisecond);

// The Claude Code JSONL logs of tests/data (0.4 MB).
void BM_ImportClaudeCodeLogs(benchmark::State& state) {
  import_files(state, files_in(std::filesystem::path(LOOPCAST_BENCH_TRACES_DIR) / "claude-code-jsonl", ".jsonl"),
               loopcast::trace_format::claude_code);
}
BENCHMARK(BM_ImportClaudeCodeLogs)->ArgName("detect")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The whole job: import the five traces and replay each on three presets.
void BM_ImportAndReplayFiveTracesOnThreePresets(benchmark::State& state) {
  const auto files = weka_files();
  const auto options = three_presets();
  loopcast::replay_options ro;
  ro.record_attempts = false;
  std::int64_t requests = 0;
  for (auto _ : state) {
    for (const auto& f : files) {
      const std::vector<loopcast::recorded_trace> t{loopcast::import_trace(f, loopcast::trace_format::kv_cache_tester)};
      auto r = loopcast::run_replay(t, options, ro);
      for (const auto& o : r.options) requests += static_cast<std::int64_t>(o.sim.requests.size());
      benchmark::DoNotOptimize(r.options.data());
    }
  }
  state.SetItemsProcessed(requests);
  state.counters["replayed requests/s"] = benchmark::Counter(static_cast<double>(requests), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ImportAndReplayFiveTracesOnThreePresets)->Unit(benchmark::kMillisecond);

// A replay of many logs, one short session each (a tree of 32,000 session files): the time per log
// must not grow with their number. Before the origins were computed once, each log looked through
// all the others for the clock's origin (8k logs 1.2 s, 32k 14 s in the red team's measure).
void BM_ReplayManyLogs(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<loopcast::recorded_trace> logs(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& t = logs[i];
    t.file = "log" + std::to_string(i) + ".jsonl";
    t.format = loopcast::trace_format::claude_code;
    t.absolute_clock = true;
    t.models = {"claude-opus-4-6"};
    t.sessions.resize(1);
    for (int k = 0; k < 3; ++k) {
      loopcast::recorded_request r;
      r.t_send = 1.77e9 + 60.0 * static_cast<double>(i) + 10.0 * k;
      r.t_end = r.t_send + 5;
      r.tokens.input = 1000 + 500 * k;
      r.tokens.output = 100;
      t.sessions[0].requests.push_back(r);
    }
    t.summary.requests = 3;
  }
  auto options = three_presets();
  options.resize(1);
  options[0].first().limits.clear();
  loopcast::replay_options ro;
  ro.record_attempts = false;
  for (auto _ : state) {
    auto r = loopcast::run_replay(logs, options, ro);
    benchmark::DoNotOptimize(r.options.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(n) * state.iterations());  // logs per second
}
BENCHMARK(BM_ReplayManyLogs)->ArgName("logs")->Arg(2000)->Arg(8000)->Arg(32000)->Unit(benchmark::kMillisecond);

} // namespace
