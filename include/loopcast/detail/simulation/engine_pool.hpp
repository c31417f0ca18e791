// loopcast — a local engine in a run (engine.hpp): slots, a KV-cache pool, a first-come prefill
// queue and shared batched decode, on a virtual clock. The simulation's member functions;
// internal, included by run.hpp.
#pragma once

#include "loopcast/detail/simulation/run.hpp"

namespace loopcast {

// ---- a local engine (engine.hpp): slots, a first-come queue, prefill in turn, shared decode --
// Finishes the earliest decoding sequence of any engine if it ends no later than the next
// queued event; returns whether it did.
template <bucket_law Bucket, speed_law Speed, client_law Client>
bool simulation<Bucket, Speed, Client>::finish_engine_before_next_event() {
  deployment* first = nullptr;
  double t_first = std::numeric_limits<double>::infinity();
  for (std::size_t e = 0; e < n_engines_; ++e) {
    deployment& d = dep_[engines_[e]];
    if (d.batch.empty()) continue;
    const double share = decode_share(*d.eng, static_cast<std::int64_t>(d.batch.size()));
    const double t_done = d.vclock_t + std::max(0.0, d.batch.front().v_end - d.vclock) / share;
    if (t_done < t_first) {
      t_first = t_done;
      first = &d;
    }
  }
  if (!first || (!queue_.empty() && t_first > queue_.top().t)) return false;
  engine_finish(*first, t_first);
  return true;
}

template <bucket_law Bucket, speed_law Speed, client_law Client>
void simulation<Bucket, Speed, Client>::engine_admit(deployment& d, std::uint32_t si, const request_timing& tm, std::int64_t kv_tokens, double t) {
  session_state& s = ss_[si];
  s.prefill_s = tm.ttft_s;
  s.decode_work_s = tm.decode_s;
  s.kv_tokens = kv_tokens;  // within the pool: checked before the loop
  if (d.wait_count == 0 && engine_fits(d, si)) {
    engine_start(d, si, t);
    return;
  }
  d.waiting[(d.wait_head + d.wait_count) % d.waiting.size()] = si;
  ++d.wait_count;
  d.est.peak_queue = std::max(d.est.peak_queue, static_cast<std::int32_t>(d.wait_count));
}

template <bucket_law Bucket, speed_law Speed, client_law Client>
bool simulation<Bucket, Speed, Client>::engine_fits(const deployment& d, std::uint32_t si) const noexcept {
  return d.sequences < d.eng->max_sequences && d.kv + ss_[si].kv_tokens <= d.kv_pool;
}

// The request gets a slot at t; its prefill queues behind the others'.
template <bucket_law Bucket, speed_law Speed, client_law Client>
void simulation<Bucket, Speed, Client>::engine_start(deployment& d, std::uint32_t si, double t) {
  session_state& s = ss_[si];
  ++d.sequences;
  d.kv += s.kv_tokens;
  d.est.peak_sequences = std::max(d.est.peak_sequences, static_cast<std::int32_t>(d.sequences));
  d.est.peak_kv_tokens = std::max(d.est.peak_kv_tokens, d.kv);
  const double begin = std::max(t, d.prefill_free_at);
  s.t_first = begin + s.prefill_s;
  d.prefill_free_at = s.t_first;
  d.est.queue_wait_s += begin - s.t_admit;
  d.cache.touch(runs_of(s), s.request().prompt_tokens, s.t_first, d.tgt->cache.lifetime_s(s.request().write_1h), t);
  if (opt_.record_attempts) out_.attempts[s.attempt_row].t_first_token = s.t_first;
  schedule(s.t_first, si, detail::event_kind::decode_start);
}

// Prefill done: the request joins its engine's decoding batch.
template <bucket_law Bucket, speed_law Speed, client_law Client>
void simulation<Bucket, Speed, Client>::on_decode_start(std::uint32_t si, double t) {
  deployment& d = dep_[ss_[si].on];
  advance_vclock(d, t);
  d.batch.push_back({d.vclock + ss_[si].decode_work_s, seq_++, si});
  std::push_heap(d.batch.begin(), d.batch.end(), detail::finishes_later{});
}

// The engine's earliest decoding sequence ends at t: free its slot and KV, let the queue in.
template <bucket_law Bucket, speed_law Speed, client_law Client>
void simulation<Bucket, Speed, Client>::engine_finish(deployment& d, double t) {
  advance_vclock(d, t);
  std::pop_heap(d.batch.begin(), d.batch.end(), detail::finishes_later{});
  const std::uint32_t si = d.batch.back().session;
  d.batch.pop_back();
  --d.sequences;
  d.kv -= ss_[si].kv_tokens;
  if (opt_.record_attempts) out_.attempts[ss_[si].attempt_row].t_end = t;
  on_complete(si, t);
  while (d.wait_count > 0 && engine_fits(d, d.waiting[d.wait_head])) {
    const std::uint32_t next = d.waiting[d.wait_head];
    d.wait_head = (d.wait_head + 1) % d.waiting.size();
    --d.wait_count;
    engine_start(d, next, t);
  }
}

template <bucket_law Bucket, speed_law Speed, client_law Client>
void simulation<Bucket, Speed, Client>::advance_vclock(deployment& d, double t) noexcept {
  if (t > d.vclock_t) {
    d.vclock += (t - d.vclock_t) * decode_share(*d.eng, static_cast<std::int64_t>(d.batch.size()));
    d.vclock_t = t;
  }
}

} // namespace loopcast
