// loopcast — what a simulation is given (sessions, options) and returns (results.hpp), without
// the simulation itself: simulate() and simulate_with() are in simulation.hpp, which the layers
// that only pass plans and results around need not include. A run is a pure function of its
// inputs and seeds.
#pragma once

#include <utility>
#include <vector>

#include "loopcast/results.hpp"
#include "loopcast/retry.hpp"
#include "loopcast/session.hpp"
#include "loopcast/target.hpp"

#include <cstdint>
#include <span>

namespace loopcast {

namespace detail {
struct run_storage;  // detail/run_storage.hpp
}

/// One session to simulate.
struct session_plan {
  const session_script* script = nullptr;
  double start_s = 0;          ///< when its first request is sent, s
  std::uint64_t seed = 0;      ///< the client's jitter stream
  std::uint32_t family = 0;    ///< sessions of one family share the script's shared lineages
};

/// The work budget of one simulation unless it is given one (sim_options::max_attempts,
/// "attempt_budget", --attempt-budget): this many attempts, 429s included, or about 3–40 s of work.
/// A run that reaches it stops there, its running sessions cut off, and says so (a partial result).
/// A fleet of 1,000 agents × 200 turns on Cerebras' Developer tier makes about 10^8.
inline constexpr std::uint64_t default_attempt_budget = 200'000'000;

struct sim_options {
  double start_unix_s = 0;       ///< Unix time of simulated t = 0 (time-of-day prices, epoch windows)
  bool batch = false;            ///< requests go through the batch API (discounted)
  bool record_attempts = true;   ///< keep the per-attempt timeline and bucket levels
  bool record_charges = true;    ///< keep the per-bucket charge log (simulation_result::charges)
  /// Work out each bucket's peak demand (bucket_summary::peak_demand, peak_window_start_s) and, at
  /// the first 429, each bucket's demand in the period before it (window_demand), from a log of
  /// every charge. false (with record_charges false): no log is kept and those are NaN (Monte Carlo,
  /// sweeps, solve and compare, which report neither).
  bool peak_demand = true;
  /// A row per served request (simulation_result::requests, 56 bytes each). false: only what a
  /// Monte Carlo row's two medians are selected from (simulation_result::median_samples, at most
  /// 16 bytes a request); the requests then stay empty. Monte Carlo, sweeps and solve run so.
  bool request_rows = true;
  /// Each request takes its recorded time (session_script::recorded: recorded_timing::ttft_s and duration_s;
  /// an unknown duration counts as 0) instead of the target's speed model and engine: only the
  /// limits and the cache change anything. For replays.
  bool recorded_speed = false;
  /// The run's attempt budget (0: none; default_attempt_budget unless set). Once its sessions have
  /// made this many attempts in all, the run stops: every session still running ends cut_off at
  /// that moment (requests in flight are not served) and simulation_result::cut_off is set. It
  /// bounds the work of a run on a tier the fleet overwhelms, where every admission costs many 429s.
  std::uint64_t max_attempts = default_attempt_budget;
  /// With record_attempts: the most bytes the timeline's rows and bucket levels may grow to past
  /// the room reserved for them (1.25 rows a request). A herd makes hundreds of attempts a request,
  /// so a timeline is bounded by memory, not by its requests: a run whose timeline would grow past
  /// this is refused with a config_error that names the numbers (budget.hpp). 0: the memory budget
  /// less what the rest of the run is estimated to hold (run_scenario gives each option its share).
  std::int64_t timeline_room_bytes = 0;
  /// What the run is called in its errors, before "simulation on TARGET" (run_scenario: "scenario
  /// S, option O"; empty: nothing).
  std::string run_name;
  /// On one target whose 429s charge nothing (no count_rejected bucket), with the built-in buckets,
  /// no engine and no timeline recorded, the retries that are refused again are handled in one loop
  /// between the events that change a bucket, in the event loop's order (docs/architecture.md,
  /// "What a herd costs"); a client law of a tool's own that draws jitter is left out. The results
  /// are the same to the last bit either way; false handles each attempt as its own event (what the
  /// tests compare with).
  bool coalesce_refusals = true;
  /// A result of an earlier run whose buffers (served requests, sessions, buckets, timeline) this run
  /// takes over instead of allocating its own; whatever it held is discarded. For repeated runs:
  /// Monte Carlo hands each option's last result to its next seed (nullptr: none).
  simulation_result* recycle = nullptr;
  /// The simulation's own buffers (session states, event queue, prefix cache, charge logs, buckets)
  /// from an earlier run, which this run takes over and leaves for the next: with `recycle`, a run
  /// that follows another allocates almost nothing. Only one run at a time may use it (nullptr: none).
  detail::run_storage* storage = nullptr;
  /// Progress of a long run (nullptr: none): called about every 16,384 events, from the simulating
  /// thread, with the requests served so far and the scripted requests of every session.
  void (*progress)(void* context, std::uint64_t served, std::uint64_t total) noexcept = nullptr;
  void* progress_context = nullptr;
  /// The hours of operation (simulation_result::operation_hours): windows in seconds from t = 0 (a
  /// team's working hours); empty: every hour from t = 0 to the run's last end.
  std::vector<std::pair<double, double>> operation_windows_s;
};

} // namespace loopcast
