// loopcast — comparing options on one task: does each meet the task's contract, and at what price?
//
// A task is a workload with a contract (the task types of docs/model.md §9: code completion wants a
// short TTFT, an agent loop steady throughput without stalls, batch work a low unit cost, a
// one-off script a short wait). Each option runs the same sessions over several seeds; its row
// holds effective throughput and TTFT (P50/P90, pooled over the seeds), wall clock per task, 429s,
// stall share, context lifetime, $ per task and per hour, and the usability factors of docs/model.md
// §8 side by side: intelligence is a gate the user sets per model (a score against a bar), not a
// multiplier. A row meets the contract when the gate passes and every clause holds; otherwise it
// says which clauses fail and by how much.
//
// Context lifetime: how long a session runs before a wall stops it: its first 429 (a rate-limit
// wall) or its end if it died (context overflow, a request too large, a client that gave up).
#pragma once

#include "loopcast/metrics.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/workload.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace loopcast {

struct compare_options {
  std::int32_t sessions = 0;    ///< 0: the contract's, else 1
  double stagger_s = -1;        ///< < 0: the contract's, else 0
  std::int32_t seeds = 10;
  std::uint64_t seed = 1;       ///< seeds seed, seed + 1, …
  double start_unix_s = 1777903200;  ///< 2026-05-04T14:00:00Z (a Monday afternoon, peak prices)
  unsigned threads = 1;
  std::map<std::string, double> intelligence;  ///< score per model (target.model)
  std::optional<double> bar;                   ///< the gate: score >= bar
};

struct compare_row {
  std::string label;
  std::string model;
  percentiles effective_tps, ttft_s;  ///< pooled over every request of every seed
  double wall_per_task_s = 0;         ///< mean session duration
  double rate_limited = 0;            ///< mean 429s per run
  double stall_share = 0;             ///< mean
  double p_session_dies = 0;
  std::string death;                  ///< why the first session that died died ("" if none)
  double lifetime_p50_s = 0;          ///< median time to a wall, over stopped sessions (NaN if none stopped)
  double stopped_share = 0;           ///< sessions stopped by a wall
  double usd_per_task = 0;            ///< mean over runs (NaN if no task completed)
  double usd_per_hour = 0;            ///< mean over runs
  std::string gate;                   ///< "pass", "fail" or "not rated"
  std::optional<double> intelligence;
  bool meets = false;
  std::vector<std::string> failures;  ///< the contract clauses that fail, with the numbers
};

struct compare_result {
  std::string workload;
  task_contract contract;
  std::int32_t sessions = 1;
  double stagger_s = 0;
  std::int32_t seeds = 0;
  std::vector<compare_row> rows;
};

/// Throws simulation_error if the workload has no contract, or for no options.
compare_result compare_on(const workload& wl, std::span<const scenario_option> options, const compare_options& opt = {});

} // namespace loopcast
