// `loopcast fit-workload` presets and `loopcast validate --workload` reports as JSON.
#include "loopcast/report.hpp"
#include "loopcast/validate.hpp"
#include "loopcast/version.hpp"
#include "loopcast/workload_fit.hpp"
#include "report/documents.hpp"

#include <fmt/format.h>


namespace loopcast {

using json = nlohmann::ordered_json;

namespace {

json distribution_json(const distribution& d) {
  struct visitor {
    json operator()(const fixed_dist& f) const { return {{"kind", "fixed"}, {"value", f.value}}; }
    json operator()(const uniform_dist& u) const { return {{"kind", "uniform"}, {"low", u.low}, {"high", u.high}}; }
    json operator()(const lognormal_dist& l) const { return {{"kind", "lognormal"}, {"median", l.median}, {"p90", l.p90}}; }
    json operator()(const gamma_dist& g) const { return {{"kind", "gamma"}, {"shape", g.shape}, {"scale", g.scale}}; }
    json operator()(const empirical_dist& e) const { return {{"kind", "empirical"}, {"values", e.values}}; }
    json operator()(const quantile_dist& q) const { return {{"kind", "quantiles"}, {"p", q.p}, {"values", q.values}}; }
  };
  return std::visit(visitor{}, d);
}

} // namespace

namespace detail {
nlohmann::ordered_json workload_fit_doc(const workload_fit& f, const std::vector<std::string>& sources) {
  const auto& w = f.w;
  json j;
  j["kind"] = "workload";
  j["name"] = w.name;
  j["description"] = fmt::format("Agent sessions fitted by `loopcast fit-workload` to {} sessions ({} requests) of {} logs",
                                 f.sessions, f.requests, f.traces);
  j["source"] = sources;
  j["read_on"] = detail::today_utc();
  j["verified"] = false;
  j["fitted_on"] = {{"logs", f.traces},
                    {"sessions", f.sessions},
                    {"requests", f.requests},
                    {"models", f.models},
                    {"tool_result_samples", f.growth_samples},
                    {"agent_time_samples", f.timed_delays},
                    {"compactions", f.compactions},
                    {"cache_breaks", f.cache_breaks},
                    {"subagent_sessions_left_out", f.subagent_sessions}};
  j["system_prompt_tokens"] = w.system_prompt_tokens;
  j["task_tokens"] = distribution_json(w.task_tokens);
  j["turns"] = distribution_json(w.turns);
  j["output_tokens"] = distribution_json(w.output_tokens);
  j["reasoning_tokens"] = distribution_json(w.reasoning_tokens);
  json bands = json::array();
  for (const auto& b : w.tool_result_bands) bands.push_back({{"from_turn", b.from_turn}, {"tokens", distribution_json(b.tokens)}});
  j["tool_result_bands"] = bands;
  j["session_scale"] = {{"sigma", w.session_scale.sigma}, {"turns_correlation", w.session_scale.turns_correlation}};
  j["task_turns_correlation"] = w.task_turns_correlation;
  j["cache_breaks"] = {{"probability", w.cache_breaks.probability},
                       {"kept_fraction", distribution_json(w.cache_breaks.kept_fraction)}};
  if (w.cache_breaks.after_compaction_probability >= 0)
    j["cache_breaks"]["after_compaction_probability"] = w.cache_breaks.after_compaction_probability;
  j["tool_time_s"] = distribution_json(w.tool_time_s);
  j["tool_time_ramp"] = {{"factor", 1}, {"ramp_turns", 1}};
  j["reasoning_in_context"] = w.reasoning_in_context;
  j["output_in_context"] = w.output_in_context;
  j["max_tokens"] = w.max_tokens;
  j["context_window_tokens"] = w.context_window_tokens;
  if (w.compaction.enabled)
    j["compaction"] = {{"enabled", true},
                       {"at_fraction", w.compaction.at_fraction},
                       {"summary_tokens", distribution_json(w.compaction.summary_tokens)},
                       {"late_share", w.compaction.late_share},
                       {"late_fraction", w.compaction.late_fraction}};
  else
    j["compaction"] = {{"enabled", false}};
  json cal = json::array({"Every quantity is a quantile table of what the logs recorded (include/loopcast/workload_fit.hpp "
                          "says how each is measured); tool_time_s is the agent's whole time between requests."});
  for (const auto& n : f.notes) cal.push_back(n);
  j["calibration"] = cal;
  return j;
}
} // namespace detail

std::string workload_fit_to_json(const workload_fit& f, const std::vector<std::string>& sources) {
  return detail::dump(detail::workload_fit_doc(f, sources), 2);
}

namespace detail {
nlohmann::ordered_json workload_validation_doc(const workload_validation& r) {
  json j;
  j["schema_version"] = 1;
  j["loopcast_version"] = version_string;
  j["real_sessions"] = r.real_sessions;
  j["synthetic_sessions"] = r.synthetic_sessions;
  json m = json::array();
  for (const auto& q : r.measures)
    m.push_back({{"measure", q.name},
                 {"ks", detail::nan_or(q.ks)},
                 {"real", {{"p10", detail::nan_or(q.real.p10)}, {"p50", detail::nan_or(q.real.p50)}, {"p90", detail::nan_or(q.real.p90)}}},
                 {"synthetic",
                  {{"p10", detail::nan_or(q.synthetic.p10)}, {"p50", detail::nan_or(q.synthetic.p50)}, {"p90", detail::nan_or(q.synthetic.p90)}}}});
  j["measures"] = m;
  j["cost_spread_ratio"] = detail::nan_or(r.cost_spread_ratio);
  j["notes"] = r.notes;
  return j;
}
} // namespace detail

std::string workload_validation_to_json(const workload_validation& r, int indent) {
  return detail::dump(detail::workload_validation_doc(r), indent);
}

} // namespace loopcast
