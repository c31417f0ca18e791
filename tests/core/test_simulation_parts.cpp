// The simulation's parts (detail/simulation/), each on a case worked out by hand: what is checked
// before the loop, where sessions' lineages sit, the longest wait, a route's segments, a local
// engine's slots, and which bucket laws batch a herd of 429s.
#include <loopcast/core.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace loopcast;

// No limits, no cache, 1 ms per prompt token and 10 ms per generated token.
target plain(const std::string& name) {
  target t;
  t.name = name;
  t.cache.enabled = false;
  t.speed.prefill = constant_curve{0.001};
  t.speed.decode = constant_curve{0.01};
  return t;
}

request_spec request(std::int64_t prompt, std::int64_t output, double delay = 0, std::uint8_t segment = 0) {
  request_spec r;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.max_tokens = output;
  r.delay_before_s = delay;
  r.segment = segment;
  return r;
}

std::string message_of(const auto& f) {
  try {
    f();
  } catch (const simulation_error& e) {
    return e.what();
  }
  return "no error";
}

// ---- checks.hpp -----------------------------------------------------------------------------

TEST(SimulationChecks, RefuseWhatTheLoopCannotRun) {
  const auto t = plain("p");
  session_script s;
  s.source = "hand";
  s.requests = {request(-5, 10)};
  const session_plan plan{&s, 0, 1, 0};
  EXPECT_EQ(message_of([&] { (void)simulate(t, retry_policy{}, {&plan, 1}); }),
            "hand (session 1), request 1: a token count of -5 (expected 0 to 10^13)");
  s.requests = {request(5, 10)};
  const session_plan far_family{&s, 0, 1, 3};
  EXPECT_EQ(message_of([&] { (void)simulate(t, retry_policy{}, {&far_family, 1}); }),
            "hand (session 1) is in family 3; families are numbered below the 1 sessions");
  // A segment the route does not have.
  s.requests = {request(5, 10, 0, 1)};
  const target route[] = {plain("a"), plain("b")};
  route_policy p;
  p.segments = {{0, 1}, {1, 2}};  // targets 1 and 2: the route has two
  EXPECT_EQ(message_of([&] { (void)simulate_route(route, p, retry_policy{}, {&plan, 1}); }),
            "a route's segment 1 holds targets 1 to 2; the route has 2");
  p.segments = {{0, 1}};
  EXPECT_EQ(message_of([&] { (void)simulate_route(route, p, retry_policy{}, {&plan, 1}); }),
            "hand (session 1), request 1: route segment 1 of 1");
}

// ---- deployment.hpp -------------------------------------------------------------------------

// Two families: family 0's scripts share 2 lineages, family 1's 3; each script has private ones
// after its shared ones. Shared ids come first, family by family; private ones after, session by
// session.
TEST(SimulationDeployment, LineagesAreLaidOutFamilyByFamily) {
  session_script a, b, c;
  a.lineages = 4, a.shared_lineages = 2;  // 2 private
  b.lineages = 3, b.shared_lineages = 3;  // 0 private
  c.lineages = 5, c.shared_lineages = 1;  // 4 private (family 0 keeps its 2 shared)
  a.requests = b.requests = c.requests = {request(1, 1)};
  const std::vector<session_plan> plans{{&a, 0, 1, 0}, {&b, 0, 2, 1}, {&c, 0, 3, 0}};
  const auto l = detail::lay_out(plans);
  EXPECT_EQ(l.family_base, (std::vector<std::uint32_t>{0, 2}));
  EXPECT_EQ(l.shared, 5u);
  EXPECT_EQ(l.lineages, 5u + 2 + 0 + 4);
  EXPECT_EQ(l.requests, 3u);
}

