// loopcast — the event-driven simulation, as a class a planning tool can extend.
//
// Sessions run against one organisation's buckets, prefix cache and speed. Each session is a
// sequential loop, so it has at most one pending event: "send the next attempt at t", "the
// request in flight ends at t" or (with a local engine) "its prefill is done at t". Events are
// ordered by (time, sequence number), so a run is a pure function of its inputs and seeds.
//
// Per attempt at time t (on_send):
//   1. prompt split: cache_read = prefix-cache hit; input/cache_write = the rest.
//   2. context window: prompt + generated > window → context_overflow, the session ends.
//   3. admission: each bucket's wait for its admission charge; a charge a bucket never admits
//      follows its oversize rule (refuse → request_too_large; rate_limited → a 429 on every
//      attempt); any wait > 0 → a 429 with retry_after = the largest wait (refuse); the client
//      retries or gives up.
//   4. admitted (admit): buckets charged; TTFT and decode from the speed law; the prompt's whole
//      blocks are cached (or refreshed) with expiry t_first_token + ttl; at t_end (on_complete)
//      refunds and late charges apply and the next request is sent after its delay.
//
// The buckets, the speed and the client are template parameters: `simulate()` (below) runs the
// target's own (limits/bucket.hpp, speed.hpp, retry.hpp); `simulate_with()` runs a tool's own
// bucket law (limits/bucket_law.hpp), speed law or client law (below). Everything that can be
// wrong with the input is checked before the loop (detail::check_simulation); the loop itself
// neither throws nor allocates beyond the results it records, whose storage is reserved up front.
//
// This header, like everything it includes, is header-only: a tool that links loopcast::core
// (CMake) or includes <loopcast/core.hpp> simulates without linking the compiled library.
#pragma once

#include "loopcast/budget.hpp"
#include "loopcast/detail/message.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/rate_limits.hpp"
#include "loopcast/simulator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace loopcast {

/// What the simulation needs of a speed model: the durations of a request with `cached` prompt
/// tokens from the cache, `uncached` more prompt tokens and `generated` output + reasoning tokens.
/// The target's request-to-request noise (speed_model::noise_*) multiplies whatever it returns.
template <class S>
concept speed_law = requires(const S& s, std::int64_t n) {
  { s.time(n, n, n) } -> std::same_as<request_timing>;
};

/// What the simulation needs of a client: its reaction to the n-th 429 of one request (n = retries
/// already made; retry_after_s < 0 when the provider sent none; draws from g for jitter), and
/// whether it never gives up. retry_policy (retry.hpp) is the preset-driven one.
template <class C>
concept client_law = requires(const C& c, int n, double retry_after_s, rng& g) {
  { c.decide(n, retry_after_s, g) } -> std::same_as<retry_decision>;
  { c.retries_forever() } -> std::same_as<bool>;
};
static_assert(client_law<retry_policy>);

/// The built-in speed law: the target's speed curves (speed.hpp).
struct curve_speed {
  const speed_model* model;
  request_timing time(std::int64_t cached, std::int64_t uncached, std::int64_t generated) const noexcept {
    return time_request(*model, cached, uncached, generated);
  }
};

