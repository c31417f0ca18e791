// loopcast — the run loop (simulation.hpp is the guide): the simulation class, its events and
// their handlers — a send, a 429, an admission, a completion — and the summary. What belongs to a
// route (router.hpp), a local engine (engine_pool.hpp) and a herd of 429s (herd.hpp) is declared
// here and defined there. Internal; included by simulation.hpp, after the laws' concepts.
#pragma once

#include "loopcast/detail/calendar_queue.hpp"
#include "loopcast/detail/retry_queue.hpp"
#include "loopcast/detail/run_storage.hpp"
#include "loopcast/detail/simulation/checks.hpp"
#include "loopcast/detail/simulation/deployment.hpp"
#include "loopcast/interrupt.hpp"
#include "loopcast/metrics.hpp"
#include "loopcast/rate_limits.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace loopcast {

namespace detail {
/// How a herd's batch reads a bucket law (herd.hpp); a law batches when it says so.
template <class Bucket>
struct herd_reader;
} // namespace detail

/// One run of sessions on one target, or on a route of targets (route.hpp). Construct it (the input
/// is checked then), call run() once. It refers to the targets, client, plans (and their scripts)
/// and options it was given: keep them alive until run() returns (simulate_with does).
template <bucket_law Bucket, speed_law Speed, client_law Client = retry_policy>
class simulation {
public:
  simulation(const simulation&) = delete;
  simulation& operator=(const simulation&) = delete;

  /// `buckets[i]` enforces tgt.limits[i] (whose charging and oversize rules still apply).
  simulation(const target& tgt, const Client& client, std::span<const session_plan> plans,
             const sim_options& opt, std::vector<Bucket> buckets, Speed speed)
      : client_((detail::check_simulation(tgt, plans, opt, buckets.size()), client)),  // checked before anything else
        plans_(plans), opt_(opt), layout_(detail::lay_out(plans, spare(&detail::run_storage::family_base))),
        runs_(spare(&detail::run_storage::runs)) {
    runs_.assign(layout_.max_runs, prefix_run{});
    dep_.emplace_back(tgt, std::move(buckets), std::move(speed), layout_.lineages, spare_cache());
    set_up();
  }

  /// A route: `buckets[k][i]` enforces route[k].limits[i], `speeds[k]` times route[k]'s requests.
  simulation(std::span<const target> route, const route_policy& policy, const Client& client,
             std::span<const session_plan> plans, const sim_options& opt, std::vector<std::vector<Bucket>> buckets,
             std::vector<Speed> speeds)
      : client_((detail::check_route(route, policy, plans, opt, buckets, speeds.size()), client)),
        plans_(plans), opt_(opt), layout_(detail::lay_out(plans, spare(&detail::run_storage::family_base))),
        runs_(spare(&detail::run_storage::runs)), routed_(true), policy_(policy) {
    runs_.assign(layout_.max_runs, prefix_run{});
    dep_.reserve(route.size());
    for (std::size_t k = 0; k < route.size(); ++k)
      dep_.emplace_back(route[k], std::move(buckets[k]), std::move(speeds[k]), layout_.lineages,
                        k == 0 ? spare_cache() : nullptr);
    set_up();
  }

  /// Leaves the run's buffers in sim_options::storage, when it has one, for the next run.
  ~simulation() {
    detail::run_storage* st = opt_.storage;
    if (!st) return;
    st->sessions.swap(ss_);
    st->held.swap(held_);
    st->runs.swap(runs_);
    st->family_base.swap(layout_.family_base);
    st->queue.swap_buffers(queue_);
    if (dep_.empty()) return;
    st->cache.swap_buffers(dep_[0].cache);
    st->log.swap(dep_[0].log);
    if constexpr (std::is_same_v<Bucket, bucket>) st->buckets.swap(dep_[0].buckets);
  }

  /// Runs every session to its end (completed or stopped) and returns what happened.
  simulation_result run() {
    for (;;) {
      // An engine's next completion competes with the queued events (it wins ties).
      if (n_engines_ > 0 && finish_engine_before_next_event()) continue;
      detail::event ev;
      const detail::order_key_t next_queued = queue_.empty() ? waiting_set::no_key : queue_.top_key();
      if (retries_.earliest_key() < next_queued) {
        // The next event is a refused request's retry (coalesce_): first the 429s due before the
        // next other event, in one batch; then that event, if it is a retry, as usual. (The run's
        // first 429 was one refuse() handled: a retry waits here only after it.)
        if (!refuse_waiting(next_queued)) break;
        if (!(retries_.earliest_key() < next_queued)) continue;
        const auto e = retries_.take_front();  // (settled by the batch)
        ev = {e.time(), e.seq, e.session, detail::event_kind::send};
        write_back(ss_[e.session], retries_.payload(e.session));
      } else {
        if (queue_.empty()) break;
        // The event stays at the top while it is handled: the first event it schedules takes its
        // place (one sift instead of a pop and a push); if it schedules none, it is popped after.
        ev = queue_.top();
        top_handled_ = true;
        prefetch_ahead();
      }
      switch (ev.kind) {
      case detail::event_kind::send: on_send(ev.session, ev.t); break;
      case detail::event_kind::complete: on_complete(ev.session, ev.t); break;
      case detail::event_kind::decode_start: on_decode_start(ev.session, ev.t); break;
      }
      if (top_handled_) {
        queue_.pop();
        top_handled_ = false;
      }
      if ((seq_ & 0x3fff) == 0) {
        if (opt_.progress) opt_.progress(opt_.progress_context, served_, layout_.requests);
        if (interrupt_requested()) {  // (the caller throws `interrupted`: this result is never used)
          cut_off(ev.t);
          break;
        }
      }
      if (attempts_ >= budget_) {
        cut_off(ev.t);
        break;
      }
    }
    return summarise();
  }

private:
  using session_state = detail::session_state;
  using deployment = detail::deployment<Bucket, Speed>;

  // A buffer of sim_options::storage, taken over (empty without one).
  template <class T>
  std::vector<T> spare(std::vector<T> detail::run_storage::*buffer) const noexcept {
    return opt_.storage ? std::move(opt_.storage->*buffer) : std::vector<T>{};
  }
  prefix_cache* spare_cache() const noexcept { return opt_.storage ? &opt_.storage->cache : nullptr; }

