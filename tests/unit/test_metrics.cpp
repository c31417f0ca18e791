// Metrics with the definitions and filters of docs/model.md §8.
#include "loopcast/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace loopcast;

TEST(Metrics, PercentilesInterpolateLinearly) {
  std::vector<double> v{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(v, 0.5), 2.5);  // rank 1.5 between 2 and 3
  EXPECT_DOUBLE_EQ(percentile(v, 0.1), 1.3);  // rank 0.3
  EXPECT_DOUBLE_EQ(percentile(v, 0.9), 3.7);
  std::vector<double> empty;
  EXPECT_EQ(percentile(empty, 0.5), 0.0);
  const auto p = summarize({10, 20, 30, 40, 50});
  EXPECT_EQ(p.count, 5u);
  EXPECT_DOUBLE_EQ(p.p25, 20.0);
  EXPECT_DOUBLE_EQ(p.p75, 40.0);
}

// Three requests kept, one with 49 tokens dropped, one of 0.1 s dropped, one over an hour dropped.
TEST(Metrics, EffectiveAndDecodeThroughputWithFilters) {
  const std::vector<request_sample> rs{
      // session, t_send, t_first_token, t_end, prompt, cache_read, generated
      {0, 0, 1.0, 3.0, 10000, 8000, 400},    // effective 400/3 = 133.3, decode 400/2 = 200, prefill share 1/3
      {0, 0, 0.5, 2.5, 20000, 18000, 1000},  // effective 400, decode 500, share 0.2
      {0, 0, 2.0, 4.0, 30000, 27000, 600},   // effective 150, decode 300, share 0.5
      {0, 0, 0.5, 1.0, 40000, 36000, 49},    // output + reasoning < 50: dropped
      {0, 0, 0.05, 0.1, 1000, 0, 100},       // 0.1 s < 0.2 s: dropped
      {0, 0, 10, 4000, 1000, 0, 1000},       // 4,000 s > 3,600 s: dropped
  };
  const auto m = compute_request_metrics(rs);
  EXPECT_EQ(m.samples.kept, 3u);
  EXPECT_EQ(m.samples.dropped_short_output, 1u);
  EXPECT_EQ(m.samples.dropped_duration, 2u);
  EXPECT_DOUBLE_EQ(m.effective_tps.p50, 150.0);   // median of 133.3, 150, 400
  EXPECT_DOUBLE_EQ(m.decode_tps.p50, 300.0);      // median of 200, 300, 500
  EXPECT_NEAR(m.prefill_share.p50, 1.0 / 3.0, 1e-12);
  // TTFT over every served request: 1, 0.5, 2, 0.5, 0.05, 10 → median (0.5 + 1) / 2.
  EXPECT_DOUBLE_EQ(m.ttft_s.p50, 0.75);
  // TPOT of the kept: 2/399, 2/999, 2/599 s.
  EXPECT_EQ(m.tpot_s.count, 3u);
  EXPECT_DOUBLE_EQ(m.tpot_s.p50, 2.0 / 599.0);
  // Ratios over every served request: prompt 102,000; generated 3,149; cache reads 89,000.
  EXPECT_NEAR(m.context_output_ratio, 102000.0 / 3149.0, 1e-9);
  EXPECT_NEAR(m.cache_hit_rate, 89000.0 / 102000.0, 1e-12);
}

// The Monte Carlo rows' medians (by selection) equal the full metrics' (by sorting), for even and
// odd numbers of samples from 1 to 131, with ties.
TEST(Metrics, MediansBySelectionEqualTheSortedOnes) {
  std::vector<request_sample> v;
  for (int i = 0; i < 131; ++i) {
    const double d = 0.5 + 0.37 * ((i * 17) % 41);  // durations with ties
    v.push_back({0, 10.0 * i, 10.0 * i + 0.1 * ((i * 7) % 13), 10.0 * i + d, 1000, 0, 60 + i});
  }
  for (std::size_t n : {131u, 66u, 65u, 64u, 63u, 41u, 40u, 3u, 2u, 1u}) {
    const std::span<const request_sample> s(v.data(), n);
    const auto full = compute_request_metrics(s);
    const auto med = compute_request_medians(s);
    EXPECT_EQ(med.effective_tps_p50, full.effective_tps.p50) << n;
    EXPECT_EQ(med.ttft_p50_s, full.ttft_s.p50) << n;
  }
}

// Past 16,384 samples the medians are selected among the values a sample of them brackets; they are
// still the sorted ones: spread values with ties, values in order, all equal, and values whose
// evenly spaced sample (every 19th of 20,000) is unlike the rest, so that the bracket misses and
// the plain selection answers. Odd and even counts.
TEST(Metrics, MediansOfManySamplesEqualTheSortedOnes) {
  for (const int shape : {0, 1, 2, 3}) {
    for (const int n : {20000, 20001}) {
      std::vector<request_sample> v;
      v.reserve(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) {
        double ttft = 0;
        switch (shape) {
        case 0: ttft = 0.01 * ((i * 7919) % 997); break;          // spread, each value ~20 times
        case 1: ttft = 0.001 * i; break;                          // in order
        case 2: ttft = 0.25; break;                               // all equal
        default: ttft = i % 19 == 0 ? 100.0 + 0.1 * i : 0.001 * i;  // the sample sees only the large ones
        }
        const double duration = ttft + 1.0 + 0.001 * ((i * 31) % 401);
        v.push_back({0, 10.0 * i, 10.0 * i + ttft, 10.0 * i + duration, 1000, 0, 100 + (i % 7)});
      }
      const auto full = compute_request_metrics(v);
      const auto med = compute_request_medians(v);
      EXPECT_EQ(med.ttft_p50_s, full.ttft_s.p50) << shape << " " << n;
      EXPECT_EQ(med.effective_tps_p50, full.effective_tps.p50) << shape << " " << n;
      EXPECT_EQ(full.effective_tps.count, static_cast<std::size_t>(n));
    }
  }
}

// A median without samples is NaN (null in JSON, an empty CSV cell), never 0: no request served;
// requests served but none kept by the throughput filters (here fewer than 50 tokens generated).
TEST(Metrics, MediansWithoutSamplesAreNaN) {
  const auto none = compute_request_medians({});
  EXPECT_TRUE(std::isnan(none.effective_tps_p50));
  EXPECT_TRUE(std::isnan(none.ttft_p50_s));
  const std::vector<request_sample> short_answers{{0, 0.0, 0.4, 1.0, 1000, 0, 20}, {0, 2.0, 2.2, 3.0, 1000, 0, 49}};
  const auto m = compute_request_medians(short_answers);
  EXPECT_TRUE(std::isnan(m.effective_tps_p50));
  EXPECT_DOUBLE_EQ(m.ttft_p50_s, 0.3);  // the two TTFTs, 0.4 s and 0.2 s
  EXPECT_EQ(compute_request_metrics(short_answers).effective_tps.count, 0u);
}
