// loopcast — the simulation's events and their order: (time, sequence number).
//
// (t, seq) is a total order (every event has its own sequence number), so the events come out in
// the same order from any correct priority queue: the event queue (calendar_queue.hpp) and a herd's
// retries (retry_queue.hpp) keep them by the same key.
#pragma once

#include <bit>
#include <cstdint>

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

} // namespace loopcast::detail