  // ---- set-up: sessions, noise streams, results, the first sends (the allocations but one) ----
  void set_up() {
    // An earlier run's buffers, when there is storage (their contents are replaced).
    ss_ = spare(&detail::run_storage::sessions);
    ss_.clear();
    held_ = spare(&detail::run_storage::held);
    dep_[0].log = spare(&detail::run_storage::log);
    if (opt_.storage) queue_.swap_buffers(opt_.storage->queue);
    if (opt_.recycle) {  // an earlier result's buffers, emptied
      simulation_result& old = *opt_.recycle;
      const auto take = [](auto& to, auto& from) {
        to = std::move(from);
        to.clear();
      };
      take(out_.requests, old.requests);
      take(out_.medians_from.effective_tps, old.medians_from.effective_tps);
      take(out_.medians_from.ttft_s, old.medians_from.ttft_s);
      take(out_.sessions, old.sessions);
      take(out_.buckets, old.buckets);
      take(out_.attempts, old.attempts);
      take(out_.bucket_levels, old.bucket_levels);
      take(out_.bucket_ops, old.bucket_ops);
      take(out_.hourly_429, old.hourly_429);
    }
    ss_.reserve(plans_.size());
    if (client_draws_jitter()) jitter_.resize(plans_.size());  // each seeded at the session's first 429
    std::uint32_t private_base = layout_.shared;
    for (const auto& p : plans_) {
      session_state s;
      s.reqs = p.script->requests.data();
      s.runs = p.script->runs.data();
      s.nreq = static_cast<std::uint32_t>(p.script->requests.size());
      s.shared_lineages = p.script->shared_lineages;
      s.open_last_run = p.script->open_last_run;
      s.shared_base = layout_.family_base[p.family];
      s.private_base = private_base;
      private_base += p.script->lineages - p.script->shared_lineages;
      s.res.requests_total = static_cast<std::int32_t>(p.script->requests.size());
      s.res.outcome = session_outcome::completed;
      ss_.push_back(std::move(s));
    }
    const std::size_t total = layout_.requests;
    bool any_noise = false;
    for (std::size_t k = 0; k < dep_.size(); ++k) {
      deployment& d = dep_[k];
      d.bucket_base = nb_total_;
      nb_total_ += d.nb;
      // A target's speed noise draws from its own stream per session (the client's jitter is
      // unchanged); seeded only when a target has noise (seeding a generator is not free).
      d.has_noise = !opt_.recorded_speed && (d.tgt->speed.noise_sigma > 0 || d.tgt->speed.noise_median != 1 ||
                                             d.tgt->speed.session_sigma > 0 || !d.tgt->speed.hour_factors.empty() ||
                                             d.tgt->speed.output.any());
      any_noise = any_noise || d.has_noise;
      d.counts_refusals = std::any_of(d.tgt->limits.begin(), d.tgt->limits.end(),
                                      [](const bucket_config& c) { return c.count_rejected; });
      d.log.resize(d.nb);
      for (auto& l : d.log) {
        l.clear();
        if (keeps_log_) l.reserve(total + 16);
      }
      d.eng = d.tgt->engine && !opt_.recorded_speed ? &*d.tgt->engine : nullptr;
      if (d.eng) {
        engines_[n_engines_++] = static_cast<std::uint8_t>(k);
        d.kv_pool = kv_pool_tokens(d.eng->memory);
        d.batch.reserve(plans_.size());
        d.waiting.resize(std::max<std::size_t>(plans_.size(), 1));
        d.est.vram_gb = engine_vram_gb(d.eng->memory);
      }
      if (routed_) {
        d.share.target = d.tgt->name;
        d.fails.assign(static_cast<std::size_t>(std::max(policy_.cooldown_after_fails, 0)), 0.0);
      }
    }
    for (const auto& d : dep_) held_stride_ = std::max(held_stride_, d.nb);
    held_.assign(plans_.size() * held_stride_, detail::held_charge{});
    if (any_noise) {
      noise_g_.reserve(plans_.size());
      for (const auto& p : plans_) noise_g_.emplace_back(derive_seed(p.seed, 0x6e6f697365));
      // One standard normal per session for the session factor, from a stream of its own (the
      // per-request draws stay the same with or without it).
      session_z_.reserve(plans_.size());
      for (const auto& p : plans_) {
        rng g(derive_seed(p.seed, 0x73657373696f6e));
        session_z_.push_back(standard_normal(g));
      }
    }
    if (opt_.request_rows) {
      out_.requests.reserve(total);
    } else {
      out_.medians_from.effective_tps.reserve(total);
      out_.medians_from.ttft_s.reserve(total);
    }
    out_.sessions.resize(plans_.size());
    if (opt_.record_attempts) {
      out_.attempts.reserve(total + total / 4 + 16);
      out_.bucket_levels.reserve((total + total / 4 + 16) * nb_total_);
      out_.bucket_ops.reserve((2 * total + 16) * nb_total_);
    }
    out_.start_unix_s = opt_.start_unix_s;
    out_.buckets.reserve(nb_total_);
    for (const auto& d : dep_)
      for (const auto& b : d.tgt->limits)
        out_.buckets.push_back({routed_ ? d.tgt->name + ":" + b.name : b.name, b.limit, b.period_s, 0, 0, 0, 0});
    queue_.reserve(plans_.size());
    // (A law batches when herd_reader says so: herd.hpp.)
    // (A client that draws jitter draws in the batch as on_send would, in the same order; the
    // preset-driven one never draws when it gives up, which the batch leaves to on_send.)
    // (One session has one event at a time: nothing to gather, and the batches' storage is not made.)
    coalesce_ = opt_.coalesce_refusals && plans_.size() > 1 && detail::herd_reader<Bucket>::batches && !routed_ &&
                n_engines_ == 0 && !dep_[0].counts_refusals && !opt_.record_attempts &&
                (!client_draws_jitter() || std::is_same_v<Client, retry_policy>);
    for (std::uint32_t i = 0; i < plans_.size(); ++i) {
      if (ss_[i].nreq == 0) {
        ss_[i].res.start_s = ss_[i].res.end_s = plans_[i].start_s;
        continue;
      }
      schedule(plans_[i].start_s + ss_[i].reqs[0].delay_before_s, i, detail::event_kind::send);
    }
  }

