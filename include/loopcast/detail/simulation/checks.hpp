// loopcast — what a simulation checks before its loop (simulation.hpp): everything that can be
// wrong with its input, named by session and request, so that the loop itself never throws.
// Internal; included by simulation.hpp.
#pragma once

#include "loopcast/budget.hpp"
#include "loopcast/detail/message.hpp"
#include "loopcast/detail/run_storage.hpp"
#include "loopcast/engine.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/route.hpp"
#include "loopcast/simulator.hpp"

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace loopcast::detail {

/// A simulation's size for the memory budget (budget.hpp): its scripts are given, `buckets` are
/// its targets', and it records what `opt` says.
inline run_size simulation_size(std::size_t sessions, std::size_t requests, std::size_t lineages, std::size_t buckets,
                                const sim_options& opt) {
  run_size z;
  z.sessions = static_cast<std::int64_t>(sessions);
  z.requests = static_cast<std::int64_t>(requests);
  z.lineages = static_cast<std::int64_t>(lineages);
  z.buckets = static_cast<std::int64_t>(buckets);
  z.scripts = false;
  z.record_attempts = opt.record_attempts;
  z.record_charges = opt.record_charges;
  return z;
}

/// How a simulation's budget errors begin, before its target's name: "simulation on", after the
/// run's name when it has one (sim_options::run_name).
inline std::string simulation_kind(const sim_options& opt) {
  return opt.run_name.empty() ? std::string("simulation on") : message(opt.run_name, ": simulation on");
}

/// Checks a run before its loop: every time finite and within bounds, every count within the
/// token cap, every prefix run within its script, the buckets within max_buckets (and
/// `bucket_count` of them for tgt.limits), no concurrency bucket beside an engine, every request
/// within the engine's KV pool, and the run within the caps and the memory budget (budget.hpp).
/// Throws simulation_error naming the session and request.
inline void check_simulation(const target& tgt, std::span<const session_plan> plans, const sim_options& opt,
                             std::size_t bucket_count) {
  const std::size_t nb = tgt.limits.size();
  if (nb > max_buckets)
    throw simulation_error(
        message("target ", tgt.name, " has ", nb, " buckets; at most ", max_buckets, " are supported"));
  if (bucket_count != nb)
    throw simulation_error(
        message("target ", tgt.name, " has ", nb, " buckets; the simulation was given ", bucket_count));
  for (const auto& b : tgt.limits)
    if (b.limit_unpublished)
      throw simulation_error(message("target ", tgt.name, ": bucket ", b.name,
                                     " has no published limit; set it before running (a scenario option's "
                                     "\"limits\": {\"",
                                     b.name, "\": N}, --limit ", b.name, "=N, or Target.with_bucket_limit)"));
  // A concurrency bucket releases a request at its end, known at admission; with an engine it is not.
  const engine_config* eng = tgt.engine && !opt.recorded_speed ? &*tgt.engine : nullptr;
  if (tgt.engine)
    for (const auto& b : tgt.limits)
      if (b.algorithm == bucket_algorithm::concurrency)
        throw simulation_error(message("target ", tgt.name, " has an engine and a concurrency bucket (", b.name,
                                       "); the engine's max_sequences limits requests in flight"));
  const std::int64_t kv_pool = eng ? kv_pool_tokens(eng->memory) : 0;

  std::uint64_t requests = 0, lineages = 0;
  std::vector<std::uint64_t> own_family_shared;
  std::vector<std::uint64_t>& family_shared = opt.storage ? opt.storage->family_shared : own_family_shared;
  family_shared.clear();
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& p = plans[i];
    if (!p.script) throw simulation_error(message("session ", i, " has no script"));
    const auto& sc = *p.script;
    auto fail = [&](std::size_t r, const std::string& what) {
      throw simulation_error(message(sc.source, " (session ", i + 1, "), request ", r + 1, ": ", what));
    };
    if (!std::isfinite(p.start_s) || p.start_s < 0 || p.start_s > max_session_start_s)
      throw simulation_error(message(sc.source, " (session ", i + 1, ") starts at ", p.start_s,
                                     " s; expected a finite time from 0 to 2·10^11 s"));
    if (sc.shared_lineages > sc.lineages)
      throw simulation_error(
          message(sc.source, " (session ", i + 1, "): ", sc.shared_lineages, " shared lineages of ", sc.lineages));
    if (!sc.recorded.empty() && sc.recorded.size() != sc.requests.size())
      throw simulation_error(message(sc.source, " (session ", i + 1, "): recorded times of ", sc.recorded.size(),
                                     " requests for ", sc.requests.size(), " requests"));
    for (std::size_t r = 0; r < sc.requests.size(); ++r) {
      const auto& q = sc.requests[r];
      for (const auto x : {q.prompt_tokens, q.output_tokens, q.reasoning_tokens, q.max_tokens})
        if (x < 0 || x > max_script_tokens) fail(r, message("a token count of ", x, " (expected 0 to 10^13)"));
      if (!std::isfinite(q.delay_before_s) || q.delay_before_s < 0 || q.delay_before_s > max_script_delay_s)
        fail(r, message("an agent delay of ", q.delay_before_s, " s (expected 0 to 10^7 s)"));
      const recorded_timing rec = sc.recorded_of(r);
      for (const double d : {rec.ttft_s, rec.duration_s})
        if (!std::isfinite(d) || d > max_script_delay_s)
          fail(r, message("a recorded time of ", d, " s (expected at most 10^7 s)"));
      if (static_cast<std::size_t>(q.runs_begin) + q.runs_count > sc.runs.size())
        fail(r, "its prefix runs lie outside the script");
      for (std::uint32_t k = 0; k < q.runs_count; ++k) {
        const auto& run = sc.runs[q.runs_begin + k];
        if (run.lineage >= sc.lineages) fail(r, message("prefix lineage ", run.lineage, " of ", sc.lineages));
        if (run.end_tokens < 0 || run.end_tokens > max_script_tokens)
          fail(r, message("a prefix run ending at ", run.end_tokens, " tokens"));
      }
      // The engine holds a request's whole context in its KV pool (one that exceeds the window
      // ends its session as context_overflow before it gets there).
      const std::int64_t kv = q.prompt_tokens + q.output_tokens + q.reasoning_tokens;
      if (eng && kv > kv_pool && kv <= tgt.context_window_tokens)
        throw simulation_error(message("session ", i, " request ", r + 1, ": ", kv, " tokens need ",
                                       fixed{static_cast<double>(kv) * eng->memory.kv_bytes_per_token / 1e9, 2},
                                       " GB of KV cache; the ", eng->name, " engine's pool holds ", kv_pool,
                                       " tokens (", eng->memory.kv_pool_gb, " GB)"));
    }
    requests += sc.requests.size();
    if (p.family >= plans.size())
      throw simulation_error(message(sc.source, " (session ", i + 1, ") is in family ", p.family,
                                     "; families are numbered below the ", plans.size(), " sessions"));
    if (p.family >= family_shared.size()) family_shared.resize(p.family + 1, 0);
    family_shared[p.family] = std::max<std::uint64_t>(family_shared[p.family], sc.shared_lineages);
    lineages += sc.lineages - sc.shared_lineages;
  }
  for (const auto f : family_shared) lineages += f;
  if (lineages > max_lineages)
    throw simulation_error(
        message(lineages, " prefix-cache lineages over all sessions; at most ", max_lineages, " are simulated"));
  check_run_size(simulation_size(plans.size(), requests, lineages, nb, opt), simulation_kind(opt), tgt.name);
}

