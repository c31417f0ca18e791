// loopcast — the retries of refused requests, kept apart from the event queue.
//
// On a tier the fleet overwhelms, most events are retries that are refused again. The simulation
// keeps them here, unordered, as (time, sequence number) keys: one pass over them can then find
// every retry due before the next other event and handle those 429s in one batch
// (simulation::refuse_waiting), instead of one sift of the event queue per attempt. The keys are
// event_queue's (event_queue.hpp), so which event comes first does not depend on where it is kept.
// Beside each key lie what the batch reads and updates of the retry (a Payload, and `width`
// numbers), so that a pass streams through arrays instead of visiting each session's state.
// Nothing allocates once reserve() has run.
#pragma once

#include "loopcast/detail/event_queue.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace loopcast::detail {

template <class Payload>
class retry_set {
public:
  static constexpr order_key_t no_key = ~order_key_t{0};  // later than any event

  /// Room for n retries, each with `width` numbers beside its payload.
  void reserve(std::size_t n, std::size_t width) {
    keys_.reserve(n);
    sessions_.reserve(n);
    payloads_.reserve(n);
    numbers_.reserve(n * width);
    width_ = width;
  }
  bool empty() const noexcept { return keys_.empty(); }
  std::size_t size() const noexcept { return keys_.size(); }

  /// Session s retries at time t (t ≥ +0.0), scheduled seq-th, with payload p; returns its numbers
  /// (zero), to be filled in.
  std::span<double> push(double t, std::uint64_t seq, std::uint32_t s, const Payload& p) {
    const order_key_t k = order_key(t, seq);
    if (k < earliest_key_) {
      earliest_key_ = k;
      earliest_ = keys_.size();
    }
    keys_.push_back(k);
    sessions_.push_back(s);
    payloads_.push_back(p);
    numbers_.resize(numbers_.size() + width_);
    return {numbers_.data() + numbers_.size() - width_, width_};
  }

  /// The earliest retry's key (no_key when there is none).
  order_key_t earliest_key() const noexcept { return earliest_key_; }

  /// Removes the earliest retry (there is one) and returns it as an event, its payload in p.
  event take_earliest(Payload& p) noexcept {
    const std::size_t i = earliest_, last = keys_.size() - 1;
    const event e{time_of(keys_[i]), static_cast<std::uint64_t>(keys_[i]), sessions_[i], event_kind::send};
    p = payloads_[i];
    keys_[i] = keys_[last];
    sessions_[i] = sessions_[last];
    payloads_[i] = payloads_[last];
    std::copy_n(numbers_.begin() + static_cast<std::ptrdiff_t>(last * width_), width_,
                numbers_.begin() + static_cast<std::ptrdiff_t>(i * width_));
    keys_.pop_back();
    sessions_.pop_back();
    payloads_.pop_back();
    numbers_.resize(last * width_);
    find_earliest();
    return e;
  }

  /// The keys, sessions, payloads and numbers side by side, for a batch; call find_earliest()
  /// after changing keys.
  std::span<order_key_t> keys() noexcept { return keys_; }
  std::span<const std::uint32_t> sessions() const noexcept { return sessions_; }
  std::span<Payload> payloads() noexcept { return payloads_; }
  /// Retry i's numbers.
  const double* numbers(std::size_t i) const noexcept { return numbers_.data() + i * width_; }

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
  std::vector<Payload> payloads_;
  std::vector<double> numbers_;  // width_ per retry
  std::size_t width_ = 0;
  order_key_t earliest_key_ = no_key;
  std::size_t earliest_ = 0;
};

} // namespace loopcast::detail
