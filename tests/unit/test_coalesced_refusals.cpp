// sim_options::coalesce_refusals: on a tier the fleet overwhelms, the 429s that change nothing
// shared are handled in batches. The results must be those of the event loop that handles every
// attempt as its own event, to the last bit: every field of every output is compared here, on
// fleets of reference agents over limits that bind in different ways. The same comparison checks
// that a run on the buffers of runs before it (sim_options::storage) is a run of its own.
#include "loopcast/metrics.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/random.hpp"
#include "loopcast/simulation.hpp"
#include "loopcast/workload.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

using namespace loopcast;

namespace {

using loopcast::test_support::models;

// Bitwise, so that -0.0 and 0.0 differ and NaN equals NaN.
::testing::AssertionResult same_bits(double a, double b) {
  if (std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " != " << b;
}

void expect_same_tokens(const token_counts& a, const token_counts& b) {
  EXPECT_EQ(a.input, b.input);
  EXPECT_EQ(a.cache_read, b.cache_read);
  EXPECT_EQ(a.cache_write, b.cache_write);
  EXPECT_EQ(a.output, b.output);
  EXPECT_EQ(a.reasoning, b.reasoning);
}

// Every output of a run without a timeline.
void expect_same(const simulation_result& a, const simulation_result& b) {
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    SCOPED_TRACE("request row " + std::to_string(i));
    EXPECT_EQ(a.requests[i].session, b.requests[i].session);
    EXPECT_TRUE(same_bits(a.requests[i].t_send, b.requests[i].t_send));
    EXPECT_TRUE(same_bits(a.requests[i].t_first_token, b.requests[i].t_first_token));
    EXPECT_TRUE(same_bits(a.requests[i].t_end, b.requests[i].t_end));
    EXPECT_EQ(a.requests[i].prompt, b.requests[i].prompt);
    EXPECT_EQ(a.requests[i].cache_read, b.requests[i].cache_read);
    EXPECT_EQ(a.requests[i].generated, b.requests[i].generated);
  }
  ASSERT_EQ(a.sessions.size(), b.sessions.size());
  for (std::size_t i = 0; i < a.sessions.size(); ++i) {
    SCOPED_TRACE("session " + std::to_string(i));
    const auto &x = a.sessions[i], &y = b.sessions[i];
    EXPECT_EQ(x.outcome, y.outcome);
    EXPECT_EQ(x.requests_total, y.requests_total);
    EXPECT_EQ(x.requests_served, y.requests_served);
    EXPECT_EQ(x.attempts, y.attempts);
    EXPECT_EQ(x.rate_limited, y.rate_limited);
    EXPECT_TRUE(same_bits(x.start_s, y.start_s));
    EXPECT_TRUE(same_bits(x.end_s, y.end_s));
    EXPECT_TRUE(same_bits(x.stall_s, y.stall_s));
    expect_same_tokens(x.tokens, y.tokens);
    EXPECT_TRUE(same_bits(x.cost_usd, y.cost_usd));
    EXPECT_EQ(x.stop_request, y.stop_request);
    EXPECT_EQ(x.stop_bucket, y.stop_bucket);
    EXPECT_TRUE(same_bits(x.stop_need, y.stop_need));
    EXPECT_TRUE(same_bits(x.stop_capacity, y.stop_capacity));
    EXPECT_EQ(x.stop_never_admitted, y.stop_never_admitted);
  }
  ASSERT_EQ(a.buckets.size(), b.buckets.size());
  for (std::size_t i = 0; i < a.buckets.size(); ++i) {
    SCOPED_TRACE("bucket " + a.buckets[i].name);
    EXPECT_TRUE(same_bits(a.buckets[i].peak_demand, b.buckets[i].peak_demand));
    EXPECT_TRUE(same_bits(a.buckets[i].peak_window_start_s, b.buckets[i].peak_window_start_s));
    EXPECT_TRUE(same_bits(a.buckets[i].refusals, b.buckets[i].refusals));
    EXPECT_TRUE(same_bits(a.buckets[i].charged, b.buckets[i].charged));
  }
  ASSERT_EQ(a.first_429.has_value(), b.first_429.has_value());
  if (a.first_429) {
    const auto &x = *a.first_429, &y = *b.first_429;
    EXPECT_EQ(x.session, y.session);
    EXPECT_EQ(x.request, y.request);
    EXPECT_TRUE(same_bits(x.time_s, y.time_s));
    EXPECT_EQ(x.bucket, y.bucket);
    EXPECT_TRUE(same_bits(x.retry_after_s, y.retry_after_s));
    expect_same_tokens(x.sent_before, y.sent_before);
    ASSERT_EQ(x.buckets.size(), y.buckets.size());
    for (std::size_t i = 0; i < x.buckets.size(); ++i) {
      EXPECT_TRUE(same_bits(x.buckets[i].used, y.buckets[i].used));
      EXPECT_TRUE(same_bits(x.buckets[i].window_demand, y.buckets[i].window_demand));
    }
  }
  expect_same_tokens(a.tokens, b.tokens);
  for (std::size_t k = 0; k < token_class_count; ++k) EXPECT_TRUE(same_bits(a.cost_by_class_usd[k], b.cost_by_class_usd[k]));
  EXPECT_TRUE(same_bits(a.token_cost_usd, b.token_cost_usd));
  EXPECT_TRUE(same_bits(a.cache_storage_usd, b.cache_storage_usd));
  EXPECT_TRUE(same_bits(a.wall_s, b.wall_s));
  EXPECT_TRUE(same_bits(a.busy_s, b.busy_s));
  EXPECT_TRUE(same_bits(a.cost_usd, b.cost_usd));
  EXPECT_EQ(a.cut_off, b.cut_off);
  EXPECT_TRUE(same_bits(a.cut_off_s, b.cut_off_s));
}

struct fleet {
  target tgt;
  retry_policy client;
  std::vector<session_script> scripts;
  std::vector<session_plan> plans;
};

// n reference agents of `turns` turns, 2 s apart, on the reference scenario's Developer-tier
// target (changed by `edit`), with the opencode client (retries forever, honours retry-after).
fleet reference_fleet(std::size_t n, int turns, std::uint64_t seed, const std::function<void(target&)>& edit = {}) {
  const preset_library lib({models});
  const scenario ref = lib.load_scenario("reference");
  fleet f;
  f.tgt = ref.options.at(0).first();
  if (edit) edit(f.tgt);
  f.client = lib.load_client("opencode");
  auto wl = ref.fleet.at(0).wl;
  wl.turns = fixed_dist{static_cast<double>(turns)};
  f.scripts.reserve(n);
  for (std::size_t i = 0; i < n; ++i) f.scripts.push_back(generate_session(wl, derive_seed(seed, i)));
  for (std::size_t i = 0; i < n; ++i) f.plans.push_back({&f.scripts[i], 2.0 * static_cast<double>(i), derive_seed(seed + 1, i), 0});
  return f;
}

// A bucket of at most `n` requests in flight, beside the target's others.
void add_concurrency_limit(target& t, double n) {
  bucket_config c;
  c.name = "concurrency";
  c.unit = bucket_unit::concurrent_requests;
  c.algorithm = bucket_algorithm::concurrency;
  c.limit = n;
  t.limits.push_back(c);
}

simulation_result run(const fleet& f, bool coalesce, std::uint64_t budget = 0) {
  sim_options o;
  o.record_attempts = false;
  o.coalesce_refusals = coalesce;
  o.max_attempts = budget;
  return simulate(f.tgt, f.client, f.plans, o);
}

// The run both ways; returns the coalesced one.
simulation_result expect_both_ways_same(const fleet& f, std::uint64_t budget = 0) {
  const auto one_by_one = run(f, false, budget);
  const auto coalesced = run(f, true, budget);
  expect_same(one_by_one, coalesced);
  return coalesced;
}

std::int64_t refusals(const simulation_result& r) {
  std::int64_t n = 0;
  for (const auto& s : r.sessions) n += s.rate_limited;
  return n;
}

} // namespace

