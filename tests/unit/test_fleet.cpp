// Fleets: groups of sessions on one organisation's limits, fleet metrics, Monte Carlo threads.
#include "loopcast/errors.hpp"
#include "loopcast/files.hpp"
#include "loopcast/limits/level_curve.hpp"
#include "loopcast/metrics.hpp"
#include "loopcast/montecarlo.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/scenario.hpp"

#include "run_summary_equal.hpp"
#include "single_request_workload.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

using namespace loopcast;

namespace {
using loopcast::test_support::models;

nlohmann::json two_groups() {
  return nlohmann::json::parse(R"({
    "kind": "scenario", "name": "mixed", "source": "test", "read_on": "2026-11-29", "seed": 7,
    "start_time_utc": "2026-05-04T14:00:00Z",
    "fleet": [
      {"label": "coders", "workload": "reference-agent-loop", "sessions": 3, "stagger_s": 20},
      {"workload": "burst-chat-256-512", "sessions": 2, "start_s": 100, "stagger_s": 5}
    ],
    "options": [{"label": "cloud", "target": "cerebras-developer-qwen-3.8-27b", "client": "opencode"}]
  })");
}

std::string scenario_error(const nlohmann::json& j) {
  const preset_library lib({models});
  try {
    (void)parse_scenario(j.dump(), "fleet.json", lib);
  } catch (const config_error& e) {
    return e.what();
  }
  return "no error";
}
} // namespace

// Three sessions by hand: 10 attempts, 4 429s, stalls 6 s of 60 s; one died.
TEST(FleetMetrics, HandComputed) {
  simulation_result r;
  session_result a, b, c;
  a.attempts = 5, a.rate_limited = 2, a.stall_s = 4, a.start_s = 0, a.end_s = 30, a.requests_served = 3;
  b.attempts = 3, b.rate_limited = 1, b.stall_s = 2, b.start_s = 10, b.end_s = 30, b.requests_served = 2;
  c.attempts = 2, c.rate_limited = 1, c.stall_s = 0, c.start_s = 20, c.end_s = 30, c.requests_served = 1;
  c.outcome = session_outcome::died_after_retries;
  r.sessions = {a, b, c};
  r.wall_s = 30;
  r.cost_usd = 3;
  r.tokens.output = 600;
  r.tokens.reasoning = 300;
  const auto f = compute_fleet_metrics(r);
  EXPECT_EQ(f.sessions, 3);
  EXPECT_EQ(f.completed, 2);
  EXPECT_EQ(f.died, 1);
  EXPECT_DOUBLE_EQ(f.p_session_dies, 1.0 / 3);
  EXPECT_DOUBLE_EQ(f.rate_429, 0.4);
  EXPECT_DOUBLE_EQ(f.stall_share, 0.1);
  EXPECT_DOUBLE_EQ(f.tasks_per_hour, 240);
  EXPECT_DOUBLE_EQ(f.requests_per_s, 0.2);
  EXPECT_DOUBLE_EQ(f.output_tps, 30);
  EXPECT_DOUBLE_EQ(f.usd_per_hour, 360);
  EXPECT_DOUBLE_EQ(f.usd_per_task, 1.5);
  EXPECT_DOUBLE_EQ(session_rate_429(a), 0.4);
  EXPECT_DOUBLE_EQ(session_stall_share(b), 0.1);
  r.sessions = {c};
  EXPECT_TRUE(std::isnan(compute_fleet_metrics(r).usd_per_task));
}

