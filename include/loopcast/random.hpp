// loopcast — random numbers (docs/model.md §7).
//
// The generator is MT19937-64, the output sequence of std::mt19937_64 that the C++ standard fixes;
// every draw is a pure function of the generator's state, so the same seed gives bit-identical
// results on every platform with IEEE doubles. Seeds for independent streams come from derive_seed.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace loopcast {

/// std::mt19937_64's sequence, bit for bit (tests/unit/test_distributions.cpp compares them), at
/// a cost in proportion to the draws made. std::mt19937_64 fills its 312 words of state when it is
/// seeded and regenerates all of them at the first draw: about 600 steps before the first number,
/// which dominated generating a session (five streams) and Monte Carlo of small scenarios. Here
/// the seeding runs only as far as the next draw needs (156 words ahead of it) and each word is
/// regenerated when it is drawn, in the same order and with the same inputs as the standard's
/// block regeneration; a stream that is never drawn from costs nothing but its seed.
class rng {
public:
  using result_type = std::uint64_t;
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type{0}; }
  static constexpr result_type default_seed = 5489u;

  rng() noexcept : rng(default_seed) {}
  explicit rng(result_type seed) noexcept { mt_[0] = seed; }

  result_type operator()() noexcept {
    if (next_ == n) next_ = 0;  // the next block, regenerated word by word
    if (seeded_ < n) seed_to(std::min(n, next_ + m + 1));
    // Word k from its own old value, the next word's old value and word k + m (old) or k − (n − m)
    // (already new): what the standard's regeneration of the whole block computes for it.
    const std::size_t k = next_++;
    const std::uint64_t y = (mt_[k] & upper) | (mt_[k + 1 == n ? 0 : k + 1] & lower);
    std::uint64_t x = mt_[k < n - m ? k + m : k - (n - m)] ^ (y >> 1) ^ ((y & 1) ? matrix : 0);
    mt_[k] = x;
    x ^= (x >> 29) & 0x5555555555555555ULL;  // tempering
    x ^= (x << 17) & 0x71d67fffeda60000ULL;
    x ^= (x << 37) & 0xfff7eee000000000ULL;
    return x ^ (x >> 43);
  }

  /// Runs the seeding of freshly seeded generators as far as their first draw needs (m + 1 words),
  /// all of them in one loop: the seeding recurrence is a chain of dependent multiplications, and
  /// several independent chains side by side keep the processor busy. Draws are unchanged.
  template <std::size_t N>
  static void seed_ahead(const std::array<rng*, N>& gs) noexcept {
    for (rng* g : gs)
      if (g->seeded_ != 1) return;  // only fresh generators: each then seeds the rest itself
    for (std::size_t i = 1; i <= m; ++i)
      for (rng* g : gs) g->mt_[i] = seed_word(g->mt_[i - 1], i);
    for (rng* g : gs) g->seeded_ = m + 1;
  }

private:
  static constexpr std::size_t n = 312, m = 156;
  static constexpr std::uint64_t matrix = 0xb5026f5aa96619e9ULL;
  static constexpr std::uint64_t upper = ~std::uint64_t{0} << 31, lower = ~upper;

  // The seeding recurrence up to word `upto` (exclusive); the words it reads are still the seeding
  // values, since it runs m words ahead of the regeneration.
  void seed_to(std::size_t upto) noexcept {
    for (; seeded_ < upto; ++seeded_) mt_[seeded_] = seed_word(mt_[seeded_ - 1], seeded_);
  }
  // Seeding word i from word i − 1 (the standard's initialisation).
  static constexpr std::uint64_t seed_word(std::uint64_t previous, std::size_t i) noexcept {
    return 6364136223846793005ULL * (previous ^ (previous >> 62)) + i;
  }

  std::array<std::uint64_t, n> mt_{};
  std::size_t seeded_ = 1;  // words [0, seeded_) hold their seeding values (or, below next_, new ones)
  std::size_t next_ = 0;    // the next word to draw
};

/// A uniform double in [0, 1) from the top 53 bits of one draw.
inline double uniform01(rng& g) noexcept {
  return static_cast<double>(g() >> 11) * 0x1.0p-53;
}

