// Sweeps: grid order, every point a strictly loaded scenario, rows identical whatever the threads.
#include "loopcast/budget.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/report.hpp"
#include "loopcast/sweep.hpp"

#include "run_summary_equal.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

using namespace loopcast;

namespace {
using loopcast::test_support::models;

nlohmann::json spec() {
  return nlohmann::json::parse(R"({
    "kind": "sweep", "name": "s", "scenario": "reference",
    "parameters": [
      {"path": "/sessions", "values": [1, 3]},
      {"path": "/options/0/target/limits/buckets/1/limit", "values": [450000, 900000, 4500000]}
    ],
    "seeds": 4
  })");
}

std::string sweep_error(const nlohmann::json& j) {
  const preset_library lib({models});
  try {
    (void)parse_sweep(j.dump(), "sweep.json", lib);
  } catch (const config_error& e) {
    return e.what();
  }
  return "no error";
}
} // namespace

TEST(Sweep, GridIsTheProductFirstParameterSlowest) {
  const preset_library lib({models});
  const auto s = parse_sweep(spec().dump(), "sweep.json", lib);
  ASSERT_EQ(s.points.size(), 6u);
  EXPECT_EQ(s.points[0].values, (std::vector<std::string>{"1", "450000"}));
  EXPECT_EQ(s.points[2].values, (std::vector<std::string>{"1", "4500000"}));
  EXPECT_EQ(s.points[3].values, (std::vector<std::string>{"3", "450000"}));
  EXPECT_EQ(fleet_size(s.points[4].scn), 3);
  EXPECT_EQ(s.points[4].scn.options[0].first().limits[1].name, "total_tpm");
  EXPECT_DOUBLE_EQ(s.points[4].scn.options[0].first().limits[1].limit, 900000);
  // The base document has every preset inline, so the paths above exist in it.
  const auto base = nlohmann::json::parse(s.base_json);
  EXPECT_EQ(base["options"][0]["target"]["name"], "cerebras-developer-qwen-3.8-27b");
  EXPECT_EQ(base["workload"]["name"], "reference-agent-loop");
}

TEST(Sweep, RowsArePointMajorAndIndependentOfThreads) {
  const preset_library lib({models});
  const auto s = parse_sweep(spec().dump(), "sweep.json", lib);
  const auto one = run_sweep(s, 1);
  const auto three = run_sweep(s, 3);
  ASSERT_EQ(one.rows.size(), 6u * 4 * 2);
  for (std::size_t i = 0; i < one.rows.size(); ++i) EXPECT_TRUE(test_support::same_row(one.rows[i], three.rows[i])) << i;
  // Point 5's rows are run_sweep_point(4), which are run_seeds of that scenario with seeds 42…45.
  const auto p5 = run_sweep_point(s, 4);
  ASSERT_EQ(p5.size(), 8u);
  for (std::size_t i = 0; i < p5.size(); ++i) EXPECT_TRUE(test_support::same_row(p5[i], one.rows[4 * 8 + i])) << i;
  EXPECT_EQ(p5[0].seed, 42u);
  EXPECT_EQ(p5[7].seed, 45u);
  // Ten times the total TPM removes the 429 wall the reference hits at 450K (first seed, one agent).
  EXPECT_FALSE(std::isnan(one.rows[0].first_429_s));
  EXPECT_LT(one.rows[2 * 8].rate_limited, one.rows[0].rate_limited);
  ASSERT_EQ(one.points.size(), 6u);
  EXPECT_EQ(one.points[0][0].runs, 4);
}

// A sweep's threads run points side by side: the memory budget is checked for one run of its
// largest point on each of them (a budget that holds one run of 3 agents but not two refuses it on
// 2 threads and runs it on one).
TEST(Sweep, TheMemoryBudgetCountsTheRunsInFlight) {
  const preset_library lib({models});
  const auto s = parse_sweep(spec().dump(), "sweep.json", lib);
  const auto one_run = estimate_run_bytes(run_size_of(s.points[3].scn, false, false));
  set_memory_budget_bytes(one_run + one_run / 2);
  try {
    (void)run_sweep(s, 2);
    ADD_FAILURE() << "no error";
  } catch (const config_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("scenario " + s.points[3].scn.name + ": this run needs about ", 0), 0u) << what;
    EXPECT_NE(what.find("3 sessions, 2 runs at once), over the memory budget of"), std::string::npos) << what;
  }
  EXPECT_EQ(run_sweep(s, 1).rows.size(), 6u * 4 * 2);
  set_memory_budget_bytes(0);
}

TEST(Sweep, CsvHasAColumnPerParameter) {
  const preset_library lib({models});
  auto j = spec();
  j["seeds"] = 1;
  const auto s = parse_sweep(j.dump(), "sweep.json", lib);
  std::ostringstream os;
  write_sweep_csv(os, s, run_sweep(s));
  const auto text = os.str();
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "point,/sessions,/options/0/target/limits/buckets/1/limit,seed,option,label,first_429_s,first_refused_s,"
            "wall_s,stall_s,stall_share,cost_usd,usd_per_task,tasks_per_hour,output_tps,effective_tps_p50,ttft_p50_s,sessions,completed,"
            "rate_limited,attempts,sessions_died,requests_served,cut_off,operation_hours,hours_with_429,stall_hours_per_hour");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 6 * 2);
  EXPECT_NE(text.find("\n6,3,4500000,42,1,local,"), std::string::npos);
}

TEST(Sweep, Errors) {
  auto j = spec();
  j["parameters"][0]["path"] = "/options/5/target/limits";
  EXPECT_EQ(sweep_error(j), "sweep.json: /parameters/0/path: /options/5/target/limits is not in the scenario " + models +
                                "/scenarios/reference.json (`loopcast sweep FILE --print-base` shows its document)");
  j = spec();
  j["parameters"][1]["path"] = "/sessions";
  EXPECT_EQ(sweep_error(j), "sweep.json: /parameters/1/path: /sessions is swept twice");
  j = spec();
  j["parameters"][0]["path"] = "sessions";
  EXPECT_EQ(sweep_error(j), "sweep.json: /parameters/0/path: \"sessions\" is not a JSON pointer (like "
                            "/options/0/target/limits/buckets/1/limit)");
  j = spec();
  j["parameters"][1]["values"][1] = -5;
  EXPECT_EQ(sweep_error(j), "sweep.json (point 2: /sessions = 1, /options/0/target/limits/buckets/1/limit = -5): "
                            "/options/0/target/limits/buckets/1/limit: expected a whole number between 1 and 1000000000000, found -5");
  j = spec();
  j["parameters"][0]["values"] = nlohmann::json::array();
  EXPECT_EQ(sweep_error(j), "sweep.json: /parameters/0/values: expected an array of at least 1 element, found 0");
  j = spec();
  j["seeds"] = 1000000;
  j["parameters"][0]["values"] = {1, 2, 3, 4};
  EXPECT_EQ(sweep_error(j), "sweep.json: /seeds: 12 points × 1000000 seeds = 12000000 runs; a sweep runs at most 10000000");
  j = spec();
  j["kind"] = "scenario";
  EXPECT_EQ(sweep_error(j), "sweep.json: /kind: expected \"sweep\", found \"scenario\"");
}
