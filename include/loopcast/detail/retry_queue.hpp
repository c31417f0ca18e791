// loopcast — the retries of refused requests, kept apart from the event queue, in key order.
//
// On a tier the fleet overwhelms, most events are retries that are refused again. The simulation
// keeps them here as (time, sequence number) keys — event_queue's, so which event comes first does
// not depend on where it is kept — sorted, so that the retries due next are a prefix: a batch
// (simulation::refuse_waiting) walks them from the front, in the order the event loop would handle
// them, and hands back the retries it schedules, which are merged in behind them. Retries added one
// at a time (a request's first 429) wait unsorted until the next settle() merges them in.
//
// The sorted run lies inside a buffer twice the most retries that can wait, with room on both
// sides: a merge writes into the room on the side where fewer waiting retries have to move (the
// ones before the first new retry stay where they are when it writes into the room behind, the
// ones after the last new retry when it writes into the room in front), so handing back a few
// retries costs about as many moves as there are retries between them.
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
#include <cstring>
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
  /// Entries in key order (a type, so that sorts and merges inline it).
  struct by_key_t {
    bool operator()(const entry& a, const entry& b) const noexcept { return a.key() < b.key(); }
  };
  static constexpr by_key_t by_key{};

  /// Room for sessions 0 … n − 1, each with `width` numbers beside its payload.
  void reserve(std::size_t n, std::size_t width) {
    buf_.resize(2 * n + 2);
    head_ = tail_ = buf_.size() / 2;
    added_.reserve(n);
    payloads_.resize(n);
    numbers_.resize(n * width);
    width_ = width;
  }
  bool empty() const noexcept { return head_ == tail_ && added_.empty(); }

  /// Session s retries at time t (t ≥ +0.0), scheduled seq-th, with payload p (s is not waiting);
  /// returns its numbers, to be filled in.
  std::span<double> push(double t, std::uint64_t seq, std::uint32_t s, const Payload& p) noexcept {
    const entry e = make_entry(t, seq, s);
    added_.push_back(e);
    added_min_ = std::min(added_min_, e.key());
    payloads_[s] = p;
    return numbers_of(s);
  }

  /// The earliest retry's key (no_key when there is none).
  order_key_t earliest_key() const noexcept { return std::min(head_ < tail_ ? buf_[head_].key() : no_key, added_min_); }

  /// The waiting retries in key order (the added ones merged in first).
  std::span<const entry> settle() noexcept {
    if (!added_.empty()) {
      std::sort(added_.begin(), added_.end(), by_key);
      merge_in(added_);
      added_.clear();
      added_min_ = no_key;
    }
    return {buf_.data() + head_, tail_ - head_};
  }

  /// Drops the first n of settle()'s retries and adds `later`, sorted by key (sessions that are
  /// not waiting; their payloads and numbers already written).
  void advance(std::size_t n, std::span<const entry> later) noexcept {
    head_ += n;
    if (!later.empty()) merge_in(later);
  }

  /// Removes the earliest retry (settled: there is one) and returns it.
  entry take_front() noexcept { return buf_[head_++]; }

  Payload& payload(std::uint32_t s) noexcept { return payloads_[s]; }
  const double* numbers(std::uint32_t s) const noexcept { return numbers_.data() + std::size_t{s} * width_; }
  std::span<double> numbers_of(std::uint32_t s) noexcept { return {numbers_.data() + std::size_t{s} * width_, width_}; }

private:
  // `sorted` (in key order, none of them waiting) into the run.
  void merge_in(std::span<const entry> sorted) noexcept {
    const std::size_t m = sorted.size();
    entry* const run = buf_.data() + head_;
    const std::size_t live = tail_ - head_;
    // The waiting retries before the first new one, and after the last: those need not move.
    const std::size_t before = static_cast<std::size_t>(std::upper_bound(run, run + live, sorted.front(), by_key) - run);
    const std::size_t after = live - static_cast<std::size_t>(std::upper_bound(run + before, run + live, sorted.back(), by_key) - run);
    if (live - before <= live - after) {  // into the room behind: the ones from the first new one on move
      if (buf_.size() - tail_ < m) recentre(m);
      merge_backward(sorted);
    } else {
      if (head_ < m) recentre(m);
      merge_forward(sorted);
    }
  }

  // The room in front grows by m: run_[head_…tail_) moves m places back ... or to the middle.
  void recentre(std::size_t m) noexcept {
    const std::size_t live = tail_ - head_;
    const std::size_t to = (buf_.size() - live) / 2;  // ≥ m on both sides: the buffer holds 2n + 2
    std::memmove(static_cast<void*>(buf_.data() + to), buf_.data() + head_, live * sizeof(entry));
    head_ = to;
    tail_ = to + live;
    (void)m;
  }

  // Into the room in front: the output starts m places before the run and catches up with it when
  // the last new one is placed; the waiting retries after it are where they belong.
  void merge_forward(std::span<const entry> sorted) noexcept {
    entry* out = buf_.data() + head_ - sorted.size();
    entry* a = buf_.data() + head_;
    entry* const a_end = buf_.data() + tail_;
    head_ -= sorted.size();
    for (const entry& b : sorted) {
      while (a != a_end && by_key(*a, b)) *out++ = *a++;
      *out++ = b;
    }
  }

  // Into the room behind, from the back.
  void merge_backward(std::span<const entry> sorted) noexcept {
    entry* const a_begin = buf_.data() + head_;
    entry* a = buf_.data() + tail_;
    entry* out = a + sorted.size();
    tail_ += sorted.size();
    for (auto b = sorted.rbegin(); b != sorted.rend(); ++b) {
      while (a != a_begin && by_key(*b, a[-1])) *--out = *--a;
      *--out = *b;
    }
  }

  std::vector<entry> buf_;     // the waiting retries in key order in [head_, tail_), room around them
  std::size_t head_ = 0, tail_ = 0;
  std::vector<entry> added_;   // pushed since the last settle(), in no order
  order_key_t added_min_ = no_key;
  std::vector<Payload> payloads_;  // per session
  std::vector<double> numbers_;    // width_ per session
  std::size_t width_ = 0;
};

} // namespace loopcast::detail
