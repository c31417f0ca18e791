// The memory a Monte Carlo seed holds per scripted request (issue 42's goal: at most 120 B on a
// fleet of 10,000 agents × 200 turns): the most heap the seed holds at once, beyond what the
// process held before it, over the seed's scripted requests. It also gives the scripts' share
// (a fleet generated alone). Every operator new and delete of this process is counted, at the size
// malloc gave (malloc_usable_size), so vectors' spare capacity and their doubling count too.
//
//   loopcast_seed_memory [--workload NAME] [--sessions N] [--turns T] [--limits-x X] [--max-bytes B]
//                        [--check-estimate]
//
// The workload is the reference scenario's unless named (a workload preset).
//
// --max-bytes: exit 1 when a request takes more (ctest runs it so, on a smaller fleet).
// --check-estimate: exit 1 when the memory budget's estimate of the run (estimate_run_bytes) is
// below what the seed held.
#include <loopcast/loopcast.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <new>
#include <string>
#include <vector>

namespace {

std::atomic<std::size_t> held{0}, most{0};

void* counted(void* p) {
  if (!p) throw std::bad_alloc();
  const std::size_t now = held.fetch_add(malloc_usable_size(p), std::memory_order_relaxed) + malloc_usable_size(p);
  std::size_t m = most.load(std::memory_order_relaxed);
  while (now > m && !most.compare_exchange_weak(m, now, std::memory_order_relaxed)) {
  }
  return p;
}
void release(void* p) noexcept {
  if (!p) return;
  held.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}

// The heap the process holds now, and a new peak from here.
std::size_t restart_peak() {
  const std::size_t now = held.load();
  most.store(now);
  return now;
}

loopcast::scenario fleet(const std::string& workload, std::int32_t sessions, std::int32_t turns, double limits_x) {
  const loopcast::preset_library lib({LOOPCAST_BENCH_MODELS_DIR});
  auto s = lib.load_scenario("reference");
  if (!workload.empty()) s.fleet[0].wl = lib.load_workload(workload);
  // Its agents compact within the target's window (none overflows it: every request is served).
  auto& window = s.fleet[0].wl.context_window_tokens;
  window = std::min(window, s.options[0].first().context_window_tokens);
  s.fleet[0].wl.turns = loopcast::fixed_dist{static_cast<double>(turns)};
  s.fleet[0].sessions = sessions;
  s.fleet[0].stagger_s = 1;
  s.options.resize(1);  // the cloud option
  for (auto& b : s.options[0].first().limits) b.limit *= limits_x;
  return s;
}

} // namespace

void* operator new(std::size_t n) { return counted(std::malloc(n ? n : 1)); }
void* operator new[](std::size_t n) { return counted(std::malloc(n ? n : 1)); }
void* operator new(std::size_t n, std::align_val_t a) {
  return counted(std::aligned_alloc(static_cast<std::size_t>(a), (n + static_cast<std::size_t>(a) - 1) & ~(static_cast<std::size_t>(a) - 1)));
}
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }

int main(int argc, char** argv) {
  std::string workload;  // the reference scenario's own
  std::int32_t sessions = 10000, turns = 200;
  double limits_x = 1e6, max_bytes = 0;  // limits that 10,000 agents do not reach (× 1,000 they do)
  bool check_estimate = false;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--check-estimate") {
      check_estimate = true;
      --i;
      continue;
    }
    if (i + 1 == argc) {
      fmt::print(stderr, "loopcast_seed_memory: {} takes a value\n", a);
      return 2;
    }
    if (a == "--sessions") sessions = std::atoi(argv[i + 1]);
    else if (a == "--turns") turns = std::atoi(argv[i + 1]);
    else if (a == "--limits-x") limits_x = std::atof(argv[i + 1]);
    else if (a == "--workload") workload = argv[i + 1];
    else if (a == "--max-bytes") max_bytes = std::atof(argv[i + 1]);
    else {
      fmt::print(stderr, "loopcast_seed_memory: unknown option {}\n", a);
      return 2;
    }
  }
  const auto s = fleet(workload, sessions, turns, limits_x);
  // The scripts alone.
  std::size_t base = restart_peak();
  std::size_t requests = 0;
  {
    const auto f = loopcast::generate_fleet(s, 1);
    for (const auto& sc : f.scripts) requests += sc.requests.size();
  }
  const double scripts = static_cast<double>(most.load() - base) / static_cast<double>(requests);
  // One seed as Monte Carlo runs it (one thread).
  base = restart_peak();
  const std::uint64_t seed = 1;
  const auto rows = loopcast::run_seeds(s, std::span<const std::uint64_t>(&seed, 1), 1);
  const double seed_bytes = static_cast<double>(most.load() - base) / static_cast<double>(requests);
  // What the memory budget's check (budget.hpp) expects of the same run, over the same requests.
  const double estimate = static_cast<double>(loopcast::estimate_run_bytes(loopcast::run_size_of(s, false, false))) /
                          static_cast<double>(requests);
  fmt::print("{} agents of {} × {} turns, limits × {}: {} scripted requests, {} served\n", sessions,
             s.fleet[0].wl.name, turns, limits_x, requests,
             rows.at(0).requests_served);
  fmt::print("a Monte Carlo seed holds at most {:.1f} B per request ({:.1f} MB); a fleet's scripts alone {:.1f} B\n",
             seed_bytes, seed_bytes * static_cast<double>(requests) / 1e6, scripts);
  fmt::print("the memory budget's estimate of it: {:.1f} B per request\n", estimate);
  if (check_estimate && estimate < seed_bytes) {
    fmt::print(stderr, "loopcast_seed_memory: the estimate ({:.1f} B per request) is below what the seed held\n", estimate);
    return 1;
  }
  if (max_bytes > 0 && seed_bytes > max_bytes) {
    fmt::print(stderr, "loopcast_seed_memory: {:.1f} B per request, more than the {} B allowed\n", seed_bytes, max_bytes);
    return 1;
  }
  return 0;
}
