// OpenAI Codex CLI rollout JSONL (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl).
//
// Conventions converted here:
// - Each API response ends with an event_msg/token_count whose info.last_token_usage is that
//   response's usage; the same event is emitted again after the tool outputs. A response is
//   counted once: when info.total_token_usage.total_tokens grows.
// - input_tokens includes cached_input_tokens: input = input_tokens − cached_input_tokens,
//   cache_read = cached_input_tokens. output_tokens includes reasoning_output_tokens:
//   output = output_tokens − reasoning_output_tokens, reasoning = reasoning_output_tokens.
// - Sent: the turn_context line that precedes the response. End: the response's first
//   function_call (the tool starts then), else its token_count. Items are logged when complete,
//   so there is no TTFT. A `compacted` record makes the next prompt a new context.
// - rate_limits snapshots (on token_count events) are kept verbatim, consecutive repeats dropped.
// - A response is keyed by its token_count's timestamp and running total (response_key): a resumed
//   rollout that repeats its history is counted once (drop_repeated_responses).
#include "import/common.hpp"

#include <fmt/format.h>

namespace loopcast::detail {

namespace {
// A Codex rollout's records carry a type among these and a payload.
bool recognises_codex(const nlohmann::json& j) {
  const auto type = string_at(j, "type");
  return type && j.contains("payload") &&
         (*type == "session_meta" || *type == "response_item" || *type == "event_msg" || *type == "turn_context");
}
recorded_trace import_codex(const std::string& path);
} // namespace

const importer codex_importer{trace_format::codex, recognises_codex, import_codex};

namespace {
recorded_trace import_codex(const std::string& path) {
  recorded_trace t;
  t.file = path;
  t.format = trace_format::codex;
  t.absolute_clock = true;
  issue_log log(t.summary, path);
  recorded_session s;
  s.id = std::filesystem::path(path).stem().string();
  s.file = path;

  double t_context = unknown_time, t_tool = unknown_time;
  std::int64_t last_total = -1;
  std::string model = "unknown";
  bool new_context = false;
  for_each_line(path, log, [&](std::int64_t n, std::string_view text) {
    auto parsed = parse_line(text, n, log);
    if (!parsed) return;
    ++t.summary.records_read;
    const auto& j = *parsed;
    const auto type = string_at(j, "type");
    if (!type) return log.skip(n, "record without a type");
    const auto ts_text = string_at(j, "timestamp");
    std::optional<double> ts;
    if (ts_text) ts = parse_iso8601(*ts_text);
    const auto payload = j.find("payload");
    const bool has_payload = payload != j.end() && payload->is_object();
    if (*type == "session_meta") {
      if (has_payload && t.project.empty())
        if (auto cwd = string_at(*payload, "cwd")) t.project = *cwd;
      return;
    }
    if (*type == "compacted") {  // the history was replaced by a summary: the next prompt is new
      new_context = true;
      return;
    }
    if (*type == "turn_context") {
      if (ts) t_context = *ts;
      if (has_payload)
        if (auto m = string_at(*payload, "model")) model = *m;
      t_tool = unknown_time;
      return;
    }
    if (*type == "response_item") {
      if (has_payload && string_at(*payload, "type") == "function_call" && ts && std::isnan(t_tool)) t_tool = *ts;
      return;
    }
    if (*type != "event_msg") return log.skip(n, "unknown record type", *type);
    if (!has_payload) return log.skip(n, "event without a payload");
    const auto ptype = string_at(*payload, "type");
    if (ptype != "token_count") return;  // agent_message, task_started, …: nothing to count
    if (const auto rl = payload->find("rate_limits"); rl != payload->end() && rl->is_object() && ts) {
      auto snapshot = rl->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (t.rate_limits.empty() || t.rate_limits.back().json != snapshot) t.rate_limits.push_back({*ts, std::move(snapshot)});
    }
    const auto info = payload->find("info");
    if (info == payload->end() || info->is_null()) return;  // the rate-limit snapshot before a turn
    std::optional<std::int64_t> total;
    if (info->contains("total_token_usage")) total = count_at((*info)["total_token_usage"], "total_tokens");
    if (!info->contains("last_token_usage") || !total) return log.skip(n, "missing or invalid usage field", "token_count.info");
    if (*total <= last_total) return;  // the duplicate emitted after the tool outputs
    last_total = *total;
    if (!ts) return log.skip(n, "token_count without a valid timestamp");
    const auto& u = (*info)["last_token_usage"];
    const auto in = count_at(u, "input_tokens"), cached = count_at(u, "cached_input_tokens");
    const auto out = count_at(u, "output_tokens"), reasoning = count_at(u, "reasoning_output_tokens");
    if (!in || !out) return log.skip(n, "missing or invalid usage field", "input_tokens or output_tokens");
    const std::int64_t c = std::min(cached.value_or(0), *in);
    const std::int64_t r = std::min(reasoning.value_or(0), *out);
    recorded_request q;
    q.t_send = std::isnan(t_context) ? *ts : t_context;
    if (std::isnan(t_context)) log.note(n, "no turn_context before this response; its send time is its token_count's");
    q.t_end = std::isnan(t_tool) ? *ts : std::min(t_tool, *ts);
    q.tokens = {*in - c, c, 0, *out - r, r};
    q.model = model_index(t, model);
    q.source_line = n;
    // A resumed rollout repeats the history's events: the same time and running total.
    q.response_key = response_key_of(*ts_text, std::to_string(*total));
    q.new_context = new_context;
    new_context = false;
    s.requests.push_back(q);
    t_context = unknown_time;
    t_tool = unknown_time;
  });
  t.sessions.push_back(std::move(s));
  finish_trace(t, log);
  return t;
}

} // namespace

} // namespace loopcast::detail
