#include "loopcast/simulator.hpp"

#include "loopcast/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace loopcast {

namespace {

enum class event_kind : std::uint8_t { send, complete };

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
  session_result res;
};

constexpr std::int32_t max_attempts_per_request = 1'000'000;

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

  // ---- set-up: lineage ids, sessions, buckets, cache (the only allocations) ----------------
  std::vector<session_state> ss;
  ss.reserve(plans.size());
  std::vector<std::uint32_t> family_base, family_size;
  std::size_t total_requests = 0, max_runs = 0;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& p = plans[i];
    if (!p.script) throw simulation_error(fmt::format("session {} has no script", i));
    if (!std::isfinite(p.start_s) || p.start_s < 0)
      throw simulation_error(fmt::format("session {} starts at {} s; expected a finite time >= 0", i, p.start_s));
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
    last_end = std::max(last_end, t);
  };

  // ---- the event loop ------------------------------------------------------------------------
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later{});
    const event ev = heap.back();
    heap.pop_back();
    session_state& s = ss[ev.session];
    const double t = ev.t;
    const request_spec& req = s.script->requests[s.next];

    if (ev.kind == event_kind::complete) {
      for (std::size_t b = 0; b < nb; ++b) {
        const double d = s.at_completion[b];
        if (d == 0.0) continue;
        buckets[b].adjust(d, t, s.t_admit, s.seq[b]);
        if (d < 0) log[b][s.log_index[b]].amount += d;
        else log[b].push_back({t, d});
      }
      if (--in_flight == 0) out.busy_s += t - busy_since;
      out.requests.push_back({ev.session, s.t_admit, s.t_first, t, s.tokens.prompt(),
                              s.tokens.cache_read, s.tokens.generated()});
      ++s.res.requests_served;
      s.res.tokens += s.tokens;
      s.res.cost_usd += s.cost;
      last_end = std::max(last_end, t);
      if (++s.next == s.script->requests.size()) {
        finish(s, session_outcome::completed, t);
      } else {
        s.attempt = 0;
        schedule(t + s.script->requests[s.next].delay_before_s, ev.session, event_kind::send);
      }
      continue;
    }

    // A send: split the prompt by the cache.
    if (!started_any || t < first_send) first_send = t;
    if (s.res.attempts == 0) s.res.start_s = t;
    started_any = true;
    ++s.res.attempts;
    const auto script_runs = s.script->runs_of(req);
    for (std::size_t r = 0; r < script_runs.size(); ++r) {
      const auto id = script_runs[r].lineage;
      runs[r] = {id < s.script->shared_lineages ? s.shared_base + id
                                                : s.private_base + (id - s.script->shared_lineages),
                 script_runs[r].end_tokens};
    }
    const std::span<const prefix_run> rs(runs.data(), script_runs.size());
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
    if (too_large) {
      a.status = attempt_status::too_large;
      a.refused_by = worst;
      record_attempt(a, t);
      finish(s, session_outcome::request_too_large, t);
      continue;
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
      if (!d.retry) {
        finish(s, session_outcome::died_after_retries, t);
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

    // Served.
    const request_timing tm = time_request(tgt.speed, cached, req.prompt_tokens - cached, tk.generated());
    const double t_first = t + tm.ttft_s;
    const double t_end = t_first + tm.decode_s;
    a.t_first_token = t_first;
    a.t_end = t_end;
    if (priced) {
      const request_cost c = price_request(*tgt.prices, tk, opt.start_unix_s + t, opt.batch, tgt.cache.write_1h);
      a.cost_usd = c.total_usd;
      for (std::size_t k = 0; k < token_class_count; ++k) out.cost_by_class_usd[k] += c.by_class_usd[k];
      out.token_cost_usd += c.total_usd;
    }
    record_attempt(a, t);  // bucket levels as the request found them, before its own charge
    for (std::size_t b = 0; b < nb; ++b) {
      buckets[b].charge(charge[b].at_admission, t, t_end);
      s.seq[b] = buckets[b].last_charge_seq();
      s.at_completion[b] = charge[b].at_completion;
      s.log_index[b] = log[b].size();
      log[b].push_back({t, charge[b].at_admission});
      if (tgt.limits[b].algorithm == bucket_algorithm::concurrency)  // peak = most in flight
        out.buckets[b].peak_demand = std::max(out.buckets[b].peak_demand, buckets[b].used(t));
    }
    cache.touch(rs, req.prompt_tokens, t_first);  // cached once its prefill is done; TTL from then
    s.t_admit = t;
    s.t_first = t_first;
    s.tokens = tk;
    s.cost = a.cost_usd;
    admitted += tk;
    if (in_flight++ == 0) busy_since = t;
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
  out.cost_usd = out.token_cost_usd;
  if (tgt.power) {
    out.energy = local_cost(*tgt.power, out.busy_s, out.wall_s);
    out.cost_usd += out.energy->total_usd();
  }
  return out;
}

} // namespace loopcast
