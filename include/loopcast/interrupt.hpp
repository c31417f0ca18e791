// loopcast — stopping long work on request (Ctrl-C in Python, docs/robustness.md).
//
// One process-wide flag, set from a signal handler (request_interrupt is async-signal-safe) and
// read where long work already pauses: every 16,384 events of a simulation (which then stops, as
// at its attempt budget), before each seed, sweep point, evaluation, draw or log file. The work
// then throws `interrupted`; nothing it was writing is left half-written (outputs are written
// whole, after the work).
#pragma once

#include "loopcast/errors.hpp"

#include <atomic>

namespace loopcast {

/// Long work stopped because an interrupt was requested.
class interrupted : public error {
public:
  interrupted() : error("interrupted") {}
};

namespace detail {
inline std::atomic<bool> interrupt_flag{false};
static_assert(std::atomic<bool>::is_always_lock_free, "request_interrupt must be safe in a signal handler");
} // namespace detail

/// Asks the running work to stop (safe in a signal handler).
inline void request_interrupt() noexcept { detail::interrupt_flag.store(true, std::memory_order_relaxed); }
/// Forgets a request (before new work starts).
inline void clear_interrupt() noexcept { detail::interrupt_flag.store(false, std::memory_order_relaxed); }
/// Whether a stop was asked for.
inline bool interrupt_requested() noexcept { return detail::interrupt_flag.load(std::memory_order_relaxed); }
/// Throws `interrupted` if a stop was asked for.
inline void throw_if_interrupted() {
  if (interrupt_requested()) throw interrupted();
}

} // namespace loopcast
