// Reports as public documents (include/loopcast/report/document.hpp): each command's JSON document,
// built here with nlohmann (report/documents.hpp), handed out as a loopcast::document.
#include "loopcast/report.hpp"

#include "json/writer.hpp"
#include "report/documents.hpp"

#include <cmath>

namespace loopcast {

namespace detail {

document to_document(const nlohmann::ordered_json& j) {
  using t = nlohmann::ordered_json::value_t;
  switch (j.type()) {
  case t::boolean: return document(j.get<bool>());
  case t::number_integer: return document(j.get<std::int64_t>());
  case t::number_unsigned: return document(j.get<std::uint64_t>());
  case t::number_float: {
    const double x = j.get<double>();
    return std::isfinite(x) ? document(x) : document();  // as --json writes it: null
  }
  case t::string: return document(j.get<std::string>());
  case t::array: {
    document::array a;
    a.reserve(j.size());
    for (const auto& e : j) a.push_back(to_document(e));
    return document(std::move(a));
  }
  case t::object: {
    document::object o;
    o.reserve(j.size());
    for (const auto& [k, v] : j.items()) o.emplace_back(k, to_document(v));
    return document(std::move(o));
  }
  default: return document();  // null, binary, discarded
  }
}

nlohmann::ordered_json from_document(const document& d) {
  using k = document::kind;
  switch (d.type()) {
  case k::null: return nullptr;
  case k::boolean: return d.as_bool();
  case k::integer: return d.as_int();
  case k::unsigned_integer: return d.as_uint();
  case k::number: return d.as_double();
  case k::string: return d.as_string();
  case k::array: {
    auto a = nlohmann::ordered_json::array();
    for (const auto& e : d.items()) a.push_back(from_document(e));
    return a;
  }
  case k::object: {
    auto o = nlohmann::ordered_json::object();
    for (const auto& [key, v] : d.members()) o[key] = from_document(v);
    return o;
  }
  }
  return nullptr;
}

} // namespace detail

std::string to_json_text(const document& d, int indent) { return detail::dump(detail::from_document(d), indent); }

using detail::to_document;

document run_document(const scenario_result& r) { return to_document(detail::scenario_doc(r)); }
document montecarlo_document(const scenario& s, const montecarlo_result& r) {
  return to_document(detail::montecarlo_doc(s, r));
}
document sweep_document(const sweep_spec& s, const sweep_result& r) { return to_document(detail::sweep_doc(s, r)); }
document solve_document(const scenario& s, const solve_result& r) { return to_document(detail::solve_doc(s, r)); }
document compare_document(const compare_result& r) { return to_document(detail::compare_doc(r)); }
document stats_document(const std::vector<recorded_trace>& traces, const trace_stats& st, const logs_listing& listing) {
  return to_document(detail::stats_doc(traces, st, listing));
}
document replay_document(const std::vector<recorded_trace>& traces, const replay_result& r) {
  return to_document(detail::replay_doc(traces, r));
}
document fit_document(const speed_fit& f, const std::string& name, const std::vector<recorded_trace>& traces,
                      const fit_preset_options& opt) {
  return to_document(detail::fit_to_target_doc(f, name, traces, opt));
}
document workload_fit_document(const workload_fit& f, const std::vector<std::string>& sources) {
  return to_document(detail::workload_fit_doc(f, sources));
}
document validation_document(const validation_result& r) { return to_document(detail::validation_doc(r)); }
document workload_validation_document(const workload_validation& r) {
  return to_document(detail::workload_validation_doc(r));
}
document price_list_document(const price_list& list) { return to_document(detail::price_list_doc(list)); }
document limits_document(const limits_evidence& e) { return to_document(detail::limits_doc(e)); }
document plan_caps_document(const plan_inference& r) { return to_document(detail::plan_caps_doc(r)); }
document forecast_document(const wall_forecast& f) { return to_document(detail::forecast_doc(f)); }
document backtest_document(const backtest_result& r, const backtest_options& opt) {
  return to_document(detail::backtest_doc(r, opt));
}

} // namespace loopcast