TEST(FleetPresets, GroupsNumberSessionsInOrderAndShareOnlyTheirOwnPrompt) {
  const preset_library lib({models});
  const auto s = parse_scenario(two_groups().dump(), "fleet.json", lib);
  ASSERT_EQ(s.fleet.size(), 2u);
  EXPECT_EQ(s.fleet[0].label, "coders");
  EXPECT_EQ(s.fleet[1].label, "burst-chat-256-512");
  EXPECT_EQ(fleet_size(s), 5);
  const auto r = run_scenario(s);
  const auto& sim = r.options[0].sim;
  ASSERT_EQ(sim.sessions.size(), 5u);
  // Starts: 0, 20, 40 for the coders; 100, 105 for the chats (their first request has no delay).
  EXPECT_DOUBLE_EQ(sim.sessions[1].start_s - sim.sessions[0].start_s, 20);
  EXPECT_DOUBLE_EQ(sim.sessions[3].start_s, 100);
  EXPECT_DOUBLE_EQ(sim.sessions[4].start_s, 105);
  EXPECT_EQ(sim.sessions[3].requests_total, 1);
  EXPECT_EQ(sim.sessions[0].requests_total, static_cast<std::int32_t>(r.scripts[0].requests.size()));
  // The second coder's first request reads the shared 9,000-token system prompt from the cache
  // (whole 128-token blocks: 8,960); the chats have no system prompt and share nothing.
  const auto first_of = [&](std::uint32_t session) {
    for (const auto& a : sim.attempts)
      if (a.session == session && a.request == 1) return a;
    return attempt_record{};
  };
  EXPECT_EQ(first_of(1).tokens.cache_read, 8960);
  EXPECT_EQ(first_of(4).tokens.cache_read, 0);
}

TEST(FleetPresets, ReplayedBucketLevelsAreTheTimelines) {
  // Every level the timeline recorded (eight sessions, six coders 2 s apart and two chats, sharing
  // the Developer tier's buckets, 429s included) is what replaying the recorded bucket operations
  // on fresh buckets gives, to the last bit.
  const preset_library lib({models});
  auto j = two_groups();
  j["fleet"][0]["sessions"] = 6;
  j["fleet"][0]["stagger_s"] = 2;
  const auto r = run_scenario(parse_scenario(j.dump(), "fleet.json", lib));
  const auto& sim = r.options[0].sim;
  const auto& limits = r.options[0].option->first().limits;
  const std::size_t nb = limits.size();
  ASSERT_GT(nb, 1u);
  std::int64_t refused = 0;
  for (const auto& a : sim.attempts) refused += a.status == attempt_status::rate_limited;
  EXPECT_GT(refused, 0);
  std::vector<double> at;
  for (const auto& a : sim.attempts) at.push_back(a.t_send);
  // An attempt finds the operations of events before it in event order; the replay applies those
  // strictly before its instant. So compare the attempts that share their instant with no other
  // event's operation (a completion and the same session's next send can share one).
  std::map<std::pair<std::size_t, double>, int> ops_at;
  for (const auto& op : sim.bucket_ops) ++ops_at[{op.bucket, op.t}];
  std::vector<std::size_t> order(at.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) { return at[x] < at[y]; });
  std::vector<double> sorted;
  for (auto i : order) sorted.push_back(at[i]);
  std::size_t compared = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    const auto levels = replay_levels(bucket(limits[b], sim.start_unix_s), sim.bucket_ops, b, sorted);
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto i = order[k];
      const auto& a = sim.attempts[i];
      const int own = a.status == attempt_status::ok ? 1
                      : (a.status == attempt_status::rate_limited && limits[b].count_rejected) ? 1 : 0;
      const auto it = ops_at.find({b, at[i]});
      if ((it == ops_at.end() ? 0 : it->second) != own) continue;
      // Exactly: a bucket's reads do not change it, so its level depends only on its operations.
      ASSERT_EQ(levels[k], sim.bucket_levels[i * nb + b])
          << "bucket " << limits[b].name << ", attempt " << i << " at " << at[i] << " s";
      ++compared;
    }
  }
  EXPECT_GT(compared, nb * sim.attempts.size() * 9 / 10);
}

TEST(FleetPresets, Errors) {
  auto j = two_groups();
  j["sessions"] = 2;
  EXPECT_EQ(scenario_error(j), "fleet.json: /sessions: give either \"fleet\" or \"workload\"/\"sessions\"/\"stagger_s\"/\"arrivals\", not both");
  j = two_groups();
  j["fleet"][1]["label"] = "coders";
  EXPECT_EQ(scenario_error(j), "fleet.json: /fleet/1: fleet group label \"coders\" is used twice");
  j = two_groups();
  j["fleet"][0]["sessions"] = -1;
  EXPECT_EQ(scenario_error(j), "fleet.json: /fleet/0/sessions: expected a whole number between 1 and 1000000, found -1");
  j = two_groups();
  j.erase("fleet");
  EXPECT_EQ(scenario_error(j), "fleet.json: missing key \"workload\" (or \"fleet\")");
  j = two_groups();
  j["fleet"][1]["sessions"] = 999999;
  EXPECT_EQ(scenario_error(j), "fleet.json: /fleet: 1000002 sessions in the fleet; one run simulates at most 1000000");
}

