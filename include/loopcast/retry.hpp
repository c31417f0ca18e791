// loopcast — what the client does on a 429 (docs/model.md §3, "Client retry policy").
//
// On a 429 the client either waits the provider's retry_after (when it honours it and the
// value is within its cap), or backs off exponentially: delay = min(base · multiplier^n, max)
// for the n-th retry (n from 0), with jitter. It gives up after max_retries, or once the delay
// it would wait passes give_up_above_s (aider), and the session dies.
#pragma once

#include "loopcast/names.hpp"
#include "loopcast/random.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace loopcast {

enum class jitter_kind : std::uint8_t {
  none,       ///< delay
  full,       ///< U[0, delay]
  equal,      ///< delay/2 + U[0, delay/2]
  scaled_75   ///< delay × U[0.75, 1] (OpenAI and Anthropic SDKs)
};
template <>
struct enum_names<jitter_kind> {
  static constexpr std::array table{enum_entry{jitter_kind::none, "none"},
                                    enum_entry{jitter_kind::full, "full"},
                                    enum_entry{jitter_kind::equal, "equal"},
                                    enum_entry{jitter_kind::scaled_75, "scaled_75"}};
};

/// What to do when the provider's retry_after exceeds the cap.
enum class over_cap_action : std::uint8_t { give_up, backoff };
template <>
struct enum_names<over_cap_action> {
  static constexpr std::array table{enum_entry{over_cap_action::give_up, "give_up"},
                                    enum_entry{over_cap_action::backoff, "backoff"}};
};

struct retry_decision {
  bool retry;     ///< false: the client gives up and the session dies
  double wait_s;  ///< how long to wait before the retry, in seconds
};

struct retry_policy {
  std::string name;
  int max_retries = 2;                  ///< retries of one request before giving up; -1 = unbounded
  bool honour_retry_after = true;
  double retry_after_cap_s = std::numeric_limits<double>::infinity();  ///< in seconds
  over_cap_action over_cap = over_cap_action::backoff;
  double base_s = 0.5;                  ///< first back-off delay, in seconds
  double multiplier = 2;
  double max_s = 8;                     ///< back-off cap, in seconds
  jitter_kind jitter = jitter_kind::none;
  double give_up_above_s = std::numeric_limits<double>::infinity();  ///< give up when the delay passes this
  // What the agent sends, for replays of its logs (0: not known; the replay's default applies).
  std::int64_t agent_max_tokens = 0;      ///< max_tokens of its requests, in tokens
  double agent_compact_at = 0;            ///< it compacts when the prompt reaches this fraction of the window
  /// > 0: it compacts instead when the last response's prompt + output reaches the window minus
  /// this many tokens (Claude Code: 33,000; docs/replay.md)
  std::int64_t agent_compact_reserve_tokens = 0;

  /// The client's reaction to the n-th 429 of one request (decide_retry below).
  retry_decision decide(int n, double retry_after_s, rng& g) const noexcept;
  /// Whether decide() may draw from its stream (only a jitter does).
  bool draws_jitter() const noexcept { return jitter != jitter_kind::none; }
  /// A client that never gives up (a request never admitted would be retried forever).
  bool retries_forever() const noexcept { return max_retries < 0; }

  /// decide()'s usual answer, worked out once for a loop that asks it many times (a herd's batch):
  /// a retry-after it honours, while retries are left (decide_retry's first two rules), is retried
  /// after that wait. `sends_retry_after`: whether the target sends one.
  struct honoured_retry_after {
    int retries_at_most;
    double up_to;  ///< -1: none is honoured
    /// Whether decide(n, retry_after_s, g) is {true, retry_after_s} (retry_after_s > 0).
    bool answers(int n, double retry_after_s) const noexcept { return n < retries_at_most && retry_after_s <= up_to; }
  };
  honoured_retry_after honoured(bool sends_retry_after) const noexcept {
    return {max_retries >= 0 ? max_retries : std::numeric_limits<int>::max(),
            sends_retry_after && honour_retry_after ? retry_after_cap_s : -1.0};
  }
};


namespace detail {
// decide_retry past a retry-after it honours: a give-up over the cap, or the back-off (kept out of
// line, so that the usual answer of a herd's client inlines).
[[gnu::noinline]] inline retry_decision decide_backoff(const retry_policy& p, int n, double retry_after_s,
                                                      rng& g) noexcept {
  if (p.honour_retry_after && retry_after_s >= 0 && p.over_cap == over_cap_action::give_up) return {false, 0.0};
  const double delay = std::min(p.base_s * std::pow(p.multiplier, n), p.max_s);
  if (delay > p.give_up_above_s) return {false, 0.0};
  switch (p.jitter) {
  case jitter_kind::none: return {true, delay};
  case jitter_kind::full: return {true, delay * uniform01(g)};
  case jitter_kind::equal: return {true, delay * 0.5 * (1.0 + uniform01(g))};
  case jitter_kind::scaled_75: return {true, delay * (0.75 + 0.25 * uniform01(g))};
  }
  return {true, delay};
}
} // namespace detail

/// The client's reaction to the n-th 429 of one request (n = retries already made, from 0).
/// `retry_after_s` < 0 means the provider sent none. Draws from g only when jitter is used.
inline retry_decision decide_retry(const retry_policy& p, int n, double retry_after_s,
                                   rng& g) noexcept {
  if (p.max_retries >= 0 && n >= p.max_retries) return {false, 0.0};
  if (p.honour_retry_after && retry_after_s >= 0 && retry_after_s <= p.retry_after_cap_s) return {true, retry_after_s};
  return detail::decide_backoff(p, n, retry_after_s, g);
}

inline retry_decision retry_policy::decide(int n, double retry_after_s, rng& g) const noexcept {
  return decide_retry(*this, n, retry_after_s, g);
}

} // namespace loopcast
