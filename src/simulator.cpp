#include "loopcast/simulator.hpp"

#include "loopcast/budget.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/rate_limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace loopcast {

namespace {

enum class event_kind : std::uint8_t {
  send,          // the next attempt of the session's current request
  complete,      // the request in flight ends (no engine: its end is known at admission)
  decode_start   // engine: the request's prefill is done, it joins the decoding batch
};

// Engine: a decoding sequence, ordered by the virtual time at which it finishes.
struct decoding {
  double v_end;
  std::uint64_t seq;
  std::uint32_t session;
};
struct finishes_later {
  bool operator()(const decoding& a, const decoding& b) const noexcept {
    return a.v_end > b.v_end || (a.v_end == b.v_end && a.seq > b.seq);
  }
};

struct event {
  double t;
  std::uint64_t seq;
  std::uint32_t session;
  event_kind kind;
};
// Min-heap on (t, seq): the earliest event first, ties in scheduling order.
struct later {
  bool operator()(const event& a, const event& b) const noexcept {
    return a.t > b.t || (a.t == b.t && a.seq > b.seq);
  }
};

struct session_state {
  const session_script* script = nullptr;
  std::uint32_t shared_base = 0;   // global id of the script's lineage 0
  std::uint32_t private_base = 0;  // global id of the script's first private lineage
  std::size_t next = 0;        // index of the request being sent
  std::int32_t attempt = 0;    // attempts of the current request so far
  rng g;
  // The request in flight.
  double t_admit = 0, t_first = 0;
  token_counts tokens;
  std::array<double, max_buckets> at_completion{};
  std::array<std::uint64_t, max_buckets> seq{};
  std::array<std::size_t, max_buckets> log_index{};
  double cost = 0;
  // Engine: the single-request prefill and decode times, the KV tokens reserved, the timeline row.
  double prefill_s = 0, decode_work_s = 0;
  std::int64_t kv_tokens = 0;
  std::size_t attempt_row = 0;
  session_result res;
};

constexpr std::int32_t max_attempts_per_request = 1'000'000;

// The simulator checks what it is given before its loop instead of trusting its callers: every
// time finite and within bounds (so no sum of times can overflow to infinity), every count
// within the token cap, every prefix run within its script, and the run within the caps and
// the memory budget (budget.hpp).
constexpr double max_start_s = 2e11;        // a session's start (logs: times within ±10^11 s)
constexpr double max_delay_s = 1e7;         // agent time before a request
constexpr std::int64_t max_tokens_count = 10'000'000'000'000;  // 10^13
constexpr std::uint64_t max_lineages = std::uint64_t{1} << 31;

// A request's times under the target's speed noise (a log-normal factor per request).
request_timing noisy(request_timing t, const speed_model& m, rng& g) noexcept {
  const double f = m.noise_median * std::exp(m.noise_sigma * standard_normal(g));
  return {t.ttft_s * f, t.decode_s * f};
}

void check_plans(const target& tgt, std::span<const session_plan> plans, const sim_options& opt) {
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
  z.buckets = static_cast<std::int64_t>(tgt.limits.size());
  z.scripts = false;
  z.record_attempts = opt.record_attempts;
  z.record_charges = opt.record_charges;
  check_run_size(z, "simulation on", tgt.name);
}

} // namespace

std::pair<double, double> peak_window_demand(std::span<const charge_event> log, double period_s) {
  double best = 0, best_start = 0, sum = 0;
  std::size_t lo = 0;
  for (std::size_t hi = 0; hi < log.size(); ++hi) {
    sum += log[hi].amount;
    while (log[lo].t + period_s <= log[hi].t) sum -= log[lo++].amount;
    if (sum > best) {
      best = sum;
      best_start = log[lo].t;
    }
  }
  return {best, best_start};
}

