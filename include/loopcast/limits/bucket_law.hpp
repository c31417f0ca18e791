// loopcast — the seam between the simulation and a rate-limit bucket.
//
// The simulation asks a bucket four things, always with non-decreasing times t:
//   wait_for(q, t)            seconds from t until a charge of q units could be admitted: 0 = now,
//                             `never_admitted` = this charge will never be (it ends the request)
//   charge(q, t, t_release)   admit a charge of q at t (t_release: when the request ends, if known);
//                             returns a ticket that identifies the charge to adjust()
//   adjust(delta, t, t_admit, ticket)   at the request's end t: refund (delta < 0) or late charge
//   used(t)                   units in use at t, for the timeline and the first 429's report
// The built-in buckets (bucket.hpp) follow it; so can a planning tool's own law (see
// examples/cpp/custom_models.cpp), passed to simulate_with() (simulation.hpp). The built-in ones'
// reads (wait_for, used) change nothing: their state moves only with charge() and adjust(), so
// replaying a run's operations (level_curve.hpp) gives the levels the run saw, to the last bit.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>

namespace loopcast {

/// The wait of a charge that a bucket will never admit.
inline constexpr double never_admitted = std::numeric_limits<double>::infinity();

template <class B>
concept bucket_law = requires(B& b, double q, double t, std::uint64_t ticket) {
  { b.wait_for(q, t) } -> std::same_as<double>;
  { b.charge(q, t, t) } -> std::same_as<std::uint64_t>;
  { b.adjust(q, t, t, ticket) };
  { b.used(t) } -> std::same_as<double>;
};

} // namespace loopcast
