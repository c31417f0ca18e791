// loopcast — the retries of refused requests, kept apart from the event queue, in key order.
//
// On a tier the fleet overwhelms, most events are retries that are refused again. The simulation
// keeps them here as (time, sequence number) keys — event_queue's, so which event comes first does
// not depend on where it is kept — sorted, so that the retries due next are a prefix: a batch
// (simulation::refuse_waiting) walks them from the front, in the order the event loop would handle
// them, and hands back the retries it schedules, which are merged in behind them. Retries added one
// at a time (a request's first 429) wait unsorted until the next batch or take merges them in.
//
// Each session waits here at most once, so what a batch reads and updates of a retry (a Payload
// and `width` numbers) is kept by session, beside the others', instead of in the session's state.
// Nothing allocates once reserve() has run.
#pragma once

#include "loopcast/detail/event_queue.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace loopcast::detail {

template <class Payload>
class retry_queue {
public:
  static constexpr order_key_t no_key = ~order_key_t{0};  // later than any event

  /// A waiting retry: its key and its session.
  struct entry {
    std::uint64_t time_bits;  // the key: (time bits, sequence number), as order_key()
    std::uint64_t seq;
    std::uint32_t session;
    order_key_t key() const noexcept { return (static_cast<order_key_t>(time_bits) << 64) | seq; }
    double time() const noexcept { return std::bit_cast<double>(time_bits); }
  };
  static entry make_entry(double t, std::uint64_t seq, std::uint32_t session) noexcept {
    return {std::bit_cast<std::uint64_t>(t), seq, session};
  }

  /// Room for sessions 0 … n − 1, each with `width` numbers beside its payload.
  void reserve(std::size_t n, std::size_t width) {
    run_.reserve(n);
    merged_.reserve(n);
    added_.reserve(n);
    payloads_.resize(n);
    numbers_.resize(n * width);
    width_ = width;
  }
  bool empty() const noexcept { return head_ == run_.size() && added_.empty(); }

  /// Session s retries at time t (t ≥ +0.0), scheduled seq-th, with payload p (s is not waiting);
  /// returns its numbers, to be filled in.
  std::span<double> push(double t, std::uint64_t seq, std::uint32_t s, const Payload& p) noexcept {
    const entry e = make_entry(t, seq, s);
    added_.push_back(e);
    added_min_ = std::min(added_min_, e.key());
    payloads_[s] = p;
    return {numbers_.data() + std::size_t{s} * width_, width_};
  }

  /// The earliest retry's key (no_key when there is none).
  order_key_t earliest_key() const noexcept {
    return std::min(head_ < run_.size() ? run_[head_].key() : no_key, added_min_);
  }

  /// The waiting retries in key order (the added ones merged in first).
  std::span<const entry> settle() noexcept {
    if (!added_.empty()) {
      std::sort(added_.begin(), added_.end(), by_key);
      merge_in(added_);
      added_.clear();
      added_min_ = no_key;
    }
    return {run_.data() + head_, run_.size() - head_};
  }

  /// Drops the first n of settle()'s retries and adds `later`, sorted by key (sessions that are
  /// not waiting; their payloads and numbers already written).
  void advance(std::size_t n, std::span<const entry> later) noexcept {
    head_ += n;
    if (!later.empty()) merge_in(later);
  }

  /// Removes the earliest retry (settled: there is one) and returns it.
  entry take_front() noexcept { return run_[head_++]; }

  Payload& payload(std::uint32_t s) noexcept { return payloads_[s]; }
  const double* numbers(std::uint32_t s) const noexcept { return numbers_.data() + std::size_t{s} * width_; }
  std::span<double> numbers_of(std::uint32_t s) noexcept { return {numbers_.data() + std::size_t{s} * width_, width_}; }

  /// Entries in key order (a type, so that sorts and merges inline it).
  struct by_key_t {
    bool operator()(const entry& a, const entry& b) const noexcept { return a.key() < b.key(); }
  };
  static constexpr by_key_t by_key{};

private:
  // run_[head_…] and `sorted` (both in key order) into one run, from merged_'s storage.
  void merge_in(std::span<const entry> sorted) noexcept {
    const entry* a = run_.data() + head_;
    const entry* const a_end = run_.data() + run_.size();
    merged_.clear();
    if (a == a_end || !(sorted.front().key() < a_end[-1].key())) {  // every new one after the run
      if (head_ == 0) {
        run_.insert(run_.end(), sorted.begin(), sorted.end());
        return;
      }
      merged_.insert(merged_.end(), a, a_end);
      merged_.insert(merged_.end(), sorted.begin(), sorted.end());
    } else {
      merged_.resize(static_cast<std::size_t>(a_end - a) + sorted.size());
      std::merge(a, a_end, sorted.begin(), sorted.end(), merged_.begin(), by_key);
    }
    run_.swap(merged_);
    head_ = 0;
  }

  std::vector<entry> run_;     // the waiting retries, in key order, from head_
  std::size_t head_ = 0;
  std::vector<entry> merged_;  // merge_in's output (swapped with run_)
  std::vector<entry> added_;   // pushed since the last settle(), in no order
  order_key_t added_min_ = no_key;
  std::vector<Payload> payloads_;  // per session
  std::vector<double> numbers_;    // width_ per session
  std::size_t width_ = 0;
};

} // namespace loopcast::detail
