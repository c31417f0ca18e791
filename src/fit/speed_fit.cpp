// Least-squares fitting of speed curves (Eigen).
#include "loopcast/errors.hpp"
#include "loopcast/speed_fit.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <cmath>

namespace loopcast {

// Each sample spans positions [c − n/2, c + n/2] (n tokens around mean context c), so its time is
//   ∫ (a + b·x) dx = a·n + b·n·c.
// Least squares over (a, b) with the design matrix rows [n, n·c].
linear_curve fit_linear_curve(std::span<const speed_sample> samples, double* r_squared) {
  const auto n = static_cast<Eigen::Index>(samples.size());
  if (n < 2) throw error(fmt::format("fit_linear_curve: need at least 2 samples, got {}", n));
  Eigen::MatrixXd A(n, 2);
  Eigen::VectorXd y(n);
  double cmin = samples[0].context_tokens, cmax = cmin;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& s = samples[static_cast<std::size_t>(i)];
    if (!(s.tokens > 0) || !(s.seconds > 0) || !std::isfinite(s.context_tokens) || s.context_tokens < 0)
      throw error(fmt::format("fit_linear_curve: sample {} is not positive and finite "
                              "(context {}, tokens {}, seconds {})", i, s.context_tokens, s.tokens, s.seconds));
    A(i, 0) = s.tokens;
    A(i, 1) = s.tokens * s.context_tokens;
    y(i) = s.seconds;
    cmin = std::min(cmin, s.context_tokens);
    cmax = std::max(cmax, s.context_tokens);
  }
  if (cmax == cmin) throw error("fit_linear_curve: samples need at least two distinct contexts");
  const Eigen::Vector2d coef = A.colPivHouseholderQr().solve(y);
  if (r_squared) {
    const double mean = y.mean();
    const double ss_tot = (y.array() - mean).square().sum();
    const double ss_res = (A * coef - y).squaredNorm();
    *r_squared = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
  }
  return {coef(0), coef(1)};
}

} // namespace loopcast