  // The batches' storage, made at the run's first refused retry (most runs of one session never
  // have one): every session can wait at once.
  [[gnu::noinline]] void reserve_batches();

  // A fleet's sessions and scripts do not fit in the caches, and which one the next events touch
  // is known only from the queue. While this event runs, two stages: the event after next has its
  // session state and the request its handler reads fetched (the queue keeps that request beside
  // the event: schedule()); the next event, whose request came in one event ago, has that
  // request's prefix runs fetched if it is a send.
  // (Inlined where it is called: a function that only prefetches has no effect GCC can see, and
  // a call to it, kept out of line, is dropped at -O2.)
  [[gnu::always_inline]] void prefetch_ahead() const noexcept {
    const std::uint32_t n1 = queue_.second();
    if (n1 == detail::calendar_queue::none) return;
    if (queue_.kind_of(n1) == detail::event_kind::send) {
      const auto* req = static_cast<const request_spec*>(queue_.hint_of(n1));
      if (req->runs_count != 0) {  // a request without prefix runs may have no array to point into
        const prefix_run* runs = ss_[n1].runs + req->runs_begin;
        __builtin_prefetch(runs);
        __builtin_prefetch(runs + req->runs_count - 1);
      }
    }
    const std::uint32_t n2 = queue_.following(n1);
    if (n2 == detail::calendar_queue::none) return;
    __builtin_prefetch(&ss_[n2]);
    const auto* q = static_cast<const char*>(queue_.hint_of(n2));
    __builtin_prefetch(q);
    __builtin_prefetch(q + sizeof(request_spec) - 1);
  }

  // Queues session s's event of kind k at t, with the request its handler reads first: a send
  // its own, a completion the next one (for the agent's delay; one past the script's end after
  // its last request: only prefetched).
  void schedule(double t, std::uint32_t s, detail::event_kind k) {
    const detail::event e{t + 0.0, seq_++, s, k};  // + 0.0: a −0.0 start is +0.0 (event_queue.hpp's order)
    const session_state& st = ss_[s];
    const request_spec* hint = st.reqs + st.next + (k == detail::event_kind::complete ? 1 : 0);
    if (top_handled_) {
      queue_.replace_top(e, hint);
      top_handled_ = false;
    } else {
      queue_.push(e, hint);
    }
  }

  void record_attempt(const attempt_record& a, double t) {
    if (!opt_.record_attempts) return;
    if (out_.attempts.size() == out_.attempts.capacity()) [[unlikely]]
      check_timeline_room(out_.attempts.capacity() * sizeof(attempt_record) +
                          out_.bucket_levels.capacity() * sizeof(double));
    out_.attempts.push_back(a);
    for (auto& d : dep_)
      for (std::size_t b = 0; b < d.nb; ++b) out_.bucket_levels.push_back(d.buckets[b].used(t));
  }

  // Before the timeline grows by `more` bytes (a full buffer of its rows and their bucket levels,
  // or of its bucket operations, doubles): refused when it would pass the room the memory budget
  // leaves it (sim_options::timeline_room_bytes).
  [[gnu::noinline]] void check_timeline_room(std::size_t more) const {
    const auto held = static_cast<double>(out_.attempts.capacity() * sizeof(attempt_record) +
                                          out_.bucket_levels.capacity() * sizeof(double) +
                                          out_.bucket_ops.capacity() * sizeof(bucket_op));
    const double grown = held + static_cast<double>(std::max<std::size_t>(more, 4096));
    const double room = static_cast<double>(opt_.timeline_room_bytes > 0 ? opt_.timeline_room_bytes
                                                                           : default_timeline_room());
    if (grown <= room) return;
    constexpr double gib = static_cast<double>(detail::gib);
    using detail::fixed;
    throw config_error(detail::message(detail::simulation_kind(opt_), " ", dep_[0].tgt->name), "",
                       detail::message("the timeline reached ", out_.attempts.size(), " attempts (",
                                       fixed{held / gib, 2}, " GiB) and would grow to ", fixed{grown / gib, 2},
                                       " GiB, past the ", fixed{std::max(room, 0.0) / gib, 2},
                                       " GiB the memory budget leaves it: a tier the fleet overwhelms makes many "
                                       "429s a request; set LOOPCAST_MEMORY_BUDGET_GB to allow it, lower the "
                                       "attempt budget, or drop the timeline"));
  }
  // The memory budget less the run's estimate without its timeline (budget.hpp).
  std::int64_t default_timeline_room() const {
    run_size z = detail::simulation_size(plans_.size(), layout_.requests, layout_.lineages, nb_total_, opt_);
    z.record_attempts = false;
    return memory_budget_bytes() - estimate_run_bytes(z);
  }

  // The attempt budget ran out at t: the sessions still running end there (their requests in
  // flight are not served), and the busy time runs to t.
  [[gnu::noinline]] void cut_off(double t) noexcept {
    for (const auto& e : retries_.settle()) write_back(ss_[e.session], retries_.payload(e.session));
    out_.cut_off = true;
    out_.cut_off_s = t;
    for (auto& s : ss_) {
      if (s.res.outcome != session_outcome::completed || s.next >= s.nreq) continue;
      if (s.res.attempts == 0) s.res.start_s = t;
      finish(s, session_outcome::cut_off, t);
    }
    if (in_flight_ > 0) out_.busy_s += t - busy_since_;
    for (auto& d : dep_)
      if (routed_ && d.in_flight > 0) d.share.busy_s += t - d.busy_since;
  }

  void finish(session_state& s, session_outcome o, double t) noexcept {
    s.res.outcome = o;
    s.res.end_s = t;
    if (o != session_outcome::completed) s.res.stop_request = static_cast<std::int32_t>(s.next + 1);
    last_end_ = std::max(last_end_, t);
  }

