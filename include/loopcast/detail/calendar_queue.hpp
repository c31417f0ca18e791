// loopcast — the simulation's event queue: a calendar queue on (time, sequence number), one event
// per session at most.
//
// A run's events come out in (time, sequence number) order (event_queue.hpp's key), and every
// session has at most one pending event — each is a sequential loop — so the queue keeps one node
// per session, found by its id, and never allocates once reserve() has run.
//
// Time is cut into days of `width` seconds; day d lives in bin d mod B (a year is B days), each bin
// a list sorted by key. The earliest event is the head of its day's bin; the next one is found by
// walking the days forward from there to the first bin whose head falls on the day walked, or, when
// a whole year is empty, by the least of the bins' heads. An insertion walks its bin's list (the
// bin's last node is kept, so a key later than all of them — every tie, since sequence numbers only
// grow — appends at once). With about one event per day and two bins per event, both are a step or
// two (R. Brown, "Calendar queues", CACM 31(10), 1988). The width is worked out from the events'
// times whenever the steps per operation grow or the queue outgrows its bins: what the queue holds
// changes over a run (a fleet's start, a herd of retries, the last sessions).
//
// Which events come out, and in which order, does not depend on the width or the bins: the bins
// only decide where the next event is looked for. On a tier the fleet overwhelms, most events are
// retries refused again, so an event costs the queue a few steps instead of a heap's log n sifts.
#pragma once

#include "loopcast/detail/event_queue.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace loopcast::detail {

class calendar_queue {
public:
  calendar_queue() = default;
  calendar_queue(const calendar_queue&) = delete;  // head_, tail_ and scratch_ point into words_
  calendar_queue& operator=(const calendar_queue&) = delete;
  static constexpr std::uint32_t none = ~std::uint32_t{0};

  /// Room for sessions 0 … n − 1 (the queue is empty and was never used, or reuses the buffers of
  /// one that was: swap_buffers).
  void reserve(std::size_t n) {
    node_.assign(n, node{});
    // Bins for the most events the queue can hold, min_bins of them in use, and rebuild()'s room
    // for every node: one block (a run of one session makes two allocations here, not six).
    const std::size_t most = std::max(min_bins, std::bit_ceil(2 * n));
    words_.assign(2 * most + n, none);
    head_ = words_.data();
    tail_ = head_ + most;
    scratch_ = tail_ + most;
    bins_ = min_bins;
    mask_ = min_bins - 1;
  }
  /// Exchanges the two queues' buffers, for reserve() to reuse their room: call it on a queue not
  /// reserved yet; either queue is reserved again before it is used.
  void swap_buffers(calendar_queue& other) noexcept {
    node_.swap(other.node_);
    words_.swap(other.words_);
    head_ = tail_ = scratch_ = nullptr;
    other.head_ = other.tail_ = other.scratch_ = nullptr;
  }
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }

  /// The earliest event (the queue is not empty).
  event top() const noexcept { return {time_of(node_[top_].key), static_cast<std::uint64_t>(node_[top_].key), top_, node_[top_].kind}; }
  /// Its key (the queue is not empty).
  order_key_t top_key() const noexcept { return node_[top_].key; }

  /// Adds e; its session has no event in the queue. `hint`: what its handler will read first, kept
  /// beside the event for whoever looks ahead in the queue (hint_of) to prefetch; never read here.
  void push(const event& e, const void* hint = nullptr) noexcept {
    const order_key_t k = order_key(e);
    const std::uint64_t d = day(e.t);
    insert(e.session, k, d);
    node_[e.session].kind = e.kind;
    node_[e.session].hint = hint;
    if (size_++ == 0 || k < node_[top_].key) {
      top_ = e.session;
      top_day_ = d;
    }
    if (size_ > 2 * bins_) [[unlikely]] rebuild();
  }

  /// Removes the earliest event (the queue is not empty).
  void pop() noexcept {
    unlink_top();
    if (--size_ == 0) return;
    find_top();
    tally();
  }

  /// pop() then push(e, hint) (the queue is not empty).
  void replace_top(const event& e, const void* hint = nullptr) noexcept {
    unlink_top();
    const order_key_t k = order_key(e);
    const std::uint64_t d = day(e.t);  // ≥ the old top's day: e is not earlier than the top was
    insert(e.session, k, d);
    node_[e.session].kind = e.kind;
    node_[e.session].hint = hint;
    if (size_ == 1) {  // (one session: nothing to look for)
      top_ = e.session;
      top_day_ = d;
      return;
    }
    find_top();
    tally();
  }

  /// The session of the event after the top, when it falls within a few days of the top's (what the
  /// simulation prefetches); else none.
  std::uint32_t second() const noexcept { return size_ < 2 ? none : following(top_); }
  /// The kind of session id's event (it has one in the queue).
  event_kind kind_of(std::uint32_t id) const noexcept { return node_[id].kind; }
  /// The hint its event was pushed with.
  const void* hint_of(std::uint32_t id) const noexcept { return node_[id].hint; }
  /// The session of the event after session id's (in the queue), within a few days of it; else none.
  std::uint32_t following(std::uint32_t id) const noexcept {
    const std::uint64_t day = day_of(id);
    const std::uint32_t c = node_[id].next;  // its day lies in its bin alone
    if (c != none && day_of(c) == day) return c;
    for (std::uint64_t d = day + 1; d <= day + 8; ++d) {
      const std::uint32_t h = head_[static_cast<std::size_t>(d) & mask_];
      if (h != none && day_of(h) == d) return h;
    }
    return none;
  }
  /// The width of a day and the bins (for tests).
  double width() const noexcept { return width_; }
  std::size_t bins() const noexcept { return bins_; }

