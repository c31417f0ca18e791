// Distributions (docs/model.md §7): quantiles, means and reproducible sampling.
#include "loopcast/distributions.hpp"

#include <gtest/gtest.h>

#include <random>

#include <algorithm>
#include <array>
#include <limits>
#include <set>

using namespace loopcast;

TEST(Distributions, LognormalFromMedianAndP90) {
  const distribution d = lognormal_dist{1000, 3000};
  EXPECT_NEAR(quantile(d, 0.5), 1000.0, 1e-9);
  EXPECT_NEAR(quantile(d, 0.9), 3000.0, 1e-9);
  // sigma = ln 3 / z0.9 with z0.9 = 1.2815515655446004; mean = 1000 · exp(sigma² / 2) = 1,444.03
  const double sigma = std::log(3.0) / 1.2815515655446004;
  EXPECT_NEAR(mean(d), 1000.0 * std::exp(0.5 * sigma * sigma), 1e-9);
  EXPECT_NEAR(mean(d), 1444.03, 0.01);
}

TEST(Distributions, SampleMeansMatch) {
  rng g(12345);
  const distribution gamma = gamma_dist{2.0, 3.0};  // mean 6
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) sum += sample(gamma, g);
  EXPECT_NEAR(sum / n, 6.0, 0.05);  // standard error sqrt(18 / 200,000) = 0.0095
  EXPECT_EQ(mean(gamma), 6.0);
  EXPECT_EQ(quantile(distribution{uniform_dist{10, 20}}, 0.25), 12.5);
  EXPECT_EQ(sample(distribution{fixed_dist{7}}, g), 7.0);
}

TEST(Distributions, EmpiricalResamplesItsValues) {
  const distribution d = empirical_dist{{5, 10, 20, 40}};
  rng g(3);
  std::set<double> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(sample(d, g));
  EXPECT_EQ(seen, (std::set<double>{5, 10, 20, 40}));
  EXPECT_EQ(mean(d), 18.75);
  EXPECT_EQ(quantile(d, 0.0), 5.0);
  EXPECT_EQ(quantile(d, 0.999), 40.0);
}

// Inverse CDF, linear between the points: p 0 / 0.5 / 1 at 0 / 10 / 30.
TEST(Distributions, QuantileTableInterpolates) {
  const distribution d = quantile_dist{{0, 0.5, 1}, {0, 10, 30}};
  EXPECT_EQ(quantile(d, 0.0), 0.0);
  EXPECT_EQ(quantile(d, 0.25), 5.0);
  EXPECT_EQ(quantile(d, 0.75), 20.0);
  EXPECT_EQ(quantile(d, 1.0), 30.0);
  EXPECT_EQ(mean(d), 0.5 * 5 + 0.5 * 20);  // each half: width × midpoint
  EXPECT_EQ(upper_bound(d), 30.0);
  rng g(5);
  double sum = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) sum += sample(d, g);
  EXPECT_NEAR(sum / n, 12.5, 0.15);  // sd 7.9 / sqrt(n) = 0.025
}

// A table of the sample 0, 1, …, 100 at 4 points (plus the tails' finer steps) reads the order
// statistics: quantile p is 100p.
TEST(Distributions, QuantileTableFromSample) {
  std::vector<double> xs;
  for (int i = 100; i >= 0; --i) xs.push_back(i);
  const auto q = quantile_table(xs, 4);
  EXPECT_EQ(q.p, (std::vector<double>{0, 0.001, 0.005, 0.25, 0.5, 0.75, 0.995, 0.999, 1}));
  EXPECT_EQ(q.values, (std::vector<double>{0, 0.1, 0.5, 25, 50, 75, 99.5, 99.9, 100}));
  // Four significant digits are kept.
  EXPECT_EQ(quantile_table({123456.0}).values.front(), 123500.0);
  EXPECT_THROW(quantile_table({}), std::invalid_argument);
  EXPECT_EQ(upper_bound(distribution{lognormal_dist{1, 2}}), std::numeric_limits<double>::infinity());
}

// loopcast's generator draws std::mt19937_64's sequence: across block boundaries, for seeds at
// the edges, from copies taken midway, and for streams read in small pieces alternately.
TEST(Distributions, TheGeneratorDrawsStdMt19937_64sSequence) {
  for (const std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{5489}, ~std::uint64_t{0},
                                   derive_seed(42, 1), derive_seed(7, 123456)}) {
    rng ours(seed);
    std::mt19937_64 ref(seed);
    for (int i = 0; i < 2000; ++i) ASSERT_EQ(ours(), ref()) << "seed " << seed << ", draw " << i;
  }
  EXPECT_EQ(rng()(), std::mt19937_64()());  // the default seed
  rng a(99);
  std::mt19937_64 ref(99);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a(), ref());
  rng copy = a;  // midway through the first block
  std::mt19937_64 ref_copy = ref;
  for (int i = 0; i < 700; ++i) {
    ASSERT_EQ(a(), ref());
    if (i % 3 == 0) {
      ASSERT_EQ(copy(), ref_copy());
    }
  }
}

// Seeding several generators side by side (seed_ahead) leaves their sequences unchanged; a
// generator that has already drawn is left to seed itself.
TEST(Distributions, SeedingGeneratorsTogetherKeepsTheirSequences) {
  rng a(derive_seed(42, 1)), b(derive_seed(42, 2)), c(derive_seed(42, 3)), used(7);
  std::mt19937_64 ra(derive_seed(42, 1)), rb(derive_seed(42, 2)), rc(derive_seed(42, 3)), rused(7);
  ASSERT_EQ(used(), rused());
  rng::seed_ahead(std::array{&a, &b, &c});
  for (int i = 0; i < 700; ++i) {
    ASSERT_EQ(a(), ra()) << "draw " << i;
    ASSERT_EQ(b(), rb()) << "draw " << i;
    if (i % 2 == 0) {
      ASSERT_EQ(c(), rc()) << "draw " << i;
    }
  }
  rng d(5), e(6);
  std::mt19937_64 rd(5), re(6);
  rng::seed_ahead(std::array{&d, &used, &e});  // `used` has drawn: nothing is seeded ahead
  for (int i = 0; i < 400; ++i) {
    ASSERT_EQ(used(), rused());
    ASSERT_EQ(d(), rd());
    ASSERT_EQ(e(), re());
  }
}

TEST(Distributions, SameSeedSameDraws) {
  const distribution d = lognormal_dist{100, 400};
  rng a(99), b(99), c(100);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const double x = sample(d, a);
    EXPECT_EQ(x, sample(d, b));
    differs = differs || x != sample(d, c);
  }
  EXPECT_TRUE(differs);
}

TEST(Distributions, DerivedSeedsAreDistinct) {
  std::set<std::uint64_t> seeds;
  for (std::uint64_t s = 0; s < 1000; ++s) seeds.insert(derive_seed(42, s));
  EXPECT_EQ(seeds.size(), 1000u);
  EXPECT_EQ(derive_seed(42, 7), derive_seed(42, 7));
}
