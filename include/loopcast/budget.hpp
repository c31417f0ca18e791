// loopcast — resource caps that every entry point applies before it allocates
// (docs/robustness.md): at most 10^8 requests in one run, and a memory budget that a run's
// estimated footprint must fit. A run over either is refused with a config_error (exit code 3)
// naming the numbers, instead of exhausting the machine.
#pragma once

#include "loopcast/detail/message.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/results.hpp"
#include "loopcast/session.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace loopcast {

/// Most requests (scripted, retries not counted) one simulation runs.
inline constexpr std::int64_t max_run_requests = 100'000'000;

/// What a run holds in memory.
struct run_size {
  std::int64_t sessions = 0;
  std::int64_t requests = 0;          ///< scripted requests over all sessions
  double runs_per_request = 2;        ///< prefix runs per request (more where sessions break their cache)
  std::int64_t lineages = 0;          ///< prefix-cache lineages
  std::int64_t buckets = 0;
  bool scripts = true;                ///< the session scripts are generated for the run (else given)
  bool record_attempts = true;        ///< the per-attempt timeline and bucket levels
  bool record_charges = true;
};

namespace detail {
inline constexpr std::int64_t gib = std::int64_t{1} << 30;
// set_memory_budget_bytes's override (0: none), one per process.
inline std::atomic<std::int64_t> budget_override{0};

// The default budget, or the environment's error message (reported on every use).
struct default_budget {
  std::int64_t bytes = 0;
  std::string error;
};
inline default_budget read_default_budget() {
  default_budget d;
  if (const char* env = std::getenv("LOOPCAST_MEMORY_BUDGET_GB"); env && *env) {
    char* end = nullptr;
    const double g = std::strtod(env, &end);
    if (end == env || *end != '\0' || !std::isfinite(g) || g <= 0 || g > 1e6)
      d.error = message("expected a number of GiB > 0, found \"", env, "\"");
    else
      d.bytes = static_cast<std::int64_t>(g * static_cast<double>(gib));
    return d;
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const std::int64_t half = pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page / 2 : 8 * gib;
  d.bytes = std::min<std::int64_t>(half, 8 * gib);
  return d;
}
} // namespace detail

/// Estimated peak bytes of one run of that size (scripts, simulator state, results, metrics).
inline std::int64_t estimate_run_bytes(const run_size& s) noexcept {
  const double n = static_cast<double>(s.requests);
  const double b = static_cast<double>(s.buckets);
  double bytes = 0;
  if (s.scripts) bytes += n * (sizeof(request_spec) + s.runs_per_request * sizeof(prefix_run));
  bytes += n * sizeof(request_sample);                   // served requests
  bytes += n * b * 2 * sizeof(double);                   // the per-bucket charge logs
  if (s.record_attempts)  // the timeline, its bucket levels and bucket operations
    bytes += 1.25 * n * (sizeof(attempt_record) + b * sizeof(double)) + 2 * n * b * sizeof(bucket_op);
  bytes += n * 8 * sizeof(double);                       // the metrics' sample vectors
  bytes += static_cast<double>(s.lineages) * 96;         // prefix-cache steps
  bytes += static_cast<double>(s.sessions) * 512;        // session state and results
  return static_cast<std::int64_t>(std::min(bytes, 9e18));
}

/// The budget in bytes: set_memory_budget_bytes, else $LOOPCAST_MEMORY_BUDGET_GB, else half the
/// machine's memory, at most 8 GiB (the environment and the machine are read once per process).
inline std::int64_t memory_budget_bytes() {
  if (const auto o = detail::budget_override.load(); o > 0) return o;
  static const detail::default_budget d = detail::read_default_budget();
  if (!d.error.empty()) throw config_error("$LOOPCAST_MEMORY_BUDGET_GB", "", d.error);
  return d.bytes;
}

/// Overrides the budget for this process (0: back to the default).
inline void set_memory_budget_bytes(std::int64_t bytes) noexcept {
  detail::budget_override = std::max<std::int64_t>(0, bytes);
}

/// Whether `parallel` runs of that size at once stay within the request cap and the budget.
inline bool run_fits(const run_size& s, std::int64_t parallel = 1) {
  return s.requests <= max_run_requests &&
         static_cast<double>(estimate_run_bytes(s)) * static_cast<double>(std::max<std::int64_t>(1, parallel)) <=
             static_cast<double>(memory_budget_bytes());
}

/// Throws config_error when the run has more than max_run_requests requests, or `parallel` runs
/// of it at once would pass the memory budget. "`kind` `name`" names the run in the message (no
/// string is built unless it fails: the check runs before every simulation).
inline void check_run_size(const run_size& s, std::string_view kind, std::string_view name, std::int64_t parallel = 1) {
  if (run_fits(s, parallel)) return;
  using detail::message;
  const auto what = message(kind, " ", name);
  if (s.requests > max_run_requests)
    throw config_error(what, "",
                       message(s.requests, " requests in one run; at most ", max_run_requests, " are simulated"));
  const double need =
      static_cast<double>(estimate_run_bytes(s)) * static_cast<double>(std::max<std::int64_t>(1, parallel));
  const auto budget = memory_budget_bytes();
  constexpr auto gib = static_cast<double>(detail::gib);
  if (need > static_cast<double>(budget))
    throw config_error(what, "",
                       message("this run needs about ", detail::fixed{need / gib, 1}, " GiB (", s.requests,
                               " requests in ", s.sessions, " sessions",
                               parallel > 1 ? message(", ", parallel, " runs at once") : std::string(),
                               "), over the memory budget of ", detail::fixed{static_cast<double>(budget) / gib, 1},
                               " GiB: set LOOPCAST_MEMORY_BUDGET_GB to allow it, or simulate "
                               "fewer sessions or turns",
                               s.record_attempts ? " (or drop --timeline)" : ""));
}

} // namespace loopcast