// Seeds shared among threads give the same rows, in the same order, as one thread.
TEST(FleetMonteCarlo, SameRowsWhateverTheThreadCount) {
  const preset_library lib({models});
  auto s = parse_scenario(two_groups().dump(), "fleet.json", lib);
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t i = 0; i < 12; ++i) seeds.push_back(1000 + i);
  const auto one = run_seeds(s, seeds, 1);
  const auto three = run_seeds(s, seeds, 3);
  ASSERT_EQ(one.size(), 12u);
  ASSERT_EQ(three.size(), one.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].seed, 1000 + i);
    EXPECT_TRUE(test_support::same_row(one[i], three[i])) << "row " << i;
  }
  // The rows are real runs: every session accounted for, 429s on the Developer tier for most seeds.
  int limited = 0;
  for (const auto& x : one) {
    EXPECT_EQ(x.sessions, 5);
    EXPECT_EQ(x.completed + x.sessions_died, 5);
    limited += x.rate_limited > 0;
  }
  EXPECT_GT(limited, 6);
}

// Monte Carlo runs seed after seed in one storage (scripts and results reused): each row is still
// what a run of that seed alone gives — two options, seeds whose sessions differ in length.
TEST(FleetMonteCarlo, EachSeedGivesWhatItsOwnRunGives) {
  const preset_library lib({models});
  auto j = two_groups();
  j["options"].push_back({{"label", "local"}, {"target", "local-workstation-qwen-27b"}, {"client", "opencode"}});
  std::ifstream in(models + "/workloads/reference-agent-loop.json");
  auto wl = nlohmann::json::parse(in);
  wl["turns"] = {{"kind", "lognormal"}, {"median", 20}, {"p90", 60}};
  j["fleet"][0]["workload"] = wl;
  const auto s = parse_scenario(j.dump(), "fleet.json", lib);
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t i = 0; i < 6; ++i) seeds.push_back(300 + i);
  const auto rows = run_seeds(s, seeds, 1);
  ASSERT_EQ(rows.size(), 12u);
  std::set<std::int32_t> lengths;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    run_options ro;
    ro.seed = seeds[i];
    ro.record_attempts = false;
    const auto alone = run_scenario(s, ro);
    for (std::uint32_t o = 0; o < 2; ++o) {
      const auto& row = rows[i * 2 + o];
      EXPECT_TRUE(test_support::same_row(row, summarize_run(alone.options[o], seeds[i], o))) << "seed " << seeds[i] << " option " << o;
      EXPECT_EQ(row.sessions, 5);
    }
    lengths.insert(rows[i * 2].requests_served);
  }
  EXPECT_GT(lengths.size(), 3u);  // the seeds' fleets are not all the same size
}

