// loopcast — fitting speed curves to measurements (least squares, Eigen; compiled library).
#pragma once

#include "loopcast/speed.hpp"

#include <span>

namespace loopcast {

/// A measured sample: `tokens` processed at mean position `context_tokens` took `seconds`.
struct speed_sample {
  double context_tokens;
  double tokens;
  double seconds;
};

/// Least-squares fit of a linear per-token-time curve to samples (each sample's time is the
/// integral of a + b·x over its span). Throws loopcast::error with fewer than two distinct
/// contexts. `r_squared`, when given, receives the fit's coefficient of determination.
linear_curve fit_linear_curve(std::span<const speed_sample> samples, double* r_squared = nullptr);

} // namespace loopcast
