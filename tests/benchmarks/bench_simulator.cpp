// Simulated requests per second (goal: >= 2 million on one core) and workload generation.
// Run: build/tests/benchmarks/loopcast_bench
#include <loopcast/loopcast.hpp>

#include "reference_fleet.hpp"

#include <benchmark/benchmark.h>

#include <vector>

namespace {

struct fixture {
  loopcast::preset_library lib{{LOOPCAST_BENCH_MODELS_DIR}};
  loopcast::scenario scn = lib.load_scenario("reference");
};
const fixture& presets() {
  static const fixture f;
  return f;
}

std::int64_t served(const loopcast::simulation_result& r) {
  std::int64_t n = 0;
  for (const auto& s : r.sessions) n += s.requests_served;
  return n;
}

// The reference scenario's session of seed 42 (34 requests) and its first option, Cerebras'
// Developer tier.
struct reference_session {
  const loopcast::scenario_option& opt = presets().scn.options.at(0);
  const loopcast::session_script script = loopcast::generate_session(presets().scn.fleet.at(0).wl, 42);
  const loopcast::session_plan plan{&script, 0, 1, 0};  // (points at script: not to be copied)
  reference_session() = default;
  reference_session(const reference_session&) = delete;
  reference_session& operator=(const reference_session&) = delete;
};

// One reference session on the Developer tier, its script generated up front.
void BM_ReferenceSession(benchmark::State& state) {
  const reference_session ref;
  const auto& opt = ref.opt;
  const auto& plan = ref.plan;
  loopcast::sim_options so;
  so.record_attempts = state.range(0) != 0;
  so.record_charges = state.range(0) != 0;
  std::int64_t requests = 0;
  for (auto _ : state) {
    auto r = loopcast::simulate(opt.first(), opt.client, {&plan, 1}, so);
    requests += served(r);
    benchmark::DoNotOptimize(r.cost_usd);
  }
  state.SetItemsProcessed(requests);
  state.counters["requests/s"] = benchmark::Counter(static_cast<double>(requests), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReferenceSession)->Arg(0)->Arg(1)->ArgName("record");

// The same, each run handed the last one's result and buffers (sim_options::recycle and storage),
// as Monte Carlo runs its seeds: what a run costs without its allocations; with peak_demand:0, also
// without the log of every charge that the peak demands are worked out from (what a Monte Carlo
// seed leaves out).
void BM_ReferenceSessionReused(benchmark::State& state) {
  const reference_session ref;
  const auto& opt = ref.opt;
  const auto& plan = ref.plan;
  loopcast::simulation_result last;
  loopcast::detail::run_storage storage;
  loopcast::sim_options so;
  so.record_attempts = false;
  so.record_charges = false;
  so.peak_demand = state.range(0) != 0;
  so.recycle = &last;
  so.storage = &storage;
  std::int64_t requests = 0;
  for (auto _ : state) {
    last = loopcast::simulate(opt.first(), opt.client, {&plan, 1}, so);
    requests += served(last);
    benchmark::DoNotOptimize(last.cost_usd);
  }
  state.SetItemsProcessed(requests);
  state.counters["requests/s"] = benchmark::Counter(static_cast<double>(requests), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReferenceSessionReused)->Arg(1)->Arg(0)->ArgName("peak_demand");

// N concurrent reference sessions (different seeds, staggered 2 s) sharing one organisation's
// buckets: the Developer tier (range(1) = 1), where most attempts are 429s, or a tier with every
// limit range(1) times larger.
void BM_Fleet(benchmark::State& state) {
  const auto fleet = loopcast::bench::make_reference_fleet(presets().scn, static_cast<std::size_t>(state.range(0)),
                                                          static_cast<double>(state.range(1)));
  const auto& opt = fleet.option;
  loopcast::sim_options so;
  so.record_attempts = false;
  so.record_charges = false;
  std::int64_t requests = 0, attempts = 0;
  for (auto _ : state) {
    auto r = loopcast::simulate(opt.first(), opt.client, fleet.plans, so);
    requests += served(r);
    for (const auto& s : r.sessions) attempts += s.attempts;
    benchmark::DoNotOptimize(r.cost_usd);
  }
  state.SetItemsProcessed(requests);
  state.counters["requests/s"] = benchmark::Counter(static_cast<double>(requests), benchmark::Counter::kIsRate);
  state.counters["attempts/request"] = static_cast<double>(attempts) / static_cast<double>(requests);
  state.counters["attempts/s"] = benchmark::Counter(static_cast<double>(attempts), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Fleet)->Args({50, 1})->Args({50, 1000})->ArgNames({"sessions", "limits_x"});

// Generating a reference session's script from a seed.
void BM_GenerateSession(benchmark::State& state) {
  const auto& f = presets();
  std::uint64_t seed = 0;
  std::int64_t requests = 0;
  for (auto _ : state) {
    auto s = loopcast::generate_session(f.scn.fleet.at(0).wl, seed++);
    requests += static_cast<std::int64_t>(s.requests.size());
    benchmark::DoNotOptimize(s.requests.data());
  }
  state.SetItemsProcessed(requests);
}
BENCHMARK(BM_GenerateSession);

} // namespace
