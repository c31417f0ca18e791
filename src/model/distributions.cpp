// Inverse-transform sampling: one uniform draw per sample (the gamma quantile from Boost.Math).
#include "loopcast/distributions.hpp"

#include <boost/math/distributions/gamma.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace loopcast {

namespace {
// Φ⁻¹(0.9) as AS 241 gives it, 1.2815515655446008: 2 ulp above z90 (random.hpp), and kept so that
// seeded workloads draw what they drew before.
const double sampler_z90 = standard_normal_quantile(0.9);

double lognormal_sigma(const lognormal_dist& d) { return std::log(d.p90 / d.median) / sampler_z90; }

// Keep u strictly inside (0, 1): the gamma quantile diverges at 0 and 1.
double open01(double u) { return std::clamp(u, 0x1.0p-60, 1.0 - 0x1.0p-53); }
} // namespace

double quantile(const distribution& d, double p) {
  struct visitor {
    double p;
    double operator()(const fixed_dist& f) const { return f.value; }
    double operator()(const uniform_dist& u) const { return u.low + (u.high - u.low) * p; }
    double operator()(const lognormal_dist& l) const { return detail::lognormal_at(l.median, lognormal_sigma(l), p); }
    double operator()(const gamma_dist& g) const {
      return boost::math::quantile(boost::math::gamma_distribution<double>(g.shape, g.scale), open01(p));
    }
    double operator()(const empirical_dist& e) const {
      const auto n = e.values.size();
      auto i = static_cast<std::size_t>(p * static_cast<double>(n));
      return e.values[std::min(i, n - 1)];
    }
    double operator()(const quantile_dist& q) const {
      // The first point with probability >= p, interpolated from the one before it.
      const auto it = std::lower_bound(q.p.begin(), q.p.end(), p);
      if (it == q.p.begin()) return q.values.front();
      if (it == q.p.end()) return q.values.back();
      const auto i = static_cast<std::size_t>(it - q.p.begin());
      const double w = (p - q.p[i - 1]) / (q.p[i] - q.p[i - 1]);
      return q.values[i - 1] + w * (q.values[i] - q.values[i - 1]);
    }
  };
  return std::visit(visitor{p}, d);
}

double sample(const distribution& d, rng& g) { return quantile(d, uniform01(g)); }

sampler::sampler(const distribution& d) : d_(&d) {
  if (const auto* l = std::get_if<lognormal_dist>(&d)) {
    lognormal_ = true;
    median_ = l->median;
    sigma_ = lognormal_sigma(*l);
  }
}

double sampler::other_at(double p) const { return quantile(*d_, p); }

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
    double operator()(const quantile_dist& q) const {
      // Piecewise linear inverse CDF: each segment contributes its width times its midpoint.
      double m = 0;
      for (std::size_t i = 1; i < q.p.size(); ++i) m += (q.p[i] - q.p[i - 1]) * 0.5 * (q.values[i] + q.values[i - 1]);
      return m;
    }
  };
  return std::visit(visitor{}, d);
}

double upper_bound(const distribution& d) {
  struct visitor {
    double operator()(const fixed_dist& f) const { return f.value; }
    double operator()(const uniform_dist& u) const { return u.high; }
    double operator()(const lognormal_dist& l) const {
      return l.p90 == l.median ? l.median : std::numeric_limits<double>::infinity();
    }
    double operator()(const gamma_dist&) const { return std::numeric_limits<double>::infinity(); }
    double operator()(const empirical_dist& e) const { return *std::max_element(e.values.begin(), e.values.end()); }
    double operator()(const quantile_dist& q) const { return q.values.back(); }
  };
  return std::visit(visitor{}, d);
}

quantile_dist quantile_table(std::vector<double> sample, int points) {
  if (sample.empty()) throw std::invalid_argument("quantile_table: empty sample");
  std::sort(sample.begin(), sample.end());
  std::vector<double> ps{0.0, 0.001, 0.005};
  for (int i = 1; i < points; ++i) ps.push_back(static_cast<double>(i) / points);
  ps.insert(ps.end(), {0.995, 0.999, 1.0});
  std::sort(ps.begin(), ps.end());
  ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
  quantile_dist q;
  const double last = static_cast<double>(sample.size() - 1);
  for (double p : ps) {
    const double x = p * last;
    const auto lo = static_cast<std::size_t>(x);
    const auto hi = std::min(lo + 1, sample.size() - 1);
    const double v = sample[lo] + (x - static_cast<double>(lo)) * (sample[hi] - sample[lo]);
    // Rounded to 4 significant digits: the table is written to presets, and the sample's own
    // noise is far larger than that.
    const double r = v == 0 ? 0 : std::round(v / std::pow(10.0, std::floor(std::log10(std::abs(v))) - 3)) *
                                       std::pow(10.0, std::floor(std::log10(std::abs(v))) - 3);
    q.p.push_back(p);
    q.values.push_back(q.values.empty() ? r : std::max(r, q.values.back()));
  }
  return q;
}

} // namespace loopcast