// The Developer tier (two token buckets and a request bucket, the unused reservation refunded at
// completion) and a fleet it cannot serve: tens of 429s per request.
TEST(CoalescedRefusals, AHerdOnTheDeveloperTierIsTheEventLoopsToTheLastBit) {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto f = reference_fleet(40, 25, seed);
    const auto r = expect_both_ways_same(f);
    EXPECT_GT(refusals(r), 10 * static_cast<std::int64_t>(r.requests.size())) << refusals(r) << " 429s";  // a herd indeed
    std::size_t scripted = 0;  // 25 turns and the compactions among them
    for (const auto& sc : f.scripts) scripted += sc.requests.size();
    EXPECT_EQ(r.requests.size(), scripted);
    for (const auto& s : r.sessions) EXPECT_EQ(s.outcome, session_outcome::completed);
  }
}

// The attempt budget stops the run inside a batch of 429s at the same attempt.
TEST(CoalescedRefusals, TheAttemptBudgetCutsAtTheSameAttempt) {
  const auto f = reference_fleet(30, 20, 4);
  const auto full = run(f, false);
  std::int64_t attempts = 0;
  for (const auto& s : full.sessions) attempts += s.attempts;
  for (const std::uint64_t budget : {std::uint64_t{1}, std::uint64_t{97}, static_cast<std::uint64_t>(attempts / 3),
                                     static_cast<std::uint64_t>(attempts - 1), static_cast<std::uint64_t>(attempts)}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    const auto r = expect_both_ways_same(f, budget);
    std::int64_t made = 0;
    for (const auto& s : r.sessions) made += s.attempts;
    EXPECT_EQ(made, std::min<std::int64_t>(attempts, static_cast<std::int64_t>(budget)));
  }
}

