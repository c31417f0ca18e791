// loopcast — fitting speed curves to measurements, and a speed model to recorded logs (least
// squares, Eigen; compiled library).
#pragma once

#include "loopcast/metrics.hpp"
#include "loopcast/speed.hpp"
#include "loopcast/trace.hpp"

#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

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

// ---- a speed model from recorded logs ------------------------------------------------------

struct speed_fit {
  speed_model model;               ///< median-unbiased, without noise (the noise fields below)
  double noise_median = 1;         ///< the residual recorded / predicted time: its median (1 after the
                                   ///< median-unbiasing, up to rounding) …
  double noise_sigma = 0;          ///< … the per-request log-space spread (within sessions) …
  double session_sigma = 0;        ///< … and the per-session factor's: together the residuals' robust
                                   ///< spread ((P90 − P10) of the log ratio / 2·z0.9)
  double context_tokens_max = 0;   ///< the longest context fitted (prompt + generated); beyond it, held
  /// Time of day: the p-value of the test that sessions' speeds differ by UTC hour (NaN: not
  /// tested: no clock times, or too few hours with 3 sessions); below 0.01, model.hour_factors holds them.
  double hour_p_value = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> models; ///< the models whose requests were fitted
  std::size_t samples = 0;
  bool used_ttft = false;          ///< TTFT and decode fitted separately (the log has TTFT)
  double r_squared = 0;            ///< of request durations
  percentiles abs_rel_error;       ///< |predicted − recorded| / recorded request duration
  std::vector<std::string> notes;  ///< e.g. terms dropped because they came out negative
};

/// A fit of each request's duration to
///   (1, u, u·(k + u/2), k, m, m·(c + m/2)) · terms × the output kinds' factors
/// (u uncached prompt tokens after k cached ones, m generated at context c): exactly the
/// speed_model with a linear prefill curve, a per-cached-token cost, a linear decode curve and
/// speed_model::output. Relative least squares (Eigen; prefill on first-token times when at least
/// 10 requests record one; negative terms dropped and the rest refitted, so the model stays
/// physical) gives the start; robust least squares in log space (soft-L1, Levenberg–Marquardt)
/// refines the kept terms and the kinds' factors jointly on every duration and first-token time.
/// The result is scaled so that its median residual is 1, and the residual spread, measured out of
/// sample (each log predicted by a fit on the others, in up to 5 folds), is split into a session
/// factor and per-request noise. Throws error with fewer than 5 usable requests.
speed_fit fit_speed_model(const std::vector<recorded_trace>& traces);
/// Only the requests whose model matches `model_pattern` (a glob; "" or "*": every model).
speed_fit fit_speed_model(const std::vector<recorded_trace>& traces, const std::string& model_pattern);
/// The models of the logs with the requests each could fit (duration and output > 0).
std::vector<std::pair<std::string, std::size_t>> fittable_models(const std::vector<recorded_trace>& traces);

} // namespace loopcast