  detail::held_charge* held_of(std::uint32_t si) noexcept { return held_.data() + std::size_t{si} * held_stride_; }

  // The session's current request as lineage runs of the cache (in runs_).
  std::span<const prefix_run> runs_of(const session_state& s) noexcept {
    const request_spec& req = s.request();
    const prefix_run* script_runs = s.runs + req.runs_begin;
    for (std::size_t r = 0; r < req.runs_count; ++r) {
      const auto id = script_runs[r].lineage;
      runs_[r] = {id < s.shared_lineages ? s.shared_base + id : s.private_base + (id - s.shared_lineages),
                  script_runs[r].end_tokens};
    }
    if (s.open_last_run && req.runs_count > 0) runs_[req.runs_count - 1].end_tokens = req.prompt_tokens;
    return {runs_.data(), req.runs_count};
  }

  // ---- a route: which target takes an attempt, spills, cooldowns --------------------------------
  // A fresh send (not a spill) goes to the first target not cooling down; when all are, the
  // request is held until the first of them is back. Returns false when held.
  // (Route-only functions are kept out of line: a run on one target never calls them.)
  [[gnu::noinline]] bool pick_target(std::uint32_t si, session_state& s, double t);

  // The targets a request may go to: its segment's (route_policy::segments), else the whole route.
  route_segment segment_of(const request_spec& req) const noexcept;

  // A refused attempt had `cached` prompt tokens cached on its target: if another target serves
  // the request, it pays for those in full (admit's lost cache).
  static void remember_cache(session_state& s, std::int64_t cached) noexcept;

  // The request leaves its target for the next one not cooling down; false when there is none.
  [[gnu::noinline]] bool spill(session_state& s, double t) noexcept;

  // A 429 from d: cooled down once cooldown_after_fails of them fall within the window.
  [[gnu::noinline]] void note_failure(deployment& d, double t) noexcept;

  // ---- a send: split the prompt by the cache, check the window, ask every bucket ---------------
  void on_send(std::uint32_t si, double t) {
    session_state& s = ss_[si];
    if (routed_ && !pick_target(si, s, t)) return;
    deployment& d = dep_[s.on];
    const target& tgt = *d.tgt;
    const request_spec& req = s.request();
    if (!started_any_ || t < first_send_) first_send_ = t;
    if (s.res.attempts == 0) s.res.start_s = t;
    started_any_ = true;
    ++s.res.attempts;
    ++attempts_;
    if (routed_) ++d.share.attempts;  // a route's per-target counts (one target needs none)
    // A retry whose prompt split provably cannot have changed (cache_hold) skips the lookup: on a
    // tier the fleet overwhelms most attempts are such retries.
    std::int64_t cached;
    std::span<const prefix_run> rs;  // the request's runs, when a lookup worked them out (admit reuses them)
    const bool split_held = s.split_tokens >= 0 && s.split_on == s.on && d.cache.still_holds(s.split_hold, t);
    if (split_held) {
      cached = s.split_tokens;
    } else {
      rs = runs_of(s);
      cached = d.cache.lookup(rs, req.prompt_tokens, t, &s.split_hold);
      s.split_tokens = cached;
      s.split_on = s.on;
    }
    token_counts tk;
    tk.cache_read = cached;
    const std::int64_t written =
        tgt.cache.write_charged ? std::max<std::int64_t>(0, d.cache.cacheable(req.prompt_tokens) - cached) : 0;
    (tgt.cache.bills_1h(req.write_1h) ? tk.cache_write_1h : tk.cache_write) = written;
    tk.input = req.prompt_tokens - cached - written;
    tk.output = req.output_tokens;
    tk.reasoning = req.reasoning_tokens;

    // The attempt's record is scratch kept in the simulation: every field is set here (so nothing
    // is cleared wholesale on each of a storm's attempts).
    attempt_record& a = attempt_;
    a.session = si;
    a.request = static_cast<std::int32_t>(s.next + 1);
    a.turn = req.turn;
    a.attempt = s.attempt;
    a.status = attempt_status::ok;
    a.compaction = req.compaction;
    a.refused_by = -1;
    a.target = s.on;
    a.t_send = a.t_first_token = a.t_end = t;
    a.retry_after_s = -1;
    a.wait_s = 0;
    a.tokens = tk;
    a.cost_usd = 0;
    static_assert(sizeof(attempt_record) == 120, "a new attempt_record field must be set here");

    if (tk.total() > tgt.context_window_tokens) {
      a.status = attempt_status::context_overflow;
      record_attempt(a, t);
      if (routed_) {
        remember_cache(s, cached);
        if (spill(s, t)) return schedule(t, si, detail::event_kind::send);
      }
      finish(s, session_outcome::context_overflow, t);
      s.res.stop_need = static_cast<double>(tk.total());
      s.res.stop_capacity = static_cast<double>(tgt.context_window_tokens);
      return;
    }

    // Admission: every bucket must take its admission charge now. The charges depend only on the
    // split and the request: a retry with the split held has them from the attempt before (which
    // worked them out with the split; a context overflow repeats with the same split).
    detail::held_charge* charge = held_of(si);
    if (!split_held)
      for (std::size_t b = 0; b < d.nb; ++b) {
        const bucket_charge c = charge_for(tgt.limits[b], tk, req.max_tokens);
        charge[b].at_admission = c.at_admission;
        charge[b].at_completion = c.at_completion;
      }
    auto [wait, worst] = longest_wait(d, charge, t);
    const bool too_large = wait == never_admitted;
    bool refused_forever = false;  // oversize rule rate_limited: a 429 now and on every retry
    if (too_large) {
      const auto bi = static_cast<std::size_t>(worst);
      if (tgt.limits[bi].oversize != oversize_rule::rate_limited) {
        a.status = attempt_status::too_large;
        a.refused_by = static_cast<std::int16_t>(d.bucket_base + bi);
        record_attempt(a, t);
        mark_429(t);  // a wall, as a 429 is (a provider answers it with one)
        if (routed_) {
          remember_cache(s, cached);
          if (spill(s, t)) return schedule(t, si, detail::event_kind::send);
        }
        note_stop(s, d, bi, charge[bi].at_admission, true, opt_.start_unix_s + t);
        finish(s, session_outcome::request_too_large, t);
        return;
      }
      refused_forever = true;  // its stop is noted if the client gives up (refuse)
      wait = tgt.limits[bi].period_s;
    }
    if (wait > 0) return refuse(si, a, charge, worst, wait, refused_forever, t);
    admit(si, a, charge, rs, cached, t);
  }

