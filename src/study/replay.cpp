// Replays of recorded sessions (docs/replay.md): the recorded run measured like a simulated one,
// and each model map run on its targets, every request on its own model's.
#include "loopcast/replay.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/stats.hpp"

#include "study/recorded.hpp"
#include "util/text.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <memory>
#include <set>

namespace loopcast {

using detail::origins_of;
using detail::refuse_totals_only;

recorded_run measure_recorded(const std::vector<recorded_trace>& traces, const model_price_book* prices) {
  recorded_run run;
  std::vector<request_sample> samples;
  double first = std::numeric_limits<double>::infinity(), last = -first, cost = 0, priced = 0;
  std::size_t priced_requests = 0;
  bool all_cost = true;
  std::set<std::string> unpriced;
  const auto origins = origins_of(traces);
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    const auto& t = traces[ti];
    if (t.totals) continue;
    const double origin = origins[ti];
    for (const auto& s : t.sessions)
      for (const auto& r : s.requests) {
        first = std::min(first, r.t_send - origin);
        last = std::max(last, (std::isnan(r.t_end) ? r.t_send : r.t_end) - origin);
        run.tokens += r.tokens;
        if (std::isnan(r.cost_usd)) all_cost = false;
        else cost += r.cost_usd;
        const auto& model = t.models.at(static_cast<std::size_t>(r.model));
        if (!prices) continue;
        if (const auto* e = prices->find(model)) {
          priced += price_request(e->prices, r.tokens, t.absolute_clock ? r.t_send : 0.0).total_usd;
          ++priced_requests;
        } else {
          unpriced.insert(model);
        }
      }
    auto x = samples_of(t);
    samples.insert(samples.end(), x.begin(), x.end());
  }
  run.requests = samples.size();
  run.wall_s = samples.empty() ? 0.0 : last - first;
  run.unpriced_models.assign(unpriced.begin(), unpriced.end());
  if (all_cost && !samples.empty()) {
    run.cost_usd = cost;
    run.unpriced_models.clear();
  } else if (prices && priced_requests > 0) {  // partial when some models have no prices
    run.cost_usd = priced;
    run.cost_priced = true;
  } else {
    run.cost_usd = unknown_time;
  }
  run.metrics = compute_request_metrics(samples);
  return run;
}

replay_result run_replay(const std::vector<recorded_trace>& traces, const std::vector<scenario_option>& options,
                         const replay_options& opt) {
  std::vector<model_map> targets;
  for (const auto& o : options) targets.push_back({o.label, {{"*", o}}});
  return run_replay(traces, targets, opt);
}

namespace {

// How an option's target fits the sessions to its window (the client's or the option's choices).
session_shaping shaping_for(const scenario_option& o, const replay_options& opt) {
  session_shaping sh;
  sh.max_tokens_override = opt.max_tokens;
  sh.agent_max_tokens = o.client.agent_max_tokens > 0 ? o.client.agent_max_tokens : opt.default_max_tokens;
  // A route: the largest window of its targets, and no output cap (each target caps its own).
  sh.max_output_tokens = o.routed() ? 0 : o.first().max_output_tokens;
  sh.window_tokens = o.window();
  sh.policy = opt.policy;
  sh.compact_at = opt.compact_at > 0 ? opt.compact_at
                  : o.client.agent_compact_at > 0 ? o.client.agent_compact_at : default_compact_at;
  // A fraction given for the replay (--compact-at) replaces the client's own rule.
  sh.compact_reserve_tokens = opt.compact_at > 0 ? 0 : o.client.agent_compact_reserve_tokens;
  sh.summary_tokens = opt.summary_tokens > 0 ? opt.summary_tokens : default_summary_tokens;
  return sh;
}

} // namespace

