// SWE-agent trajectory (.traj): info.model_stats holds per-task totals only (api_calls,
// tokens_sent, tokens_received, instance_cost). Nothing per request can be derived from them, so
// the trace has totals and no sessions: `stats` reports them, `replay` and `fit` refuse it.
#include "import/common.hpp"

namespace loopcast::detail {

namespace {
bool recognises_swe_agent(const nlohmann::json& j) {
  return j.contains("trajectory") || (j.contains("info") && j.contains("history"));
}
recorded_trace import_swe_agent(const std::string& path);
} // namespace

const importer swe_agent_importer{trace_format::swe_agent, recognises_swe_agent, import_swe_agent};

namespace {
recorded_trace import_swe_agent(const std::string& path) {
  recorded_trace t;
  t.file = path;
  t.format = trace_format::swe_agent;
  issue_log log(t.summary, path);
  const auto doc = read_json_document(path);
  t.summary.records_read = 1;
  const auto info = doc.is_object() ? doc.find("info") : doc.end();
  if (info == doc.end() || !info->is_object() || !info->contains("model_stats"))
    throw trace_error(path, 0, "not a SWE-agent trajectory with totals (no info.model_stats)");
  const auto& ms = (*info)["model_stats"];
  recorded_totals tot;
  const auto calls = count_at(ms, "api_calls"), sent = count_at(ms, "tokens_sent"), received = count_at(ms, "tokens_received");
  if (!calls || !sent || !received)
    throw trace_error(path, 0, "info.model_stats lacks api_calls, tokens_sent or tokens_received");
  tot.api_calls = *calls;
  tot.tokens_sent = *sent;
  tot.tokens_received = *received;
  if (auto c = number_at(ms, "instance_cost"); c && *c >= 0) tot.cost_usd = *c;
  t.totals = tot;
  finish_trace(t, log);
  return t;
}

} // namespace

} // namespace loopcast::detail
