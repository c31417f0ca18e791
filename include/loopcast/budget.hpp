// loopcast — resource caps that every entry point applies before it allocates (README,
// "Robustness"): at most 10^8 requests in one run, and a memory budget that a run's estimated
// footprint must fit. A run over either is refused with a config_error (exit code 3) naming the
// numbers, instead of exhausting the machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace loopcast {

/// Most requests (scripted, retries not counted) one simulation runs.
inline constexpr std::int64_t max_run_requests = 100'000'000;

/// What a run holds in memory.
struct run_size {
  std::int64_t sessions = 0;
  std::int64_t requests = 0;          ///< scripted requests over all sessions
  std::int64_t runs_per_request = 2;  ///< prefix runs per request
  std::int64_t lineages = 0;          ///< prefix-cache lineages
  std::int64_t buckets = 0;
  bool scripts = true;                ///< the session scripts are generated for the run (else given)
  bool record_attempts = true;        ///< the per-attempt timeline and bucket levels
  bool record_charges = true;
};

/// Estimated peak bytes of one run of that size (scripts, simulator state, results, metrics).
std::int64_t estimate_run_bytes(const run_size& s) noexcept;

/// The budget in bytes: set_memory_budget_bytes, else $LOOPCAST_MEMORY_BUDGET_GB, else half the
/// machine's memory, at most 8 GiB (the environment and the machine are read once per process).
std::int64_t memory_budget_bytes();
/// Overrides the budget for this process (0: back to the default).
void set_memory_budget_bytes(std::int64_t bytes) noexcept;

/// Whether `parallel` runs of that size at once stay within the request cap and the budget.
bool run_fits(const run_size& s, std::int64_t parallel = 1);

/// Throws config_error when the run has more than max_run_requests requests, or `parallel` runs
/// of it at once would pass the memory budget. "`kind` `name`" names the run in the message (no
/// string is built unless it fails: the check runs before every simulation).
void check_run_size(const run_size& s, std::string_view kind, std::string_view name, std::int64_t parallel = 1);

} // namespace loopcast
