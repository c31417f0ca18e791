// The next wall of a running session (forecast.hpp): the log so far and resampled continuations,
// replayed on the target.
#include "loopcast/forecast.hpp"

#include "loopcast/context.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/limits/level_curve.hpp"
#include "loopcast/metrics.hpp"
#include "loopcast/random.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/simulation.hpp"

#include "study/forecast_parts.hpp"
#include "study/recorded.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace loopcast {

namespace detail {

void check_forecast_options(const forecast_options& opt) {
  if (opt.draws < 1 || opt.draws > 100'000)
    throw std::invalid_argument(fmt::format("draws must be from 1 to 100,000, not {}", opt.draws));
  if (!(opt.horizon_s > 0) || !(opt.horizon_s <= 366 * 86400.0))
    throw std::invalid_argument(fmt::format("the horizon must be more than 0 s and at most 366 days, not {} s", opt.horizon_s));
  if (opt.recent_requests < 1 || opt.recent_requests > 1'000'000)
    throw std::invalid_argument(fmt::format("recent_requests must be from 1 to 1,000,000, not {}", opt.recent_requests));
  if (opt.block_requests < 1 || opt.block_requests > 1'000'000)
    throw std::invalid_argument(fmt::format("block_requests must be from 1 to 1,000,000, not {}", opt.block_requests));
  if (!(opt.pace_sigma >= 0 && opt.pace_sigma <= 5))
    throw std::invalid_argument(fmt::format("pace_sigma must be from 0 to 5, not {}", opt.pace_sigma));
  if (opt.work_budget < 1 || opt.work_budget > 10'000'000'000)
    throw std::invalid_argument(fmt::format("the work budget must be from 1 to 10^10 requests, not {}", opt.work_budget));
}

forecast_replay::forecast_replay(const recorded_trace& trace, const target& tgt, const forecast_options& opt)
    : tgt_(tgt), no_retry_() {
  no_retry_.name = "gives up at the first 429";
  no_retry_.max_retries = 0;
  waits_.name = "waits for each window to reset";
  waits_.max_retries = -1;
  waits_.honour_retry_after = true;
  const retry_policy agent = opt.agent.value_or(retry_policy{});
  shaping_.agent_max_tokens = agent.agent_max_tokens > 0 ? agent.agent_max_tokens : 32000;
  shaping_.max_output_tokens = tgt.max_output_tokens;
  shaping_.window_tokens = tgt.context_window_tokens;
  shaping_.policy = context_policy::compact;
  shaping_.compact_at = agent.agent_compact_at > 0 ? agent.agent_compact_at : default_compact_at;
  shaping_.compact_reserve_tokens = agent.agent_compact_reserve_tokens;
  origin_ = std::numeric_limits<double>::infinity();
  for (const auto& s : trace.sessions)
    if (!s.requests.empty()) origin_ = std::min(origin_, s.requests.front().t_send);
  if (!std::isfinite(origin_)) origin_ = 0;
  // The rules in force at the log's start, and their changes after it (a relative clock has no
  // date: the preset's own limits).
  tgt_ = trace.absolute_clock ? target_at(tgt, origin_) : target_at(tgt, std::numeric_limits<double>::quiet_NaN());
}

std::vector<recorded_trace> forecast_replay::input(const recorded_trace& t) {
  std::vector<recorded_trace> one{t};
  if (one.front().models.empty()) one.front().models.push_back("unknown");  // (a trace built by hand)
  return one;
}

simulation_result forecast_replay::run(const std::vector<recorded_trace>& one, bool timeline,
                                       std::int64_t& simulated, bool wait_out) const {
  const auto& t = one.front();
  const auto sessions = make_replay_sessions(one, shaping_);
  const auto plans = sessions.plans(1);
  simulated += static_cast<std::int64_t>(t.request_count());  // (a compaction counts with its request)
  sim_options so;
  so.recorded_speed = true;
  so.record_attempts = timeline || wait_out;
  so.record_charges = false;
  so.peak_demand = false;
  so.start_unix_s = t.absolute_clock ? origin_ : 0.0;
  auto r = simulate(tgt_, wait_out ? waits_ : no_retry_, plans, so);
  throw_if_interrupted();  // (each draw: a forecast of 10^5 draws stops within one)
  return r;
}

// The recent requests of the trace (by send), each as a step of its session: its prompt growth
// over the previous request (0 after a restart: a compaction or new context), output, reasoning,
// the agent time before it and its duration.
std::vector<continuation_step> recent_steps(const recorded_trace& t, std::int32_t recent) {
  struct at {
    double t_send;
    const recorded_request* prev;
    const recorded_request* r;
  };
  std::vector<at> all;
  for (const auto& s : t.sessions)
    for (std::size_t i = 0; i < s.requests.size(); ++i)
      all.push_back({s.requests[i].t_send, i > 0 ? &s.requests[i - 1] : nullptr, &s.requests[i]});
  std::stable_sort(all.begin(), all.end(), [](const at& a, const at& b) { return a.t_send < b.t_send; });
  const std::size_t n = all.size();
  const std::size_t first = n - std::min<std::size_t>(n, static_cast<std::size_t>(recent));
  std::vector<continuation_step> steps;
  for (std::size_t k = first; k < n; ++k) {
    const auto& [ts, prev, r] = all[k];
    if (!prev) continue;  // a session's first request: no step to it
    continuation_step s;
    const bool restarted = r->compaction || context_restarts(*prev, *r);
    s.growth = restarted ? 0 : std::max<std::int64_t>(0, r->tokens.prompt() - prev->tokens.prompt());
    s.output = r->tokens.output;
    s.reasoning = r->tokens.reasoning;
    s.delay_s = agent_delay(*prev, *r);
    s.duration_s = std::isfinite(r->t_end) ? std::max(0.0, r->t_end - r->t_send) : 0.0;
    s.uncached = r->tokens.input;
    const std::int64_t shared = std::min(prev->tokens.prompt(), r->tokens.prompt());
    s.read_share = shared > 0 ? std::min(1.0, static_cast<double>(r->tokens.cache_read) / static_cast<double>(shared)) : 0.0;
    s.write_1h = r->tokens.cache_write_1h > 0;
    steps.push_back(s);
  }
  return steps;
}

// The session that sent last, and its last request.
std::size_t active_session(const recorded_trace& t) {
  std::size_t best = 0;
  double last = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < t.sessions.size(); ++i)
    if (!t.sessions[i].requests.empty() && t.sessions[i].requests.back().t_send >= last) {
      last = t.sessions[i].requests.back().t_send;
      best = i;
    }
  return best;
}

void append_continuation(recorded_trace& t, std::size_t session, std::span<const continuation_step> steps, rng& g,
                         std::size_t count, double stop_at, const continuation_shape& shape) {
  auto& reqs = t.sessions[session].requests;
  bool reads = false;  // the log records cache reads (else every continued prompt is uncached, as recorded)
  for (const auto& q : reqs) reads = reads || q.tokens.cache_read > 0;
  const double pace = shape.pace_sigma > 0 ? std::exp(shape.pace_sigma * standard_normal(g)) : 1.0;
  const auto block = static_cast<std::size_t>(std::max(1, shape.block));
  std::size_t at = 0, left = 0;  // the block being taken: its next step, and how many remain
  for (std::size_t i = 0; i < count; ++i) {
    if (left == 0) {
      at = static_cast<std::size_t>(uniform01(g) * static_cast<double>(steps.size()));
      left = block;
    }
    const auto& s = steps[at];
    at = (at + 1) % steps.size();
    --left;
    const recorded_request prev = reqs.back();
    recorded_request q;
    const double prev_end = std::isfinite(prev.t_end) ? prev.t_end : prev.t_send;
    q.delay_before_s = std::min(s.delay_s * pace, 1e7);  // (the longest agent time a script may hold)
    q.t_send = prev_end + q.delay_before_s;
    q.t_end = q.t_send + s.duration_s;
    const std::int64_t prompt = prev.tokens.prompt() + s.growth;
    if (t.has_prefix || !reads) {
      q.tokens.input = prompt;  // the prefix runs (or no cache at all) decide what it reads
    } else {
      // It reads what the previous request left in the cache, as the step did (a break where the
      // step's client broke it), and writes its growth.
      q.tokens.cache_read = static_cast<std::int64_t>(std::llround(s.read_share * static_cast<double>(prev.tokens.prompt())));
      q.tokens.input = std::min(s.uncached, prompt - q.tokens.cache_read);
      (s.write_1h ? q.tokens.cache_write_1h : q.tokens.cache_write) = prompt - q.tokens.cache_read - q.tokens.input;
    }
    q.tokens.output = s.output;
    q.tokens.reasoning = s.reasoning;
    q.model = prev.model;
    if (t.has_prefix) {
      // The prompt extends the previous one: its runs, the last one longer.
      q.runs_begin = static_cast<std::uint32_t>(t.runs.size());
      q.runs_count = prev.runs_count;
      for (std::uint32_t k = 0; k < prev.runs_count; ++k) t.runs.push_back(t.runs[prev.runs_begin + k]);
      if (q.runs_count > 0) t.runs.back().end_tokens = std::max(t.runs.back().end_tokens, q.tokens.prompt());
    }
    reqs.push_back(q);
    if (q.t_send > stop_at) break;
  }
}

double crps_of(std::vector<double> x, double y) {
  if (x.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double abs_err = 0, spread = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    abs_err += std::abs(x[i] - y);
    // Σ_i Σ_j |x_i − x_j| = 2 Σ_i (2i − n + 1) x_(i) over the sorted members.
    spread += (2.0 * static_cast<double>(i) - n + 1.0) * x[i];
  }
  return abs_err / n - spread / (n * n);
}

} // namespace detail

double ensemble_crps(std::vector<double> members, double y, double cap) {
  for (auto& x : members)
    if (!(x <= cap)) x = cap;
  return detail::crps_of(std::move(members), y);
}

recorded_trace cut_trace(const recorded_trace& trace, std::size_t requests) {
  std::vector<double> sends;
  for (const auto& s : trace.sessions)
    for (const auto& q : s.requests) sends.push_back(q.t_send);
  std::sort(sends.begin(), sends.end());
  recorded_trace t = trace;
  if (requests >= sends.size()) return t;
  // Every request sent before the cut's instant, and as many sent at it as the count leaves.
  const double at = requests == 0 ? -std::numeric_limits<double>::infinity() : sends[requests - 1];
  std::size_t at_instant = 0;
  for (std::size_t k = 0; k < requests; ++k) at_instant += sends[k] == at ? 1 : 0;
  for (auto& s : t.sessions) {
    std::vector<recorded_request> kept;
    for (const auto& q : s.requests) {
      if (q.t_send < at) kept.push_back(q);
      else if (q.t_send == at && at_instant > 0) {
        kept.push_back(q);
        --at_instant;
      }
    }
    s.requests = std::move(kept);
  }
  return t;  // (a session left empty stays, so that subagents keep their parent's index)
}

wall_forecast forecast_next_wall(const recorded_trace& trace, const target& tgt, const forecast_options& opt) {
  detail::check_forecast_options(opt);
  detail::refuse_totals_only(trace);
  if (trace.request_count() == 0) throw trace_error(trace.file, 0, "no request to forecast from");
  for (const auto& b : tgt.limits)
    if (b.limit_unpublished)
      throw simulation_error(fmt::format("target {}: bucket {} has no published limit; set it with --limit {}=N "
                                         "(docs/plans.md)", tgt.name, b.name, b.name));
  const detail::forecast_replay replay(trace, tgt, opt);
  wall_forecast f;
  f.log = trace.file;
  f.requests = static_cast<std::int64_t>(trace.request_count());
  f.absolute_clock = trace.absolute_clock;
  const auto n = static_cast<std::int64_t>(trace.request_count());
  if (n >= opt.work_budget / opt.draws)
    throw std::invalid_argument(fmt::format("{}: each of {} draws replays the log's {} requests, and the work budget of "
                                            "{} requests leaves no room to continue them: give fewer draws or a "
                                            "larger budget", trace.file, opt.draws, n, opt.work_budget));

  // The log so far: where each bucket stands after the last send, and whether it was refused.
  double last_send = -std::numeric_limits<double>::infinity();
  for (const auto& s : trace.sessions)
    for (const auto& q : s.requests) last_send = std::max(last_send, q.t_send);
  f.last_send_s = last_send;
  const double cut = last_send - replay.origin();
  const auto so_far = replay.run(trace, true, f.requests_simulated);
  const double just_after = std::nextafter(cut, std::numeric_limits<double>::infinity());
  for (std::size_t b = 0; b < replay.tgt().limits.size(); ++b) {
    const auto& cfg = replay.tgt().limits[b];
    // The wait for a whole limit's room is the wait until the bucket is empty.
    const double limit = cfg.limit_at(so_far.start_unix_s + just_after);
    const auto now = replay_level_and_wait(bucket(cfg, so_far.start_unix_s), so_far.bucket_ops, b, just_after, limit);
    const double reset = now.used > 0 && std::isfinite(now.wait_s) ? std::max(0.0, now.wait_s) : 0.0;
    f.buckets.push_back({cfg.name, now.used, limit, cfg.period_s, reset, std::nullopt});
  }
  if (tgt.limits.empty()) return f;
  if (so_far.first_429) {
    f.refused_at_s = so_far.first_429->time_s + replay.origin();
    f.refused_by = so_far.first_429->bucket_name;
    f.p10_s = f.p50_s = f.p90_s = 0;
    f.hit_share = 1;
    f.bucket = f.refused_by;
    return f;
  }

  const auto steps = detail::recent_steps(trace, opt.recent_requests);
  f.steps = static_cast<std::int32_t>(steps.size());
  if (steps.empty()) return f;  // one request per session: no pace to go on from
  double gaps = 0, growth = 0;
  for (const auto& s : steps) {
    gaps += s.delay_s + s.duration_s;
    growth += static_cast<double>(s.growth);
  }
  f.gap_s = gaps / static_cast<double>(steps.size());
  f.growth_per_request = growth / static_cast<double>(steps.size());
  if (!(f.gap_s > 0)) {  // every send at once, each ending as it began: no pace to go on from either
    f.steps = 0;
    return f;
  }
  f.draws = opt.draws;  // only now are there draws (the JSON's "draws": 0 before)

  const std::size_t active = detail::active_session(trace);
  const std::int64_t per_draw = opt.work_budget / opt.draws;  // requests each draw may simulate
  const detail::continuation_shape shape{opt.block_requests, opt.pace_sigma};
  std::vector<double> times, counts, censored;
  std::vector<std::string> wall_buckets;  // (beside times: each wall's bucket)
  std::map<std::string, int> by_bucket;
  const std::size_t nb = replay.tgt().limits.size();
  std::vector<std::vector<double>> bucket_walls(nb), bucket_censored(nb);
  for (std::int32_t d = 0; d < opt.draws; ++d) {
    const auto outcome = detail::run_draw(replay, trace, active, steps, derive_seed(opt.seed, static_cast<std::uint64_t>(d)),
                                          cut, opt.horizon_s, per_draw, shape, f.requests_simulated, opt.each_window);
    for (std::size_t b = 0; b < outcome.buckets.size(); ++b) {
      const auto [kind, after] = outcome.buckets[b];
      if (kind == detail::draw_outcome::wall) bucket_walls[b].push_back(after);
      if (kind == detail::draw_outcome::censored) bucket_censored[b].push_back(after);
    }
    switch (outcome.kind) {
    case detail::draw_outcome::wall:
      times.push_back(outcome.after_s);
      wall_buckets.push_back(outcome.bucket);
      counts.push_back(static_cast<double>(outcome.requests));
      ++by_bucket[outcome.bucket];
      f.draws_s.push_back(outcome.after_s);
      break;
    case detail::draw_outcome::censored:
      censored.push_back(outcome.after_s);
      f.draws_s.push_back(outcome.after_s);
      break;
    case detail::draw_outcome::beyond_horizon: f.draws_s.push_back(std::numeric_limits<double>::infinity()); break;
    }
  }
  const wall_quantiles q = detail::summarise_draws(times, censored, opt.draws);
  f.draws_censored = static_cast<std::int32_t>(censored.size());
  for (double c : censored) f.censored_at_s = std::min(f.censored_at_s, c);
  f.p10_s = q.p10_s;
  f.p50_s = q.p50_s;
  f.p90_s = q.p90_s;
  f.p10_at_least = q.p10_at_least;
  f.p50_at_least = q.p50_at_least;
  f.p90_at_least = q.p90_at_least;
  f.hit_share = q.hit_share;
  if (opt.each_window)
    for (std::size_t b = 0; b < nb; ++b) f.buckets[b].wall = detail::summarise_draws(bucket_walls[b], bucket_censored[b], opt.draws);
  if (!counts.empty()) {
    std::sort(counts.begin(), counts.end());
    f.requests_p50 = sorted_quantile(counts, 0.5);
  }
  // The headline's bucket: that of the draw whose wall is nearest the P50, so that its time and
  // bucket come from the same draws (the mode of the buckets could name one that is rarely first).
  if (std::isfinite(f.p50_s)) {
    double nearest = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < times.size(); ++k)
      if (std::abs(times[k] - f.p50_s) < nearest) {
        nearest = std::abs(times[k] - f.p50_s);
        f.bucket = wall_buckets[k];
      }
  }
  for (const auto& [name, k] : by_bucket) f.first_by.emplace_back(name, static_cast<double>(k) / opt.draws);
  std::stable_sort(f.first_by.begin(), f.first_by.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return f;
}

namespace detail {

draw_outcome run_draw(const forecast_replay& replay, const recorded_trace& trace, std::size_t active,
                      std::span<const continuation_step> steps, std::uint64_t seed, double cut, double horizon_s,
                      std::int64_t per_draw, const continuation_shape& shape, std::int64_t& simulated,
                      bool each_window) {
  const auto n = static_cast<std::int64_t>(trace.request_count());
  const std::size_t recorded = trace.sessions[active].requests.size();
  const std::size_t nb = replay.tgt().limits.size();
  const double stop_at = cut + horizon_s + replay.origin();  // on the log's clock
  draw_outcome out;
  // Continue in growing chunks, replaying the whole each time: the continuation's first requests
  // are the same whatever its length (one stream, drawn in order), and so is the replay of them.
  // The draw's runs together simulate at most per_draw requests. With each_window the client waits
  // out each wall (the run is the same up to the first one) and the draw goes on until every
  // bucket has refused once; a chunk's continuation is then as long in simulated time as the
  // waits make it, so the horizon is judged on the simulated clock.
  std::int64_t spent = 0;
  std::int64_t length = std::min<std::int64_t>(64, per_draw - n);
  bool first_known = false;
  for (;;) {
    auto one = forecast_replay::input(trace);  // the trace, to continue (copied once a chunk)
    rng g(seed);
    append_continuation(one.front(), active, steps, g, static_cast<std::size_t>(length),
                        each_window ? std::numeric_limits<double>::infinity() : stop_at, shape);
    std::int64_t used = 0;
    const auto r = replay.run(one, false, used, each_window);
    spent += used;
    simulated += used;
    const auto& reqs = one.front().sessions[active].requests;
    double reached = reqs.back().t_send - replay.origin() - cut;
    if (each_window) {
      reached = -std::numeric_limits<double>::infinity();  // the simulated clock: waits included
      for (const auto& q : r.requests) reached = std::max(reached, q.t_send - cut);
    }
    if (!first_known && r.first_429 && r.first_429->time_s > cut) {
      first_known = true;
      out.after_s = r.first_429->time_s - cut;
      out.kind = out.after_s > horizon_s ? draw_outcome::beyond_horizon : draw_outcome::wall;
      out.bucket = r.first_429->bucket_name;
      for (std::size_t k = recorded; k < reqs.size(); ++k)  // continued requests sent before it
        if (reqs[k].t_send - replay.origin() < r.first_429->time_s) ++out.requests;
      if (!each_window) return out;
    }
    bool all = first_known;
    if (each_window) {
      // Each bucket's first refusal after the cut (a refusal before it ended the forecast earlier).
      const auto first = first_refusals(r, nb, cut);
      out.buckets.assign(nb, {draw_outcome::beyond_horizon, 0.0});
      for (std::size_t b = 0; b < nb; ++b) {
        if (!std::isfinite(first[b])) {
          all = false;
          continue;
        }
        const double after = first[b] - cut;
        out.buckets[b] = {after > horizon_s ? draw_outcome::beyond_horizon : draw_outcome::wall, after};
      }
      if (all) return out;
    }
    if (reached > horizon_s) {
      return out;  // beyond the horizon (each bucket not met: beyond it too)
    }
    const std::int64_t affordable = per_draw - spent - n;  // the longest next continuation
    if (affordable <= length) {
      if (!first_known) {
        out.kind = draw_outcome::censored;
        out.after_s = reached;
      }
      for (auto& [kind, after] : out.buckets)
        if (kind != draw_outcome::wall) {
          kind = draw_outcome::censored;
          after = reached;
        }
      return out;
    }
    length = std::min(4 * length, affordable);
  }
}

std::vector<double> first_refusals(const simulation_result& r, std::size_t buckets, double after) {
  std::vector<double> first(buckets, std::numeric_limits<double>::infinity());
  for (const auto& a : r.attempts) {
    if (a.refused_by < 0 || a.status == attempt_status::ok || !(a.t_send > after)) continue;
    const auto b = static_cast<std::size_t>(a.refused_by);
    if (b < buckets) first[b] = std::min(first[b], a.t_send);
  }
  return first;
}

wall_quantiles summarise_draws(const std::vector<double>& walls, const std::vector<double>& censored,
                               std::int32_t draws) {
  // Each quantile twice: censored draws at their stop (the earliest the wall can be) and at
  // infinity (the latest); where the two differ, the quantile is known only from below.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> low = walls, high = walls;
  low.insert(low.end(), censored.begin(), censored.end());
  high.resize(walls.size() + censored.size(), inf);
  low.resize(static_cast<std::size_t>(draws), inf);
  high.resize(static_cast<std::size_t>(draws), inf);
  std::sort(low.begin(), low.end());
  std::sort(high.begin(), high.end());
  wall_quantiles out;
  auto q = [&](double p, double& value, bool& at_least) {
    const double lo = sorted_quantile(low, p), hi = sorted_quantile(high, p);
    value = lo;
    at_least = !(lo == hi);
  };
  q(0.1, out.p10_s, out.p10_at_least);
  q(0.5, out.p50_s, out.p50_at_least);
  q(0.9, out.p90_s, out.p90_at_least);
  out.hit_share = static_cast<double>(walls.size()) / static_cast<double>(draws);
  return out;
}

} // namespace detail

} // namespace loopcast
