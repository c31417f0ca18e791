#include "report/common.hpp"

#include <fmt/format.h>

#include <cmath>

namespace loopcast::detail {

std::string overall_outcome(const simulation_result& r) {
  if (r.sessions.empty()) return "completed";
  const auto first = r.sessions.front().outcome;
  for (const auto& s : r.sessions)
    if (s.outcome != first) return "mixed";
  return std::string(to_string(first));
}

script_summary summarize_script(const session_script& s) {
  script_summary out;
  out.requests = s.requests.size();
  for (const auto& r : s.requests) {
    out.compactions += r.compaction ? 1 : 0;
    out.max_context = std::max(out.max_context, r.prompt_tokens);
  }
  if (!s.requests.empty()) {
    out.first_context = s.requests.front().prompt_tokens;
    out.last_context = s.requests.back().prompt_tokens;
  }
  return out;
}

double usd_per_hour(const simulation_result& r) { return r.wall_s > 0 ? r.cost_usd / (r.wall_s / 3600.0) : 0.0; }

double usd_per_1k_generated(const simulation_result& r) {
  const auto g = r.tokens.generated();
  return g > 0 ? r.cost_usd / (static_cast<double>(g) / 1000.0) : 0.0;
}

comparison_pair find_comparison(const scenario_result& r) {
  comparison_pair p;
  for (std::size_t i = 0; i < r.options.size(); ++i) {
    const auto kind = view_of(*r.options[i].option).kind;
    if (kind == target_kind::cloud && p.cloud < 0) p.cloud = static_cast<int>(i);
    if (kind == target_kind::local && p.local < 0) p.local = static_cast<int>(i);
  }
  if (p.cloud < 0 || p.local < 0) return {};
  return p;
}

std::pair<std::int64_t, std::int64_t> requests_served_of(const simulation_result& r) {
  std::int64_t served = 0, total = 0;
  for (const auto& s : r.sessions) {
    served += s.requests_served;
    total += s.requests_total;
  }
  return {served, total};
}

stop_explanation explain_stop(const option_result& o) {
  stop_explanation e;
  const auto& sessions = o.sim.sessions;
  const session_result* first = nullptr;
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    if (sessions[i].outcome == session_outcome::completed) continue;
    ++e.stopped;
    if (!first || sessions[i].end_s < first->end_s) {
      first = &sessions[i];
      e.session = static_cast<std::uint32_t>(i);
    }
  }
  if (!first) return e;
  const auto& s = *first;
  e.outcome = s.outcome;
  e.request = s.stop_request;
  e.time_s = s.end_s;
  e.need = s.stop_need;
  e.capacity = s.stop_capacity;
  const auto limits = o.option->buckets();
  const bucket_config* b = s.stop_bucket >= 0 && static_cast<std::size_t>(s.stop_bucket) < limits.size()
                               ? &limits[static_cast<std::size_t>(s.stop_bucket)]
                               : nullptr;
  if (b) e.bucket = b->name;
  const std::string where = fmt::format("session {} request {}", e.session + 1, e.request);
  auto unit_text = [&](const bucket_config& c) {
    if (c.unit != bucket_unit::tokens) return std::string(c.unit == bucket_unit::requests ? "requests" : "requests in flight");
    std::string classes;
    for (auto k : counted_token_classes)
      if (c.classes.contains(k)) classes += (classes.empty() ? "" : " + ") + std::string(to_string(k));
    return "tokens (" + classes + ")";
  };
  auto reserves = [&](const bucket_config& c) {
    return c.classes.counts_generated() &&
           (c.charging == charging_rule::reserve || c.charging == charging_rule::reserve_then_refund);
  };
  switch (s.outcome) {
  case session_outcome::context_overflow:
    e.what = fmt::format("{}: {} tokens (prompt + output) exceed the target's {}-token context window", where,
                         grouped(e.need), grouped(e.capacity));
    e.fix = "replay with --context compact (the default) or a lower --compact-at, or choose a target with a larger window";
    break;
  case session_outcome::request_too_large:
    if (b) {
      e.what = fmt::format("{}: charges {} {} on {}, whose whole capacity is {} per {:g} s{}", where, grouped(e.need),
                           unit_text(*b), b->name, grouped(e.capacity), b->period_s,
                           b->oversize == oversize_rule::rate_limited
                               ? ": every attempt gets a 429 and the client would retry forever"
                               : ": it can never be admitted");
      e.fix = reserves(*b) ? fmt::format("a smaller max_tokens (--max-tokens; the reserve counts on {}), a shorter "
                                         "prompt, or a tier with a larger {}", b->name, b->name)
                           : fmt::format("a shorter prompt (--context compact with a lower --compact-at), or a tier "
                                         "with a larger {}", b->name);
    } else {
      e.what = where + ": larger than a bucket's whole capacity";
    }
    break;
  case session_outcome::died_after_retries:
    e.what = fmt::format("{}: the client ({}) gave up after {} 429s{}", where, o.option->client.name, s.rate_limited,
                         b ? fmt::format("; the last from {} ({} {} needed, limit {} per {:g} s)", b->name,
                                         grouped(e.need), unit_text(*b), grouped(e.capacity), b->period_s)
                           : std::string{});
    e.fix = b && e.need > e.capacity
                ? fmt::format("the request is larger than {}: a smaller max_tokens or prompt, or a larger tier", b->name)
                : "a client that waits longer (--client), fewer agents at once, or a tier with higher limits";
    break;
  case session_outcome::cut_off:
    e.what = fmt::format("{}: still running when the run reached its attempt budget", where);
    e.fix = "a larger attempt budget (--attempt-budget, \"attempt_budget\"), or fewer agents or a larger tier: the "
            "fleet overwhelms this one";
    break;
  case session_outcome::completed: break;
  }
  return e;
}

} // namespace loopcast::detail
