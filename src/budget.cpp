#include "loopcast/budget.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/results.hpp"
#include "loopcast/session.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>

namespace loopcast {

namespace {
std::atomic<std::int64_t> budget_override{0};
constexpr std::int64_t gib = std::int64_t{1} << 30;
} // namespace

std::int64_t estimate_run_bytes(const run_size& s) noexcept {
  const double n = static_cast<double>(s.requests);
  const double b = static_cast<double>(s.buckets);
  double bytes = 0;
  if (s.scripts) bytes += n * (sizeof(request_spec) + static_cast<double>(s.runs_per_request) * sizeof(prefix_run));
  bytes += n * sizeof(request_sample);                   // served requests
  bytes += n * b * 2 * sizeof(double);                   // the per-bucket charge logs
  if (s.record_attempts) bytes += 1.25 * n * (sizeof(attempt_record) + b * sizeof(double));  // timeline, levels
  bytes += n * 8 * sizeof(double);                       // the metrics' sample vectors
  bytes += static_cast<double>(s.lineages) * 96;         // prefix-cache steps
  bytes += static_cast<double>(s.sessions) * 512;        // session state and results
  return static_cast<std::int64_t>(std::min(bytes, 9e18));
}

namespace {
// The default budget, or the environment's error message (reported on every use).
struct default_budget {
  std::int64_t bytes = 0;
  std::string error;
};
default_budget read_default_budget() {
  default_budget d;
  if (const char* env = std::getenv("LOOPCAST_MEMORY_BUDGET_GB"); env && *env) {
    char* end = nullptr;
    const double g = std::strtod(env, &end);
    if (end == env || *end != '\0' || !std::isfinite(g) || g <= 0 || g > 1e6)
      d.error = fmt::format("expected a number of GiB > 0, found \"{}\"", env);
    else
      d.bytes = static_cast<std::int64_t>(g * static_cast<double>(gib));
    return d;
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const std::int64_t half = pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page / 2 : 8 * gib;
  d.bytes = std::min<std::int64_t>(half, 8 * gib);
  return d;
}
} // namespace

std::int64_t memory_budget_bytes() {
  if (const auto o = budget_override.load(); o > 0) return o;
  static const default_budget d = read_default_budget();
  if (!d.error.empty()) throw config_error("$LOOPCAST_MEMORY_BUDGET_GB", "", d.error);
  return d.bytes;
}

void set_memory_budget_bytes(std::int64_t bytes) noexcept { budget_override = std::max<std::int64_t>(0, bytes); }

bool run_fits(const run_size& s, std::int64_t parallel) {
  return s.requests <= max_run_requests &&
         static_cast<double>(estimate_run_bytes(s)) * static_cast<double>(std::max<std::int64_t>(1, parallel)) <=
             static_cast<double>(memory_budget_bytes());
}

void check_run_size(const run_size& s, std::string_view kind, std::string_view name, std::int64_t parallel) {
  if (run_fits(s, parallel)) return;
  auto what = [&] { return fmt::format("{} {}", kind, name); };
  if (s.requests > max_run_requests)
    throw config_error(what(), "", fmt::format("{} requests in one run; at most {} are simulated", s.requests,
                                                          max_run_requests));
  const double need = static_cast<double>(estimate_run_bytes(s)) * static_cast<double>(std::max<std::int64_t>(1, parallel));
  const auto budget = memory_budget_bytes();
  if (need > static_cast<double>(budget))
    throw config_error(what(), "",
                       fmt::format("this run needs about {:.1f} GiB ({} requests in {} sessions{}), over the memory "
                                   "budget of {:.1f} GiB: set LOOPCAST_MEMORY_BUDGET_GB (or --memory-budget-gb) to allow "
                                   "it, or simulate fewer sessions or turns{}",
                                   need / static_cast<double>(gib), s.requests, s.sessions,
                                   parallel > 1 ? fmt::format(", {} runs at once", parallel) : std::string(),
                                   static_cast<double>(budget) / static_cast<double>(gib),
                                   s.record_attempts ? " (or drop --timeline)" : ""));
}

} // namespace loopcast