namespace {

// The sessions every option numbers alike (those with requests, trace by trace), and the requests
// per model of each.
struct replayed_sessions {
  std::vector<std::string> source;
  std::vector<std::map<std::string, std::size_t>> models;
};

replayed_sessions sessions_of(const std::vector<recorded_trace>& traces) {
  replayed_sessions out;
  for (const auto& t : traces) {
    refuse_totals_only(t);
    for (const auto& s : t.sessions) {
      if (s.requests.empty()) continue;
      out.source.push_back(fmt::format("{} session {}", t.file, s.id));
      auto& per_model = out.models.emplace_back();
      for (const auto& r : s.requests) ++per_model[t.models.at(static_cast<std::size_t>(r.model))];
    }
  }
  if (out.source.empty()) throw trace_error(traces.empty() ? "" : traces.front().file, 0, "nothing to replay");
  return out;
}

// Which entry of a model map each session is shaped for: each request goes to the first entry
// whose pattern matches its model, a session to the entry of most of its requests. A model no
// pattern matches is a config_error naming every such model.
struct entry_choice {
  std::vector<int> major;         // per session
  std::vector<bool> used;         // per entry
  std::size_t mixed = 0;          // sessions whose requests go to several entries
  std::string mixed_example;
};

entry_choice choose_entries(const model_map& tg, const replayed_sessions& ss) {
  auto entry_of = [&](const std::string& model) {
    for (std::size_t k = 0; k < tg.entries.size(); ++k)
      if (model_matches(tg.entries[k].pattern, model)) return static_cast<int>(k);
    return -1;
  };
  entry_choice c;
  c.major.assign(ss.source.size(), -1);
  c.used.assign(tg.entries.size(), false);
  std::map<std::string, std::size_t> unmatched;
  for (std::size_t i = 0; i < ss.source.size(); ++i) {
    std::map<int, std::size_t> per_entry;
    for (const auto& [model, count] : ss.models[i]) {
      const int k = entry_of(model);
      if (k < 0) {
        unmatched[model] += 1;
        continue;
      }
      per_entry[k] += count;
      c.used[static_cast<std::size_t>(k)] = true;
    }
    for (const auto& [k, count] : per_entry)
      if (c.major[i] < 0 || count > per_entry[c.major[i]]) c.major[i] = k;
    if (per_entry.size() > 1 && ++c.mixed == 1) c.mixed_example = ss.source[i];
  }
  if (!unmatched.empty()) {
    std::string list;
    for (const auto& [model, count] : unmatched)
      list += fmt::format("{}{} ({} session{})", list.empty() ? "" : ", ", model, count, count == 1 ? "" : "s");
    throw config_error("--on", "", fmt::format("{}: no mapping for the model{} {}; add a pattern for {}, or '*=TARGET'",
                                               tg.label, unmatched.size() == 1 ? "" : "s", list,
                                               unmatched.size() == 1 ? "it" : "them"));
  }
  return c;
}

// The entries in use, side by side as one route cut into segments (one entry: itself); their
// patterns in order, and the summary's routes and notes.
std::shared_ptr<scenario_option> merged_option(const model_map& tg, const std::vector<std::size_t>& entries,
                                               const entry_choice& choice, std::vector<std::string>& patterns,
                                               replay_shaping_summary& summary) {
  auto o = std::make_shared<scenario_option>(tg.entries[entries.front()].option);
  if (entries.size() == 1) {
    summary.routes.push_back(fmt::format("{} → {}", tg.entries[entries.front()].pattern, o->name()));
    return o;
  }
  o->label = tg.label;
  o->targets.clear();
  o->routing = tg.entries[entries.front()].option.routing;
  o->routing.segments.clear();
  for (const auto k : entries) {
    const auto& e = tg.entries[k].option;
    if (e.routing.spill_after_s != o->routing.spill_after_s ||
        e.routing.cooldown_after_fails != o->routing.cooldown_after_fails ||
        e.routing.cooldown_window_s != o->routing.cooldown_window_s || e.routing.cooldown_s != o->routing.cooldown_s)
      throw config_error("--on", "", fmt::format("{}: the routes of a model map must share one spill and cooldown "
                                                 "policy ({} differs from {})",
                                                 tg.label, tg.entries[k].pattern, tg.entries[entries.front()].pattern));
    const auto& ts = e.targets;
    o->routing.segments.push_back({static_cast<std::uint8_t>(std::min(o->targets.size(), max_route_targets)),
                                   static_cast<std::uint8_t>(ts.size())});
    o->targets.insert(o->targets.end(), ts.begin(), ts.end());
    patterns.push_back(tg.entries[k].pattern);
    summary.routes.push_back(fmt::format("{} → {}", tg.entries[k].pattern, route_name(ts)));
  }
  if (o->targets.size() > max_route_targets)
    throw config_error("--on", "", fmt::format("{}: the model map's routes hold {} targets; a run has at most {}",
                                               tg.label, o->targets.size(), max_route_targets));
  if (choice.mixed > 0)
    summary.notes.push_back(fmt::format(
        "{} session{} (e.g. {}) send requests of models mapped to different targets: each request ran on its "
        "own model's target, and each session's context policy follows the target of most of its requests",
        choice.mixed, choice.mixed == 1 ? "" : "s", choice.mixed_example));
  return o;
}

// A plan's rules that change within the logs' span: the replay starts under those in force at its
// start and takes each change when it comes (target_at's limit steps), which the summary says.
void note_rule_changes(const scenario_option& o, double start_unix_s, double span_s, replay_shaping_summary& summary) {
  for (const auto& t : o.targets) {
    const target now = target_at(t, start_unix_s);
    const auto changes = rule_changes_within(t, start_unix_s, start_unix_s + span_s);
    for (const auto& b : now.limits) {
      double before = b.limit;
      // A dated rule in force at the start: the replay begins under it, which the notes say.
      if (const auto* own = t.find_bucket(b.name); own && own->limit > 0 && b.limit != own->limit) {
        std::string source;
        for (const auto& d : t.dated_limits)
          if (d.bucket == b.name && d.from_unix_s <= start_unix_s && start_unix_s < d.until_unix_s)
            source += fmt::format("{}{}", source.empty() ? "" : "; ", d.source);
        summary.notes.push_back(fmt::format(
            "{}: the limit of {} at the logs' start ({:%Y-%m-%d}) is {}, {:g} times the {} in force now, by a dated rule "
            "({})",
            t.name, b.name, fmt::gmtime(static_cast<std::time_t>(start_unix_s)), detail::grouped(b.limit),
            b.limit / own->limit, detail::grouped(own->limit), source));
      }
      for (const auto& step : b.limit_steps) {
        if (step.at_unix_s >= start_unix_s + span_s) break;
        std::string source;
        for (const auto& d : changes)
          if (d.bucket == b.name && (d.from_unix_s == step.at_unix_s || d.until_unix_s == step.at_unix_s))
            source += fmt::format("{}{}", source.empty() ? "" : "; ", d.source);
        summary.notes.push_back(fmt::format(
            "{}: the limit of {} changes from {} to {} at {:%Y-%m-%d %H:%M} UTC, within the logs' span ({}): the replay "
            "takes the new limit then",
            t.name, b.name, detail::grouped(before), detail::grouped(step.limit),
            fmt::gmtime(static_cast<std::time_t>(step.at_unix_s)), source));
        before = step.limit;
      }
    }
  }
}

// Requests whose context goes past what a target's speeds were fitted on (speed.context_max_tokens):
// their per-token times are held at the fitted edge, which the summary says.
void note_extrapolation(const model_map& tg, const std::vector<std::size_t>& entries, const entry_choice& choice,
                        const std::vector<std::unique_ptr<replay_sessions>>& shaped, replay_shaping_summary& summary) {
  for (const auto k : entries) {
    const auto& t = tg.entries[k].option.first();
    const double bound = t.speed.context_max_tokens;
    if (!(bound > 0)) continue;
    std::size_t past = 0, total = 0;
    std::int64_t largest = 0;
    for (std::size_t i = 0; i < shaped[k]->scripts.size(); ++i) {
      if (choice.major[i] != static_cast<int>(k)) continue;
      for (const auto& r : shaped[k]->scripts[i].requests) {
        const auto context = r.prompt_tokens + r.output_tokens + r.reasoning_tokens;
        ++total;
        if (static_cast<double>(context) > bound) {
          ++past;
          largest = std::max(largest, context);
        }
      }
    }
    if (past > 0)
      summary.notes.push_back(fmt::format(
          "{} of {} requests on {} reach past the contexts its speeds were fitted on ({:.0f} tokens; largest {}): "
          "their per-token times are held at the fitted edge, not extrapolated",
          past, total, t.name, bound, largest));
  }
}

// Requests that recorded 1-hour cache writes, on a target that sells one lifetime: they are cached
// for its TTL and billed as its writes, which the summary says.
void note_one_lifetime(const model_map& tg, const std::vector<std::size_t>& entries, const entry_choice& choice,
                       const std::vector<std::unique_ptr<replay_sessions>>& shaped, replay_shaping_summary& summary) {
  for (const auto k : entries) {
    const auto& c = tg.entries[k].option.first().cache;
    if (!c.enabled || c.sells_1h() || (c.ttl_s >= 3600 && !c.write_charged)) continue;  // nothing changes
    std::size_t asked = 0, total = 0;
    for (std::size_t i = 0; i < shaped[k]->scripts.size(); ++i) {
      if (choice.major[i] != static_cast<int>(k)) continue;
      for (const auto& r : shaped[k]->scripts[i].requests) {
        ++total;
        asked += r.write_1h ? 1 : 0;
      }
    }
    if (asked > 0)
      summary.notes.push_back(fmt::format(
          "{} of {} asked for 1-hour cache writes, which {} does not sell: they were cached for its {:g} s and {}",
          asked, detail::count_of(static_cast<long long>(total), "request"), tg.entries[k].option.first().name, c.ttl_s,
          c.write_charged ? fmt::format("billed at its {} write price", c.write_1h ? "1-hour" : "5-minute")
                          : "not billed as writes"));
  }
}

} // namespace