  // The longest of the buckets' waits at t for their admission charges, and the bucket that has it
  // (detail::longest_of). (Inlined: a herd calls it once per 429, from on_send or from a batch.)
  [[gnu::always_inline]] static detail::admission_wait longest_wait(deployment& d, const detail::held_charge* charge,
                                                                    double t) noexcept {
    return detail::longest_of(d.nb, [&d, charge, t](std::size_t b) { return d.buckets[b].wait_for(charge[b].at_admission, t); });
  }

  // ---- HTTP 429: record it, charge the buckets that count refusals, spill, retry or give up -----
  void refuse(std::uint32_t si, attempt_record& a, const detail::held_charge* charge,
              std::int16_t worst, double wait, bool refused_forever, double t) {
    session_state& s = ss_[si];
    deployment& d = dep_[s.on];
    const target& tgt = *d.tgt;
    const auto global = static_cast<std::int16_t>(d.bucket_base + static_cast<std::size_t>(worst));
    ++s.res.rate_limited;
    ++out_.buckets[static_cast<std::size_t>(global)].refusals;
    mark_429(t);
    if (!out_.first_429) note_first_429(si, a.request, global, wait, t);
    a.status = attempt_status::rate_limited;
    a.refused_by = global;
    a.retry_after_s = tgt.sends_retry_after ? wait : -1.0;
    // A route spills when the 429's retry-after exceeds its threshold (without one, whenever the
    // threshold is finite), or when this target never admits the request.
    if (routed_) {
      ++d.share.rate_limited;
      note_failure(d, t);
      remember_cache(s, a.tokens.cache_read);
      const bool long_wait = a.retry_after_s >= 0 ? a.retry_after_s > policy_.spill_after_s
                                                  : std::isfinite(policy_.spill_after_s);
      if ((long_wait || refused_forever) && spill(s, t)) {
        record_attempt(a, t);
        charge_refusal(d, t);
        schedule(t, si, detail::event_kind::send);
        return;
      }
    }
    const retry_decision dec = client_.decide(s.attempt, a.retry_after_s, jitter_of(si));
    a.wait_s = dec.retry ? dec.wait_s : 0.0;
    record_attempt(a, t);
    charge_refusal(d, t);
    // A request that is never admitted, from a client that never gives up, would retry forever:
    // it ends as too large (above a capacity) or, after max_attempts_per_request, as a death.
    const bool hopeless = dec.retry && ((refused_forever && client_.retries_forever()) ||
                                        s.attempt + 1 >= detail::max_attempts_per_request);
    if (!dec.retry || hopeless) {
      const auto bi = static_cast<std::size_t>(worst);
      note_stop(s, d, bi, charge[bi].at_admission, refused_forever, opt_.start_unix_s + t);
      finish(s, refused_forever && dec.retry ? session_outcome::request_too_large : session_outcome::died_after_retries,
             t);
      return;
    }
    ++s.attempt;
    s.res.stall_s += dec.wait_s;
    if (routed_) d.share.stall_s += dec.wait_s;
    if (!coalesce_) return schedule(t + dec.wait_s, si, detail::event_kind::send);
    if (scheduled_.capacity() == 0) reserve_batches();
    const std::span<double> charges = retries_.push(t + dec.wait_s + 0.0, seq_++, si,  // + 0.0 as in schedule()
                                                    {s.split_hold, s.res.stall_s, s.attempt, s.res.attempts, s.res.rate_limited});
    for (std::size_t b = 0; b < d.nb; ++b) {
      charges[b] = charge[b].at_admission;
      waiting_charge_max_[b] = std::max(waiting_charge_max_[b], charges[b]);
    }
  }

  // ---- a herd: the 429s due before the next other event, in one batch -------------------------
  // With coalesce_, the waiting retries due before `next_queued` (the queue's next event) are taken
  // in key order, as the event loop would take them, as long as each is a 429 again — the split
  // held (or a fresh lookup giving the same split), every bucket's wait finite, one of them
  // positive, the client retrying — in a loop that reads what each needs beside its key (its
  // payload and charges) instead of the session's state. The retries they schedule take their
  // sequence numbers in that order; a waiting retry later than the earliest of them waits until
  // they are merged in behind the others. The first retry that is not such a 429 is left at the
  // front, for the event loop. Returns false when the attempt budget ran out (the run is cut off).
  bool refuse_waiting(detail::order_key_t next_queued);

  // The bucket that stopped the session: what it needed of the bucket, its capacity (at Unix time
  // `unix_t`, when the stop came), and whether the bucket can never admit it.
  static void note_stop(session_state& s, const deployment& d, std::size_t bi, double need, bool never,
                        double unix_t) noexcept {
    s.res.stop_bucket = static_cast<std::int16_t>(d.bucket_base + bi);
    s.res.stop_need = need;
    s.res.stop_capacity = d.tgt->limits[bi].limit_at(unix_t);
    s.res.stop_never_admitted = never;
  }

  // Whether the client may draw from a jitter stream: a client law without draws_jitter() may.
  bool client_draws_jitter() const noexcept {
    if constexpr (requires(const Client& c) {
                    { c.draws_jitter() } -> std::same_as<bool>;
                  })
      return client_.draws_jitter();
    else
      return true;
  }

  // Session si's jitter stream, made at its first 429 (most sessions never see one, and its state
  // is 2.5 KB): the draws are the same as if it were made up front. A client that never draws gets
  // one shared stream it never draws from, so that a 429 storm does not touch each session's.
  rng& jitter_of(std::uint32_t si) {
    if (!client_draws_jitter()) {
      if (!no_jitter_) no_jitter_.emplace(0);
      return *no_jitter_;
    }
    auto& j = jitter_[si];
    if (!j) j.emplace(plans_[si].seed);
    return *j;
  }