// A team through its working days, by hand. 2 people × 4 sessions a day over 09:00–17:00 UTC start
// sessions at 1 an hour (a Poisson process); every session's request is refused outright (1,000
// prompt tokens against a 10-token bucket: a wall, as a 429), so an hour of operation has a 429
// exactly when a session starts in it: P = 1 − e^−1 = 0.6321. Five days from Monday 2026-03-02 hold
// 40 hours of operation; 300 seeds hold 12,000 (binomial sd 0.0044).
TEST(Arrivals, P429PerHourOfAPoissonTeamByHand) {
  scenario s;
  s.name = "team";
  s.start_unix_s = 1772409600;  // 2026-03-02T00:00:00Z, a Monday
  fleet_group g;
  g.label = "engineers";
  g.wl = test_support::single_request_workload("one");
  g.arrivals = arrival_rule{2, 4, 9, 17, "UTC", 5};
  g.sessions = arrival_cap(*g.arrivals);
  EXPECT_EQ(g.sessions, 124);  // the most a run holds: ⌈40 expected + 10 × √40 + 20⌉ = ⌈123.2⌉
  s.fleet = {g};
  nlohmann::json t = nlohmann::json::parse(R"({
    "kind": "target", "name": "tiny", "source": "test", "read_on": "2026-12-01", "verified": false,
    "type": "cloud", "provider": "test", "tier": "t", "model": "m", "context_window_tokens": 100000,
    "cache": {"enabled": false},
    "speed": {"overhead_s": 0.5, "prefill": {"kind": "constant", "tokens_per_second": 1000}, "cached_token_s": 0,
              "decode": {"kind": "constant", "tokens_per_second": 100}},
    "prices": {"usd_per_million": {"input": 1, "cache_read": 0.1, "output": 2}},
    "limits": {"sends_retry_after": true, "buckets": [{"name": "tpm", "unit": "tokens", "counts": ["input"],
               "limit": 10, "period_s": 60, "algorithm": "token_bucket"}]}
  })");
  scenario_option o;
  o.label = "tiny";
  o.targets = {parse_target(t.dump(), "tiny.json")};
  o.client = preset_library({models}).load_client("opencode");
  s.options = {o};
  // One run: every session starts inside a working day and ends there, refused.
  const auto one = run_scenario(s, run_options{});
  ASSERT_GT(one.options[0].sim.sessions.size(), 20u);
  for (const auto& ss : one.options[0].sim.sessions) {
    const double in_day = std::fmod(ss.start_s, 86400.0);
    EXPECT_TRUE(in_day >= 9 * 3600.0 && in_day < 17 * 3600.0) << ss.start_s;
    EXPECT_LT(ss.start_s, 4 * 86400.0 + 17 * 3600.0);
    EXPECT_EQ(ss.outcome, session_outcome::request_too_large);
  }
  EXPECT_EQ(one.options[0].sim.operation_hours, 40);
  montecarlo_options mo;
  mo.seeds = 300;
  const auto mc = run_montecarlo(s, mo);
  std::int64_t hours = 0;
  for (const auto& r : mc.rows) hours += r.operation_hours;
  EXPECT_EQ(hours, 12000);
  EXPECT_NEAR(mc.options[0].p_429_per_hour.value, 1 - std::exp(-1.0), 0.015);
  EXPECT_EQ(mc.options[0].stall_hours_per_hour, 0.0);  // refused outright: nobody waits
}

TEST(Arrivals, ReadFromAScenarioWithTheirErrors) {
  auto j = two_groups();
  j["fleet"][0].erase("sessions");
  j["fleet"][0].erase("stagger_s");
  j["fleet"][0]["arrivals"] = {{"people", 50}, {"sessions_per_day", 6}, {"hours", {9, 17.5}},
                               {"time_zone", "Europe/Berlin"}, {"days", 5}};
  const preset_library lib({models});
  const auto s = parse_scenario(j.dump(), "fleet.json", lib);
  ASSERT_TRUE(s.fleet[0].arrivals);
  const auto& a = *s.fleet[0].arrivals;
  EXPECT_EQ(std::tuple(a.people, a.sessions_per_day, a.day_start_h, a.day_end_h, a.time_zone, a.days),
            std::tuple(50, 6.0, 9.0, 17.5, std::string("Europe/Berlin"), 5));
  // 2026-05-04 is a Monday; Berlin is UTC+2 in May: 09:00 there is 07:00Z, before the 14:00Z start,
  // so the first window is clipped at 0 and ends at 15:30Z (5,400 s); the next opens at 17 h.
  const auto w = arrival_windows(s.fleet[0], s.start_unix_s);
  ASSERT_EQ(w.size(), 5u);
  EXPECT_EQ(w[0], (std::pair{0.0, 5400.0}));
  EXPECT_EQ(w[1], (std::pair{17 * 3600.0, 17 * 3600.0 + 8.5 * 3600}));
  j["fleet"][0]["sessions"] = 3;
  EXPECT_EQ(scenario_error(j), "fleet.json: /fleet/0/sessions: give either \"arrivals\" or \"sessions\"/\"start_s\"/"
                               "\"stagger_s\", not both");
  j["fleet"][0].erase("sessions");
  j["fleet"][0]["arrivals"]["hours"] = {17, 9};
  EXPECT_EQ(scenario_error(j), "fleet.json: /fleet/0/arrivals/hours: the working day ends (9) before it starts (17)");
  j["fleet"][0]["arrivals"]["hours"] = {9, 17};
  j["fleet"][0]["arrivals"]["time_zone"] = "Mars/Olympus";
  EXPECT_EQ(scenario_error(j), "fleet.json: /fleet/0/arrivals/time_zone: unknown time zone \"Mars/Olympus\" (expected "
                               "an IANA name such as UTC, Europe/Berlin or America/New_York, from /usr/share/zoneinfo)");
  // An empty zone is no zone (it meant UTC silently).
  j["fleet"][0]["arrivals"]["time_zone"] = "";
  EXPECT_EQ(scenario_error(j), "fleet.json: /fleet/0/arrivals/time_zone: an empty time zone: give an IANA name such as "
                               "UTC or Europe/Berlin (or leave \"time_zone\" out for UTC)");
  const auto r = test_support::run_cli("stats --timezone '' " + (test_support::traces / "codex").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "loopcast: --timezone: an empty time zone: give an IANA name (UTC, Europe/Berlin), or leave the option "
                   "out for the machine's\n");
}

