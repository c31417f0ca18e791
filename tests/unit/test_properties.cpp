// Properties of the simulator on randomly generated buckets, workloads and traces. Each case is
// built from its own seed; a failure prints it (SCOPED_TRACE), so it can be replayed.
#include "loopcast/loopcast.hpp"

#include "two_requests.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace loopcast;

namespace {

constexpr int cases = 200;

double uniform(rng& g, double lo, double hi) { return lo + (hi - lo) * uniform01(g); }

bucket_config random_bucket(rng& g, bucket_algorithm alg) {
  bucket_config b;
  b.name = std::string("b");  // (not = "b": GCC 12 warns falsely of overlapping copies there, bug 105329)
  b.algorithm = alg;
  b.unit = alg == bucket_algorithm::concurrency ? bucket_unit::concurrent_requests : bucket_unit::tokens;
  b.classes = class_set::all();
  b.limit = std::floor(uniform(g, 1, alg == bucket_algorithm::concurrency ? 20 : 1e6));
  b.period_s = uniform(g, 1, 600);
  return b;
}

struct arrival {
  double t, q, duration;
};

std::vector<arrival> random_arrivals(rng& g, const bucket_config& b, int n) {
  std::vector<arrival> a;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += uniform(g, 0, b.period_s / 10);
    const double q = b.algorithm == bucket_algorithm::concurrency ? 1.0 : std::floor(uniform(g, 1, b.limit));
    a.push_back({t, q, uniform(g, 0, b.period_s / 4)});
  }
  return a;
}

// Admits what the bucket admits (no retries); returns the admitted arrivals.
std::vector<arrival> admitted(bucket& b, const std::vector<arrival>& arrivals) {
  std::vector<arrival> out;
  for (const auto& a : arrivals)
    if (b.wait_for(a.q, a.t) == 0.0) {
      b.charge(a.q, a.t, a.t + a.duration);
      out.push_back(a);
    }
  return out;
}

double first_refusal(const bucket_config& cfg, const std::vector<arrival>& arrivals) {
  bucket b(cfg);
  for (const auto& a : arrivals) {
    if (b.wait_for(a.q, a.t) > 0.0) return a.t;
    b.charge(a.q, a.t, a.t + a.duration);
  }
  return std::numeric_limits<double>::infinity();
}

} // namespace

// Token bucket: the charges admitted in any interval [t_i, t_j] are at most limit + limit·(t_j − t_i)/period.
TEST(Properties, TokenBucketNeverAdmitsBeyondItsBound) {
  for (int c = 0; c < cases; ++c) {
    SCOPED_TRACE(testing::Message() << "seed " << c);
    rng g(derive_seed(101, static_cast<std::uint64_t>(c)));
    const auto cfg = random_bucket(g, bucket_algorithm::token_bucket);
    bucket b(cfg);
    const auto in = admitted(b, random_arrivals(g, cfg, 150));
    for (std::size_t i = 0; i < in.size(); ++i) {
      double sum = 0;
      for (std::size_t j = i; j < in.size(); ++j) {
        sum += in[j].q;
        ASSERT_LE(sum, cfg.limit + cfg.limit * (in[j].t - in[i].t) / cfg.period_s + 1e-6 * cfg.limit);
      }
    }
  }
}

TEST(Properties, WindowsAndConcurrencyNeverExceedTheirLimit) {
  for (int c = 0; c < cases; ++c) {
    SCOPED_TRACE(testing::Message() << "seed " << c);
    rng g(derive_seed(102, static_cast<std::uint64_t>(c)));
    {
      const auto cfg = random_bucket(g, bucket_algorithm::fixed_window);
      bucket b(cfg);
      const auto in = admitted(b, random_arrivals(g, cfg, 150));
      std::map<std::int64_t, double> per_window;
      for (const auto& a : in) per_window[static_cast<std::int64_t>(std::floor(a.t / cfg.period_s))] += a.q;
      for (const auto& [w, sum] : per_window) ASSERT_LE(sum, cfg.limit + 1e-9 * cfg.limit);
    }
    {
      const auto cfg = random_bucket(g, bucket_algorithm::sliding_window);
      bucket b(cfg);
      const auto in = admitted(b, random_arrivals(g, cfg, 150));
      for (std::size_t j = 0; j < in.size(); ++j) {
        double sum = 0;
        for (std::size_t i = 0; i <= j; ++i)
          if (in[i].t > in[j].t - cfg.period_s) sum += in[i].q;
        ASSERT_LE(sum, cfg.limit + 1e-9 * cfg.limit);
      }
    }
    {
      const auto cfg = random_bucket(g, bucket_algorithm::concurrency);
      bucket b(cfg);
      const auto in = admitted(b, random_arrivals(g, cfg, 150));
      for (const auto& x : in) {
        int in_flight = 0;
        for (const auto& y : in) in_flight += y.t <= x.t && x.t < y.t + y.duration;
        ASSERT_LE(in_flight, cfg.limit);
      }
    }
  }
}