// One request bucket binds: every waiting request needs 1, so retries fall at the same times and
// their order is their scheduling order.
TEST(CoalescedRefusals, RetriesAtTheSameTimeKeepTheirOrder) {
  const auto f = reference_fleet(30, 15, 5, [](target& t) {
    t.limits.erase(t.limits.begin(), t.limits.begin() + 2);  // rpm only
    t.limits[0].limit = 20;
  });
  const auto r = expect_both_ways_same(f);
  EXPECT_GT(refusals(r), 5 * static_cast<std::int64_t>(r.requests.size()));
}

// The window algorithms and a concurrency limit.
TEST(CoalescedRefusals, WindowsAndConcurrency) {
  const auto sliding = reference_fleet(25, 15, 6, [](target& t) {
    for (auto& b : t.limits) b.algorithm = bucket_algorithm::sliding_window;
  });
  {
    SCOPED_TRACE("sliding windows");
    EXPECT_GT(refusals(expect_both_ways_same(sliding)), 1000);
  }
  const auto fixed = reference_fleet(25, 15, 7, [](target& t) {
    for (auto& b : t.limits) b.algorithm = bucket_algorithm::fixed_window;
  });
  {
    SCOPED_TRACE("fixed windows");
    EXPECT_GT(refusals(expect_both_ways_same(fixed)), 1000);
  }
  const auto concurrent = reference_fleet(25, 15, 8, [](target& t) { add_concurrency_limit(t, 3); });
  SCOPED_TRACE("a concurrency limit");
  EXPECT_GT(refusals(expect_both_ways_same(concurrent)), 1000);
}

// Without retry-after the client backs off (1 s doubling to 30 s): retries come before other
// waiting ones and are refused again within a batch's span; a client that gives up after 3
// retries ends sessions inside it.
TEST(CoalescedRefusals, BackOffWithoutRetryAfterAndClientsThatGiveUp) {
  auto f = reference_fleet(30, 15, 9, [](target& t) { t.sends_retry_after = false; });
  EXPECT_GT(refusals(expect_both_ways_same(f)), 1000);
  f.client.max_retries = 3;
  const auto r = expect_both_ways_same(f);
  std::int64_t died = 0;
  for (const auto& s : r.sessions) died += s.outcome == session_outcome::died_after_retries;
  EXPECT_GT(died, 0);
}

// Clients that draw jitter (Claude Code's: 10 retries, back-off × U[0.75, 1]) draw in the same
// order both ways: with retry-after honoured (no draws) and without it (a draw per 429), where
// sessions die after their tenth retry.
TEST(CoalescedRefusals, ClientsThatDrawJitter) {
  const preset_library lib({models});
  auto f = reference_fleet(60, 15, 11);
  f.client = lib.load_client("claude-code");
  ASSERT_TRUE(f.client.draws_jitter());
  for (const bool retry_after : {true, false}) {
    SCOPED_TRACE(retry_after ? "retry-after" : "back-off");
    f.tgt.sends_retry_after = retry_after;
    const auto r = expect_both_ways_same(f);
    EXPECT_GT(refusals(r), 500);
    std::int64_t died = 0;
    for (const auto& s : r.sessions) died += s.outcome == session_outcome::died_after_retries;
    EXPECT_GT(died, 0);
  }
}

