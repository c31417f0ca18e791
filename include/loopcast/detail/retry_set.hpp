// loopcast — the retries of refused requests, kept apart from the event queue.
//
// On a tier the fleet overwhelms, most events are retries that are refused again. The simulation
// keeps them here, unordered, as (time, sequence number) keys: one pass over them can then find
// every retry due before the next other event and handle those 429s in one batch
// (simulation::refuse_waiting), instead of one sift of the event queue per attempt. The keys are
// event_queue's (event_queue.hpp), so which event comes first does not depend on where it is kept.
// Nothing allocates once reserve() has run.
#pragma once

#include "loopcast/detail/event_queue.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace loopcast::detail {

class retry_set {
public:
  static constexpr order_key_t no_key = ~order_key_t{0};  // later than any event

  void reserve(std::size_t n) {
    keys_.reserve(n);
    sessions_.reserve(n);
  }
  bool empty() const noexcept { return keys_.empty(); }
  std::size_t size() const noexcept { return keys_.size(); }

  /// Session s retries at time t (t ≥ +0.0), scheduled seq-th.
  void push(double t, std::uint64_t seq, std::uint32_t s) {
    const order_key_t k = order_key(t, seq);
    if (k < earliest_key_) {
      earliest_key_ = k;
      earliest_ = keys_.size();
    }
    keys_.push_back(k);
    sessions_.push_back(s);
  }

  /// The earliest retry's key (no_key when there is none).
  order_key_t earliest_key() const noexcept { return earliest_key_; }

  /// Removes the earliest retry (there is one) and returns it as an event.
  event take_earliest() noexcept {
    const std::size_t i = earliest_;
    const event e{time_of(keys_[i]), static_cast<std::uint64_t>(keys_[i]), sessions_[i], event_kind::send};
    keys_[i] = keys_.back();
    sessions_[i] = sessions_.back();
    keys_.pop_back();
    sessions_.pop_back();
    find_earliest();
    return e;
  }

  /// The keys and sessions side by side, for a batch; call find_earliest() after changing keys.
  std::span<order_key_t> keys() noexcept { return keys_; }
  std::span<const std::uint32_t> sessions() const noexcept { return sessions_; }

  void find_earliest() noexcept {
    earliest_key_ = no_key;
    earliest_ = 0;
    for (std::size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] < earliest_key_) {
        earliest_key_ = keys_[i];
        earliest_ = i;
      }
  }

private:
  std::vector<order_key_t> keys_;
  std::vector<std::uint32_t> sessions_;
  order_key_t earliest_key_ = no_key;
  std::size_t earliest_ = 0;
};

} // namespace loopcast::detail