/// Checks a route before its loop: 1 to max_route_targets targets, one bucket list and speed law
/// each, the policy's numbers, and each target as check_simulation does. Throws simulation_error.
template <class Bucket>
void check_route(std::span<const target> route, const route_policy& p, std::span<const session_plan> plans,
                 const sim_options& opt, const std::vector<std::vector<Bucket>>& buckets, std::size_t speeds) {
  if (route.empty() || route.size() > max_route_targets)
    throw simulation_error(message("a route has ", route.size(), " targets; expected 1 to ", max_route_targets));
  if (buckets.size() != route.size() || speeds != route.size())
    throw simulation_error(message("a route of ", route.size(), " targets was given ", buckets.size(),
                                   " bucket lists and ", speeds, " speed laws"));
  if (!(p.spill_after_s >= 0))
    throw simulation_error(message("a route's spill_after_s is ", p.spill_after_s,
                                   "; expected 0 s or more (infinity: never spill)"));
  if (p.cooldown_after_fails < 0 || p.cooldown_after_fails > 1'000'000)
    throw simulation_error(message("a route's cooldown_after_fails is ", p.cooldown_after_fails,
                                   "; expected 0 (no cooldown) to 1000000"));
  if (!(p.cooldown_window_s > 0) || !std::isfinite(p.cooldown_window_s))
    throw simulation_error(message("a route's cooldown_window_s is ", p.cooldown_window_s,
                                   "; expected a finite time above 0 s"));
  if (!(p.cooldown_s >= 0) || !std::isfinite(p.cooldown_s))
    throw simulation_error(message("a route's cooldown_s is ", p.cooldown_s, "; expected a finite time from 0 s"));
  for (std::size_t g = 0; g < p.segments.size(); ++g)
    if (p.segments[g].count == 0 || p.segments[g].first + std::size_t{p.segments[g].count} > route.size())
      throw simulation_error(message("a route's segment ", g, " holds targets ", int{p.segments[g].first}, " to ",
                                     int{p.segments[g].first} + int{p.segments[g].count} - 1, "; the route has ",
                                     route.size()));
  const std::size_t segments = std::max<std::size_t>(1, p.segments.size());
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (plans[i].script)
      for (std::size_t r = 0; r < plans[i].script->requests.size(); ++r)
        if (plans[i].script->requests[r].segment >= segments)
          throw simulation_error(message(plans[i].script->source, " (session ", i + 1, "), request ", r + 1,
                                         ": route segment ", int{plans[i].script->requests[r].segment}, " of ",
                                         segments));
  for (std::size_t k = 0; k < route.size(); ++k) check_simulation(route[k], plans, opt, buckets[k].size());
}

/// A client that never gives up is refused this many times in a row at most: the session then
/// ends as died_after_retries (the target provably never admits it, e.g. a requests bucket that
/// counts the refusals themselves).
inline constexpr std::int32_t max_attempts_per_request = 1'000'000;

} // namespace loopcast::detail