  // The buckets that count refused requests take one (weighted) now.
  void charge_refusal(deployment& d, double t) {
    if (!d.counts_refusals) return;  // most targets: a 429 charges nothing
    for (std::size_t b = 0; b < d.nb; ++b)
      if (d.tgt->limits[b].count_rejected) {
        const double w = d.tgt->limits[b].weight;  // one request, weighted
        d.buckets[b].charge(w, t, t);
        if (keeps_log_) d.log[b].push_back({t, w});
        if (opt_.record_attempts) {
          if (out_.bucket_ops.size() == out_.bucket_ops.capacity()) [[unlikely]]
            check_timeline_room(out_.bucket_ops.capacity() * sizeof(bucket_op));
          out_.bucket_ops.push_back({t, w, t, 0, static_cast<std::uint16_t>(d.bucket_base + b), false});
        }
      }
  }

  // One more 429 (or refusal) in the hour of t.
  // (A herd marks one per attempt: the hour of the last one, and the times that fall in it, save
  // the division.)
  void mark_429(double t) {
    if (t >= hour_from_ && t < hour_to_) [[likely]] {
      ++out_.hourly_429[hour_];
      return;
    }
    const auto h = static_cast<std::size_t>(std::max(0.0, t) / 3600.0);
    if (h >= out_.hourly_429.size()) [[unlikely]]
      out_.hourly_429.resize(std::max(h + 1, 2 * out_.hourly_429.size()), 0);
    ++out_.hourly_429[h];
    hour_ = h;
    hour_from_ = h == 0 ? -std::numeric_limits<double>::infinity() : hour_start(h);
    hour_to_ = hour_start(h + 1);
  }
  // The least time whose hour (t / 3600 as rounded, above) is h > 0: division is monotone, so
  // the times of one hour are those from hour_start(h) up to hour_start(h + 1).
  static double hour_start(std::size_t h) noexcept {
    const auto hd = static_cast<double>(h);
    double c = hd * 3600.0;
    while (std::nextafter(c, 0.0) / 3600.0 >= hd) c = std::nextafter(c, 0.0);
    while (c / 3600.0 < hd) c = std::nextafter(c, std::numeric_limits<double>::infinity());
    return c;
  }

  // The hours of operation and those of them with a 429 (simulation_result::operation_hours).
  void count_operation_hours() {
    const auto& w = opt_.operation_windows_s;
    // Without windows: every hour from t = 0 to the last end or 429 (at least one once anything was sent).
    std::size_t hours = static_cast<std::size_t>(std::ceil((started_any_ ? last_end_ : 0.0) / 3600.0));
    if (w.empty()) {
      for (std::size_t h = hours; h < out_.hourly_429.size(); ++h)
        if (out_.hourly_429[h] > 0) hours = h + 1;
      if (started_any_) hours = std::max<std::size_t>(hours, 1);
    } else {
      hours = std::max(hours, static_cast<std::size_t>(std::ceil(w.back().second / 3600.0)));
    }
    std::size_t k = 0;
    for (std::size_t h = 0; h < hours; ++h) {
      const double mid = 3600.0 * (static_cast<double>(h) + 0.5);
      bool on = w.empty();
      while (k < w.size() && w[k].second <= mid) ++k;
      for (std::size_t j = k; !on && j < w.size() && w[j].first <= mid; ++j) on = mid < w[j].second;
      if (!on) continue;
      ++out_.operation_hours;
      out_.hours_with_429 += h < out_.hourly_429.size() && out_.hourly_429[h] > 0;
    }
  }

  void note_first_429(std::uint32_t si, std::int32_t request, std::int16_t global, double wait, double t) {
    first_429_info f;
    f.session = si;
    f.request = request;
    f.time_s = t;
    f.bucket = global;
    f.bucket_name = out_.buckets[static_cast<std::size_t>(global)].name;
    f.retry_after_s = wait;
    f.sent_before = admitted_;
    f.buckets.resize(nb_total_);
    for (auto& d : dep_)
      for (std::size_t b = 0; b < d.nb; ++b) {
        auto& snap = f.buckets[d.bucket_base + b];
        snap.used = d.buckets[b].used(t);
        double demand = keeps_log_ ? 0.0 : std::numeric_limits<double>::quiet_NaN();
        if (keeps_log_)
          for (auto it = d.log[b].rbegin(); it != d.log[b].rend() && it->t > t - d.tgt->limits[b].period_s; ++it)
            demand += it->amount;
        snap.window_demand = demand;
      }
    out_.first_429 = std::move(f);
  }

  // ---- admitted: time and price the request, charge the buckets, start it ----------------------
  // `rs`: the request's runs if on_send worked them out (empty when its split was held).
  void admit(std::uint32_t si, attempt_record& a, detail::held_charge* held, std::span<const prefix_run> rs,
             std::int64_t cached, double t) {
    session_state& s = ss_[si];
    deployment& d = dep_[s.on];
    const request_spec& req = s.request();
    const token_counts& tk = a.tokens;
    // With an engine the times depend on the other requests and are filled in later.
    const request_timing tm = timing(d, si, req, cached, tk.generated(), t);
    const double t_first = t + tm.ttft_s;
    const double t_end = d.eng ? never_admitted : t_first + tm.decode_s;
    a.t_first_token = d.eng ? t : t_first;
    a.t_end = d.eng ? t : t_end;
    if (d.tgt->prices) a.cost_usd = price(d, tk, req.prompt_tokens, cached, t);
    if (s.spill_cached > cached && s.cached_from != s.on) note_lost_cache(d, tk, s.spill_cached - cached, t);
    s.spill_cached = 0;
    s.attempt_row = out_.attempts.size();
    record_attempt(a, t);  // bucket levels as the request found them, before its own charge
    s.op_row = out_.bucket_ops.size();
    for (std::size_t b = 0; b < d.nb; ++b) {
      if (opt_.record_attempts)
        out_.bucket_ops.push_back(
            {t, held[b].at_admission, t_end, 0, static_cast<std::uint16_t>(d.bucket_base + b), false});
      held[b].ticket = d.buckets[b].charge(held[b].at_admission, t, t_end);
      if (keeps_log_) {
        held[b].log_index = d.log[b].size();
        d.log[b].push_back({t, held[b].at_admission});
      }
      auto& summary = out_.buckets[d.bucket_base + b];
      summary.charged += held[b].at_admission + held[b].at_completion;
      if (d.tgt->limits[b].algorithm == bucket_algorithm::concurrency)  // peak = most in flight
        summary.peak_demand = std::max(summary.peak_demand, d.buckets[b].used(t));
    }
    s.t_admit = t;
    s.tokens = tk;
    s.cost = a.cost_usd;
    admitted_ += tk;
    if (in_flight_++ == 0) busy_since_ = t;
    if (routed_ && d.in_flight++ == 0) d.busy_since = t;
    if (d.eng) return engine_admit(d, si, tm, tk.total(), t);
    // Cached once its prefill is done; TTL from then.
    d.cache.touch(rs.data() ? rs : runs_of(s), req.prompt_tokens, t_first, d.tgt->cache.lifetime_s(req.write_1h), t);
    s.t_first = t_first;
    schedule(t_end, si, detail::event_kind::complete);
  }