namespace detail {

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
  std::vector<std::uint64_t> family_shared;
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
    for (std::size_t r = 0; r < sc.requests.size(); ++r) {
      const auto& q = sc.requests[r];
      for (const auto x : {q.prompt_tokens, q.output_tokens, q.reasoning_tokens, q.max_tokens})
        if (x < 0 || x > max_script_tokens) fail(r, message("a token count of ", x, " (expected 0 to 10^13)"));
      if (!std::isfinite(q.delay_before_s) || q.delay_before_s < 0 || q.delay_before_s > max_script_delay_s)
        fail(r, message("an agent delay of ", q.delay_before_s, " s (expected 0 to 10^7 s)"));
      for (const double d : {q.recorded_ttft_s, q.recorded_duration_s})
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

/// A client that never gives up is refused this many times in a row at most: the session then
/// ends as died_after_retries (the target provably never admits it, e.g. a requests bucket that
/// counts the refusals themselves).
inline constexpr std::int32_t max_attempts_per_request = 1'000'000;

/// Largest sum of charges in any window [t, t + period_s) and where it starts (two pointers over
/// the time-ordered log). Returns {0, 0} for an empty log.
inline std::pair<double, double> peak_window_demand(std::span<const charge_event> log, double period_s) noexcept {
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

enum class event_kind : std::uint8_t {
  send,          // the next attempt of the session's current request
  complete,      // the request in flight ends (no engine: its end is known at admission)
  decode_start   // engine: the request's prefill is done, it joins the decoding batch
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

// A session's state, hot fields first: the loop reads the current request through `reqs` and
// `runs` (copied from the script, so that no event goes through the script object itself).
struct session_state {
  const request_spec* reqs = nullptr;  // the script's requests
  const prefix_run* runs = nullptr;    // the script's prefix runs
  std::uint32_t nreq = 0;              // requests in the script
  std::uint32_t shared_lineages = 0;   // the script's lineage ids below this are its family's
  std::uint32_t shared_base = 0;       // global id of the script's lineage 0
  std::uint32_t private_base = 0;      // global id of the script's first private lineage
  std::uint32_t next = 0;              // index of the request being sent
  std::int32_t attempt = 0;            // attempts of the current request so far
  // The request in flight.
  double t_admit = 0, t_first = 0;
  token_counts tokens;
  double cost = 0;
  std::size_t op_row = 0;          // bucket_ops index of its admission charge to bucket 0
  std::size_t attempt_row = 0;     // its timeline row
  std::array<double, max_buckets> at_completion{};
  std::array<std::uint64_t, max_buckets> ticket{};
  std::array<std::size_t, max_buckets> log_index{};
  // Engine: the single-request prefill and decode times, the KV tokens reserved.
  double prefill_s = 0, decode_work_s = 0;
  std::int64_t kv_tokens = 0;
  session_result res;

  const request_spec& request() const noexcept { return reqs[next]; }
};

// Where each session's lineages sit in the shared prefix cache, and the sizes to reserve.
struct plan_layout {
  std::vector<std::uint32_t> family_base;  // global id of each family's shared lineage 0
  std::uint32_t shared = 0;                // the families' shared lineages, ids [0, shared)
  std::uint32_t lineages = 0;              // shared and private, all sessions
  std::size_t requests = 0;                // over all sessions
  std::size_t max_runs = 1;                // most prefix runs of one request
};
inline plan_layout lay_out(std::span<const session_plan> plans) {
  plan_layout l;
  std::vector<std::uint32_t> family_size;
  for (const auto& p : plans) {
    if (p.family >= family_size.size()) family_size.resize(p.family + 1, 0);
    family_size[p.family] = std::max(family_size[p.family], p.script->shared_lineages);
    l.requests += p.script->requests.size();
    for (const auto& r : p.script->requests) l.max_runs = std::max<std::size_t>(l.max_runs, r.runs_count);
  }
  l.family_base.resize(family_size.size());
  for (std::size_t f = 0; f < family_size.size(); ++f) {
    l.family_base[f] = l.lineages;
    l.lineages += family_size[f];
  }
  l.shared = l.lineages;
  for (const auto& p : plans) l.lineages += p.script->lineages - p.script->shared_lineages;
  return l;
}

} // namespace detail

/// One run of sessions on one target. Construct it (the input is checked then), call run() once.
/// It refers to the target, client, plans (and their scripts) and options it was given: keep them
/// alive until run() returns (simulate_with does).
template <bucket_law Bucket, speed_law Speed, client_law Client = retry_policy>
class simulation {
public:
  simulation(const simulation&) = delete;
  simulation& operator=(const simulation&) = delete;

  /// `buckets[i]` enforces tgt.limits[i] (whose charging and oversize rules still apply).
  simulation(const target& tgt, const Client& client, std::span<const session_plan> plans,
             const sim_options& opt, std::vector<Bucket> buckets, Speed speed)
      : tgt_((detail::check_simulation(tgt, plans, opt, buckets.size()), tgt)),  // checked before anything else
        client_(client), plans_(plans),
        opt_(opt), buckets_(std::move(buckets)), speed_(std::move(speed)), nb_(tgt.limits.size()),
        layout_(detail::lay_out(plans)), cache_(tgt.cache, layout_.lineages), runs_(layout_.max_runs) {
    set_up();
  }

  /// Runs every session to its end (completed or stopped) and returns what happened.
  simulation_result run() {
    for (;;) {
      // The engine's next completion competes with the queued events (it wins ties).
      if (!batch_.empty()) {
        const double share = decode_share(*eng_, static_cast<std::int64_t>(batch_.size()));
        const double t_done = vclock_t_ + std::max(0.0, batch_.front().v_end - vclock_) / share;
        if (heap_.empty() || t_done <= heap_.front().t) {
          engine_finish(t_done);
          continue;
        }
      }
      if (heap_.empty()) break;
      std::pop_heap(heap_.begin(), heap_.end(), detail::later{});
      const detail::event ev = heap_.back();
      heap_.pop_back();
      prefetch_ahead();
      switch (ev.kind) {
      case detail::event_kind::send: on_send(ev.session, ev.t); break;
      case detail::event_kind::complete: on_complete(ev.session, ev.t); break;
      case detail::event_kind::decode_start: on_decode_start(ev.session, ev.t); break;
      }
      if (opt_.progress && (seq_ & 0x3fff) == 0)
        opt_.progress(opt_.progress_context, out_.requests.size(), layout_.requests);
    }
    return summarise();
  }

private:
  using session_state = detail::session_state;

  // ---- set-up: sessions, noise streams, results, the first sends (the only allocations) -------
  void set_up() {
    ss_.reserve(plans_.size());
    jitter_.resize(plans_.size());  // each seeded at the session's first 429
    std::uint32_t private_base = layout_.shared;
    for (const auto& p : plans_) {
      session_state s;
      s.reqs = p.script->requests.data();
      s.runs = p.script->runs.data();
      s.nreq = static_cast<std::uint32_t>(p.script->requests.size());
      s.shared_lineages = p.script->shared_lineages;
      s.shared_base = layout_.family_base[p.family];
      s.private_base = private_base;
      private_base += p.script->lineages - p.script->shared_lineages;
      s.res.requests_total = static_cast<std::int32_t>(p.script->requests.size());
      s.res.outcome = session_outcome::completed;
      ss_.push_back(std::move(s));
    }
    // The target's speed noise draws from its own stream per session (the client's jitter is
    // unchanged); seeded only when the target has noise (seeding a generator is not free).
    has_noise_ = !opt_.recorded_speed && (tgt_.speed.noise_sigma > 0 || tgt_.speed.noise_median != 1);
    if (has_noise_) {
      noise_g_.reserve(plans_.size());
      for (const auto& p : plans_) noise_g_.emplace_back(derive_seed(p.seed, 0x6e6f697365));
    }
    const std::size_t total = layout_.requests;
    out_.requests.reserve(total);
    out_.sessions.resize(plans_.size());
    log_.resize(nb_);
    for (auto& l : log_) l.reserve(total + 16);
    if (opt_.record_attempts) {
      out_.attempts.reserve(total + total / 4 + 16);
      out_.bucket_levels.reserve((total + total / 4 + 16) * nb_);
      out_.bucket_ops.reserve((2 * total + 16) * nb_);
    }
    out_.start_unix_s = opt_.start_unix_s;
    out_.buckets.resize(nb_);
    for (std::size_t b = 0; b < nb_; ++b)
      out_.buckets[b] = {tgt_.limits[b].name, tgt_.limits[b].limit, tgt_.limits[b].period_s, 0, 0, 0, 0};
    heap_.reserve(plans_.size() + 1);
    for (std::uint32_t i = 0; i < plans_.size(); ++i) {
      if (ss_[i].nreq == 0) {
        ss_[i].res.start_s = ss_[i].res.end_s = plans_[i].start_s;
        continue;
      }
      schedule(plans_[i].start_s + ss_[i].reqs[0].delay_before_s, i, detail::event_kind::send);
    }
    eng_ = tgt_.engine && !opt_.recorded_speed ? &*tgt_.engine : nullptr;
    if (eng_) {
      kv_pool_ = kv_pool_tokens(eng_->memory);
      batch_.reserve(plans_.size());
      waiting_.resize(std::max<std::size_t>(plans_.size(), 1));
      est_.vram_gb = engine_vram_gb(eng_->memory);
    }
  }

  // A fleet's sessions and scripts do not fit in the caches, and which one the next event touches
  // is known only from the queue: while this event runs, fetch the next event's request (its
  // session's state was fetched one event earlier) and the state of the one after (the earlier
  // of the top's two children).
  void prefetch_ahead() const noexcept {
    const std::size_t n = heap_.size();
    if (n == 0) return;
    const session_state& next = ss_[heap_.front().session];
    __builtin_prefetch(next.reqs + next.next);
    if (n == 1) return;
    const std::size_t second = n > 2 && detail::later{}(heap_[1], heap_[2]) ? 2 : 1;
    __builtin_prefetch(&ss_[heap_[second].session]);
  }

  void schedule(double t, std::uint32_t s, detail::event_kind k) {
    heap_.push_back({t, seq_++, s, k});
    std::push_heap(heap_.begin(), heap_.end(), detail::later{});
  }

  void record_attempt(const attempt_record& a, double t) {
    if (!opt_.record_attempts) return;
    out_.attempts.push_back(a);
    for (std::size_t b = 0; b < nb_; ++b) out_.bucket_levels.push_back(buckets_[b].used(t));
  }

  void finish(session_state& s, session_outcome o, double t) noexcept {
    s.res.outcome = o;
    s.res.end_s = t;
    if (o != session_outcome::completed) s.res.stop_request = static_cast<std::int32_t>(s.next + 1);
    last_end_ = std::max(last_end_, t);
  }

  // The session's current request as lineage runs of the cache (in runs_).
  std::span<const prefix_run> runs_of(const session_state& s) noexcept {
    const request_spec& req = s.request();
    const prefix_run* script_runs = s.runs + req.runs_begin;
    for (std::size_t r = 0; r < req.runs_count; ++r) {
      const auto id = script_runs[r].lineage;
      runs_[r] = {id < s.shared_lineages ? s.shared_base + id : s.private_base + (id - s.shared_lineages),
                  script_runs[r].end_tokens};
    }
    return {runs_.data(), req.runs_count};
  }

  // ---- a send: split the prompt by the cache, check the window, ask every bucket ---------------
  void on_send(std::uint32_t si, double t) {
    session_state& s = ss_[si];
    const request_spec& req = s.request();
    if (!started_any_ || t < first_send_) first_send_ = t;
    if (s.res.attempts == 0) s.res.start_s = t;
    started_any_ = true;
    ++s.res.attempts;
    const std::span<const prefix_run> rs = runs_of(s);
    const std::int64_t cached = cache_.lookup(rs, req.prompt_tokens, t);
    token_counts tk;
    tk.cache_read = cached;
    tk.cache_write =
        tgt_.cache.write_charged ? std::max<std::int64_t>(0, cache_.cacheable(req.prompt_tokens) - cached) : 0;
    tk.input = req.prompt_tokens - cached - tk.cache_write;
    tk.output = req.output_tokens;
    tk.reasoning = req.reasoning_tokens;

    attempt_record a;
    a.session = si;
    a.request = static_cast<std::int32_t>(s.next + 1);
    a.turn = req.turn;
    a.attempt = s.attempt;
    a.compaction = req.compaction;
    a.t_send = a.t_first_token = a.t_end = t;
    a.tokens = tk;

    if (tk.total() > tgt_.context_window_tokens) {
      a.status = attempt_status::context_overflow;
      record_attempt(a, t);
      finish(s, session_outcome::context_overflow, t);
      s.res.stop_need = static_cast<double>(tk.total());
      s.res.stop_capacity = static_cast<double>(tgt_.context_window_tokens);
      return;
    }

    // Admission: every bucket must take its admission charge now.
    std::array<bucket_charge, max_buckets> charge{};
    double wait = 0;
    std::int16_t worst = -1;
    bool too_large = false;
    for (std::size_t b = 0; b < nb_; ++b) {
      charge[b] = charge_for(tgt_.limits[b], tk, req.max_tokens);
      const double w = buckets_[b].wait_for(charge[b].at_admission, t);
      if (w == never_admitted) {
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
      s.res.stop_capacity = tgt_.limits[bi].limit;
      s.res.stop_never_admitted = true;
      if (tgt_.limits[bi].oversize != oversize_rule::rate_limited) {
        a.status = attempt_status::too_large;
        a.refused_by = worst;
        record_attempt(a, t);
        finish(s, session_outcome::request_too_large, t);
        return;
      }
      refused_forever = true;
      wait = tgt_.limits[bi].period_s;
    }
    if (wait > 0) return refuse(si, a, charge, worst, wait, refused_forever, t);
    admit(si, a, charge, rs, cached, t);
  }

  // ---- HTTP 429: record it, charge the buckets that count refusals, retry or give up -----------
  void refuse(std::uint32_t si, attempt_record& a, const std::array<bucket_charge, max_buckets>& charge,
              std::int16_t worst, double wait, bool refused_forever, double t) {
    session_state& s = ss_[si];
    ++s.res.rate_limited;
    ++out_.buckets[static_cast<std::size_t>(worst)].refusals;
    if (!out_.first_429) note_first_429(si, a.request, worst, wait, t);
    a.status = attempt_status::rate_limited;
    a.refused_by = worst;
    a.retry_after_s = tgt_.sends_retry_after ? wait : -1.0;
    // The jitter stream is seeded when first needed (seeding a mt19937_64 costs hundreds of
    // draws; most sessions never see a 429): the draws are the same as if seeded up front.
    auto& jitter = jitter_[si];
    if (!jitter) jitter.emplace(plans_[si].seed);
    const retry_decision d = client_.decide(s.attempt, a.retry_after_s, *jitter);
    a.wait_s = d.retry ? d.wait_s : 0.0;
    record_attempt(a, t);
    for (std::size_t b = 0; b < nb_; ++b)
      if (tgt_.limits[b].count_rejected) {
        const double w = tgt_.limits[b].weight;  // one request, weighted
        buckets_[b].charge(w, t, t);
        log_[b].push_back({t, w});
        if (opt_.record_attempts) out_.bucket_ops.push_back({t, w, t, 0, static_cast<std::uint16_t>(b), false});
      }
    // A request that is never admitted, from a client that never gives up, would retry forever:
    // it ends as too large (above a capacity) or, after max_attempts_per_request, as a death.
    const bool hopeless = d.retry && ((refused_forever && client_.retries_forever()) ||
                                      s.attempt + 1 >= detail::max_attempts_per_request);
    if (!d.retry || hopeless) {
      if (!refused_forever) {
        const auto bi = static_cast<std::size_t>(worst);
        s.res.stop_bucket = worst;
        s.res.stop_need = charge[bi].at_admission;
        s.res.stop_capacity = tgt_.limits[bi].limit;
      }
      finish(s, refused_forever && d.retry ? session_outcome::request_too_large : session_outcome::died_after_retries,
             t);
      return;
    }
    ++s.attempt;
    s.res.stall_s += d.wait_s;
    schedule(t + d.wait_s, si, detail::event_kind::send);
  }

  void note_first_429(std::uint32_t si, std::int32_t request, std::int16_t worst, double wait, double t) {
    first_429_info f;
    f.session = si;
    f.request = request;
    f.time_s = t;
    f.bucket = worst;
    f.bucket_name = tgt_.limits[static_cast<std::size_t>(worst)].name;
    f.retry_after_s = wait;
    f.sent_before = admitted_;
    f.buckets.resize(nb_);
    for (std::size_t b = 0; b < nb_; ++b) {
      f.buckets[b].used = buckets_[b].used(t);
      double demand = 0;
      for (auto it = log_[b].rbegin(); it != log_[b].rend() && it->t > t - tgt_.limits[b].period_s; ++it)
        demand += it->amount;
      f.buckets[b].window_demand = demand;
    }
    out_.first_429 = std::move(f);
  }

  // ---- admitted: time and price the request, charge the buckets, start it ----------------------
  void admit(std::uint32_t si, attempt_record& a, const std::array<bucket_charge, max_buckets>& charge,
             std::span<const prefix_run> rs, std::int64_t cached, double t) {
    session_state& s = ss_[si];
    const request_spec& req = s.request();
    const token_counts& tk = a.tokens;
    // With an engine the times depend on the other requests and are filled in later.
    const request_timing tm = timing(si, req, cached, tk.generated());
    const double t_first = t + tm.ttft_s;
    const double t_end = eng_ ? never_admitted : t_first + tm.decode_s;
    a.t_first_token = eng_ ? t : t_first;
    a.t_end = eng_ ? t : t_end;
    if (tgt_.prices) a.cost_usd = price(tk, req.prompt_tokens, cached, t);
    s.attempt_row = out_.attempts.size();
    record_attempt(a, t);  // bucket levels as the request found them, before its own charge
    s.op_row = out_.bucket_ops.size();
    for (std::size_t b = 0; b < nb_; ++b) {
      if (opt_.record_attempts)
        out_.bucket_ops.push_back({t, charge[b].at_admission, t_end, 0, static_cast<std::uint16_t>(b), false});
      s.ticket[b] = buckets_[b].charge(charge[b].at_admission, t, t_end);
      s.at_completion[b] = charge[b].at_completion;
      s.log_index[b] = log_[b].size();
      log_[b].push_back({t, charge[b].at_admission});
      out_.buckets[b].charged += charge[b].at_admission + charge[b].at_completion;
      if (tgt_.limits[b].algorithm == bucket_algorithm::concurrency)  // peak = most in flight
        out_.buckets[b].peak_demand = std::max(out_.buckets[b].peak_demand, buckets_[b].used(t));
    }
    s.t_admit = t;
    s.tokens = tk;
    s.cost = a.cost_usd;
    admitted_ += tk;
    if (in_flight_++ == 0) busy_since_ = t;
    if (eng_) return engine_admit(si, tm, tk.total(), t);
    cache_.touch(rs, req.prompt_tokens, t_first);  // cached once its prefill is done; TTL from then
    s.t_first = t_first;
    schedule(t_end, si, detail::event_kind::complete);
  }

  request_timing timing(std::uint32_t si, const request_spec& req, std::int64_t cached, std::int64_t generated) {
    if (opt_.recorded_speed) {
      const double ttft = std::max(0.0, static_cast<double>(req.recorded_ttft_s));
      return {ttft, std::max(0.0, static_cast<double>(req.recorded_duration_s) - ttft)};
    }
    const request_timing tm = speed_.time(cached, req.prompt_tokens - cached, generated);
    if (!has_noise_) return tm;
    // A request's times under the target's speed noise (a log-normal factor per request).
    const double f = tgt_.speed.noise_median * std::exp(tgt_.speed.noise_sigma * standard_normal(noise_g_[si]));
    return {tm.ttft_s * f, tm.decode_s * f};
  }

  double price(const token_counts& tk, std::int64_t prompt_tokens, std::int64_t cached, double t) {
    const request_cost c = price_request(*tgt_.prices, tk, opt_.start_unix_s + t, opt_.batch, tgt_.cache.write_1h);
    double usd = c.total_usd;
    if (tgt_.prices->cache_storage_usd_per_million_hour > 0 && tgt_.cache.enabled) {
      const auto fresh = std::max<std::int64_t>(0, cache_.cacheable(prompt_tokens) - cached);
      const double storage = static_cast<double>(fresh) * (tgt_.cache.ttl_s / 3600.0) *
                             tgt_.prices->cache_storage_usd_per_million_hour / 1e6;
      usd += storage;
      out_.cache_storage_usd += storage;
      out_.token_cost_usd += storage;
    }
    for (std::size_t k = 0; k < token_class_count; ++k) out_.cost_by_class_usd[k] += c.by_class_usd[k];
    out_.token_cost_usd += c.total_usd;
    return usd;
  }

  // ---- the request ends: late charges and refunds, the next request ----------------------------
  void on_complete(std::uint32_t si, double t) {
    session_state& s = ss_[si];
    for (std::size_t b = 0; b < nb_; ++b) {
      const double d = s.at_completion[b];
      if (d == 0.0) continue;
      buckets_[b].adjust(d, t, s.t_admit, s.ticket[b]);
      if (opt_.record_attempts) out_.bucket_ops.push_back({t, d, t, s.op_row + b, static_cast<std::uint16_t>(b), true});
      if (d < 0) log_[b][s.log_index[b]].amount += d;
      else log_[b].push_back({t, d});
    }
    if (--in_flight_ == 0) out_.busy_s += t - busy_since_;
    out_.requests.push_back(
        {si, s.t_admit, s.t_first, t, s.tokens.prompt(), s.tokens.cache_read, s.tokens.generated()});
    ++s.res.requests_served;
    s.res.tokens += s.tokens;
    s.res.cost_usd += s.cost;
    last_end_ = std::max(last_end_, t);
    if (++s.next == s.nreq) {
      finish(s, session_outcome::completed, t);
    } else {
      s.attempt = 0;
      schedule(t + s.request().delay_before_s, si, detail::event_kind::send);
    }
  }

  // ---- a local engine (engine.hpp): slots, a first-come queue, prefill in turn, shared decode --
  void engine_admit(std::uint32_t si, const request_timing& tm, std::int64_t kv_tokens, double t) {
    session_state& s = ss_[si];
    s.prefill_s = tm.ttft_s;
    s.decode_work_s = tm.decode_s;
    s.kv_tokens = kv_tokens;  // within the pool: checked before the loop
    if (wait_count_ == 0 && engine_fits(si)) {
      engine_start(si, t);
      return;
    }
    waiting_[(wait_head_ + wait_count_) % waiting_.size()] = si;
    ++wait_count_;
    est_.peak_queue = std::max(est_.peak_queue, static_cast<std::int32_t>(wait_count_));
  }

  bool engine_fits(std::uint32_t si) const noexcept {
    return eng_sequences_ < eng_->max_sequences && eng_kv_ + ss_[si].kv_tokens <= kv_pool_;
  }

  // The request gets a slot at t; its prefill queues behind the others'.
  void engine_start(std::uint32_t si, double t) {
    session_state& s = ss_[si];
    ++eng_sequences_;
    eng_kv_ += s.kv_tokens;
    est_.peak_sequences = std::max(est_.peak_sequences, static_cast<std::int32_t>(eng_sequences_));
    est_.peak_kv_tokens = std::max(est_.peak_kv_tokens, eng_kv_);
    const double begin = std::max(t, prefill_free_at_);
    s.t_first = begin + s.prefill_s;
    prefill_free_at_ = s.t_first;
    est_.queue_wait_s += begin - s.t_admit;
    cache_.touch(runs_of(s), s.request().prompt_tokens, s.t_first);
    if (opt_.record_attempts) out_.attempts[s.attempt_row].t_first_token = s.t_first;
    schedule(s.t_first, si, detail::event_kind::decode_start);
  }

  // Prefill done: the request joins the decoding batch.
  void on_decode_start(std::uint32_t si, double t) {
    advance_vclock(t);
    batch_.push_back({vclock_ + ss_[si].decode_work_s, seq_++, si});
    std::push_heap(batch_.begin(), batch_.end(), detail::finishes_later{});
  }

  // The earliest decoding sequence ends at t: free its slot and KV, let the queue in.
  void engine_finish(double t) {
    advance_vclock(t);
    std::pop_heap(batch_.begin(), batch_.end(), detail::finishes_later{});
    const std::uint32_t si = batch_.back().session;
    batch_.pop_back();
    --eng_sequences_;
    eng_kv_ -= ss_[si].kv_tokens;
    if (opt_.record_attempts) out_.attempts[ss_[si].attempt_row].t_end = t;
    on_complete(si, t);
    while (wait_count_ > 0 && engine_fits(waiting_[wait_head_])) {
      const std::uint32_t next = waiting_[wait_head_];
      wait_head_ = (wait_head_ + 1) % waiting_.size();
      --wait_count_;
      engine_start(next, t);
    }
  }

  void advance_vclock(double t) noexcept {
    if (t > vclock_t_) {
      vclock_ += (t - vclock_t_) * decode_share(*eng_, static_cast<std::int64_t>(batch_.size()));
      vclock_t_ = t;
    }
  }

  // ---- summaries --------------------------------------------------------------------------------
  simulation_result summarise() {
    for (std::size_t i = 0; i < ss_.size(); ++i) {
      out_.sessions[i] = ss_[i].res;
      out_.tokens += ss_[i].res.tokens;
    }
    out_.wall_s = started_any_ ? last_end_ - first_send_ : 0.0;
    for (std::size_t b = 0; b < nb_; ++b) {
      if (tgt_.limits[b].algorithm == bucket_algorithm::concurrency) continue;
      const auto [peak, start] = detail::peak_window_demand(log_[b], tgt_.limits[b].period_s);
      out_.buckets[b].peak_demand = peak;
      out_.buckets[b].peak_window_start_s = start;
    }
    if (opt_.record_charges) out_.charges = std::move(log_);
    if (eng_) {
      est_.peak_kv_gb = static_cast<double>(est_.peak_kv_tokens) * eng_->memory.kv_bytes_per_token / 1e9;
      out_.engine = est_;
    }
    out_.cost_usd = out_.token_cost_usd;
    if (tgt_.plan) out_.cost_usd += plan_fee_share(*tgt_.plan, out_.wall_s);
    if (tgt_.power) {
      out_.energy = local_cost(*tgt_.power, out_.busy_s, out_.wall_s);
      out_.cost_usd += out_.energy->total_usd();
    }
    return std::move(out_);
  }

  const target& tgt_;
  const Client& client_;
  std::span<const session_plan> plans_;
  const sim_options& opt_;
  std::vector<Bucket> buckets_;
  Speed speed_;
  std::size_t nb_;
  detail::plan_layout layout_;
  prefix_cache cache_;
  std::vector<prefix_run> runs_;  // the current request's runs, in global lineage ids
  std::vector<session_state> ss_;
  std::vector<std::optional<rng>> jitter_;  // each session's client jitter stream (cold, 2.5 KB each)
  bool has_noise_ = false;
  std::vector<rng> noise_g_;
  simulation_result out_;
  std::vector<std::vector<charge_event>> log_;  // per bucket: every charge, in time order
  std::vector<detail::event> heap_;
  std::uint64_t seq_ = 0;
  // A local engine.
  const engine_config* eng_ = nullptr;
  std::int64_t kv_pool_ = 0;
  std::vector<detail::decoding> batch_;  // sequences decoding, min-heap on virtual end time
  std::vector<std::uint32_t> waiting_;   // first-come queue of admitted requests (a ring)
  std::size_t wait_head_ = 0, wait_count_ = 0;
  std::int64_t eng_sequences_ = 0, eng_kv_ = 0;
  double prefill_free_at_ = 0, vclock_ = 0, vclock_t_ = 0;
  engine_stats est_;
  // Totals.
  std::int64_t in_flight_ = 0;
  double busy_since_ = 0;
  token_counts admitted_;  // tokens of every request admitted so far
  bool started_any_ = false;
  double first_send_ = 0, last_end_ = 0;
};

/// Runs the sessions with a tool's own client, buckets (`buckets[i]` enforces tgt.limits[i]) and
/// speed law. Throws simulation_error on an invalid plan, before anything runs.
template <bucket_law Bucket, speed_law Speed, client_law Client>
simulation_result simulate_with(const target& tgt, const Client& client, std::span<const session_plan> sessions,
                                const sim_options& opt, std::vector<Bucket> buckets, Speed speed) {
  return simulation<Bucket, Speed, Client>(tgt, client, sessions, opt, std::move(buckets), std::move(speed)).run();
}

/// Runs the sessions to completion (or death) on the target's own buckets (tgt.limits) and speed
/// curves (tgt.speed), with the client's retry policy. Throws simulation_error on an invalid plan,
/// before anything runs.
inline simulation_result simulate(const target& tgt, const retry_policy& client, std::span<const session_plan> sessions,
                                  const sim_options& opt = {}) {
  std::vector<bucket> buckets;
  buckets.reserve(tgt.limits.size());
  for (const auto& b : tgt.limits) buckets.emplace_back(b, opt.start_unix_s);
  return simulate_with(tgt, client, sessions, opt, std::move(buckets), curve_speed{&tgt.speed});
}

} // namespace loopcast