// A 429's retry_after is exactly the earliest time the request becomes admissible (no other traffic).
TEST(Properties, RetryAfterIsTheEarliestAdmissibleTime) {
  int checked = 0;
  for (int c = 0; c < cases; ++c) {
    SCOPED_TRACE(testing::Message() << "seed " << c);
    rng g(derive_seed(103, static_cast<std::uint64_t>(c)));
    for (auto alg : {bucket_algorithm::token_bucket, bucket_algorithm::fixed_window, bucket_algorithm::sliding_window,
                     bucket_algorithm::concurrency}) {
      const auto cfg = random_bucket(g, alg);
      bucket b(cfg);
      const auto arrivals = random_arrivals(g, cfg, 60);
      (void)admitted(b, arrivals);
      const double t = arrivals.back().t;
      const double q = alg == bucket_algorithm::concurrency ? 1.0 : std::floor(uniform(g, 1, cfg.limit));
      bucket probe = b;
      const double w = probe.wait_for(q, t);
      if (!(w > 0) || !std::isfinite(w)) continue;
      bucket at = b, before = b;
      EXPECT_EQ(at.wait_for(q, t + w), 0.0) << "not admissible at t + retry_after";
      EXPECT_GT(before.wait_for(q, t + w - std::max(1e-6 * w, 1e-9)), 0.0) << "admissible before t + retry_after";
      ++checked;
    }
  }
  EXPECT_GT(checked, cases);  // most cases reach a 429
}

// For a fixed arrival schedule, raising the limit never brings the first refusal earlier.
TEST(Properties, RaisingALimitNeverBringsTheFirstRefusalEarlier) {
  for (int c = 0; c < cases; ++c) {
    SCOPED_TRACE(testing::Message() << "seed " << c);
    rng g(derive_seed(104, static_cast<std::uint64_t>(c)));
    for (auto alg : {bucket_algorithm::token_bucket, bucket_algorithm::fixed_window, bucket_algorithm::sliding_window,
                     bucket_algorithm::concurrency}) {
      const auto cfg = random_bucket(g, alg);
      auto bigger = cfg;
      bigger.limit = std::floor(cfg.limit * uniform(g, 1.0, 3.0)) + 1;
      const auto arrivals = random_arrivals(g, cfg, 100);
      EXPECT_GE(first_refusal(bigger, arrivals), first_refusal(cfg, arrivals));
    }
  }
}

namespace {

workload random_workload(rng& g) {
  workload w;
  w.name = "random";
  w.system_prompt_tokens = static_cast<std::int64_t>(uniform(g, 0, 20000));
  w.task_tokens = fixed_dist{std::floor(uniform(g, 0, 5000))};
  w.turns = fixed_dist{std::floor(uniform(g, 1, 40))};
  w.output_tokens = lognormal_dist{uniform(g, 10, 500), uniform(g, 500, 2000)};
  w.reasoning_tokens = uniform01(g) < 0.5 ? distribution{fixed_dist{0}} : distribution{gamma_dist{uniform(g, 0.5, 3), 300}};
  w.tool_result_tokens = lognormal_dist{uniform(g, 100, 3000), uniform(g, 3000, 9000)};
  w.front_load_factor = uniform(g, 1, 6);
  w.front_load_decay_turns = uniform(g, 1, 8);
  w.tool_time_s = uniform_dist{0, uniform(g, 0.1, 8)};
  w.reasoning_in_context = uniform01(g) < 0.3;
  w.max_tokens = 8192;
  w.context_window_tokens = 131072;
  w.compaction.enabled = uniform01(g) < 0.5;
  w.compaction.at_fraction = uniform(g, 0.5, 0.9);
  w.compaction.summary_tokens = fixed_dist{uniform(g, 500, 4000)};
  return w;
}

target random_target(rng& g, double total_limit) {
  target t;
  t.name = "random";
  t.context_window_tokens = 1 << 20;
  t.cache.block_tokens = static_cast<std::int64_t>(uniform(g, 1, 256));
  t.cache.ttl_s = uniform(g, 1, 600);
  t.cache.write_charged = uniform01(g) < 0.5;
  t.speed.overhead_s = uniform(g, 0, 1);
  t.speed.prefill = linear_curve{uniform(g, 1e-5, 1e-3), uniform(g, 0, 1e-8)};
  t.speed.cached_token_s = uniform(g, 0, 1e-5);
  t.speed.decode = linear_curve{uniform(g, 1e-4, 1e-2), uniform(g, 0, 1e-7)};
  t.prices = price_sheet{};
  t.prices->usd_per_million = {uniform(g, 0, 5), uniform(g, 0, 1), uniform(g, 0, 6), uniform(g, 0, 8), uniform(g, 0, 20),
                               uniform(g, 0, 20)};
  bucket_config total;
  total.name = "total";
  total.limit = total_limit;
  total.period_s = 60;
  total.classes = class_set::all();
  total.charging = charging_rule::reserve_then_refund;
  bucket_config rpm;
  rpm.name = "rpm";
  rpm.unit = bucket_unit::requests;
  rpm.limit = 1000;
  rpm.period_s = 60;
  t.limits = {total, rpm};
  return t;
}

using loopcast::test_support::honour_forever;

void expect_finite(const simulation_result& r) {
  ASSERT_TRUE(std::isfinite(r.wall_s) && std::isfinite(r.cost_usd) && std::isfinite(r.busy_s));
  const auto m = compute_request_metrics(r.requests);
  for (const auto* p : {&m.effective_tps, &m.decode_tps, &m.prefill_share, &m.ttft_s, &m.tpot_s, &m.latency_s})
    ASSERT_TRUE(std::isfinite(p->p10) && std::isfinite(p->p50) && std::isfinite(p->p90));
  ASSERT_TRUE(std::isfinite(m.context_output_ratio) && std::isfinite(m.cache_hit_rate));
}

} // namespace