simulation_result simulate(const target& tgt, const retry_policy& client,
                           std::span<const session_plan> plans, const sim_options& opt) {
  const std::size_t nb = tgt.limits.size();
  if (nb > max_buckets)
    throw simulation_error(fmt::format("target {} has {} buckets; at most {} are supported",
                                       tgt.name, nb, max_buckets));
  // A concurrency bucket releases a request at its end, known at admission; with an engine it is not.
  if (tgt.engine)
    for (const auto& b : tgt.limits)
      if (b.algorithm == bucket_algorithm::concurrency)
        throw simulation_error(fmt::format("target {} has an engine and a concurrency bucket ({}); the engine's "
                                           "max_sequences limits requests in flight", tgt.name, b.name));

  check_plans(tgt, plans, opt);

  // ---- set-up: lineage ids, sessions, buckets, cache (the only allocations) ----------------
  std::vector<session_state> ss;
  ss.reserve(plans.size());
  std::vector<std::uint32_t> family_base, family_size;
  std::size_t total_requests = 0, max_runs = 0;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& p = plans[i];
    if (p.family >= family_size.size()) family_size.resize(p.family + 1, 0);
    family_size[p.family] = std::max(family_size[p.family], p.script->shared_lineages);
    total_requests += p.script->requests.size();
    for (const auto& r : p.script->requests) max_runs = std::max<std::size_t>(max_runs, r.runs_count);
  }
  std::uint32_t lineages = 0;
  family_base.resize(family_size.size());
  for (std::size_t f = 0; f < family_size.size(); ++f) {
    family_base[f] = lineages;
    lineages += family_size[f];
  }
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& p = plans[i];
    session_state s;
    s.script = p.script;
    s.shared_base = family_base[p.family];
    s.private_base = lineages;
    s.g.seed(p.seed);
    lineages += p.script->lineages - p.script->shared_lineages;
    s.res.requests_total = static_cast<std::int32_t>(p.script->requests.size());
    s.res.outcome = session_outcome::completed;
    ss.push_back(std::move(s));
  }

  // The target's speed noise draws from its own stream per session (the client's jitter is
  // unchanged); seeded only when the target has noise (seeding a generator is not free).
  const bool has_noise = !opt.recorded_speed && (tgt.speed.noise_sigma > 0 || tgt.speed.noise_median != 1);
  std::vector<rng> noise_g;
  if (has_noise) {
    noise_g.reserve(plans.size());
    for (const auto& p : plans) noise_g.emplace_back(derive_seed(p.seed, 0x6e6f697365));
  }

  std::vector<bucket> buckets;
  buckets.reserve(nb);
  for (const auto& b : tgt.limits) buckets.emplace_back(b, opt.start_unix_s);
  prefix_cache cache(tgt.cache, lineages);
  std::vector<prefix_run> runs(std::max<std::size_t>(max_runs, 1));

  simulation_result out;
  out.requests.reserve(total_requests);
  out.sessions.resize(plans.size());
  std::vector<std::vector<charge_event>> log(nb);
  for (auto& l : log) l.reserve(total_requests + 16);
  if (opt.record_attempts) {
    out.attempts.reserve(total_requests + total_requests / 4 + 16);
    out.bucket_levels.reserve((total_requests + total_requests / 4 + 16) * nb);
  }
  out.buckets.resize(nb);
  for (std::size_t b = 0; b < nb; ++b)
    out.buckets[b] = {tgt.limits[b].name, tgt.limits[b].limit, tgt.limits[b].period_s, 0, 0, 0};

  std::vector<event> heap;
  heap.reserve(plans.size() + 1);
  std::uint64_t seq = 0;
  auto schedule = [&](double t, std::uint32_t s, event_kind k) {
    heap.push_back({t, seq++, s, k});
    std::push_heap(heap.begin(), heap.end(), later{});
  };
  for (std::uint32_t i = 0; i < plans.size(); ++i) {
    const auto& script = *ss[i].script;
    if (script.requests.empty()) {
      ss[i].res.start_s = ss[i].res.end_s = plans[i].start_s;
      continue;
    }
    schedule(plans[i].start_s + script.requests[0].delay_before_s, i, event_kind::send);
  }

  // Engine state (a local engine that batches; see engine.hpp).
  const engine_config* eng = tgt.engine && !opt.recorded_speed ? &*tgt.engine : nullptr;
  const std::int64_t kv_pool = eng ? kv_pool_tokens(eng->memory) : 0;
  std::vector<decoding> batch;            // sequences decoding, min-heap on virtual end time
  std::vector<std::uint32_t> waiting;     // first-come queue of admitted requests (a ring)
  std::size_t wait_head = 0, wait_count = 0;
  std::int64_t eng_sequences = 0, eng_kv = 0;
  double prefill_free_at = 0, vclock = 0, vclock_t = 0;
  engine_stats est;
  if (eng) {
    batch.reserve(plans.size());
    waiting.resize(std::max<std::size_t>(plans.size(), 1));
    est.vram_gb = engine_vram_gb(eng->memory);
  }
  auto advance_vclock = [&](double t) {
    if (t > vclock_t) {
      vclock += (t - vclock_t) * decode_share(*eng, static_cast<std::int64_t>(batch.size()));
      vclock_t = t;
    }
  };

  std::int64_t in_flight = 0;
  double busy_since = 0;
  token_counts admitted;  // tokens of every request admitted so far
  bool started_any = false;
  double first_send = 0, last_end = 0;
  const bool priced = tgt.prices.has_value();

  auto record_attempt = [&](const attempt_record& a, double t) {
    if (!opt.record_attempts) return;
    out.attempts.push_back(a);
    for (std::size_t b = 0; b < nb; ++b) out.bucket_levels.push_back(buckets[b].used(t));
  };
  auto finish = [&](session_state& s, session_outcome o, double t) {
    s.res.outcome = o;
    s.res.end_s = t;
    if (o != session_outcome::completed) s.res.stop_request = static_cast<std::int32_t>(s.next + 1);
    last_end = std::max(last_end, t);
  };
  // The client would retry a request that is never admitted forever.
  const bool retries_forever = client.max_retries < 0;

  // The request of session `si` completes at t: late charges and refunds, the next request.
  auto complete = [&](std::uint32_t si, double t) {
    session_state& s = ss[si];
    for (std::size_t b = 0; b < nb; ++b) {
      const double d = s.at_completion[b];
      if (d == 0.0) continue;
      buckets[b].adjust(d, t, s.t_admit, s.seq[b]);
      if (d < 0) log[b][s.log_index[b]].amount += d;
      else log[b].push_back({t, d});
    }
    if (--in_flight == 0) out.busy_s += t - busy_since;
    out.requests.push_back({si, s.t_admit, s.t_first, t, s.tokens.prompt(), s.tokens.cache_read, s.tokens.generated()});
    ++s.res.requests_served;
    s.res.tokens += s.tokens;
    s.res.cost_usd += s.cost;
    last_end = std::max(last_end, t);
    if (++s.next == s.script->requests.size()) {
      finish(s, session_outcome::completed, t);
    } else {
      s.attempt = 0;
      schedule(t + s.script->requests[s.next].delay_before_s, si, event_kind::send);
    }
  };
  // The session's current request as lineage runs of the cache (in `runs`).
  auto runs_of = [&](const session_state& s) {
    const auto script_runs = s.script->runs_of(s.script->requests[s.next]);
    for (std::size_t r = 0; r < script_runs.size(); ++r) {
      const auto id = script_runs[r].lineage;
      runs[r] = {id < s.script->shared_lineages ? s.shared_base + id
                                                : s.private_base + (id - s.script->shared_lineages),
                 script_runs[r].end_tokens};
    }
    return std::span<const prefix_run>(runs.data(), script_runs.size());
  };
  // Engine: the request of session `si` gets a slot at t; its prefill queues behind the others'.
  auto engine_start = [&](std::uint32_t si, double t) {
    session_state& s = ss[si];
    ++eng_sequences;
    eng_kv += s.kv_tokens;
    est.peak_sequences = std::max(est.peak_sequences, static_cast<std::int32_t>(eng_sequences));
    est.peak_kv_tokens = std::max(est.peak_kv_tokens, eng_kv);
    const double begin = std::max(t, prefill_free_at);
    s.t_first = begin + s.prefill_s;
    prefill_free_at = s.t_first;
    est.queue_wait_s += begin - s.t_admit;
    cache.touch(runs_of(s), s.script->requests[s.next].prompt_tokens, s.t_first);
    if (opt.record_attempts) out.attempts[s.attempt_row].t_first_token = s.t_first;
    schedule(s.t_first, si, event_kind::decode_start);
  };
  auto engine_fits = [&](std::uint32_t si) {
    return eng_sequences < eng->max_sequences && eng_kv + ss[si].kv_tokens <= kv_pool;
  };
  // Engine: the earliest decoding sequence ends; free its slot and KV, let the queue in.
  auto engine_finish = [&](double t) {
    advance_vclock(t);
    std::pop_heap(batch.begin(), batch.end(), finishes_later{});
    const std::uint32_t si = batch.back().session;
    batch.pop_back();
    --eng_sequences;
    eng_kv -= ss[si].kv_tokens;
    if (opt.record_attempts) out.attempts[ss[si].attempt_row].t_end = t;
    complete(si, t);
    while (wait_count > 0 && engine_fits(waiting[wait_head])) {
      const std::uint32_t next = waiting[wait_head];
      wait_head = (wait_head + 1) % waiting.size();
      --wait_count;
      engine_start(next, t);
    }
  };

  // ---- the event loop ------------------------------------------------------------------------
  for (;;) {
    // The engine's next completion competes with the queued events (it wins ties).
    if (!batch.empty()) {
      const double share = decode_share(*eng, static_cast<std::int64_t>(batch.size()));
      const double t_done = vclock_t + std::max(0.0, batch.front().v_end - vclock) / share;
      if (heap.empty() || t_done <= heap.front().t) {
        engine_finish(t_done);
        continue;
      }
    }
    if (heap.empty()) break;
    std::pop_heap(heap.begin(), heap.end(), later{});
    const event ev = heap.back();
    heap.pop_back();
    session_state& s = ss[ev.session];
    const double t = ev.t;
    const request_spec& req = s.script->requests[s.next];

    if (ev.kind == event_kind::complete) {
      complete(ev.session, t);
      continue;
    }
    if (ev.kind == event_kind::decode_start) {
      advance_vclock(t);
      batch.push_back({vclock + s.decode_work_s, seq++, ev.session});
      std::push_heap(batch.begin(), batch.end(), finishes_later{});
      continue;
    }

    // A send: split the prompt by the cache.
    if (!started_any || t < first_send) first_send = t;
    if (s.res.attempts == 0) s.res.start_s = t;
    started_any = true;
    ++s.res.attempts;
    const std::span<const prefix_run> rs = runs_of(s);
    const std::int64_t cached = cache.lookup(rs, req.prompt_tokens, t);
    token_counts tk;
    tk.cache_read = cached;
    tk.cache_write = tgt.cache.write_charged ? std::max<std::int64_t>(0, cache.cacheable(req.prompt_tokens) - cached) : 0;
    tk.input = req.prompt_tokens - cached - tk.cache_write;
    tk.output = req.output_tokens;
    tk.reasoning = req.reasoning_tokens;

    attempt_record a;
    a.session = ev.session;
    a.request = static_cast<std::int32_t>(s.next + 1);
    a.turn = req.turn;
    a.attempt = s.attempt;
    a.compaction = req.compaction;
    a.t_send = a.t_first_token = a.t_end = t;
    a.tokens = tk;

    if (tk.total() > tgt.context_window_tokens) {
      a.status = attempt_status::context_overflow;
      record_attempt(a, t);
      finish(s, session_outcome::context_overflow, t);
      s.res.stop_need = static_cast<double>(tk.total());
      s.res.stop_capacity = static_cast<double>(tgt.context_window_tokens);
      continue;
    }

    // Admission: every bucket must take its admission charge now.
    std::array<bucket_charge, max_buckets> charge{};
    double wait = 0;
    std::int16_t worst = -1;
    bool too_large = false;
    for (std::size_t b = 0; b < nb; ++b) {
      charge[b] = charge_for(tgt.limits[b], tk, req.max_tokens);
      const double w = buckets[b].wait_for(charge[b].at_admission, t);
      if (w == bucket::never) {
        too_large = true;
        worst = static_cast<std::int16_t>(b);
        break;
      }
      if (w > wait) {
        wait = w;
        worst = static_cast<std::int16_t>(b);
      }
    }
    bool refused_forever = false;  // oversize rule rate_limited: a 429 now and on every retry
    if (too_large) {
      const auto bi = static_cast<std::size_t>(worst);
      s.res.stop_bucket = worst;
      s.res.stop_need = charge[bi].at_admission;
      s.res.stop_capacity = tgt.limits[bi].limit;
      s.res.stop_never_admitted = true;
      if (tgt.limits[bi].oversize != oversize_rule::rate_limited) {
        a.status = attempt_status::too_large;
        a.refused_by = worst;
        record_attempt(a, t);
        finish(s, session_outcome::request_too_large, t);
        continue;
      }
      refused_forever = true;
      wait = tgt.limits[bi].period_s;
    }
    if (wait > 0) {  // HTTP 429
      ++s.res.rate_limited;
      ++out.buckets[static_cast<std::size_t>(worst)].refusals;
      if (!out.first_429) {
        first_429_info f;
        f.session = ev.session;
        f.request = a.request;
        f.time_s = t;
        f.bucket = worst;
        f.retry_after_s = wait;
        f.sent_before = admitted;
        f.buckets.resize(nb);
        for (std::size_t b = 0; b < nb; ++b) {
          f.buckets[b].used = buckets[b].used(t);
          double demand = 0;
          for (auto it = log[b].rbegin(); it != log[b].rend() && it->t > t - tgt.limits[b].period_s; ++it)
            demand += it->amount;
          f.buckets[b].window_demand = demand;
        }
        out.first_429 = std::move(f);
      }
      a.status = attempt_status::rate_limited;
      a.refused_by = worst;
      a.retry_after_s = tgt.sends_retry_after ? wait : -1.0;
      const retry_decision d = decide_retry(client, s.attempt, a.retry_after_s, s.g);
      a.wait_s = d.retry ? d.wait_s : 0.0;
      record_attempt(a, t);
      for (std::size_t b = 0; b < nb; ++b)
        if (tgt.limits[b].count_rejected) {
          buckets[b].charge(1.0, t, t);
          log[b].push_back({t, 1.0});
        }
      if (!d.retry || (refused_forever && retries_forever)) {
        if (!refused_forever) {
          s.res.stop_bucket = worst;
          const auto bi = static_cast<std::size_t>(worst);
          s.res.stop_need = charge[bi].at_admission;
          s.res.stop_capacity = tgt.limits[bi].limit;
        }
        // A request that is never admitted, from a client that never gives up, would retry forever.
        finish(s, d.retry ? session_outcome::request_too_large : session_outcome::died_after_retries, t);
        continue;
      }
      if (++s.attempt >= max_attempts_per_request)
        throw simulation_error(fmt::format(
            "session {} request {}: {} attempts without admission; the retry policy {} never gives up "
            "and the target never admits it", ev.session, a.request, s.attempt, client.name));
      s.res.stall_s += d.wait_s;
      schedule(t + d.wait_s, ev.session, event_kind::send);
      continue;
    }

    // Served. With an engine the times depend on the other requests and are filled in later.
    const request_timing tm =
        opt.recorded_speed
            ? request_timing{std::max(0.0, static_cast<double>(req.recorded_ttft_s)),
                             std::max(0.0, static_cast<double>(req.recorded_duration_s) -
                                               std::max(0.0, static_cast<double>(req.recorded_ttft_s)))}
        : has_noise ? noisy(time_request(tgt.speed, cached, req.prompt_tokens - cached, tk.generated()), tgt.speed,
                            noise_g[ev.session])
                    : time_request(tgt.speed, cached, req.prompt_tokens - cached, tk.generated());
    const double t_first = t + tm.ttft_s;
    const double t_end = eng ? bucket::never : t_first + tm.decode_s;
    a.t_first_token = eng ? t : t_first;
    a.t_end = eng ? t : t_end;
    if (priced) {
      const request_cost c = price_request(*tgt.prices, tk, opt.start_unix_s + t, opt.batch, tgt.cache.write_1h);
      a.cost_usd = c.total_usd;
      if (tgt.prices->cache_storage_usd_per_million_hour > 0 && tgt.cache.enabled) {
        const auto fresh = std::max<std::int64_t>(0, cache.cacheable(req.prompt_tokens) - cached);
        const double storage = static_cast<double>(fresh) * (tgt.cache.ttl_s / 3600.0) *
                               tgt.prices->cache_storage_usd_per_million_hour / 1e6;
        a.cost_usd += storage;
        out.cache_storage_usd += storage;
        out.token_cost_usd += storage;
      }
      for (std::size_t k = 0; k < token_class_count; ++k) out.cost_by_class_usd[k] += c.by_class_usd[k];
      out.token_cost_usd += c.total_usd;
    }
    s.attempt_row = out.attempts.size();
    record_attempt(a, t);  // bucket levels as the request found them, before its own charge
    for (std::size_t b = 0; b < nb; ++b) {
      s.seq[b] = buckets[b].charge(charge[b].at_admission, t, t_end);
      s.at_completion[b] = charge[b].at_completion;
      s.log_index[b] = log[b].size();
      log[b].push_back({t, charge[b].at_admission});
      if (tgt.limits[b].algorithm == bucket_algorithm::concurrency)  // peak = most in flight
        out.buckets[b].peak_demand = std::max(out.buckets[b].peak_demand, buckets[b].used(t));
    }
    s.t_admit = t;
    s.tokens = tk;
    s.cost = a.cost_usd;
    admitted += tk;
    if (in_flight++ == 0) busy_since = t;
    if (eng) {
      s.prefill_s = tm.ttft_s;
      s.decode_work_s = tm.decode_s;
      s.kv_tokens = tk.total();
      if (s.kv_tokens > kv_pool)
        throw simulation_error(fmt::format(
            "session {} request {}: {} tokens need {:.2f} GB of KV cache; the {} engine's pool holds {} tokens ({} GB)",
            ev.session, a.request, s.kv_tokens, static_cast<double>(s.kv_tokens) * eng->memory.kv_bytes_per_token / 1e9,
            eng->name, kv_pool, eng->memory.kv_pool_gb));
      if (wait_count == 0 && engine_fits(ev.session)) {
        engine_start(ev.session, t);
      } else {
        waiting[(wait_head + wait_count) % waiting.size()] = ev.session;
        ++wait_count;
        est.peak_queue = std::max(est.peak_queue, static_cast<std::int32_t>(wait_count));
      }
      continue;
    }
    cache.touch(rs, req.prompt_tokens, t_first);  // cached once its prefill is done; TTL from then
    s.t_first = t_first;
    schedule(t_end, ev.session, event_kind::complete);
  }

  // ---- summaries ---------------------------------------------------------------------------
  for (std::size_t i = 0; i < ss.size(); ++i) {
    out.sessions[i] = ss[i].res;
    out.tokens += ss[i].res.tokens;
  }
  out.wall_s = started_any ? last_end - first_send : 0.0;
  for (std::size_t b = 0; b < nb; ++b) {
    if (tgt.limits[b].algorithm == bucket_algorithm::concurrency) continue;
    const auto [peak, start] = peak_window_demand(log[b], tgt.limits[b].period_s);
    out.buckets[b].peak_demand = peak;
    out.buckets[b].peak_window_start_s = start;
  }
  if (opt.record_charges) out.charges = std::move(log);
  if (eng) {
    est.peak_kv_gb = static_cast<double>(est.peak_kv_tokens) * eng->memory.kv_bytes_per_token / 1e9;
    out.engine = est;
  }
  out.cost_usd = out.token_cost_usd;
  if (tgt.power) {
    out.energy = local_cost(*tgt.power, out.busy_s, out.wall_s);
    out.cost_usd += out.energy->total_usd();
  }
  return out;
}

} // namespace loopcast