// A cache whose entries expire while requests wait: retries find a different prompt split.
TEST(CoalescedRefusals, ACacheThatExpiresWhileRequestsWait) {
  const auto f = reference_fleet(30, 15, 10, [](target& t) { t.cache.ttl_s = 20; });
  const auto r = expect_both_ways_same(f);
  EXPECT_GT(refusals(r), 1000);
}

// sim_options::storage and recycle: a run handed the buffers of runs before it (another fleet,
// other buckets, a timeline, a route) is the same to the last bit as one that made its own. The
// runs go from large to small, so that whatever a run left behind (cache steps, charge logs, held
// charges, queued events, session states) would show in the next one.
TEST(RunStorage, ARunOnAnotherRunsBuffersIsTheSame) {
  const auto herd = reference_fleet(40, 25, 21);
  const auto sliding = reference_fleet(12, 10, 22, [](target& t) {
    for (auto& b : t.limits) b.algorithm = bucket_algorithm::sliding_window;
  });
  const auto one = reference_fleet(1, 30, 23);
  const auto concurrent = reference_fleet(5, 8, 24, [](target& t) { add_concurrency_limit(t, 2); });
  struct step {
    const fleet* f;
    bool timeline, routed;
  };
  const step steps[] = {{&herd, false, false}, {&sliding, true, false}, {&one, false, false}, {&herd, false, true},
                        {&concurrent, false, false}, {&one, true, false}, {&one, false, false}};
  detail::run_storage storage;
  simulation_result last;
  auto simulate_step = [](const step& s, sim_options o) {
    o.record_attempts = o.record_charges = s.timeline;
    if (!s.routed) return simulate(s.f->tgt, s.f->client, s.f->plans, o);
    // The Developer tier spilling to a copy of it with ten times its limits.
    std::vector<target> route{s.f->tgt, s.f->tgt};
    route[1].name = "roomy";
    for (auto& b : route[1].limits) b.limit *= 10;
    route_policy policy;
    policy.spill_after_s = 5;
    return simulate_route(route, policy, s.f->client, s.f->plans, o);
  };
  std::size_t k = 0;
  for (const auto& s : steps) {
    SCOPED_TRACE("step " + std::to_string(++k));
    const auto fresh = simulate_step(s, {});
    sim_options o;
    o.storage = &storage;
    o.recycle = &last;
    last = simulate_step(s, o);
    expect_same(fresh, last);
    EXPECT_EQ(fresh.charges.size(), last.charges.size());
    for (std::size_t b = 0; b < std::min(fresh.charges.size(), last.charges.size()); ++b)
      EXPECT_EQ(fresh.charges[b].size(), last.charges[b].size());
    EXPECT_EQ(fresh.attempts.size(), last.attempts.size());
    EXPECT_GT(last.requests.size(), 0u);
  }
  // The runs took the buffers over: the sessions' room is still the herd's (each run's own would
  // have been one session's).
  EXPECT_GE(storage.sessions.capacity(), 40u);
}

// Limits that step within the run (a plan's dated rules crossed): the token buckets' reads by value
// would miss a step, so a batch reads them through the buckets, which take it at its time. The
// Developer tier's limits halve at 60 s and come back tripled at 150 s.
TEST(CoalescedRefusals, LimitsThatStepWithinTheRun) {
  const auto f = reference_fleet(40, 25, 12, [](target& t) {
    for (auto& b : t.limits) b.limit_steps = {{60, b.limit / 2}, {150, 3 * b.limit}};
  });
  const auto r = expect_both_ways_same(f);
  EXPECT_GT(refusals(r), 1000);
  auto flat = f;
  for (auto& b : flat.tgt.limits) b.limit_steps.clear();
  const auto without = run(flat, true);
  EXPECT_NE(refusals(r), refusals(without));
  EXPECT_NE(r.wall_s, without.wall_s);
}