  // A request moved here paid for `lost` prompt tokens that the target it left had cached: the
  // price of its split here minus the price had those tokens been cache reads.
  [[gnu::noinline]] void note_lost_cache(deployment& d, const token_counts& tk, std::int64_t lost, double t) noexcept;

  request_timing timing(deployment& d, std::uint32_t si, const request_spec& req, std::int64_t cached,
                        std::int64_t generated, double t) {
    if (opt_.recorded_speed) {
      const recorded_timing rec = plans_[si].script->recorded_of(ss_[si].next);
      const double ttft = std::max(0.0, rec.ttft_s);
      return {ttft, std::max(0.0, rec.duration_s - ttft)};
    }
    const request_timing tm = d.speed.time(cached, req.prompt_tokens - cached, generated);
    if (!d.has_noise) return tm;
    // A request's times under the target's speed noise (a log-normal factor per request and one
    // per session), its time-of-day factor (the UTC hour it is sent in) and its output kinds' factor.
    const auto& sp = d.tgt->speed;
    double f = sp.noise_median * std::exp(sp.noise_sigma * standard_normal(noise_g_[si]) +
                                          sp.session_sigma * session_z_[si]);
    if (!sp.hour_factors.empty()) f *= sp.hour_factors[utc_hour(opt_.start_unix_s + t)];
    f *= output_factor(sp.output, req.output_kinds);
    return {tm.ttft_s * f, tm.decode_s * f};
  }

