#include "loopcast/simulation.hpp"

#include "loopcast/budget.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/rate_limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace loopcast {

namespace {

// The simulator checks what it is given before its loop instead of trusting its callers: every
// time finite and within bounds (so no sum of times can overflow to infinity), every count
// within the token cap, every prefix run within its script, and the run within the caps and
// the memory budget (budget.hpp).
constexpr double max_start_s = 2e11;        // a session's start (logs: times within ±10^11 s)
constexpr double max_delay_s = 1e7;         // agent time before a request
constexpr std::int64_t max_tokens_count = 10'000'000'000'000;  // 10^13
constexpr std::uint64_t max_lineages = std::uint64_t{1} << 31;

} // namespace

namespace detail {

void check_simulation(const target& tgt, std::span<const session_plan> plans, const sim_options& opt,
                      std::size_t bucket_count) {
  const std::size_t nb = tgt.limits.size();
  if (nb > max_buckets)
    throw simulation_error(fmt::format("target {} has {} buckets; at most {} are supported", tgt.name, nb, max_buckets));
  if (bucket_count != nb)
    throw simulation_error(fmt::format("target {} has {} buckets; the simulation was given {}", tgt.name, nb,
                                       bucket_count));
  // A concurrency bucket releases a request at its end, known at admission; with an engine it is not.
  const engine_config* eng = tgt.engine && !opt.recorded_speed ? &*tgt.engine : nullptr;
  if (tgt.engine)
    for (const auto& b : tgt.limits)
      if (b.algorithm == bucket_algorithm::concurrency)
        throw simulation_error(fmt::format("target {} has an engine and a concurrency bucket ({}); the engine's "
                                           "max_sequences limits requests in flight", tgt.name, b.name));
  const std::int64_t kv_pool = eng ? kv_pool_tokens(eng->memory) : 0;

  std::uint64_t requests = 0, lineages = 0;
  std::vector<std::uint64_t> family_shared;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& p = plans[i];
    if (!p.script) throw simulation_error(fmt::format("session {} has no script", i));
    const auto& sc = *p.script;
    auto fail = [&](std::size_t r, const std::string& what) {
      throw simulation_error(fmt::format("{} (session {}), request {}: {}", sc.source, i + 1, r + 1, what));
    };
    if (!std::isfinite(p.start_s) || p.start_s < 0 || p.start_s > max_start_s)
      throw simulation_error(fmt::format("{} (session {}) starts at {} s; expected a finite time from 0 to 2·10^11 s",
                                         sc.source, i + 1, p.start_s));
    if (sc.shared_lineages > sc.lineages)
      throw simulation_error(fmt::format("{} (session {}): {} shared lineages of {}", sc.source, i + 1,
                                         sc.shared_lineages, sc.lineages));
    for (std::size_t r = 0; r < sc.requests.size(); ++r) {
      const auto& q = sc.requests[r];
      for (const auto x : {q.prompt_tokens, q.output_tokens, q.reasoning_tokens, q.max_tokens})
        if (x < 0 || x > max_tokens_count) fail(r, fmt::format("a token count of {} (expected 0 to 10^13)", x));
      if (!std::isfinite(q.delay_before_s) || q.delay_before_s < 0 || q.delay_before_s > max_delay_s)
        fail(r, fmt::format("an agent delay of {} s (expected 0 to 10^7 s)", q.delay_before_s));
      for (const double d : {q.recorded_ttft_s, q.recorded_duration_s})
        if (!std::isfinite(d) || d > max_delay_s) fail(r, fmt::format("a recorded time of {} s (expected at most 10^7 s)", d));
      if (static_cast<std::size_t>(q.runs_begin) + q.runs_count > sc.runs.size())
        fail(r, "its prefix runs lie outside the script");
      for (std::uint32_t k = 0; k < q.runs_count; ++k) {
        const auto& run = sc.runs[q.runs_begin + k];
        if (run.lineage >= sc.lineages) fail(r, fmt::format("prefix lineage {} of {}", run.lineage, sc.lineages));
        if (run.end_tokens < 0 || run.end_tokens > max_tokens_count)
          fail(r, fmt::format("a prefix run ending at {} tokens", run.end_tokens));
      }
      // The engine holds a request's whole context in its KV pool (one that exceeds the window
      // ends its session as context_overflow before it gets there).
      const std::int64_t kv = q.prompt_tokens + q.output_tokens + q.reasoning_tokens;
      if (eng && kv > kv_pool && kv <= tgt.context_window_tokens)
        throw simulation_error(fmt::format(
            "session {} request {}: {} tokens need {:.2f} GB of KV cache; the {} engine's pool holds {} tokens ({} GB)",
            i, r + 1, kv, static_cast<double>(kv) * eng->memory.kv_bytes_per_token / 1e9, eng->name, kv_pool,
            eng->memory.kv_pool_gb));
    }
    requests += sc.requests.size();
    if (p.family >= plans.size())
      throw simulation_error(fmt::format("{} (session {}) is in family {}; families are numbered below the {} sessions",
                                         sc.source, i + 1, p.family, plans.size()));
    if (p.family >= family_shared.size()) family_shared.resize(p.family + 1, 0);
    family_shared[p.family] = std::max<std::uint64_t>(family_shared[p.family], sc.shared_lineages);
    lineages += sc.lineages - sc.shared_lineages;
  }
  for (const auto f : family_shared) lineages += f;
  if (lineages > max_lineages)
    throw simulation_error(fmt::format("{} prefix-cache lineages over all sessions; at most {} are simulated", lineages,
                                       max_lineages));
  run_size z;
  z.sessions = static_cast<std::int64_t>(plans.size());
  z.requests = static_cast<std::int64_t>(requests);
  z.lineages = static_cast<std::int64_t>(lineages);
  z.buckets = static_cast<std::int64_t>(nb);
  z.scripts = false;
  z.record_attempts = opt.record_attempts;
  z.record_charges = opt.record_charges;
  check_run_size(z, "simulation on", tgt.name);
}

} // namespace detail

simulation_result simulate(const target& tgt, const retry_policy& client, std::span<const session_plan> plans,
                           const sim_options& opt) {
  std::vector<bucket> buckets;
  buckets.reserve(tgt.limits.size());
  for (const auto& b : tgt.limits) buckets.emplace_back(b, opt.start_unix_s);
  return simulate_with(tgt, client, plans, opt, std::move(buckets), curve_speed{&tgt.speed});
}

} // namespace loopcast
