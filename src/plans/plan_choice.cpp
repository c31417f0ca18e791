#include "loopcast/plan_choice.hpp"

#include "loopcast/replay.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace loopcast {

namespace {

constexpr double month_days = 30.436875;  // a mean Gregorian month

// The assumed caps of Claude Max 5x (examples/scenarios/plan-vs-api.json), in counted tokens; Pro
// and Max 20x by Anthropic's stated ratio ("Max is 5x or 20x the usage of Pro").
constexpr double max5x_five_hour = 1'000'000, max5x_weekly = 10'000'000;

plan_candidate plan_of(const preset_library& lib, const std::string& label, const std::string& preset, double ratio) {
  auto t = lib.load_target(preset);
  for (auto& b : t.limits) {
    if (!b.limit_unpublished) continue;
    b.limit = (b.name == "five_hour" ? max5x_five_hour : max5x_weekly) * ratio;
    b.limit_unpublished = false;
  }
  plan_candidate c;
  c.label = label;
  c.targets.emplace_back("*", std::move(t));
  c.caps = plan_caps_source::assumed;
  const auto tok = [](double x) { return x >= 1e6 ? fmt::format("{:g}M", x / 1e6) : fmt::format("{:g}K", x / 1e3); };
  c.caps_note = fmt::format("assumed: {} counted tokens per 5 hours, {} a week (Max 5x's assumed {} and {}, times {:g}: "
                            "Anthropic states the ratio, not the caps)",
                            tok(max5x_five_hour * ratio), tok(max5x_weekly * ratio), tok(max5x_five_hour),
                            tok(max5x_weekly), ratio);
  return c;
}

// The refusals' waits as one timeline: [refusal, refusal + wait) of every 429, merged across
// sessions (two sessions waiting for one reset block the user once).
std::vector<reset_wait> waits_of(const simulation_result& sim, const std::vector<bucket_config>& buckets) {
  std::vector<reset_wait> spans;
  for (const auto& a : sim.attempts) {
    if (a.status != attempt_status::rate_limited || !(a.wait_s > 0)) continue;
    reset_wait w;
    w.start_unix_s = a.t_end;
    w.hours = a.wait_s;  // seconds until merged
    if (a.refused_by >= 0 && static_cast<std::size_t>(a.refused_by) < buckets.size())
      w.bucket = buckets[static_cast<std::size_t>(a.refused_by)].name;
    spans.push_back(std::move(w));
  }
  std::sort(spans.begin(), spans.end(), [](const reset_wait& a, const reset_wait& b) { return a.start_unix_s < b.start_unix_s; });
  std::vector<reset_wait> merged;
  for (auto& w : spans) {
    const double end = w.start_unix_s + w.hours;
    if (!merged.empty() && w.start_unix_s <= merged.back().start_unix_s + merged.back().hours) {
      auto& m = merged.back();
      m.hours = std::max(m.hours, end - m.start_unix_s);
    } else {
      merged.push_back(std::move(w));
    }
  }
  for (auto& m : merged) {
    m.start_unix_s += sim.start_unix_s;
    m.hours /= 3600;
  }
  return merged;
}

double blocked_hours(const std::vector<reset_wait>& walls) {
  double h = 0;
  for (const auto& w : walls) h += w.hours;
  return h;
}

model_map map_of(const plan_candidate& c, const retry_policy& client, double scale) {
  model_map m;
  m.label = c.label;
  for (const auto& [pattern, t] : c.targets) {
    scenario_option o;
    o.targets.push_back(t);
    if (scale != 1)
      for (auto& b : o.targets.back().limits) b.limit *= scale;
    o.label = o.name();
    o.client = client;
    m.entries.push_back({pattern, std::move(o)});
  }
  return m;
}

std::string targets_of(const plan_candidate& c) {
  if (c.targets.size() == 1) return c.targets.front().second.name;
  std::string s;
  for (const auto& [pattern, t] : c.targets) s += fmt::format("{}{}={}", s.empty() ? "" : ", ", pattern, t.name);
  return s;
}

} // namespace

std::vector<plan_candidate> claude_plan_candidates(const preset_library& lib) {
  std::vector<plan_candidate> out;
  out.push_back(plan_of(lib, "Claude Pro", "claude-pro-sonnet-4.6", 0.2));
  out.push_back(plan_of(lib, "Claude Max 5x", "claude-max-5x-opus-4.7", 1));
  out.push_back(plan_of(lib, "Claude Max 20x", "claude-max-20x-opus-4.7", 4));
  plan_candidate api;
  api.label = "API pay-as-you-go";
  api.targets.emplace_back("*haiku*", lib.load_target("anthropic-tier4-claude-haiku-4.5"));
  api.targets.emplace_back("*sonnet*", lib.load_target("anthropic-tier4-claude-sonnet-4.6"));
  api.targets.emplace_back("*", lib.load_target("anthropic-tier4-claude-opus-4.7"));
  api.caps_note = "tier 4's published rate limits; every token at list price";
  out.push_back(std::move(api));
  return out;
}

