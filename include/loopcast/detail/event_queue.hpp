// loopcast — the simulation's event queue: a 4-ary min-heap on (time, sequence number).
//
// (t, seq) is a total order (every event has its own sequence number), so the events come out in
// the same order from any correct priority queue; this one is shallower than a binary heap (half
// the levels, the four children of a node side by side in one or two cache lines), and
// replace_top() does a pop and a push in one sift, which is what most events do: the session whose
// event is handled schedules its next one. Nothing allocates once reserve() has run.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace loopcast::detail {

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

/// Whether a comes before b: the earlier time, ties in scheduling order. Times are never negative
/// (schedule() adds +0.0, so a −0.0 becomes +0.0), and the bits of non-negative doubles order as
/// the numbers do: one 128-bit comparison of (time bits, seq) is the same order, without branches.
__extension__ using order_key_t = unsigned __int128;  // GCC's and Clang's 128-bit integer
inline order_key_t order_key(double t, std::uint64_t seq) noexcept {
  return (static_cast<order_key_t>(std::bit_cast<std::uint64_t>(t)) << 64) | seq;
}
inline order_key_t order_key(const event& e) noexcept { return order_key(e.t, e.seq); }
/// The time of a key (its sequence number is the key's low 64 bits).
inline double time_of(order_key_t k) noexcept { return std::bit_cast<double>(static_cast<std::uint64_t>(k >> 64)); }
inline bool earlier(const event& a, const event& b) noexcept { return order_key(a) < order_key(b); }

class event_queue {
public:
  void reserve(std::size_t n) { h_.reserve(n); }
  bool empty() const noexcept { return h_.empty(); }
  std::size_t size() const noexcept { return h_.size(); }
  /// The earliest event (the queue is not empty).
  const event& top() const noexcept { return h_.front(); }

  void push(const event& e) {
    std::size_t i = h_.size();
    h_.push_back(e);
    while (i > 0) {
      const std::size_t parent = (i - 1) / arity;
      if (!earlier(e, h_[parent])) break;
      h_[i] = h_[parent];
      i = parent;
    }
    h_[i] = e;
  }

  /// Removes the earliest event (the queue is not empty).
  void pop() noexcept {
    const event last = h_.back();
    h_.pop_back();
    if (!h_.empty()) sift_down(last);
  }

  /// pop() then push(e), in one pass (the queue is not empty).
  void replace_top(const event& e) noexcept { sift_down(e); }

  /// The earliest event after the top, or nullptr (what the simulation prefetches).
  const event* second() const noexcept {
    const std::size_t n = h_.size();
    if (n < 2) return nullptr;
    return &h_[min_child(0, n)];
  }

private:
  static constexpr std::size_t arity = 4;

  // The earliest of node i's children (it has at least one). Which child wins is as good as random,
  // so a node with all four picks it by a tournament of selects rather than by branches.
  std::size_t min_child(std::size_t i, std::size_t n) const noexcept {
    const std::size_t first = arity * i + 1;
    if (first + arity <= n) {
      const order_key_t k0 = order_key(h_[first]), k1 = order_key(h_[first + 1]);
      const order_key_t k2 = order_key(h_[first + 2]), k3 = order_key(h_[first + 3]);
      const bool b01 = k1 < k0, b23 = k3 < k2;
      const order_key_t m01 = b01 ? k1 : k0, m23 = b23 ? k3 : k2;
      const std::size_t i01 = first + b01, i23 = first + 2 + b23;
      return m23 < m01 ? i23 : i01;
    }
    std::size_t best = first;
    for (std::size_t c = first + 1; c < n; ++c)
      if (earlier(h_[c], h_[best])) best = c;
    return best;
  }

  // Places e at the root's hole and sifts it down to where it belongs.
  void sift_down(const event& e) noexcept {
    const std::size_t n = h_.size();
    std::size_t i = 0;
    for (;;) {
      if (arity * i + 1 >= n) break;
      const std::size_t c = min_child(i, n);
      if (!earlier(h_[c], e)) break;
      h_[i] = h_[c];
      i = c;
    }
    h_[i] = e;
  }

  std::vector<event> h_;
};

} // namespace loopcast::detail
