// Whole-fleet Monte Carlo (issue 5's goal: 1,000 sessions × 200 turns in under 1 s on one core),
// how the time grows with sessions, and how Monte Carlo, sweeps and solve shrink with threads.
// Run: build/tests/benchmarks/loopcast_bench --benchmark_filter='Fleet(MonteCarlo|Threads)|(Sweep|Solve)Threads'
#include <loopcast/loopcast.hpp>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>
#include <numeric>
#include <vector>

namespace {

// The reference agent loop stretched to 200 turns, N agents starting 1 s apart on one
// organisation's Cerebras limits × `limits_x` (1000: not binding; 1: the Developer tier itself).
loopcast::scenario fleet(std::int32_t sessions, double limits_x) {
  const loopcast::preset_library lib({LOOPCAST_BENCH_MODELS_DIR});
  auto s = lib.load_scenario("reference");
  s.fleet[0].wl.turns = loopcast::fixed_dist{200};
  s.fleet[0].sessions = sessions;
  s.fleet[0].stagger_s = 1;
  s.options.resize(1);  // the cloud option
  for (auto& b : s.options[0].first().limits) b.limit *= limits_x;
  return s;
}

// Monte Carlo of the whole fleet, scripts generated inside, 4 seeds per call (as `montecarlo` runs
// them: one after another on a thread, each reusing the storage of the one before): the time
// reported is per seed, what a seed costs.
void BM_FleetMonteCarlo(benchmark::State& state) {
  constexpr std::size_t per_call = 4;
  const auto s = fleet(static_cast<std::int32_t>(state.range(0)), static_cast<double>(state.range(1)));
  std::uint64_t seed = 1;
  std::int64_t requests = 0, attempts = 0;
  double seconds = 0;
  for (auto _ : state) {
    std::uint64_t seeds[per_call];
    for (auto& x : seeds) x = seed++;
    const auto t0 = std::chrono::steady_clock::now();
    const auto rows = loopcast::run_seeds(s, seeds, 1);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
    state.SetIterationTime(took.count() / per_call);
    seconds += took.count();
    for (const auto& r : rows) {
      requests += r.requests_served;
      attempts += r.attempts;
    }
    benchmark::DoNotOptimize(rows[0].cost_usd);
  }
  state.counters["requests/s"] = seconds > 0 ? static_cast<double>(requests) / seconds : 0.0;
  state.counters["attempts/request"] = requests > 0 ? static_cast<double>(attempts) / static_cast<double>(requests) : 0.0;
}
BENCHMARK(BM_FleetMonteCarlo)
    ->Args({10, 1000})->Args({100, 1000})->Args({1000, 1000})->Args({200, 1})->Args({1000, 1})
    ->ArgNames({"sessions", "limits_x"})->Unit(benchmark::kMillisecond)->UseManualTime();

// 8 seeds of 100 sessions × 200 turns on 1, 2 and 4 threads (rows identical; wall clock shrinks).
void BM_FleetThreads(benchmark::State& state) {
  const auto s = fleet(100, 1000);
  std::vector<std::uint64_t> seeds(8);
  std::iota(seeds.begin(), seeds.end(), 1);
  for (auto _ : state) {
    const auto rows = loopcast::run_seeds(s, seeds, static_cast<unsigned>(state.range(0)));
    benchmark::DoNotOptimize(rows.data());
  }
  state.counters["seeds/s"] = benchmark::Counter(static_cast<double>(state.iterations() * 8), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FleetThreads)->Arg(1)->Arg(2)->Arg(4)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();

// The example sweep's shape with more agents — 10, 20, 30 and 40 reference agents 5 s apart on the
// Developer tier and a workstation — × 4 seeds on 1 and 2 threads: the points' seeds are shared
// among the threads.
void BM_SweepThreads(benchmark::State& state) {
  const loopcast::preset_library lib({LOOPCAST_BENCH_MODELS_DIR});
  const auto spec = loopcast::parse_sweep(R"({
    "kind": "sweep", "name": "bench", "scenario": "reference", "seeds": 4,
    "parameters": [{"path": "/sessions", "values": [10, 20, 30, 40]}, {"path": "/stagger_s", "values": [5]}]})",
                                          "bench-sweep.json", lib);
  for (auto _ : state) {
    const auto r = loopcast::run_sweep(spec, static_cast<unsigned>(state.range(0)));
    benchmark::DoNotOptimize(r.points.data());
  }
}
BENCHMARK(BM_SweepThreads)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();

// solve min-limit: the smallest factor on the Developer tier's limits that keeps 5 reference agents
// 10 s apart under a 5% mean stall share (16 seeds per evaluation, 11 evaluations) on 1 and 2
// threads: each evaluation's seeds run in parallel.
void BM_SolveThreads(benchmark::State& state) {
  const loopcast::preset_library lib({LOOPCAST_BENCH_MODELS_DIR});
  auto s = lib.load_scenario("reference");
  s.options.resize(1);
  s.fleet[0].sessions = 5;
  s.fleet[0].stagger_s = 10;
  loopcast::min_limit_query q;
  q.max_stall_share = 0.05;
  q.seeds = 16;
  q.threads = static_cast<unsigned>(state.range(0));
  std::size_t steps = 0;
  for (auto _ : state) {
    const auto r = loopcast::solve_min_limit(s, q);
    steps = r.steps.size();
    benchmark::DoNotOptimize(r.answer);
  }
  state.counters["evaluations"] = static_cast<double>(steps);
}
BENCHMARK(BM_SolveThreads)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

// The team example (examples/scenarios/team.json): 50 engineers starting about 6 Claude Code
// sessions a day over 5 working days (about 1,500 sessions and 94,000 requests a run), Monte Carlo
// of 100 seeds on one thread, per option: Sonnet 4.6 at "tier 4" (no 429s), "tier 3" (a 429 in most
// hours) and "tier 2" (stalls every hour; two sessions in five die). The goal: all 100 seeds of an
// option in under 10 s on one core.
void BM_TeamMonteCarlo(benchmark::State& state) {
  const loopcast::preset_library lib({LOOPCAST_BENCH_MODELS_DIR});
  auto s = loopcast::load_scenario_file(LOOPCAST_BENCH_EXAMPLES_DIR "/scenarios/team.json", lib);
  const auto option = s.options.at(static_cast<std::size_t>(state.range(0)));
  s.options = {option};
  state.SetLabel(option.label);
  loopcast::montecarlo_options mo;
  mo.seeds = 100;
  mo.threads = 1;
  for (auto _ : state) {
    const auto r = loopcast::run_montecarlo(s, mo);
    benchmark::DoNotOptimize(r.rows.data());
  }
}
BENCHMARK(BM_TeamMonteCarlo)->Arg(0)->Arg(1)->Arg(2)->ArgName("option")->Unit(benchmark::kSecond)->Iterations(1);