// Closed loop: tokens are conserved, results are finite, the same seed gives the same run, and a
// larger limit never brings the first 429 earlier (the runs are identical until the smaller
// limit's first 429, when the larger bucket holds at least as much).
TEST(Properties, ClosedLoopConservationDeterminismAndMonotoneLimits) {
  for (int c = 0; c < cases / 2; ++c) {
    SCOPED_TRACE(testing::Message() << "seed " << c);
    rng g(derive_seed(105, static_cast<std::uint64_t>(c)));
    const auto w = random_workload(g);
    const auto n = static_cast<std::size_t>(uniform(g, 1, 6));
    std::vector<session_script> scripts;
    for (std::size_t i = 0; i < n; ++i) scripts.push_back(generate_session(w, derive_seed(c, i)));
    std::vector<session_plan> plans;
    for (std::size_t i = 0; i < n; ++i) plans.push_back({&scripts[i], uniform(g, 0, 30), derive_seed(7, i), 0});
    const double limit = std::floor(uniform(g, 200000, 2000000));
    const auto tgt = random_target(g, limit);
    const auto r = simulate(tgt, honour_forever(), plans);
    expect_finite(r);
    token_counts served;
    for (const auto& a : r.attempts)
      if (a.status == attempt_status::ok) served += a.tokens;
    EXPECT_EQ(served, r.tokens);
    std::int64_t prompt = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < static_cast<std::size_t>(r.sessions[i].requests_served); ++k)
        prompt += scripts[i].requests[k].prompt_tokens;
    EXPECT_EQ(r.tokens.prompt(), prompt);
    const auto again = simulate(tgt, honour_forever(), plans);
    ASSERT_EQ(again.attempts.size(), r.attempts.size());
    for (std::size_t i = 0; i < r.attempts.size(); ++i) ASSERT_EQ(again.attempts[i].t_end, r.attempts[i].t_end);
    auto bigger = tgt;
    bigger.limits[0].limit = std::floor(limit * uniform(g, 1.01, 3));
    const auto rb = simulate(bigger, honour_forever(), plans);
    const double first = r.first_429 ? r.first_429->time_s : INFINITY;
    const double first_bigger = rb.first_429 ? rb.first_429->time_s : INFINITY;
    EXPECT_GE(first_bigger, first);
  }
}