private:
  static constexpr std::size_t min_bins = 16;
  static constexpr std::uint64_t max_day = std::uint64_t{1} << 62;
  static constexpr std::uint32_t check_every = 4096;  // operations between looks at the steps

  std::uint64_t day(double t) const noexcept {
    const double x = t * inv_width_;  // t ≥ 0; monotone in t
    // (Through a signed conversion, one instruction: x is below 2^62 there.)
    return x < static_cast<double>(max_day) ? static_cast<std::uint64_t>(static_cast<std::int64_t>(x)) : max_day;
  }
  std::uint64_t day_of(std::uint32_t id) const noexcept { return day(time_of(node_[id].key)); }

  // Node id with key k into day d's bin, in key order.
  void insert(std::uint32_t id, order_key_t k, std::uint64_t d) noexcept {
    node_[id].key = k;
    const std::size_t b = static_cast<std::size_t>(d) & mask_;
    std::uint32_t h = head_[b];
    if (h == none) {
      head_[b] = tail_[b] = id;
      node_[id].next = none;
      return;
    }
    if (node_[tail_[b]].key < k) {  // after every node of the bin (ties: sequence numbers only grow)
      node_[tail_[b]].next = id;
      tail_[b] = id;
      node_[id].next = none;
      return;
    }
    if (k < node_[h].key) {
      node_[id].next = h;
      head_[b] = id;
      return;
    }
    std::uint32_t prev = h, cur = node_[h].next;  // the tail's key is later than k: cur never runs out
    while (node_[cur].key < k) {
      prev = cur;
      cur = node_[cur].next;
      ++steps_;
    }
    node_[prev].next = id;
    node_[id].next = cur;
  }

  // The top is its bin's head.
  void unlink_top() noexcept {
    const std::size_t b = static_cast<std::size_t>(top_day_) & mask_;
    head_[b] = node_[top_].next;
    if (head_[b] == none) tail_[b] = none;
  }

  // The earliest node (size_ > 0), from top_day_ on: no node falls on an earlier day.
  void find_top() noexcept {
    for (std::size_t n = 0; n < bins_; ++n) {
      const std::uint64_t d = top_day_ + n;
      const std::uint32_t h = head_[static_cast<std::size_t>(d) & mask_];
      // A bin's head is its earliest node: when it falls on day d it is the earliest of all (every
      // day from top_day_ to d − 1 was empty).
      if (h != none && day_of(h) == d) {
        top_ = h;
        top_day_ = d;
        steps_ += n;
        return;
      }
    }
    // A year without an event: the earliest of the bins' heads.
    std::uint32_t best = none;
    for (std::size_t b = 0; b < bins_; ++b)
      if (const std::uint32_t h = head_[b]; h != none && (best == none || node_[h].key < node_[best].key)) best = h;
    top_ = best;
    top_day_ = day_of(best);
    steps_ += bins_;
  }

  // Every check_every operations: rebuild when they took more than a few steps each.
  void tally() noexcept {
    if (++ops_ < check_every) return;
    const bool slow = steps_ > 3 * std::uint64_t{ops_};
    ops_ = 0;
    steps_ = 0;
    if (slow || (bins_ > min_bins && 8 * size_ < bins_)) [[unlikely]] rebuild();
  }

  // New bins (about two per event) and a new width (about one event per day among the earliest
  // half), then every node again, in key order.
  [[gnu::noinline]] void rebuild() noexcept {
    std::size_t n = 0;
    for (std::size_t b = 0; b < bins_; ++b)
      for (std::uint32_t id = head_[b]; id != none; id = node_[id].next) scratch_[n++] = id;
    std::sort(scratch_, scratch_ + n, [this](std::uint32_t a, std::uint32_t b) { return node_[a].key < node_[b].key; });
    if (n >= 2) {
      const double first = time_of(node_[scratch_[0]].key);
      const double last = time_of(node_[scratch_[n - 1]].key);
      double span = time_of(node_[scratch_[n / 2]].key) - first;
      double per = static_cast<double>(n / 2);
      if (!(span > 0)) {  // more than half of them at one time: the whole spread
        span = last - first;
        per = static_cast<double>(n);
      }
      if (span > 0) {
        // Not so narrow that a day's number loses the time's precision.
        width_ = std::max(span / per, std::max(last, 1.0) * 0x1p-40);
        inv_width_ = 1.0 / width_;
      }
    }
    bins_ = std::max(min_bins, std::bit_ceil(2 * n));  // within head_ (reserve)
    mask_ = bins_ - 1;
    std::fill_n(head_, bins_, none);
    std::fill_n(tail_, bins_, none);
    for (std::size_t i = 0; i < n; ++i) insert(scratch_[i], node_[scratch_[i]].key, day_of(scratch_[i]));  // appends, in key order
    if (n > 0) {
      top_ = scratch_[0];
      top_day_ = day_of(top_);
    }
    ops_ = 0;
    steps_ = 0;
  }

  struct node {         // per session:
    order_key_t key;    // its event's key,
    const void* hint;   // what its handler reads first (push),
    std::uint32_t next; // the next node of its bin,
    event_kind kind;    // its event's kind
  };
  static_assert(sizeof(node) == 32, "a node is half a cache line");
  std::vector<node> node_;
  std::vector<std::uint32_t> words_;  // head_, tail_ and scratch_
  std::uint32_t* head_ = nullptr;     // per bin: its first node
  std::uint32_t* tail_ = nullptr;     // per bin: its last node
  std::uint32_t* scratch_ = nullptr;  // rebuild()'s list of the nodes
  std::size_t bins_ = 0, mask_ = 0, size_ = 0;
  double width_ = 1.0, inv_width_ = 1.0;
  std::uint32_t top_ = none;
  std::uint64_t top_day_ = 0;
  std::uint32_t ops_ = 0;
  std::uint64_t steps_ = 0;
};

} // namespace loopcast::detail
