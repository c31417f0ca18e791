// Importing and replaying real logs (goal: the five kv-cache-tester traces of tests/data on three
// presets well under a second). Run: build/tests/benchmarks/loopcast_bench --benchmark_filter=Replay
#include <loopcast/loopcast.hpp>

#include <benchmark/benchmark.h>

#include <filesystem>

namespace {

const std::filesystem::path weka = std::filesystem::path(LOOPCAST_BENCH_TRACES_DIR) / "claude-code-weka";

std::vector<std::filesystem::path> weka_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(weka))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<loopcast::scenario_option> three_presets() {
  const loopcast::preset_library lib({LOOPCAST_BENCH_MODELS_DIR});
  std::vector<loopcast::scenario_option> options;
  for (const char* name : {"cerebras-developer-qwen-3.8-27b", "local-workstation-qwen-27b"}) {
    loopcast::scenario_option o;
    o.tgt = lib.load_target(name);
    o.label = o.tgt.name;
    o.client = lib.load_client("opencode");
    options.push_back(o);
  }
  auto doubled = options[0];  // a third: Cerebras with every limit doubled
  for (auto& b : doubled.tgt.limits) b.limit *= 2;
  doubled.label = "cerebras-x2";
  options.push_back(doubled);
  return options;
}

// Import only: requests imported per second.
void BM_ImportKvCacheTraces(benchmark::State& state) {
  const auto files = weka_files();
  std::int64_t requests = 0;
  for (auto _ : state) {
    for (const auto& f : files) {
      auto t = loopcast::import_trace(f, loopcast::trace_format::kv_cache_tester);
      requests += static_cast<std::int64_t>(t.request_count());
      benchmark::DoNotOptimize(t.sessions.data());
    }
  }
  state.SetItemsProcessed(requests);
}
BENCHMARK(BM_ImportKvCacheTraces)->Unit(benchmark::kMillisecond);

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

} // namespace