namespace detail {
// c[0] + c[1]·x + … + c[7]·x⁷ (Horner).
inline double polynomial7(const double (&c)[8], double x) noexcept {
  double v = c[7];
  for (int i = 6; i >= 0; --i) v = v * x + c[i];
  return v;
}
} // namespace detail

/// Φ⁻¹(p): the standard normal quantile, for p in (0, 1) (clamped to [2^-60, 1 − 2^-53], so the
/// result is finite, within ±8.4). Wichura's algorithm AS 241 (PPND16; Applied Statistics 37(3),
/// 477–484, 1988): rational approximations on three ranges of p, relative error about 10^-16.
inline double standard_normal_quantile(double p) noexcept {
  // Coefficients of AS 241, lowest power first.
  static constexpr double central_num[8] = {3.3871328727963666080e0, 1.3314166789178437745e+2,
                                            1.9715909503065514427e+3, 1.3731693765509461125e+4,
                                            4.5921953931549871457e+4, 6.7265770927008700853e+4,
                                            3.3430575583588128105e+4, 2.5090809287301226727e+3};
  static constexpr double central_den[8] = {1.0, 4.2313330701600911252e+1, 6.8718700749205790830e+2,
                                            5.3941960214247511077e+3, 2.1213794301586595867e+4,
                                            3.9307895800092710610e+4, 2.8729085735721942674e+4,
                                            5.2264952788528545610e+3};
  static constexpr double near_num[8] = {1.42343711074968357734e0, 4.63033784615654529590e0,
                                         5.76949722146069140550e0, 3.64784832476320460504e0,
                                         1.27045825245236838258e0, 2.41780725177450611770e-1,
                                         2.27238449892691845833e-2, 7.74545014278341407640e-4};
  static constexpr double near_den[8] = {1.0, 2.05319162663775882187e0, 1.67638483018380384940e0,
                                         6.89767334985100004550e-1, 1.48103976427480074590e-1,
                                         1.51986665636164571966e-2, 5.47593808499534494600e-4,
                                         1.05075007164441684324e-9};
  static constexpr double far_num[8] = {6.65790464350110377720e0, 5.46378491116411436990e0,
                                        1.78482653991729133580e0, 2.96560571828504891230e-1,
                                        2.65321895265761230930e-2, 1.24266094738807843860e-3,
                                        2.71155556874348757815e-5, 2.01033439929228813265e-7};
  static constexpr double far_den[8] = {1.0, 5.99832206555887937690e-1, 1.36929880922735805310e-1,
                                        1.48753612908506148525e-2, 7.86869131145613259100e-4,
                                        1.84631831751005468180e-5, 1.42151175831644588870e-7,
                                        2.04426310338993978564e-15};
  p = std::clamp(p, 0x1.0p-60, 1.0 - 0x1.0p-53);
  const double q = p - 0.5;
  if (std::abs(q) <= 0.425) {  // 0.075 <= p <= 0.925
    const double r = 0.180625 - q * q;
    return q * detail::polynomial7(central_num, r) / detail::polynomial7(central_den, r);
  }
  const double r = std::sqrt(-std::log(q < 0 ? p : 1.0 - p));  // from the nearer tail
  const double z = r <= 5.0 ? detail::polynomial7(near_num, r - 1.6) / detail::polynomial7(near_den, r - 1.6)
                            : detail::polynomial7(far_num, r - 5.0) / detail::polynomial7(far_den, r - 5.0);
  return q < 0 ? -z : z;
}

/// Φ⁻¹(0.9), correctly rounded: a log-normal's P90 is median · exp(z90 · sigma).
/// (standard_normal_quantile(0.9) is 2 ulp above it; the workload sampler keeps that value.)
inline constexpr double z90 = 1.2815515655446004;

/// A standard normal draw by inverse transform (consumes exactly one value from g).
inline double standard_normal(rng& g) noexcept { return standard_normal_quantile(uniform01(g)); }

/// Mixes a seed with a stream index into an independent seed (splitmix64 finaliser).
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) noexcept {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

} // namespace loopcast