// A scenario with a problem in each of three parts says all three in one error, each at its place;
// an object with two unknown keys names both; one problem alone keeps its own message.
TEST(FleetPresets, EveryProblemInOneError) {
  auto j = two_groups();
  j["seed"] = -1;
  j["fleet"][1]["sessions"] = 0;
  j["options"][0]["colour"] = "red";
  j["options"][0]["size"] = 3;
  EXPECT_EQ(scenario_error(j),
            "fleet.json: 3 problems:\n"
            "  /seed: expected a whole number between 0 and 9007199254740992, found -1\n"
            "  /fleet/1/sessions: expected a whole number between 1 and 1000000, found 0\n"
            "  /options/0: unknown keys \"colour\", \"size\" (allowed here: label, target, route, client, batch, limits)");
  // Within one part too: each field of a group and of an option is read after another failed.
  auto within = two_groups();
  within["fleet"][1]["sessions"] = 0;
  within["fleet"][1]["start_s"] = -1;
  within["options"][0]["client"] = "no-such-client";
  within["options"][0]["limits"] = {{"no_such_bucket", 5}};
  within["options"][0]["batch"] = "yes";
  EXPECT_EQ(scenario_error(within),
            "fleet.json: 5 problems:\n"
            "  /fleet/1/sessions: expected a whole number between 1 and 1000000, found 0\n"
            "  /fleet/1/start_s: expected a number between 0 and 10000000, found -1\n"
            "  /options/0/limits: target cerebras-developer-qwen-3.8-27b has no bucket \"no_such_bucket\" (its buckets: "
            "uncached_tpm, total_tpm, rpm)\n"
            "  /options/0/client: no client preset named \"no-such-client\" (known: aider, anthropic-python-sdk, "
            "claude-code, codex, openai-python-sdk, opencode)\n"
            "  /options/0/batch: expected true or false, found string \"yes\"");
  // An inline target's own problems join the scenario's list, each at its place in the scenario.
  auto inline_target = two_groups();
  auto t = nlohmann::json::parse(read_text_file(models + "/targets/cerebras-developer-qwen-3.8-27b.json"));
  t["context_window_tokens"] = 0;
  t["speed"]["overhead_s"] = -1;
  t.erase("prices");
  inline_target["options"][0]["target"] = t;
  inline_target["seed"] = -1;
  EXPECT_EQ(scenario_error(inline_target),
            "fleet.json: 3 problems:\n"
            "  /seed: expected a whole number between 0 and 9007199254740992, found -1\n"
            "  /options/0/target/context_window_tokens: expected a whole number between 1 and 1000000000000, found 0\n"
            "  /options/0/target/speed/overhead_s: expected a number between 0 and 3600, found -1");
  auto one = two_groups();
  one["seed"] = -1;
  EXPECT_EQ(scenario_error(one), "fleet.json: /seed: expected a whole number between 0 and 9007199254740992, found -1");
}
