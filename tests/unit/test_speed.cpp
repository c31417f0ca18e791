// Speed curves (docs/model.md §5): integrals against closed forms, tables, rooflines, fitting.
#include "loopcast/errors.hpp"
#include "loopcast/random.hpp"
#include "loopcast/speed_fit.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <variant>
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

// Past speed.context_max_tokens the per-token time stays at its value there. The decode of the
// request above with the bound at 42,200: ∫ from 42,000 to 42,200 of 1e-3 + 1e-8 x
// = 0.2 + 1e-8 (42,200² − 42,000²)/2 = 0.2 + 0.0842 = 0.2842, then 300 tokens at
// 1e-3 + 1e-8·42,200 = 1.422e-3 s each = 0.4266: 0.7108 s in all. Prefill is constant: unchanged.
TEST(Speed, PerTokenTimesStayAtTheFittedEdge) {
  speed_model m;
  m.overhead_s = 0.25;
  m.prefill = constant_curve{1e-4};
  m.cached_token_s = 1e-6;
  m.decode = linear_curve{1e-3, 1e-8};
  m.context_max_tokens = 42200;
  const auto t = time_request(m, 40000, 2000, 500);
  EXPECT_NEAR(t.ttft_s, 0.49, 1e-12);
  EXPECT_NEAR(t.decode_s, 0.7108, 1e-12);
  // Wholly past the edge: 1,000 tokens from 50,000 at 1.422e-3 s each.
  EXPECT_NEAR(integrate_bounded(m.decode, 50000, 51000, 42200), 1.422, 1e-12);
  // Wholly before it, or no bound: the curve itself (∫ 0..1,000 = 1 + 0.005).
  EXPECT_NEAR(integrate_bounded(m.decode, 0, 1000, 42200), 1.005, 1e-12);
  EXPECT_NEAR(integrate_bounded(m.decode, 50000, 51000, 0), integrate(m.decode, 50000, 51000), 1e-12);
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

namespace {

// Hand-made logs from a known speed model: 120 sessions of 25 requests, each request's times
// multiplied by a per-session and a per-request log-normal factor (log-space spreads 0.20 and
// 0.10, median 1), as the simulator draws them. With `ttft_every` = k, every k-th request records
// its first-token time (0: none).
// With `hour_factor`, the log has clock times: session s starts a minute into UTC hour s mod 24 of
// 2026-11-02, and each request's times are further multiplied by hour_factor(its UTC hour).
// With `kinds`, request n's response holds the n-th of the six mixes kv-cache-tester records (in
// turn), and its times are further multiplied by output_factor(*kinds, that mix).
recorded_trace synthetic_log(const speed_model& m, double session_sigma, double request_sigma, int ttft_every,
                             double (*hour_factor)(std::size_t) = nullptr, std::uint64_t seed = 7,
                             const output_factors* kinds = nullptr) {
  constexpr std::array<std::uint8_t, 6> mixes{output_thinking | output_tool_use, output_text | output_tool_use,
                                              output_thinking | output_text | output_tool_use, output_tool_use,
                                              output_text, output_thinking | output_text};
  recorded_trace t;
  t.file = "synthetic.json";
  t.models = {"m"};
  t.absolute_clock = hour_factor != nullptr;
  rng g(derive_seed(seed, 1));
  int n = 0;
  for (int s = 0; s < 120; ++s) {
    auto& ss = t.sessions.emplace_back();
    ss.id = std::to_string(s);
    const double session_f = std::exp(session_sigma * standard_normal(g));
    double clock = hour_factor ? 1'793'577'600.0 + 3600.0 * (s % 24) + 60 : 0;
    for (int i = 0; i < 25; ++i, ++n) {
      recorded_request r;
      r.tokens.cache_read = static_cast<std::int64_t>(100000 * uniform01(g));
      r.tokens.input = 500 + static_cast<std::int64_t>(20000 * uniform01(g));
      r.tokens.output = 50 + static_cast<std::int64_t>(2000 * uniform01(g));
      const auto tm = time_request(m, r.tokens.cache_read, r.tokens.input, r.tokens.output);
      if (kinds) r.output_kinds = mixes[static_cast<std::size_t>(n) % mixes.size()];
      const double f = session_f * std::exp(request_sigma * standard_normal(g)) * (hour_factor ? hour_factor(utc_hour(clock)) : 1.0) *
                       (kinds ? output_factor(*kinds, r.output_kinds) : 1.0);
      r.t_send = clock;
      if (ttft_every > 0 && n % ttft_every == 0) r.t_first_token = clock + tm.ttft_s * f;
      r.t_end = clock + (tm.ttft_s + tm.decode_s) * f;
      clock = r.t_end + 5;
      ss.requests.push_back(r);
    }
  }
  return t;
}

speed_model known_model() {
  speed_model m;
  m.overhead_s = 0.5;
  m.prefill = linear_curve{2e-4, 2e-9};
  m.cached_token_s = 2e-6;
  m.decode = linear_curve{0.02, 5e-8};
  return m;
}

} // namespace

// The fit recovers a known model's terms from noisy logs, median-unbiased, and splits the
// residual spread into the session factor (0.20) and per-request noise (0.10) it was made with.
TEST(SpeedFit, RecoversTermsAndBothNoiseLevelsFromHandMadeLogs) {
  const auto m = known_model();
  const std::vector<recorded_trace> t{synthetic_log(m, 0.20, 0.10, 1)};
  const auto f = fit_speed_model(t);
  EXPECT_TRUE(f.used_ttft);
  EXPECT_EQ(f.samples, 3000u);
  // The median-unbiasing leaves a median residual of 1.
  EXPECT_NEAR(f.noise_median, 1.0, 1e-9);
  // The large terms within 10% (the session factors' sample median is not exactly 1: with 120
  // sessions of spread 0.2 it is within about ±4%); the per-cached-token time, a tenth of a
  // typical request's time, within 15%.
  EXPECT_NEAR(f.model.overhead_s / m.overhead_s, 1, 0.10);
  EXPECT_NEAR(std::get<linear_curve>(f.model.decode).a_s / 0.02, 1, 0.10);
  EXPECT_NEAR(f.model.cached_token_s / m.cached_token_s, 1, 0.15);
  const auto at = [](const speed_model& s) { return time_request(s, 50000, 10000, 1000); };
  EXPECT_NEAR((at(f.model).ttft_s + at(f.model).decode_s) / (at(m).ttft_s + at(m).decode_s), 1, 0.05);
  EXPECT_NEAR(f.noise_sigma, 0.10, 0.015);
  EXPECT_NEAR(f.session_sigma, 0.20, 0.03);
  EXPECT_GT(f.context_tokens_max, 100000.0);
  EXPECT_LE(f.context_tokens_max, 122550.0);  // 100,000 cached + 20,500 uncached + 2,050 generated
  // The fitted model holds its per-token times past the longest context it saw.
  EXPECT_EQ(f.model.context_max_tokens, f.context_tokens_max);
}

// Time of day, by hand: requests sent in UTC hours 12-17 take 1.4 times as long. With 5 sessions
// an hour the fit finds it (p < 0.01), its factors at 14:00 and 03:00 stand 1.4 apart, the other
// hours' session spread is what remains (0.10), and a session's hour moves its replayed times.
TEST(SpeedFit, FindsATimeOfDayFactorWhenTheClockShowsIt) {
  const auto busy = [](std::size_t h) { return h >= 12 && h <= 17 ? 1.4 : 1.0; };
  const auto m = known_model();
  const auto f = fit_speed_model({synthetic_log(m, 0.10, 0.10, 1, busy)});
  EXPECT_LT(f.hour_p_value, 0.01);
  ASSERT_EQ(f.model.hour_factors.size(), 24u);
  EXPECT_NEAR(f.model.hour_factors[14] / f.model.hour_factors[3], 1.4, 0.1);
  EXPECT_NEAR(f.model.hour_factors[16] / f.model.hour_factors[20], 1.4, 0.1);
  EXPECT_NEAR(f.session_sigma, 0.10, 0.04);
  EXPECT_NEAR(f.noise_sigma, 0.10, 0.015);
  const auto note = std::find_if(f.notes.begin(), f.notes.end(), [](const std::string& n) { return n.rfind("time of day: the UTC hour explains", 0) == 0; });
  EXPECT_NE(note, f.notes.end());
  // The same logs without the hour effect: no factor, and the fit says why.
  const auto flat = [](std::size_t) { return 1.0; };
  const auto g = fit_speed_model({synthetic_log(m, 0.10, 0.10, 1, flat)});
  EXPECT_GE(g.hour_p_value, 0.01);
  EXPECT_TRUE(g.model.hour_factors.empty());
  EXPECT_NE(std::find_if(g.notes.begin(), g.notes.end(),
                         [](const std::string& n) { return n.rfind("time of day: the UTC hours of 120 sessions (24 hours with at least 3) differ no more", 0) == 0; }),
            g.notes.end());
  // Relative clocks carry no hour.
  const auto r = fit_speed_model({synthetic_log(m, 0.10, 0.10, 1)});
  EXPECT_TRUE(std::isnan(r.hour_p_value));
  EXPECT_NE(std::find(r.notes.begin(), r.notes.end(),
                      "time of day: the logs carry no clock times (relative times, as kv-cache-tester's): no hour factor"),
            r.notes.end());
}

// Output kinds, by hand: thinking takes 1.3 times as long, text 0.8 times, a tool call 1.1 times,
// the factors multiplying. The fit recovers each within 3% (3,000 requests, 500 of each mix, noise
// 0.1 per request and session), the terms as without kinds, and for a request of unknown kinds
// the mix's geometric mean: the six mixes' factors 1.43, 0.88, 1.144, 1.1, 0.8, 1.04 have a
// geometric mean of (1.43·0.88·1.144·1.1·0.8·1.04)^(1/6) = 1.0521.
TEST(SpeedFit, RecoversTheOutputKindsFactors) {
  const auto m = known_model();
  const output_factors made{1.3, 0.8, 1.1, 1};
  const auto f = fit_speed_model({synthetic_log(m, 0.10, 0.10, 1, nullptr, 7, &made)});
  // The fit's level is free (a common factor can sit in the terms or the kinds): compare ratios.
  const auto& o = f.model.output;
  EXPECT_NEAR(o.thinking / o.text, 1.3 / 0.8, 0.03 * 1.3 / 0.8);
  EXPECT_NEAR(o.tool_use / o.text, 1.1 / 0.8, 0.03 * 1.1 / 0.8);
  const auto at = [](const speed_model& s, std::uint8_t k) {
    const auto tm = time_request(s, 50000, 10000, 1000);
    return (tm.ttft_s + tm.decode_s) * output_factor(s.output, k);
  };
  for (const std::uint8_t k : {std::uint8_t(output_text), std::uint8_t(output_thinking | output_tool_use)})
    EXPECT_NEAR(at(f.model, k) / at(m, k) / output_factor(made, k), 1, 0.05);
  EXPECT_NEAR(at(f.model, 0) / at(m, 0), 1.0521, 0.05);
  EXPECT_NEAR(f.noise_sigma, 0.10, 0.015);
  EXPECT_NE(std::find_if(f.notes.begin(), f.notes.end(),
                         [](const std::string& n) { return n.rfind("output kinds (3000 of 3000 requests record them)", 0) == 0; }),
            f.notes.end());
  // Without kinds in the logs the factors stay 1.
  const auto plain = fit_speed_model({synthetic_log(m, 0.10, 0.10, 1)});
  EXPECT_FALSE(plain.model.output.any());
}

// A scripted request is 56 bytes (issue 42 counts bytes per request): the output kinds a replay
// carries sit in the padding after `turn`, beside the segment and two one-bit flags; its recorded
// times lie beside the requests (session_script::recorded).
static_assert(sizeof(request_spec) <= 56, "request_spec grew: pack new fields into the bytes after `turn`");

TEST(Speed, UtcHour) {
  EXPECT_EQ(utc_hour(0), 0u);
  EXPECT_EQ(utc_hour(3599.9), 0u);
  EXPECT_EQ(utc_hour(3600), 1u);
  EXPECT_EQ(utc_hour(1'793'577'600.0 + 14 * 3600 + 5), 14u);  // 2026-11-02 14:00:05 UTC
  EXPECT_EQ(utc_hour(-1), 23u);
}

// Without a session factor the spread is all per-request noise.
TEST(SpeedFit, NoSessionFactorWhenSessionsShareOneSpeed) {
  const std::vector<recorded_trace> t{synthetic_log(known_model(), 0, 0.15, 1)};
  const auto f = fit_speed_model(t);
  EXPECT_NEAR(f.noise_sigma, 0.15, 0.015);
  EXPECT_LT(f.session_sigma, 0.04);
}

// A few requests with first-token times are enough to fit prefill on them (10 or more), and the
// fit says on how many; fewer than 10, and it says why it could not.
TEST(SpeedFit, UsesEveryRequestThatRecordsItsFirstToken) {
  const auto m = known_model();
  const std::vector<recorded_trace> few{synthetic_log(m, 0, 0.05, 250)};  // 12 of 3000
  const auto f = fit_speed_model(few);
  EXPECT_TRUE(f.used_ttft);
  EXPECT_NE(std::find(f.notes.begin(), f.notes.end(), "prefill fitted on the 12 of 3000 requests that record a first-token time"),
            f.notes.end());
  const auto tm = time_request(f.model, 50000, 10000, 1000);
  const auto tk = time_request(m, 50000, 10000, 1000);
  EXPECT_NEAR(tm.ttft_s / tk.ttft_s, 1, 0.10);
  EXPECT_NEAR(tm.decode_s / tk.decode_s, 1, 0.05);
  const std::vector<recorded_trace> fewer{synthetic_log(m, 0, 0.05, 500)};  // 6 of 3000
  const auto g = fit_speed_model(fewer);
  EXPECT_FALSE(g.used_ttft);
  EXPECT_NE(std::find(g.notes.begin(), g.notes.end(),
                      "only 6 requests record a first-token time (10 are needed to fit prefill on them): prefill and "
                      "decode are told apart only by how they scale"),
            g.notes.end());
}
