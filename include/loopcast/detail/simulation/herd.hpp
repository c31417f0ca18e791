// loopcast — a herd of 429s in a run (docs/architecture.md, "What a herd costs"): the retries a
// target refuses wait beside the event queue, and those due before the next other event are worked
// out in one batch, in the event loop's order, with the same results to the bit. Which bucket laws
// batch is herd_reader's to say. The simulation's member functions; internal, included by run.hpp.
#pragma once

#include "loopcast/detail/simulation/run.hpp"

namespace loopcast {

namespace detail {

/// How a herd's batch reads a bucket law (docs/architecture.md, "What a herd costs"). A batch works
/// out, between two events that change a bucket, every 429 due, so it reads waits only. A law
/// opts in by specialising herd_reader with `batches = true`, a constructor taking the deployment's
/// buckets, their count, the batch's earliest time and the largest charge on each bucket of any
/// retry in it once per batch, and `longest_wait(charges, t)` for t no earlier: the longest of their
/// waits for the charges at t, exactly as Bucket::wait_for gives them. A tool's own law is left
/// out: each of its 429s is its own event.
template <class Bucket>
struct herd_reader {
  static constexpr bool batches = false;
  herd_reader(std::vector<Bucket>&, std::size_t, double, const double*) {}
  admission_wait longest_wait(const double*, double) const noexcept { return {0.0, -1}; }
};

/// The built-in buckets: when all are token buckets, they are read by value (their reads are pure,
/// and nothing charges them during a batch); otherwise through each bucket, whose reads move a
/// window or a concurrency limit to the time asked, which only grows within a batch.
template <>
struct herd_reader<bucket> {
  static constexpr bool batches = true;
  herd_reader(std::vector<bucket>& b, std::size_t nb, double t0, const double* charge_max)
      : buckets_(b), nb_(nb) {
    // (A limit that steps within the run is read through its bucket, which takes the step.)
    by_value_ = std::all_of(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(nb), [](const bucket& x) {
      return x.config().algorithm == bucket_algorithm::token_bucket && !x.limit_steps_ahead();
    });
    if (!by_value_) return;
    for (std::size_t i = 0; i < nb; ++i) {
      readings_[i] = b[i].read_token_bucket();
      // A token bucket's level only grows between charges (level_at is monotone in t, rounding
      // included), so a charge no larger than its level at t0, and not oversize, waits 0 at any
      // t >= t0: the batch skips that bucket for it (its wait would change nothing in
      // longest_of), and skips it altogether when it takes the largest charge of any retry.
      fits_[i] = std::min(readings_[i].state.level_at(t0), readings_[i].oversize_above);
      if (charge_max[i] > fits_[i]) read_[n_read_++] = static_cast<std::uint8_t>(i);
    }
  }
  [[gnu::always_inline]] admission_wait longest_wait(const double* charges, double t) const noexcept {
    if (by_value_) {  // longest_of over the buckets read, in their order
      admission_wait a{0.0, -1};
      for (std::size_t k = 0; k < n_read_; ++k) {
        const std::size_t b = read_[k];
        if (charges[b] <= fits_[b]) continue;  // 0 (see the constructor)
        const double w = readings_[b].wait_for(charges[b], t);
        if (w == never_admitted) return {never_admitted, static_cast<std::int16_t>(b)};
        if (w > a.wait) a = {w, static_cast<std::int16_t>(b)};
      }
      return a;
    }
    return longest_of(nb_, [this, charges, t](std::size_t b) { return buckets_[b].wait_for(charges[b], t); });
  }

private:
  std::vector<bucket>& buckets_;
  std::size_t nb_;
  bool by_value_ = false;
  std::array<bucket::token_reading, max_buckets> readings_;
  std::array<double, max_buckets> fits_;  // a charge up to this waits 0 in the batch
  std::array<std::uint8_t, max_buckets> read_;  // the buckets some retry's charge may wait on
  std::size_t n_read_ = 0;
};

} // namespace detail

// The batches' storage, made at the run's first refused retry (most runs of one session never
// have one): every session can wait at once.
template <bucket_law Bucket, speed_law Speed, client_law Client>
void simulation<Bucket, Speed, Client>::reserve_batches() {
  retries_.reserve(plans_.size(), dep_[0].nb);
  // (A pass takes each waiting session at most once: it schedules at most one retry per session.)
  scheduled_.resize(plans_.size());
  aside_.resize(plans_.size());
  merged_scheduled_.resize(plans_.size());
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
template <bucket_law Bucket, speed_law Speed, client_law Client>
bool simulation<Bucket, Speed, Client>::refuse_waiting(detail::order_key_t next_queued) {
  deployment& d = dep_[0];
  const bool retry_after = d.tgt->sends_retry_after;
  const std::uint64_t seq0 = seq_;
  // The buckets as the batch reads them (nothing charges them during a batch), from its earliest
  // retry on.
  const detail::herd_reader<Bucket> reader(d.buckets, d.nb, retries_.settle().front().time(),
                                           waiting_charge_max_.data());
  // The client's stream, when it draws none (the same one for every session).
  rng* const no_jitter = client_draws_jitter() ? nullptr : &jitter_of(0);
  cache_hold hold;  // a new hold's lookup (written whole by it)
  // The preset-driven client's usual answer, without asking it (any other answer is the client's).
  retry_policy::honoured_retry_after honoured{0, -1.0};
  if constexpr (std::is_same_v<Client, retry_policy>) honoured = client_.honoured(retry_after);
  for (;;) {
    const std::span<const waiting_entry> run = retries_.settle();
    // The retries due before the queue's next event.
    const std::size_t due = static_cast<std::size_t>(
        std::partition_point(run.begin(), run.end(), [next_queued](const waiting_entry& e) { return e.key() < next_queued; }) -
        run.begin());
    // The earliest retry scheduled so far: a waiting retry later than it comes after it.
    double earliest_retry = std::numeric_limits<double>::infinity();
    // The retries it schedules, in key order: retries refused together are scheduled nearly in the
    // order they were refused in, so the few that break it (a retry before the last one: it is set
    // aside, or the last one is, when it alone stood out) wait in aside_, to be sorted and merged in.
    waiting_entry* const scheduled = scheduled_.data();
    waiting_entry* const aside = aside_.data();
    std::size_t n_scheduled = 0, n_aside = 0;
    double last_t = 0, before_last_t = 0;  // the times of scheduled_'s last two
    // The pass's 429s by the bucket that refused them, and its attempts, added up after it (kept
    // out of memory the loop writes).
    std::array<std::uint64_t, max_buckets> refused;  // (d.nb of them zeroed: a batch is often short)
    std::fill_n(refused.begin(), d.nb, std::uint64_t{0});
    std::uint64_t made = 0;
    const std::uint64_t room = budget_ - attempts_;
    std::size_t i = 0;
    bool passed_one = false, cut = false;
    for (; i < due; ++i) {
      const waiting_entry& e = run[i];
      const double t = e.time();
      if (t > earliest_retry) {
        passed_one = true;
        break;
      }
      const std::uint32_t si = e.session;
      waiting_retry& w = retries_.payload(si);
      if (w.attempt + 1 >= detail::max_attempts_per_request) break;
      const bool new_hold = !d.cache.still_holds(w.hold, t);
      if (new_hold) {
        // The cache may have moved on since the last lookup: the same split (the charges held) is
        // the same attempt, with a new hold; another split is left to on_send.
        const session_state& s = ss_[si];
        if (d.cache.lookup(runs_of(s), s.request().prompt_tokens, t, &hold) != s.split_tokens) break;
      }
      const double* charges = retries_.numbers(si);
      const detail::admission_wait aw = reader.longest_wait(charges, t);
      if (aw.wait == never_admitted || !(aw.wait > 0)) break;
      const retry_decision dec = honoured.answers(w.attempt, aw.wait)
                                     ? retry_decision{true, aw.wait}
                                     : client_.decide(w.attempt, retry_after ? aw.wait : -1.0,
                                                      no_jitter ? *no_jitter : jitter_of(si));
      if (!dec.retry) break;  // (a client that gives up draws nothing: on_send asks it again)
      // A 429 again: what on_send and refuse() would do.
      ++w.attempts;
      ++made;
      ++w.rate_limited;
      mark_429(t);
      ++refused[static_cast<std::size_t>(aw.worst)];
      ++w.attempt;
      w.stall_s += dec.wait_s;
      if (new_hold) w.hold = hold;
      const double retry_t = t + dec.wait_s + 0.0;  // + 0.0 as in schedule()
      // (Equal times: the later sequence number, so after. The entry is written field by field
      // where it goes: a copy of one built just before would wait for its stores.)
      waiting_entry* slot;
      if (n_scheduled == 0 || retry_t >= last_t) {
        slot = &scheduled[n_scheduled++];
        before_last_t = last_t;
        last_t = retry_t;
      } else if (n_scheduled == 1 || retry_t >= before_last_t) {
        aside[n_aside++] = scheduled[n_scheduled - 1];
        slot = &scheduled[n_scheduled - 1];
        last_t = retry_t;
      } else {
        slot = &aside[n_aside++];
      }
      slot->time_bits = std::bit_cast<std::uint64_t>(retry_t);
      slot->seq = seq_++;
      slot->session = si;
      earliest_retry = std::min(earliest_retry, retry_t);
      if (made == room) {
        ++i;
        cut = true;
        break;
      }
    }
    attempts_ += made;
    for (std::size_t b = 0; b < d.nb; ++b) out_.buckets[b].refusals += static_cast<double>(refused[b]);
    const std::span<const waiting_entry> later = n_aside > 0 ? merge_aside(n_scheduled, n_aside)
                                                              : std::span<const waiting_entry>(scheduled, n_scheduled);
    const double cut_t = i > 0 ? run[i - 1].time() : 0.0;
    retries_.advance(i, later);
    if (cut) {
      cut_off(cut_t);
      return false;
    }
    if (!passed_one) break;
  }
  if (opt_.progress && (seq0 >> 14) != (seq_ >> 14))
    opt_.progress(opt_.progress_context, served_, layout_.requests);
  return true;
}

// The first n_aside retries a batch set aside, sorted, merged with the first n_scheduled it
// scheduled in order: all of them, in key order.
template <bucket_law Bucket, speed_law Speed, client_law Client>
std::span<const typename simulation<Bucket, Speed, Client>::waiting_entry>
simulation<Bucket, Speed, Client>::merge_aside(std::size_t n_scheduled, std::size_t n_aside) {
  const auto aside = aside_.begin(), scheduled = scheduled_.begin();
  std::sort(aside, aside + static_cast<std::ptrdiff_t>(n_aside), waiting_set::by_key);
  std::merge(scheduled, scheduled + static_cast<std::ptrdiff_t>(n_scheduled), aside,
             aside + static_cast<std::ptrdiff_t>(n_aside), merged_scheduled_.begin(), waiting_set::by_key);
  return {merged_scheduled_.data(), n_scheduled + n_aside};
}

} // namespace loopcast