plan_choice choose_plan(const std::vector<recorded_trace>& traces, const std::vector<plan_candidate>& candidates,
                        const plan_choice_options& o) {
  plan_choice r;
  replay_options ro;
  ro.seed = o.seed;
  ro.speed = replay_speed::recorded;
  ro.record_attempts = true;
  const auto recorded = measure_recorded(traces);
  r.requests = static_cast<std::int64_t>(recorded.requests);
  r.span_days = std::max(1.0, recorded.wall_s / 86400);
  const double per_month = month_days / r.span_days;
  // Hours a week over the span the replay took: where a plan holds the work back, the sessions
  // run later than recorded and the weeks they take are more than the logs' own.
  const auto per_week = [&](const std::vector<reset_wait>& waits, const simulation_result& sim) {
    return blocked_hours(waits) * 7 / std::max(r.span_days, sim.wall_s / 86400);
  };
  for (const auto& c : candidates) {
    std::vector<model_map> maps{map_of(c, o.client, 1)};
    const bool spread = c.caps == plan_caps_source::assumed;
    if (spread) {
      maps.push_back(map_of(c, o.client, o.cap_low));
      maps.push_back(map_of(c, o.client, o.cap_high));
    }
    const auto rep = run_replay(traces, maps, ro);
    plan_choice_row row;
    row.label = c.label;
    row.targets = targets_of(c);
    row.caps = c.caps;
    row.caps_note = c.caps_note;
    const auto& mid = rep.options.front();
    for (const auto& n : rep.shaping.front().notes)
      if (std::find(r.notes.begin(), r.notes.end(), n) == r.notes.end()) r.notes.push_back(n);
    const auto& first = c.targets.front().second;
    row.plan = first.plan.has_value();
    if (row.plan) row.fee_usd_month = first.plan->monthly_fee_usd;
    else row.metered_usd_month = mid.sim.token_cost_usd * per_month;
    row.usd_month = row.fee_usd_month + row.metered_usd_month;
    const auto walls = waits_of(mid.sim, mid.option->buckets());
    row.walls = static_cast<std::int32_t>(walls.size());
    row.first_walls.assign(walls.begin(), walls.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(walls.size(), 5)));
    row.blocked_hours_week = per_week(walls, mid.sim);
    row.blocked_low = row.blocked_high = row.blocked_hours_week;
    // Half and twice the caps (assumed): the interval is the least and the most of the three, as
    // a run that waits less early may meet more walls later.
    for (std::size_t i = 1; i < rep.options.size(); ++i) {
      const auto& other = rep.options[i];
      const double h = per_week(waits_of(other.sim, other.option->buckets()), other.sim);
      row.blocked_low = std::min(row.blocked_low, h);
      row.blocked_high = std::max(row.blocked_high, h);
    }
    row.sessions = static_cast<std::int32_t>(mid.sim.sessions.size());
    for (const auto& s : mid.sim.sessions) row.sessions_cut += s.outcome != session_outcome::completed;
    row.within_limit = row.blocked_hours_week <= o.max_blocked_hours_week;
    r.rows.push_back(std::move(row));
  }
  std::stable_sort(r.rows.begin(), r.rows.end(), [](const plan_choice_row& a, const plan_choice_row& b) {
    if (a.within_limit != b.within_limit) return a.within_limit;
    return a.within_limit ? a.usd_month < b.usd_month : a.blocked_hours_week < b.blocked_hours_week;
  });
  if (!r.rows.empty()) {
    const auto& best = r.rows.front();
    const auto range = best.blocked_low != best.blocked_high
                           ? fmt::format(" ({:.1f}–{:.1f} with the caps' uncertainty)", best.blocked_low, best.blocked_high)
                           : std::string();
    r.verdict = best.within_limit
                    ? fmt::format("{} at ${:.0f} a month: {:.1f} h a week waiting for resets{}, the cheapest within {:g} h",
                                  best.label, best.usd_month, best.blocked_hours_week, range, o.max_blocked_hours_week)
                    : fmt::format("no option stays within {:g} h a week of waiting; the least is {} with {:.1f} h{}",
                                  o.max_blocked_hours_week, best.label, best.blocked_hours_week, range);
  }
  r.notes.push_back(fmt::format("{} requests over {:.1f} days of logs, replayed with their recorded agent time and "
                                "durations; hours and dollars scaled to a week and a month",
                                r.requests, r.span_days));
  return r;
}

} // namespace loopcast