// Cost is never negative and never falls when any one price rises.
TEST(Properties, CostIsNonNegativeAndMonotoneInEveryPrice) {
  for (int c = 0; c < cases * 5; ++c) {
    SCOPED_TRACE(testing::Message() << "seed " << c);
    rng g(derive_seed(106, static_cast<std::uint64_t>(c)));
    price_sheet p;
    p.usd_per_million = {uniform(g, 0, 10), uniform(g, 0, 2), uniform(g, 0, 12), uniform(g, 0, 20), uniform(g, 0, 80),
                         uniform(g, 0, 80)};
    p.long_context.push_back({static_cast<std::int64_t>(uniform(g, 1000, 300000)), p.usd_per_million});
    for (double* x : {&p.long_context[0].usd_per_million.input, &p.long_context[0].usd_per_million.output})
      *x *= uniform(g, 1, 2);
    p.batch_discount = uniform(g, 0, 0.9);
    p.usd_per_request = uniform(g, 0, 0.01);
    token_counts t{static_cast<std::int64_t>(uniform(g, 0, 400000)), static_cast<std::int64_t>(uniform(g, 0, 400000)),
                   static_cast<std::int64_t>(uniform(g, 0, 50000)), static_cast<std::int64_t>(uniform(g, 0, 20000)),
                   static_cast<std::int64_t>(uniform(g, 0, 20000))};
    const bool batch = uniform01(g) < 0.5, write_1h = uniform01(g) < 0.5;
    if (write_1h) std::swap(t.cache_write, t.cache_write_1h);  // the writes with a 1-hour lifetime
    const double base = price_request(p, t, 0, batch).total_usd;
    ASSERT_GE(base, 0.0);
    for (int k = 0; k < 6; ++k) {
      auto q = p;
      double* fields[] = {&q.usd_per_million.input, &q.usd_per_million.cache_read, &q.usd_per_million.cache_write_5m,
                          &q.usd_per_million.cache_write_1h, &q.usd_per_million.output, &q.usd_per_million.reasoning};
      double* tier_fields[] = {&q.long_context[0].usd_per_million.input, &q.long_context[0].usd_per_million.cache_read,
                               &q.long_context[0].usd_per_million.cache_write_5m, &q.long_context[0].usd_per_million.cache_write_1h,
                               &q.long_context[0].usd_per_million.output, &q.long_context[0].usd_per_million.reasoning};
      const double rise = uniform(g, 0, 5);
      *fields[k] += rise;
      *tier_fields[k] += rise;
      ASSERT_GE(price_request(q, t, 0, batch).total_usd, base - 1e-12);
    }
  }
}

// Replaying a recorded trace sends exactly its tokens again, whatever the limits.
TEST(Properties, ReplayPreservesTheLogsTotals) {
  for (int c = 0; c < cases / 4; ++c) {
    SCOPED_TRACE(testing::Message() << "seed " << c);
    rng g(derive_seed(107, static_cast<std::uint64_t>(c)));
    recorded_trace t;
    t.file = "random";
    t.models = {"m"};
    const int sessions = static_cast<int>(uniform(g, 1, 4));
    token_counts total;
    for (int s = 0; s < sessions; ++s) {
      recorded_session rs;
      rs.id = std::to_string(s);
      rs.parent = s == 0 ? -1 : 0;
      double now = uniform(g, 0, 100);
      std::int64_t prompt = static_cast<std::int64_t>(uniform(g, 1000, 20000));
      for (int i = 0, n = static_cast<int>(uniform(g, 1, 30)); i < n; ++i) {
        recorded_request r;
        r.t_send = now;
        r.t_end = uniform01(g) < 0.1 ? unknown_time : now + uniform(g, 0.5, 30);
        const auto cached = static_cast<std::int64_t>(uniform(g, 0, static_cast<double>(prompt)));
        r.tokens = {prompt - cached, cached, 0, static_cast<std::int64_t>(uniform(g, 1, 2000)), 0};
        total += r.tokens;
        rs.requests.push_back(r);
        now = (std::isnan(r.t_end) ? now : r.t_end) + uniform(g, 0, 20);
        prompt += static_cast<std::int64_t>(uniform(g, 0, 5000));
      }
      t.sessions.push_back(rs);
    }
    scenario_option o;
    o.label = "x";
    rng tg(derive_seed(108, static_cast<std::uint64_t>(c)));
    o.targets = {random_target(tg, std::floor(uniform(g, 300000, 1000000)))};
    o.client = honour_forever();
    const auto r = run_replay({t}, {o});
    EXPECT_EQ(r.options[0].sim.tokens.prompt(), total.prompt());
    EXPECT_EQ(r.options[0].sim.tokens.generated(), total.generated());
    EXPECT_EQ(r.recorded.tokens, total);
    expect_finite(r.options[0].sim);
  }
}

// Monte Carlo rows equal single runs with the same seeds.
TEST(Properties, MonteCarloRowsEqualSingleRuns) {
  const auto scn = preset_library({LOOPCAST_TEST_MODELS_DIR}).load_scenario("reference");
  const std::vector<std::uint64_t> seeds{1, 99, 12345};
  const auto rows = run_seeds(scn, seeds);
  ASSERT_EQ(rows.size(), seeds.size() * scn.options.size());
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    run_options ro;
    ro.seed = seeds[i];
    const auto single = run_scenario(scn, ro);
    for (std::size_t o = 0; o < scn.options.size(); ++o) {
      const auto& row = rows[i * scn.options.size() + o];
      EXPECT_EQ(row.seed, seeds[i]);
      EXPECT_EQ(row.cost_usd, single.options[o].sim.cost_usd);
      EXPECT_EQ(row.wall_s, single.options[o].sim.wall_s);
    }
  }
}
