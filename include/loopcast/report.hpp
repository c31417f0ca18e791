// loopcast — reports of a scenario run: human-readable text, JSON, and a per-attempt CSV.
// The JSON schema and the CSV columns are documented in docs/output.md.
#pragma once

#include "loopcast/compare.hpp"
#include "loopcast/limits_inference.hpp"
#include "loopcast/montecarlo.hpp"
#include "loopcast/price_lists.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/solve.hpp"
#include "loopcast/sweep.hpp"
#include "loopcast/scenario.hpp"

#include <iosfwd>
#include <span>
#include <string>

namespace loopcast {

/// The half-minute report of `loopcast run`.
void write_text_report(std::ostream& os, const scenario_result& r);
/// The whole result as JSON (schema version 1), pretty-printed with `indent` spaces (-1: compact).
std::string to_json(const scenario_result& r, int indent = 2);
/// One row per request attempt of every option.
void write_timeline_csv(std::ostream& os, const scenario_result& r);
void write_timeline_csv(std::ostream& os, std::span<const option_result> options);

/// `loopcast montecarlo`: per option, quantiles with their confidence intervals.
void write_montecarlo_text(std::ostream& os, const scenario& s, const montecarlo_result& r);
std::string montecarlo_to_json(const scenario& s, const montecarlo_result& r, int indent = 2);
/// One CSV row per run (seed × option): the run_summary columns with the option's label.
void write_runs_csv(std::ostream& os, const scenario& s, std::span<const run_summary> rows);

/// `loopcast sweep`: one line per grid point and option; JSON with every point's distributions;
/// CSV with one row per run and a column per swept parameter.
void write_sweep_text(std::ostream& os, const sweep_spec& s, const sweep_result& r);
std::string sweep_to_json(const sweep_spec& s, const sweep_result& r, int indent = 2);
void write_sweep_csv(std::ostream& os, const sweep_spec& s, const sweep_result& r);

/// `loopcast solve …`: the answer, how it was bracketed, every evaluation.
void write_solve_text(std::ostream& os, const scenario& s, const solve_result& r);
std::string solve_to_json(const scenario& s, const solve_result& r, int indent = 2);

/// `loopcast compare`: one row per option, the contract's verdict and the usability factors.
void write_compare_text(std::ostream& os, const compare_result& r);
std::string compare_to_json(const compare_result& r, int indent = 2);

/// `loopcast stats`: per model and overall, with context bins and what the import skipped; with
/// another grouping (or a breakdown), one table line per group first. `width` > 0: the table's
/// names are cut from the left so that a line fits in that many columns.
void write_stats_text(std::ostream& os, const std::vector<recorded_trace>& traces, const trace_stats& st,
                      std::size_t width = 0);
/// `loopcast stats --csv`: one row per group (and "all"); with a breakdown, a `model` column ("*"
/// for the group's total, then a row per model); empty fields where there are no samples.
void write_stats_csv(std::ostream& os, const trace_stats& st);
std::string stats_to_json(const std::vector<recorded_trace>& traces, const trace_stats& st, int indent = 2);
/// `loopcast replay`: recorded against each option, side by side.
void write_replay_text(std::ostream& os, const std::vector<recorded_trace>& traces, const replay_result& r);
std::string replay_to_json(const std::vector<recorded_trace>& traces, const replay_result& r, int indent = 2);
struct validation_result;
/// `loopcast validate --json` (docs/output.md).
std::string validation_to_json(const validation_result& r, int indent = 2);
struct workload_validation;
/// `loopcast validate --workload --json` (docs/output.md).
std::string workload_validation_to_json(const workload_validation& r, int indent = 2);

struct workload_fit;
/// `loopcast fit-workload`: a workload preset (docs/presets.md) with what it was fitted on.
/// `sources` are the logs as the user named them (files or folders).
std::string workload_fit_to_json(const workload_fit& f, const std::vector<std::string>& sources);

/// `loopcast fit`: a local target preset whose speed is the fitted model (loadable with --on).
struct fit_preset_options {
  std::int64_t context_window_tokens = 0;  ///< the model's window (0: derived from the logs, with a note)
  bool noise = true;                       ///< write the fitted residual noise (speed.noise)
};
std::string fit_to_target_json(const speed_fit& f, const std::string& name, const std::vector<recorded_trace>& traces,
                               const fit_preset_options& opt = {});

/// `loopcast prices import --json` (docs/output.md).
std::string price_list_to_json(const price_list& list, int indent = 2);
/// `loopcast limits infer --json` (docs/output.md).
std::string limits_to_json(const limits_evidence& e, int indent = 2);
struct wall_forecast;
/// `loopcast watch --json`: a session's next wall (docs/watch.md).
std::string forecast_to_json(const wall_forecast& f, int indent = 2);
/// `loopcast watch`: the buckets now and the next wall, a few lines.
void write_forecast_text(std::ostream& os, const wall_forecast& f, double horizon_s);
/// `loopcast limits infer --logs --json`: a plan's caps learnt from agent logs (docs/output.md).
std::string plan_caps_to_json(const plan_inference& r, int indent = 2);

} // namespace loopcast