TEST(SimulationDeployment, TheLongestWaitAndTheWorstBucket) {
  const std::vector<double> waits{0.5, 2.0, 1.0};
  const auto a = detail::longest_of(waits.size(), [&](std::size_t b) { return waits[b]; });
  EXPECT_EQ(a.wait, 2.0);
  EXPECT_EQ(a.worst, 1);
  const std::vector<double> none{0, 0};
  EXPECT_EQ(detail::longest_of(none.size(), [&](std::size_t b) { return none[b]; }).worst, -1);
  const std::vector<double> never{1.0, never_admitted, 9.0};
  const auto n = detail::longest_of(never.size(), [&](std::size_t b) { return never[b]; });
  EXPECT_EQ(n.wait, never_admitted);
  EXPECT_EQ(n.worst, 1);  // the first that never admits, whatever comes after
  // Charges of 5, 3, 4 at 0, 30 and 70 s: a 60 s window holds at most 5 + 3 = 8, from 0 s.
  const std::vector<charge_event> log{{0, 5}, {30, 3}, {70, 4}};
  EXPECT_EQ(detail::peak_window_demand(log, 60), (std::pair{8.0, 0.0}));
}

// ---- router.hpp -----------------------------------------------------------------------------

// A model map's route: targets a, b, c; segment 0 is {a}, segment 1 is {b, c}. Request 1 (segment
// 0) runs on a; request 2 (segment 1) on b, whose 1-request-per-minute bucket is then full, so
// request 3 (segment 1) spills to c, never to a.
TEST(SimulationRouter, SegmentsKeepEachRequestOnItsTargets) {
  auto b = plain("b");
  bucket_config rpm;
  rpm.name = "rpm";
  rpm.unit = bucket_unit::requests;
  rpm.limit = 1;
  rpm.period_s = 60;
  b.limits.push_back(rpm);
  const target route[] = {plain("a"), b, plain("c")};
  route_policy p;
  p.segments = {{0, 1}, {1, 2}};
  p.spill_after_s = 0;
  session_script s;
  s.source = "hand";
  s.requests = {request(100, 10, 0, 0), request(100, 10, 0, 1), request(100, 10, 0, 1)};
  const session_plan plan{&s, 0, 1, 0};
  sim_options o;
  o.record_attempts = true;
  const auto r = simulate_route(route, p, retry_policy{}, {&plan, 1}, o);
  ASSERT_EQ(r.requests.size(), 3u);
  std::vector<int> served_on;
  for (const auto& a : r.attempts)
    if (a.status == attempt_status::ok) served_on.push_back(a.target);
  EXPECT_EQ(served_on, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(r.route[0].requests_served, 1);
  EXPECT_EQ(r.route[1].requests_served, 1);
  EXPECT_EQ(r.route[1].rate_limited, 1);
  EXPECT_EQ(r.route[2].spilled_in, 1);
  // Each request: 0.1 s of prefill and 0.1 s of decode; the spill costs no time.
  EXPECT_NEAR(r.wall_s, 0.6, 1e-12);
}

// ---- engine_pool.hpp ------------------------------------------------------------------------

// One slot: three requests sent at 0 take it in turn. Each has 1 s of prefill (1,000 tokens at
// 1 ms) and 1 s of decode (100 tokens at 10 ms), so they end at 2, 4 and 6 s.
TEST(SimulationEngine, OneSlotServesRequestsInTurn) {
  auto t = plain("gpu");
  t.kind = target_kind::local;
  engine_config e;
  e.name = "one slot";
  e.max_sequences = 1;
  e.batch_slowdown = 0;
  e.memory = {24, 10, 1, 4, 100000};
  t.engine = e;
  t.power = power_config{};
  session_script s;
  s.source = "hand";
  s.requests = {request(1000, 100)};
  const std::vector<session_plan> plans{{&s, 0, 1, 0}, {&s, 0, 2, 0}, {&s, 0, 3, 0}};
  const auto r = simulate(t, retry_policy{}, plans);
  ASSERT_EQ(r.requests.size(), 3u);
  std::vector<double> ends;
  for (const auto& q : r.requests) ends.push_back(q.t_end);
  std::sort(ends.begin(), ends.end());
  EXPECT_NEAR(ends[0], 2.0, 1e-12);
  EXPECT_NEAR(ends[1], 4.0, 1e-12);
  EXPECT_NEAR(ends[2], 6.0, 1e-12);
  ASSERT_TRUE(r.engine.has_value());
  EXPECT_EQ(r.engine->peak_sequences, 1);
  EXPECT_EQ(r.engine->peak_queue, 2);
}

// ---- herd.hpp -------------------------------------------------------------------------------

// A law of a tool's own: no herd_reader says it batches.
struct my_law {
  double wait_for(double, double) { return 0; }
  std::uint64_t charge(double, double, double) { return 0; }
  void adjust(double, double, double, std::uint64_t) {}
  double used(double) { return 0; }
};

TEST(SimulationHerd, TheBuiltInBucketsBatchAndReadAlike) {
  static_assert(detail::herd_reader<bucket>::batches);
  static_assert(!detail::herd_reader<my_law>::batches);
  // A token bucket of 100 per 60 s, full after a charge of 100 at 0 s, and a fixed window of 10
  // requests per 60 s, with 10 at 0 s. At 30 s a charge of 60 tokens waits 6 s more (half the
  // bucket has refilled: 50 of 100) and a request 30 s (the window reopens at 60 s).
  bucket_config tokens;
  tokens.name = "tpm";
  tokens.limit = 100;
  tokens.period_s = 60;
  bucket_config requests;
  requests.name = "rpm";
  requests.unit = bucket_unit::requests;
  requests.algorithm = bucket_algorithm::fixed_window;
  requests.limit = 10;
  requests.period_s = 60;
  std::vector<bucket> only_tokens{bucket(tokens)};
  only_tokens[0].charge(100, 0, 0);
  const double charge_60[] = {60};
  const double charge_max[] = {150};  // the largest charge of any retry in the batch
  const detail::herd_reader<bucket> by_value(only_tokens, 1, 30, charge_max);  // (a batch from 30 s on)
  const auto a = by_value.longest_wait(charge_60, 30);
  EXPECT_NEAR(a.wait, 6.0, 1e-12);
  EXPECT_EQ(a.worst, 0);
  // A charge within the level at the batch's start (50) waits 0 without a read; one above it is
  // read, and waits 0 once the level has grown past it (40 s: 66.7); one above the capacity is
  // never admitted (no debt), whatever the level.
  const double charge_50[] = {50}, charge_150[] = {150};
  EXPECT_EQ(by_value.longest_wait(charge_50, 30).wait, 0.0);
  EXPECT_EQ(by_value.longest_wait(charge_50, 30).worst, -1);
  EXPECT_EQ(by_value.longest_wait(charge_60, 40).wait, 0.0);
  EXPECT_EQ(by_value.longest_wait(charge_60, 40).worst, -1);
  EXPECT_NEAR(by_value.longest_wait(charge_60, 33).wait, 3.0, 1e-12);
  EXPECT_EQ(by_value.longest_wait(charge_150, 90).wait, never_admitted);
  // When every retry's charge is within the level at the start (40 of 50), the bucket is not read
  // at all: a charge of 60, which no retry of that batch has, would show it (it waits 6 s above).
  const double charge_max_40[] = {40};
  const detail::herd_reader<bucket> none_read(only_tokens, 1, 30, charge_max_40);
  EXPECT_EQ(none_read.longest_wait(charge_60, 30).wait, 0.0);
  EXPECT_EQ(none_read.longest_wait(charge_60, 30).worst, -1);
  std::vector<bucket> both{bucket(tokens), bucket(requests)};
  both[0].charge(100, 0, 0);
  for (int i = 0; i < 10; ++i) both[1].charge(1, 0, 0);
  const double charges[] = {60, 1};
  const double charges_max[] = {60, 1};
  const detail::herd_reader<bucket> through(both, 2, 30, charges_max);
  const auto w = through.longest_wait(charges, 30);
  EXPECT_NEAR(w.wait, 30.0, 1e-12);
  EXPECT_EQ(w.worst, 1);
}

} // namespace
