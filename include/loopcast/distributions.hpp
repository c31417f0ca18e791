// loopcast — distributions of sizes and times (docs/model.md §7).
//
// Every distribution is sampled by inverse transform from one uniform draw, so a sample is a
// pure function of the generator's state: the same seed gives bit-identical workloads
// (random.hpp: the generator, the normal quantile, derive_seed).
#pragma once

#include "loopcast/random.hpp"

#include <cmath>
#include <cstdint>
#include <variant>
#include <vector>

namespace loopcast {

struct fixed_dist { double value = 0; };
struct uniform_dist { double low = 0, high = 0; };
/// Log-normal given its median and 90th percentile: mu = ln(median), sigma = ln(p90/median)/z0.9.
struct lognormal_dist { double median = 1, p90 = 1; };
/// Gamma with shape k and scale θ (mean kθ).
struct gamma_dist { double shape = 1, scale = 1; };
/// Resampling of observed values, each equally likely.
struct empirical_dist { std::vector<double> values; };
/// A quantile table: values[i] is the quantile at cumulative probability p[i]; p rises from 0 to 1
/// and values never fall. Sampled by inverse CDF with linear interpolation between the points, so
/// it reproduces a fitted sample's shape, tails included, with a few dozen numbers
/// (`loopcast fit-workload` writes these).
struct quantile_dist { std::vector<double> p, values; };

using distribution = std::variant<fixed_dist, uniform_dist, lognormal_dist, gamma_dist, empirical_dist, quantile_dist>;

/// One draw (consumes exactly one value from g).
double sample(const distribution& d, rng& g);
/// Value at cumulative probability p in (0, 1).
double quantile(const distribution& d, double p);
/// Mean of the distribution.
double mean(const distribution& d);
/// The largest value it can give (+infinity for the unbounded log-normal and gamma).
double upper_bound(const distribution& d);

namespace detail {
/// The log-normal's value at probability p, given its spread (quantile() and sampler share it).
inline double lognormal_at(double median, double sigma, double p) noexcept {
  return sigma == 0.0 ? median : median * std::exp(sigma * standard_normal_quantile(p));
}
} // namespace detail

/// A distribution prepared for many draws: what does not depend on the draw (a log-normal's spread,
/// ln(p90/median)/z0.9) is worked out once. Each draw is bit-identical to sample(d, g) and consumes
/// the same one value. Refers to d: keep it alive while the sampler is used.
class sampler {
public:
  explicit sampler(const distribution& d);
  double operator()(rng& g) const { return at(uniform01(g)); }
  /// The same value as quantile(d, p). (A log-normal, what workloads draw four times a turn, is
  /// worked out inline.)
  double at(double p) const { return lognormal_ ? detail::lognormal_at(median_, sigma_, p) : other_at(p); }

private:
  double other_at(double p) const;  // quantile(*d_, p)
  const distribution* d_;
  bool lognormal_ = false;
  double median_ = 0, sigma_ = 0;
};

/// A quantile table of `points` + 1 points at evenly spaced probabilities, with finer steps in
/// both tails (p = 0.001, 0.005, 0.995, 0.999 added), from a sample (linear-interpolated order
/// statistics). Throws std::invalid_argument on an empty sample.
quantile_dist quantile_table(std::vector<double> sample, int points = 40);

} // namespace loopcast
