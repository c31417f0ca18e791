// Speed curves (docs/model.md §5): integrals against closed forms, tables, rooflines, fitting.
#include "loopcast/errors.hpp"
#include "loopcast/speed_fit.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace loopcast;

TEST(Speed, ConstantCurve) {
  const speed_curve c = constant_curve{0.001};  // 1,000 tok/s
  EXPECT_DOUBLE_EQ(integrate(c, 500, 2500), 2.0);
  EXPECT_DOUBLE_EQ(tokens_per_second_at(c, 1e6), 1000.0);
  EXPECT_EQ(integrate(c, 10, 10), 0.0);
  EXPECT_EQ(integrate(c, 10, 5), 0.0);
}

TEST(Speed, LinearCurveIntegralIsClosedForm) {
  // s(x) = 1e-3 + 1e-8 x: ∫ from 10,000 to 30,000 = 1e-3·20,000 + 1e-8·(30,000² − 10,000²)/2 = 20 + 4 = 24 s.
  const speed_curve c = linear_curve{1e-3, 1e-8};
  EXPECT_NEAR(integrate(c, 10000, 30000), 24.0, 1e-12);
  EXPECT_DOUBLE_EQ(seconds_per_token_at(c, 50000), 1e-3 + 5e-4);
}

TEST(Speed, TableInterpolatesPerTokenTimeAndIsFlatOutside) {
  // 2,000 tok/s at 0 (0.5 ms) and 1,000 tok/s at 100,000 (1 ms).
  const speed_curve c = table_curve{{0, 100000}, {5e-4, 1e-3}};
  // Linear per-token time between the points: ∫ over [0, 100,000] = (0.5 + 1) / 2 ms · 100,000 = 75 s.
  EXPECT_NEAR(integrate(c, 0, 100000), 75.0, 1e-9);
  // Flat beyond the last point: 1 ms per token.
  EXPECT_NEAR(integrate(c, 100000, 150000), 50.0, 1e-9);
  // Across the last point: [50,000, 150,000] = trapezoid (0.75 + 1)/2 · 50,000 ms + 50 s = 43.75 + 50.
  EXPECT_NEAR(integrate(c, 50000, 150000), 93.75, 1e-9);
  EXPECT_NEAR(tokens_per_second_at(c, 50000), 1.0 / 7.5e-4, 1e-6);
}

TEST(Speed, TableWithManyPointsIsSumOfTrapezoids) {
  const speed_curve c = table_curve{{1000, 2000, 4000}, {1e-3, 2e-3, 2e-3}};
  // [0, 1000] flat 1 ms = 1 s; [1000, 2000] mean 1.5 ms = 1.5 s; [2000, 4000] 2 ms = 4 s; [4000, 5000] 2 ms = 2 s.
  EXPECT_NEAR(integrate(c, 0, 5000), 8.5, 1e-12);
  EXPECT_NEAR(integrate(c, 1500, 3000), 0.5 * (1.5e-3 + 2e-3) * 500 + 2e-3 * 1000, 1e-12);
}

TEST(Speed, RooflineIsTheMaxOfMemoryAndCompute) {
  // Memory time 1 ms + 1e-8 x, compute time 2 ms flat: they cross at x = 100,000.
  const speed_curve c = roofline_curve{1e-3, 1e-8, 2e-3, 0.0};
  EXPECT_DOUBLE_EQ(seconds_per_token_at(c, 0), 2e-3);
  EXPECT_DOUBLE_EQ(seconds_per_token_at(c, 200000), 3e-3);
  // ∫0^200,000 = 2 ms · 100,000 + [1 ms · 100,000 + 1e-8 (200,000² − 100,000²)/2] = 200 + 100 + 150 = 450 s.
  EXPECT_NEAR(integrate(c, 0, 200000), 450.0, 1e-9);
}

TEST(Speed, RooflineFromHardware) {
  roofline_hardware hw;
  hw.memory_bandwidth_bytes_per_s = 1e12;  // 1 TB/s
  hw.flops_per_s = 1e14;
  hw.parameters = 8e9;
  hw.bytes_per_parameter = 2;
  hw.kv_bytes_per_token = 131072;
  hw.attention_flops_per_position = 0;
  hw.utilisation = 1.0;
  hw.prefill_chunk_tokens = 512;
  const auto d = roofline_decode(hw);
  // Decode reads 16 GB of weights per token: 16 ms; compute 2·8e9 / 1e14 = 0.16 ms.
  EXPECT_DOUBLE_EQ(d.mem0_s, 0.016);
  EXPECT_DOUBLE_EQ(d.cmp0_s, 1.6e-4);
  EXPECT_DOUBLE_EQ(d.mem1_s_per_token, 131072 / 1e12);
  const auto p = roofline_prefill(hw);
  // Prefill shares a weight read across 512 tokens: 16 ms / 512 = 31.25 µs, compute-bound at 160 µs.
  EXPECT_DOUBLE_EQ(p.mem0_s, 0.016 / 512);
  EXPECT_DOUBLE_EQ(seconds_per_token_at(speed_curve{p}, 0), 1.6e-4);
}

TEST(Speed, RequestTimeIsOverheadPrefillAndDecode) {
  speed_model m;
  m.overhead_s = 0.25;
  m.prefill = constant_curve{1e-4};    // 10,000 tok/s
  m.cached_token_s = 1e-6;
  m.decode = linear_curve{1e-3, 1e-8};
  // 40,000 cached + 2,000 new, 500 generated:
  // TTFT = 0.25 + 2,000·1e-4 + 40,000·1e-6 = 0.25 + 0.2 + 0.04 = 0.49 s
  // decode = ∫ from 42,000 to 42,500 of 1e-3 + 1e-8 x = 0.5 + 1e-8 (42,500² − 42,000²)/2 = 0.5 + 0.21125
  const auto t = time_request(m, 40000, 2000, 500);
  EXPECT_NEAR(t.ttft_s, 0.49, 1e-12);
  EXPECT_NEAR(t.decode_s, 0.71125, 1e-12);
}

TEST(Speed, FitRecoversAKnownLinearCurve) {
  const linear_curve truth{5e-4, 9e-9};
  const speed_curve truth_curve = truth;
  std::vector<speed_sample> samples;
  for (double c : {5000.0, 20000.0, 60000.0, 100000.0})
    for (double n : {100.0, 800.0}) {
      const double secs = integrate(truth_curve, c - n / 2, c + n / 2);
      samples.push_back({c, n, secs});
    }
  double r2 = 0;
  const auto fit = fit_linear_curve(samples, &r2);
  EXPECT_NEAR(fit.a_s, truth.a_s, 1e-12);
  EXPECT_NEAR(fit.b_s_per_token, truth.b_s_per_token, 1e-16);
  EXPECT_NEAR(r2, 1.0, 1e-12);
}

TEST(Speed, FitRefusesDegenerateSamples) {
  const std::vector<speed_sample> one_context{{1000, 10, 0.1}, {1000, 20, 0.2}};
  EXPECT_THROW(
      {
        try {
          (void)fit_linear_curve(one_context);
        } catch (const error& e) {
          EXPECT_STREQ(e.what(), "fit_linear_curve: samples need at least two distinct contexts");
          throw;
        }
      },
      error);
  const std::vector<speed_sample> bad{{1000, 10, 0.1}, {2000, 20, -1}};
  EXPECT_THROW((void)fit_linear_curve(bad), error);
}