  double price(deployment& d, const token_counts& tk, std::int64_t prompt_tokens, std::int64_t cached, double t) {
    const target& tgt = *d.tgt;
    const request_cost c = price_request(*tgt.prices, tk, opt_.start_unix_s + t, opt_.batch);
    double usd = c.total_usd;
    if (tgt.prices->cache_storage_usd_per_million_hour > 0 && tgt.cache.enabled) {
      const auto fresh = std::max<std::int64_t>(0, d.cache.cacheable(prompt_tokens) - cached);
      const double storage = static_cast<double>(fresh) * (tgt.cache.ttl_s / 3600.0) *
                             tgt.prices->cache_storage_usd_per_million_hour / 1e6;
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
    deployment& d = dep_[s.on];
    const detail::held_charge* held = held_of(si);
    for (std::size_t b = 0; b < d.nb; ++b) {
      const double delta = held[b].at_completion;
      if (delta == 0.0) continue;
      d.buckets[b].adjust(delta, t, s.t_admit, held[b].ticket);
      if (opt_.record_attempts)
        out_.bucket_ops.push_back(
            {t, delta, t, s.op_row + b, static_cast<std::uint16_t>(d.bucket_base + b), true});
      if (!keeps_log_) continue;
      if (delta < 0) d.log[b][held[b].log_index].amount += delta;
      else d.log[b].push_back({t, delta});
    }
    if (--in_flight_ == 0) out_.busy_s += t - busy_since_;
    const request_sample row{si, s.t_admit, s.t_first, t, s.tokens.prompt(), s.tokens.cache_read, s.tokens.generated()};
    if (opt_.request_rows) out_.requests.push_back(row);
    else add_median_samples(row, out_.medians_from.effective_tps, out_.medians_from.ttft_s);
    ++served_;
    ++s.res.requests_served;
    s.res.tokens += s.tokens;
    s.res.cost_usd += s.cost;
    if (routed_) {
      if (--d.in_flight == 0) d.share.busy_s += t - d.busy_since;
      ++d.share.requests_served;
      d.share.tokens += s.tokens;
      d.share.cost_usd += s.cost;
    }
    last_end_ = std::max(last_end_, t);
    s.split_tokens = -1;  // the next request has a prompt of its own
    if (++s.next == s.nreq) {
      finish(s, session_outcome::completed, t);
    } else {
      s.attempt = 0;
      schedule(t + s.request().delay_before_s, si, detail::event_kind::send);
    }
  }

  // ---- a local engine (engine.hpp): slots, a first-come queue, prefill in turn, shared decode --
  // Finishes the earliest decoding sequence of any engine if it ends no later than the next
  // queued event; returns whether it did.
  bool finish_engine_before_next_event();

  void engine_admit(deployment& d, std::uint32_t si, const request_timing& tm, std::int64_t kv_tokens, double t);

  bool engine_fits(const deployment& d, std::uint32_t si) const noexcept;

  // The request gets a slot at t; its prefill queues behind the others'.
  void engine_start(deployment& d, std::uint32_t si, double t);

  // Prefill done: the request joins its engine's decoding batch.
  void on_decode_start(std::uint32_t si, double t);

  // The engine's earliest decoding sequence ends at t: free its slot and KV, let the queue in.
  void engine_finish(deployment& d, double t);

  static void advance_vclock(deployment& d, double t) noexcept;

  // ---- summaries --------------------------------------------------------------------------------
  simulation_result summarise() {
    for (std::size_t i = 0; i < ss_.size(); ++i) {
      out_.sessions[i] = ss_[i].res;
      out_.tokens += ss_[i].res.tokens;
    }
    out_.wall_s = started_any_ ? last_end_ - first_send_ : 0.0;
    count_operation_hours();
    out_.cost_usd = out_.token_cost_usd;
    for (auto& d : dep_) {
      const target& tgt = *d.tgt;
      for (std::size_t b = 0; b < d.nb; ++b) {
        if (tgt.limits[b].algorithm == bucket_algorithm::concurrency) continue;
        const auto [peak, start] = keeps_log_ ? detail::peak_window_demand(d.log[b], tgt.limits[b].period_s)
                                              : std::pair{std::numeric_limits<double>::quiet_NaN(),
                                                          std::numeric_limits<double>::quiet_NaN()};
        out_.buckets[d.bucket_base + b].peak_demand = peak;
        out_.buckets[d.bucket_base + b].peak_window_start_s = start;
      }
      if (opt_.record_charges)
        for (auto& l : d.log) out_.charges.push_back(std::move(l));
      if (d.eng && !out_.engine) {  // a route's first engine
        d.est.peak_kv_gb = static_cast<double>(d.est.peak_kv_tokens) * d.eng->memory.kv_bytes_per_token / 1e9;
        out_.engine = d.est;
      }
      double fixed = 0;  // the target's fee share or energy over the run's wall clock
      if (tgt.plan) fixed += plan_fee_share(*tgt.plan, out_.wall_s);
      if (tgt.power) {
        // One target: busy while any request is in flight (the run's busy_s); a route: its own.
        const energy_cost e = local_cost(*tgt.power, routed_ ? d.share.busy_s : out_.busy_s, out_.wall_s);
        if (!out_.energy) out_.energy = energy_cost{};
        out_.energy->energy_kwh += e.energy_kwh;
        out_.energy->electricity_usd += e.electricity_usd;
        out_.energy->amortisation_usd += e.amortisation_usd;
        fixed += e.total_usd();
      }
      out_.cost_usd += fixed;
      d.share.cost_usd += fixed;
      if (routed_) out_.route.push_back(std::move(d.share));
    }
    return std::move(out_);
  }

  const Client& client_;
  std::span<const session_plan> plans_;
  const sim_options& opt_;
  detail::plan_layout layout_;
  std::vector<prefix_run> runs_;  // the current request's runs, in global lineage ids
  std::vector<deployment> dep_;   // the target, or the route's targets in order
  std::array<std::uint8_t, max_route_targets> engines_{};  // the deployments with an engine
  std::size_t n_engines_ = 0;
  std::size_t nb_total_ = 0;      // buckets over all deployments
  bool routed_ = false;
  route_policy policy_;
  std::vector<session_state> ss_;
  std::vector<detail::held_charge> held_;  // per session, held_stride_ of them: its current request's charges
  std::size_t held_stride_ = 0;            // (the most buckets of one deployment)
  std::vector<std::optional<rng>> jitter_;  // each session's client jitter stream (cold, 2.5 KB each)
  std::optional<rng> no_jitter_;            // what a client that never draws is given (never drawn)
  attempt_record attempt_;                  // on_send's scratch: the attempt being decided
  std::vector<rng> noise_g_;
  std::vector<double> session_z_;  // a session's standard normal for the speed's session factor
  simulation_result out_;
  detail::calendar_queue queue_;
  bool top_handled_ = false;  // the queue's top is the event being handled (run)
  std::uint64_t seq_ = 0;
  std::uint64_t served_ = 0;  // requests served so far
  bool coalesce_ = false;
  // Each bucket's charges are logged, for the peak demands and the first 429's window demand (or for
  // the caller: record_charges).
  bool keeps_log_ = opt_.record_charges || opt_.peak_demand;
  // A waiting retry's session fields that a batch reads and updates, kept beside its key while it
  // waits (the session's own are brought up to date when it leaves: write_back); its admission
  // charges are the set's numbers.
  struct waiting_retry {
    cache_hold hold;  // split_hold
    double stall_s;   // res.stall_s
    std::int32_t attempt, attempts, rate_limited;  // attempt, res.attempts, res.rate_limited
  };
  using waiting_set = detail::retry_queue<waiting_retry>;
  using waiting_entry = typename waiting_set::entry;
  // The retries a batch set aside, sorted, merged with those it scheduled in order.
  [[gnu::noinline]] std::span<const waiting_entry> merge_aside(std::size_t n_scheduled, std::size_t n_aside);
  static void write_back(session_state& s, const waiting_retry& w) noexcept {
    s.split_hold = w.hold;
    s.res.stall_s = w.stall_s;
    s.attempt = w.attempt;
    s.res.attempts = w.attempts;
    s.res.rate_limited = w.rate_limited;
  }
  waiting_set retries_;
  // The largest charge on each bucket of any retry that waited in retries_ this run (a batch skips
  // a bucket that takes all of them).
  std::array<double, max_buckets> waiting_charge_max_{};
  // A batch's retries, each with room for every session (reserve_batches): those it schedules in
  // order, those it sets aside, and merge_aside's output.
  std::vector<waiting_entry> scheduled_, aside_, merged_scheduled_;
  std::uint64_t attempts_ = 0;  // over all sessions
  double hour_from_ = 0, hour_to_ = 0;  // mark_429's last hour, hour_, spans [hour_from_, hour_to_)
  std::size_t hour_ = 0;
  std::uint64_t budget_ = opt_.max_attempts > 0 ? opt_.max_attempts : std::numeric_limits<std::uint64_t>::max();
  // Totals.
  std::int64_t in_flight_ = 0;
  double busy_since_ = 0;
  token_counts admitted_;  // tokens of every request admitted so far
  bool started_any_ = false;
  double first_send_ = 0, last_end_ = 0;
};

} // namespace loopcast

#include "loopcast/detail/simulation/engine_pool.hpp"
#include "loopcast/detail/simulation/herd.hpp"
#include "loopcast/detail/simulation/router.hpp"
