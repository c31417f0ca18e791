// The reports as JSON documents (what `--json` prints and what the Python bindings hand over as
// dicts), and the pieces the writers share. Internal to loopcast.
#pragma once

#include "loopcast/compare.hpp"
#include "loopcast/report.hpp"
#include "loopcast/forecast.hpp"
#include "loopcast/limits_inference.hpp"
#include "loopcast/price_lists.hpp"
#include "loopcast/metrics.hpp"
#include "loopcast/montecarlo.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/solve.hpp"
#include "loopcast/speed_fit.hpp"
#include "loopcast/stats.hpp"
#include "loopcast/sweep.hpp"
#include "loopcast/validate.hpp"
#include "loopcast/workload_fit.hpp"

#include "json/writer.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <type_traits>

namespace loopcast::detail {

/// A record as a JSON object of its fields (fields.hpp), in their order: a nested record as an
/// object, an enumeration by its name, NaN as null, percentiles without samples as nulls.
template <has_fields R>
nlohmann::ordered_json fields_json(const R& r);

inline nlohmann::ordered_json field_value_json(const percentiles& p);
inline nlohmann::ordered_json field_value_json(const estimate& e);

template <class M>
nlohmann::ordered_json field_value_json(const M& v) {
  if constexpr (has_fields<M>) return fields_json(v);
  else if constexpr (named_enum<M>) return std::string(to_string(v));
  else if constexpr (std::is_floating_point_v<M>)
    return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
  else return v;
}

// A statistic without samples is null (with its count 0), never 0.
inline nlohmann::ordered_json field_value_json(const percentiles& p) {
  if (p.count > 0) return fields_json(p);
  nlohmann::ordered_json j;
  for_each_field<percentiles>([&](const auto& f) { j[std::string(f.name)] = nullptr; });
  j["count"] = 0;
  return j;
}

// A Monte Carlo estimate: an infinite bound is "never" (a time to the first 429 in runs that had
// none), an unknown one (NaN: too few seeds) null.
inline nlohmann::ordered_json field_value_json(const estimate& e) {
  nlohmann::ordered_json j;
  for_each_field<estimate>([&](const auto& f) {
    const double x = f.of(e);
    j[std::string(f.name)] = std::isinf(x)   ? nlohmann::ordered_json("never")
                             : std::isnan(x) ? nlohmann::ordered_json(nullptr)
                                             : nlohmann::ordered_json(x);
  });
  return j;
}

template <has_fields R>
nlohmann::ordered_json fields_json(const R& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for_each_field<R>([&](const auto& f) { j[std::string(f.name)] = field_value_json(f.of(r)); });
  return j;
}

inline nlohmann::ordered_json tokens_json(const token_counts& t) { return fields_json(t); }
/// A number, or null when it is NaN (a statistic without samples).
inline nlohmann::ordered_json nan_or(double x) { return std::isnan(x) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(x); }
/// Today's UTC date as YYYY-MM-DD (a fitted preset's read_on).
std::string today_utc();
inline nlohmann::ordered_json pct_json(const percentiles& p) { return field_value_json(p); }
/// effective_tps … cache_hit_rate, as in docs/output.md.
inline nlohmann::ordered_json metrics_json(const request_metrics& m) { return fields_json(m); }
/// One simulated option, as in docs/output.md.
nlohmann::ordered_json option_json(const option_result& o);

// One document per report (docs/output.md); the public *_to_json functions (report.hpp) dump them.
nlohmann::ordered_json scenario_doc(const scenario_result& res);
nlohmann::ordered_json montecarlo_doc(const scenario& s, const montecarlo_result& r);
nlohmann::ordered_json sweep_doc(const sweep_spec& s, const sweep_result& r);
nlohmann::ordered_json stats_doc(const std::vector<recorded_trace>& traces, const trace_stats& st,
                                 const logs_listing& listing = {});
nlohmann::ordered_json replay_doc(const std::vector<recorded_trace>& traces, const replay_result& r);
nlohmann::ordered_json fit_to_target_doc(const speed_fit& f, const std::string& name,
                                         const std::vector<recorded_trace>& traces, const fit_preset_options& opt);
nlohmann::ordered_json validation_doc(const validation_result& r);
nlohmann::ordered_json solve_doc(const scenario& s, const solve_result& r);
nlohmann::ordered_json compare_doc(const compare_result& r);
nlohmann::ordered_json workload_fit_doc(const workload_fit& f, const std::vector<std::string>& sources);
nlohmann::ordered_json workload_validation_doc(const workload_validation& r);
nlohmann::ordered_json price_list_doc(const price_list& list);
nlohmann::ordered_json limits_doc(const limits_evidence& e);
nlohmann::ordered_json plan_caps_doc(const plan_inference& r);
nlohmann::ordered_json forecast_doc(const wall_forecast& f);
nlohmann::ordered_json backtest_doc(const backtest_result& r, const backtest_options& opt);

} // namespace loopcast::detail
