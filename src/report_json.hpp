// The reports as JSON documents (what `--json` prints and what the Python bindings hand over as
// dicts), and the pieces the writers share. Internal to loopcast.
#pragma once

#include "loopcast/compare.hpp"
#include "loopcast/montecarlo.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/solve.hpp"
#include "loopcast/sweep.hpp"
#include "loopcast/validate.hpp"
#include "loopcast/workload_fit.hpp"

#include "json/writer.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

namespace loopcast::detail {

nlohmann::ordered_json tokens_json(const token_counts& t);
/// A number, or null when it is NaN (a statistic without samples).
inline nlohmann::ordered_json nan_or(double x) { return std::isnan(x) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(x); }
/// Today's UTC date as YYYY-MM-DD (a fitted preset's read_on).
std::string today_utc();
nlohmann::ordered_json pct_json(const percentiles& p);
/// effective_tps … cache_hit_rate, as in docs/output.md.
nlohmann::ordered_json metrics_json(const request_metrics& m);
/// One simulated option, as in docs/output.md.
nlohmann::ordered_json option_json(const option_result& o);

// One document per report (docs/output.md); the public *_to_json functions (report.hpp) dump them.
nlohmann::ordered_json scenario_doc(const scenario_result& res);
nlohmann::ordered_json montecarlo_doc(const scenario& s, const montecarlo_result& r);
nlohmann::ordered_json sweep_doc(const sweep_spec& s, const sweep_result& r);
nlohmann::ordered_json stats_doc(const std::vector<recorded_trace>& traces, const trace_stats& st);
nlohmann::ordered_json replay_doc(const std::vector<recorded_trace>& traces, const replay_result& r);
nlohmann::ordered_json fit_to_target_doc(const speed_fit& f, const std::string& name,
                                         const std::vector<recorded_trace>& traces, const fit_preset_options& opt);
nlohmann::ordered_json validation_doc(const validation_result& r);
nlohmann::ordered_json solve_doc(const scenario& s, const solve_result& r);
nlohmann::ordered_json compare_doc(const compare_result& r);
nlohmann::ordered_json workload_fit_doc(const workload_fit& f, const std::vector<std::string>& sources);
nlohmann::ordered_json workload_validation_doc(const workload_validation& r);

} // namespace loopcast::detail