// A generated session's requests between two compactions share one growing copy of their prefix
// runs, each request's last run ending at its prompt whatever its stored end (session.hpp,
// open_last_run). The same fleets with a copy of the runs per request, as importers write them,
// must give the same run to the last bit: on the Developer tier (a herd) and on limits that do not
// bind, with cache breaks, compactions and a cache that expires while requests wait.
TEST(SharedPrefixRuns, RunAsTheirOwnCopiesPerRequest) {
  const preset_library lib({models});
  const scenario ref = lib.load_scenario("reference");
  for (const double limits_x : {1.0, 1000.0}) {
    SCOPED_TRACE("limits ×" + std::to_string(limits_x));
    fleet shared, own;
    shared.tgt = ref.options.at(0).first();
    shared.tgt.cache.ttl_s = 30;
    for (auto& b : shared.tgt.limits) b.limit *= limits_x;
    shared.client = lib.load_client("opencode");
    auto wl = ref.fleet.at(0).wl;
    wl.turns = fixed_dist{60};
    wl.context_window_tokens = 40000;  // compactions within 60 turns
    wl.cache_breaks = {0.05, uniform_dist{0.2, 0.9}, 0.5};
    own.tgt = shared.tgt;
    own.client = shared.client;
    std::size_t copies = 0, own_copies = 0;
    for (std::uint64_t i = 0; i < 30; ++i) {
      shared.scripts.push_back(generate_session(wl, derive_seed(3, i)));
      session_script c = shared.scripts.back();
      EXPECT_TRUE(c.open_last_run);
      c.open_last_run = false;
      c.runs.clear();
      std::vector<prefix_run> runs;
      for (auto& q : c.requests) {
        shared.scripts.back().runs_of(q, runs);
        EXPECT_EQ(runs.back().end_tokens, q.prompt_tokens);
        q.runs_begin = static_cast<std::uint32_t>(c.runs.size());
        for (const auto& r : runs) c.runs.push_back(r);
      }
      copies += shared.scripts.back().runs.size();
      own_copies += c.runs.size();
      own.scripts.push_back(std::move(c));
    }
    for (std::size_t i = 0; i < 30; ++i) {
      shared.plans.push_back({&shared.scripts[i], 2.0 * static_cast<double>(i), derive_seed(4, i), 0});
      own.plans.push_back({&own.scripts[i], 2.0 * static_cast<double>(i), derive_seed(4, i), 0});
    }
    EXPECT_LT(2 * copies, own_copies) << copies << " against " << own_copies;  // shared indeed
    const auto a = run(shared, true), b = run(own, true);
    expect_same(a, b);
    EXPECT_GT(a.tokens.cache_read, 0);
  }
}

// sim_options::request_rows false (Monte Carlo, sweeps, solve): no row per served request, only
// what the two medians are selected from. The medians and every other output are those of a run
// with rows, to the last bit, on a herd and on limits that do not bind.
TEST(RequestRows, WithoutRowsTheMediansAndTheRestAreTheSame) {
  for (const double limits_x : {1.0, 1000.0}) {
    SCOPED_TRACE("limits ×" + std::to_string(limits_x));
    const auto f = reference_fleet(20, 30, 5, [limits_x](target& t) {
      for (auto& b : t.limits) b.limit *= limits_x;
    });
    sim_options o;
    o.record_attempts = false;
    auto rows = simulate(f.tgt, f.client, f.plans, o);
    o.request_rows = false;
    auto samples = simulate(f.tgt, f.client, f.plans, o);
    EXPECT_TRUE(samples.requests.empty());
    ASSERT_FALSE(rows.requests.empty());
    EXPECT_TRUE(rows.medians_from.ttft_s.empty());
    EXPECT_EQ(samples.medians_from.ttft_s.size(), rows.requests.size());  // each has a first token
    const request_medians a = compute_request_medians(rows.requests), b = compute_request_medians(samples.medians_from);
    EXPECT_FALSE(std::isnan(a.effective_tps_p50));
    EXPECT_TRUE(same_bits(a.effective_tps_p50, b.effective_tps_p50));
    EXPECT_TRUE(same_bits(a.ttft_p50_s, b.ttft_p50_s));
    rows.requests.clear();
    expect_same(rows, samples);
  }
}
