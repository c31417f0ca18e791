// The catalogue's JSON: imported price lists (`loopcast prices import --json`) and inferred
// limits (`loopcast limits infer --json`); schemas in docs/output.md.
#include "loopcast/report.hpp"

#include "report/documents.hpp"

#include <nlohmann/json.hpp>

#include <cmath>

namespace loopcast {

using json = nlohmann::ordered_json;

namespace detail {

json price_list_doc(const price_list& list) {
  auto models = json::array();
  for (const auto& m : list.models) {
    // A model whose price was rejected gets no prices: a preset built from it must not read 0.
    json j = {{"id", m.id}, {"provider", m.provider},
              {"prices", m.priced ? json::parse(price_sheet_json(m.prices, -1)) : json(nullptr)}};
    if (!m.variants.empty()) {
      json v;
      for (const auto& [name, sheet] : m.variants) v[name] = json::parse(price_sheet_json(sheet, -1));
      j["variants"] = v;
    }
    j["context_window_tokens"] = m.context_window_tokens > 0 ? json(m.context_window_tokens) : json(nullptr);
    j["max_output_tokens"] = m.max_output_tokens > 0 ? json(m.max_output_tokens) : json(nullptr);
    if (m.rpm > 0 || m.tpm > 0) j["rate_limits"] = {{"rpm", m.rpm}, {"tpm", m.tpm}};
    j["notes"] = m.notes;
    models.push_back(j);
  }
  auto warnings = json::array();
  for (const auto& w : list.warnings) warnings.push_back({{"model", w.model}, {"field", w.field}, {"message", w.message}});
  return {{"file", list.file}, {"format", to_string(list.format)}, {"models", models}, {"warnings", warnings}};
}

json limits_doc(const limits_evidence& e) {
  const auto& r = e.inferred;
  json buckets = json::array();
  for (const auto& b : r.buckets)
    buckets.push_back({{"name", b.config.name}, {"header", b.header}, {"implied_rates_per_s", b.implied_rates},
                       {"evidence", b.evidence}});
  json msgs = json::array();
  for (const auto& m : e.messages)
    msgs.push_back({{"source", m.source}, {"unit", m.unit}, {"period_s", m.period_s}, {"limit", m.limit}, {"used", m.used},
                    {"requested", m.requested}, {"stated_wait_s", m.stated_wait_s},
                    {"predicted_wait_s", m.predicted_wait_s}, {"consistent", m.consistent}, {"checkable", m.checkable}});
  return {{"snapshots", e.snapshots}, {"provider", r.provider}, {"limits", json::parse(limits_fragment_json(r, -1))},
          {"evidence", buckets}, {"messages", msgs}, {"notes", r.notes}};
}

json plan_caps_doc(const plan_inference& r) {
  json caps = json::array();
  for (const auto& c : r.caps)
    caps.push_back({{"window", c.window}, {"period_s", c.period_s}, {"counts", c.counts}, {"low", c.low},
                    {"high", std::isinf(c.high) ? json(nullptr) : json(c.high)}, {"observations", c.observations},
                    {"consistent", c.consistent}});
  return {{"caps", caps}, {"notes", r.notes}};
}

} // namespace detail

std::string plan_caps_to_json(const plan_inference& r, int indent) { return detail::dump(detail::plan_caps_doc(r), indent); }

std::string price_list_to_json(const price_list& list, int indent) {
  return detail::dump(detail::price_list_doc(list), indent);
}

std::string limits_to_json(const limits_evidence& e, int indent) { return detail::dump(detail::limits_doc(e), indent); }

} // namespace loopcast
