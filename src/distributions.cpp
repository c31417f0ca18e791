// Inverse-transform sampling with Boost.Math's quantiles: one uniform draw per sample.
#include "loopcast/distributions.hpp"

#include <boost/math/distributions/gamma.hpp>
#include <boost/math/special_functions/erf.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace loopcast {

namespace {
// Boost.Math computes doubles in long double by default; double precision is enough for sampling
// and several times faster (lognormal draws dominate workload generation).
using fast_policy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
// z such that Φ(z) = p, for p in (0, 1).
double normal_quantile(double p) { return -std::sqrt(2.0) * boost::math::erfc_inv(2.0 * p, fast_policy{}); }
// z0.9 = Φ⁻¹(0.9) = 1.2815515655446004.
const double z90 = normal_quantile(0.9);

double lognormal_sigma(const lognormal_dist& d) { return std::log(d.p90 / d.median) / z90; }

// Keep u strictly inside (0, 1): the quantiles of the unbounded distributions diverge at 0 and 1.
double open01(double u) { return std::clamp(u, 0x1.0p-60, 1.0 - 0x1.0p-53); }
} // namespace

double standard_normal(rng& g) noexcept { return normal_quantile(open01(uniform01(g))); }

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) noexcept {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double quantile(const distribution& d, double p) {
  struct visitor {
    double p;
    double operator()(const fixed_dist& f) const { return f.value; }
    double operator()(const uniform_dist& u) const { return u.low + (u.high - u.low) * p; }
    double operator()(const lognormal_dist& l) const {
      const double s = lognormal_sigma(l);
      return s == 0.0 ? l.median : l.median * std::exp(s * normal_quantile(open01(p)));
    }
    double operator()(const gamma_dist& g) const {
      return boost::math::quantile(boost::math::gamma_distribution<double>(g.shape, g.scale), open01(p));
    }
    double operator()(const empirical_dist& e) const {
      const auto n = e.values.size();
      auto i = static_cast<std::size_t>(p * static_cast<double>(n));
      return e.values[std::min(i, n - 1)];
    }
  };
  return std::visit(visitor{p}, d);
}

double sample(const distribution& d, rng& g) { return quantile(d, uniform01(g)); }

double mean(const distribution& d) {
  struct visitor {
    double operator()(const fixed_dist& f) const { return f.value; }
    double operator()(const uniform_dist& u) const { return 0.5 * (u.low + u.high); }
    double operator()(const lognormal_dist& l) const {
      const double s = lognormal_sigma(l);
      return l.median * std::exp(0.5 * s * s);
    }
    double operator()(const gamma_dist& g) const { return g.shape * g.scale; }
    double operator()(const empirical_dist& e) const {
      return std::accumulate(e.values.begin(), e.values.end(), 0.0) / static_cast<double>(e.values.size());
    }
  };
  return std::visit(visitor{}, d);
}

} // namespace loopcast