replay_result run_replay(const std::vector<recorded_trace>& traces, const std::vector<model_map>& targets,
                         const replay_options& opt) {
  replay_result out;
  out.policy = opt.policy;
  out.speed = opt.speed;
  out.recorded = measure_recorded(traces, opt.recorded_prices);
  const auto ss = sessions_of(traces);
  const std::size_t n = ss.source.size();
  // The logs' span from their first send, for the plan rules that change within it.
  const double origin = !traces.empty() && traces.front().absolute_clock ? origins_of(traces).front() : 0.0;
  double span_s = 0;
  for (const auto& t : traces)
    for (const auto& s : t.sessions)
      for (const auto& r : s.requests) span_s = std::max(span_s, t.absolute_clock ? r.t_send - origin : r.t_send);
  sim_options so;
  so.record_attempts = opt.record_attempts;
  so.start_unix_s = opt.start_unix_s;
  so.recorded_speed = opt.speed == replay_speed::recorded;
  so.max_attempts = opt.max_attempts;
  // Time-of-day prices need the Unix time of the replay's t = 0: the logs' own origin.
  if (so.start_unix_s == 0 && !traces.empty() && traces.front().absolute_clock) so.start_unix_s = origin;

  for (const auto& tg : targets) {
    if (tg.entries.empty()) throw config_error("--on", "", fmt::format("option {} has no target", tg.label));
    const auto choice = choose_entries(tg, ss);
    std::vector<std::size_t> entries;
    for (std::size_t k = 0; k < tg.entries.size(); ++k)
      if (choice.used[k]) entries.push_back(k);
    replay_shaping_summary summary;
    std::vector<std::string> patterns;
    const auto o = merged_option(tg, entries, choice, patterns, summary);
    // Each session shaped for its entry's target (the plans need every session's index, start
    // and family, so every shaping holds them all).
    std::vector<std::unique_ptr<replay_sessions>> shaped(tg.entries.size());
    std::vector<session_plan> plans(n);
    for (const auto k : entries) {
      auto sh = shaping_for(tg.entries[k].option, opt);
      sh.model_patterns = patterns;
      shaped[k] = std::make_unique<replay_sessions>(make_replay_sessions(traces, sh));
      const auto all_plans = shaped[k]->plans(opt.seed);
      for (std::size_t i = 0; i < n; ++i) {
        if (choice.major[i] != static_cast<int>(k)) continue;
        plans[i] = all_plans[i];
        summary.compactions += shaped[k]->script_compactions[i];
        summary.truncations += shaped[k]->script_truncations[i];
      }
    }
    if (opt.speed != replay_speed::recorded) note_extrapolation(tg, entries, choice, shaped, summary);
    note_one_lifetime(tg, entries, choice, shaped, summary);
    if (!std::isnan(rules_date(so.start_unix_s))) note_rule_changes(*o, so.start_unix_s, span_s, summary);
    for (auto& t : o->targets) t = target_at(t, rules_date(so.start_unix_s));  // the rules in force at the start
    auto result = run_option(*o, plans, so, true, true);
    result.label = tg.label;
    result.option = o;
    out.options.push_back(std::move(result));
    out.shaping.push_back(std::move(summary));
  }
  return out;
}

} // namespace loopcast
