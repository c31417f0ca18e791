// Claude Code session JSONL (~/.claude/projects/<project>/<session>.jsonl).
//
// Conventions converted here:
// - One line per content block; the lines of one API response share message.id (and requestId).
//   Early lines carry partial output counts: each usage field keeps its largest value.
// - usage.input_tokens excludes cache reads and writes: input = input_tokens,
//   cache_read = cache_read_input_tokens, and the writes cache_creation_input_tokens, split by
//   lifetime where usage.cache_creation has {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}:
//   cache_write_1h = the 1-hour writes, cache_write = the rest. Thinking is billed inside
//   output_tokens, so it stays in `output` (reasoning is 0).
// - A response is keyed as ccusage keys it, message.id + requestId (response_key), so that a
//   transcript copied into another file (a resumed or forked session) is counted once
//   (drop_repeated_responses); a line without both is never taken for a repeat.
// - Sent: the last user line (prompt or tool result) before the response's first line. End: the
//   first tool_use block's line when the response calls a tool (the tool starts then), else the
//   last line. Lines are written when a block is complete, so the log has no TTFT.
// - Sidechain lines (isSidechain) form a session of their own; files named *acompact* hold
//   auto-compaction requests; a compact_boundary system line starts a new context.
#include "import/common.hpp"
#include "import/simd.hpp"
#include "util/time_zone.hpp"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

namespace loopcast::detail {

namespace {

struct response {
  std::string key;
  std::size_t lane = 0;  // the session it belongs to: 0 the main one, 1 its sidechain, then each echoed subagent
  std::int64_t first_line = 0;
  double t_send = unknown_time, t_first = 0, t_last = 0, t_tool = unknown_time;
  std::int64_t input = 0, cache_read = 0, cache_write = 0, cache_write_1h = 0, output = 0;
  std::uint64_t response_key = 0, echo_key = 0;
  std::string model;
  bool new_context = false;
  std::uint8_t output_kinds = 0;  // the content blocks' types (output_kind bits)
};

const std::set<std::string, std::less<>> known_types{
    "user", "assistant", "progress", "file-history-snapshot", "system", "summary", "queue-operation",
    "attachment", "custom-title", "tag"};

// A time of day as Claude Code prints it: "3pm", "11:30am", "9:30 AM"; nullopt otherwise.
std::optional<std::pair<int, int>> time_of_day(std::string_view s) {
  int hour = 0, minute = 0;
  std::size_t i = 0;
  auto digits = [&](int& v) {
    const std::size_t from = i;
    while (i < s.size() && i - from < 2 && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
    return i > from;
  };
  if (!digits(hour)) return std::nullopt;
  if (i < s.size() && s[i] == ':') {
    ++i;
    if (!digits(minute) || minute > 59) return std::nullopt;
  }
  while (i < s.size() && s[i] == ' ') ++i;
  const auto rest = s.substr(i, 2);
  const bool pm = rest == "pm" || rest == "PM", am = rest == "am" || rest == "AM";
  if (!pm && !am) return hour <= 23 && i > 0 ? std::optional(std::pair{hour, minute}) : std::nullopt;
  if (hour < 1 || hour > 12) return std::nullopt;
  return std::pair{hour % 12 + (pm ? 12 : 0), minute};
}

// A plan's cut-off in a synthetic message's text: the legacy "Claude AI usage limit
// reached|1749924000" (the epoch the window reopens), or a newer message that gives the reset as
// a time of day, with or without its zone — "5-hour limit reached ∙ resets 3pm", "You've hit your
// limit · resets 2am (Europe/Berlin)", "Claude usage limit reached. Your limit will reset at 3pm
// (America/Bogota)." — whose reset is that time's next occurrence after the message, in the zone
// it names, else the machine's. A weekly limit's message closes a week's window. A message that
// reads as a cut-off but whose reset cannot be read is noted and not used.
std::optional<limit_cutoff> cutoff_in(std::string_view said, double t, std::int64_t line, issue_log& log) {
  if (const auto at = said.find("usage limit reached|"); at != std::string_view::npos) {
    const auto digits = said.substr(at + 20);
    double epoch = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), epoch);
    if (ec == std::errc{} && end != digits.data() && epoch > 1e9 && epoch < 1e11) return limit_cutoff{t, epoch, 5 * 3600.0, line};
    log.note(line, "a usage-limit message whose reset time is not a Unix time between 2001 and 5138: not used");
    return std::nullopt;
  }
  const bool limit = said.find("limit reached") != std::string_view::npos ||
                     said.find("hit your limit") != std::string_view::npos;
  if (!limit) return std::nullopt;
  std::size_t at = said.find("resets ");
  std::size_t skip = 7;
  if (at == std::string_view::npos) {
    at = said.find("reset at ");
    skip = 9;
  }
  const auto when = at == std::string_view::npos ? std::nullopt : time_of_day(said.substr(at + skip));
  if (!when) {
    log.note(line, "a usage-limit message without a reset time of day to read: not used");
    return std::nullopt;
  }
  std::string zone_name;
  if (const auto open = said.find('(', at); open != std::string_view::npos)
    if (const auto close = said.find(')', open); close != std::string_view::npos && close - open < 64)
      zone_name = std::string(said.substr(open + 1, close - open - 1));
  try {
    const zone z(zone_name);
    const bool weekly = said.find("eekly") != std::string_view::npos;
    return limit_cutoff{t, z.next_local_time(t, when->first, when->second), weekly ? 7 * 86400.0 : 5 * 3600.0, line};
  } catch (const std::invalid_argument&) {
    log.note(line, fmt::format("a usage-limit message naming an unknown time zone \"{}\": not used", zone_name));
    return std::nullopt;
  }
}

} // namespace

namespace {
// Claude Code writes typed records with a session id and a uuid (and snapshot/summary lines).
bool recognises_claude_code(const nlohmann::json& j) {
  const auto type = string_at(j, "type");
  return type && (j.contains("sessionId") || j.contains("uuid") || *type == "file-history-snapshot" || *type == "summary");
}
recorded_trace import_claude_code(const std::string& path);
} // namespace

const importer claude_code_importer{trace_format::claude_code, recognises_claude_code, import_claude_code};

namespace {
// A response's lines repeat its usage as it streams: each count is the largest seen. The writes
// go by lifetime: the 1-hour ones where the split says so, the rest at the default.
void merge_usage(response& r, const dom::element& usage, std::int64_t in, std::int64_t out) {
  r.input = std::max(r.input, in);
  r.output = std::max(r.output, out);
  r.cache_read = std::max(r.cache_read, count_of(member(usage, "cache_read_input_tokens")).value_or(0));
  const auto writes = count_of(member(usage, "cache_creation_input_tokens")).value_or(0);
  std::int64_t writes_1h = 0;
  if (const auto split = member(usage, "cache_creation"); split && split->is_object())
    writes_1h = std::min(writes, count_of(member(*split, "ephemeral_1h_input_tokens")).value_or(0));
  r.cache_write = std::max(r.cache_write, writes - writes_1h);
  r.cache_write_1h = std::max(r.cache_write_1h, writes_1h);
}

// Sessions: the main conversation, its sidechain, and each subagent known only from its echoes
// (lanes 2 and on, named in `echo_agents`), in the order of their first response.
void add_sessions(recorded_trace& t, const std::vector<response>& responses, const std::vector<std::string>& echo_agents,
                  bool compaction_file, issue_log& log) {
  const std::string& path = t.file;
  const std::string stem = std::filesystem::path(path).stem().string();
  std::vector<std::int32_t> session_of(2 + echo_agents.size(), -1);
  for (const auto& r : responses) {
    if (session_of[r.lane] < 0) {
      session_of[r.lane] = static_cast<std::int32_t>(t.sessions.size());
      recorded_session s;
      s.id = r.lane == 0 ? stem : r.lane == 1 ? stem + "/sidechain" : stem + "/agent-" + echo_agents[r.lane - 2];
      s.file = path;
      t.sessions.push_back(s);
    }
    recorded_request q;
    if (std::isnan(r.t_send)) {
      log.note(r.first_line, "no user line before this response; its send time is its first line's");
      q.t_send = r.t_first;
    } else {
      q.t_send = std::min(r.t_send, r.t_first);
    }
    q.t_end = std::isnan(r.t_tool) ? r.t_last : r.t_tool;
    q.output_kinds = r.output_kinds;
    q.tokens = {r.input, r.cache_read, r.cache_write, r.output, 0, r.cache_write_1h};
    q.response_key = r.response_key;
    q.echo_key = r.echo_key;
    q.echo = r.lane >= 2;
    q.model = model_index(t, r.model);
    q.compaction = compaction_file;
    q.new_context = r.new_context;
    q.source_line = r.first_line;
    t.sessions[static_cast<std::size_t>(session_of[r.lane])].requests.push_back(q);
  }
  if (session_of[0] >= 0)
    for (std::size_t lane = 1; lane < session_of.size(); ++lane)
      if (session_of[lane] >= 0) t.sessions[static_cast<std::size_t>(session_of[lane])].parent = session_of[0];
}

recorded_trace import_claude_code(const std::string& path) {
  recorded_trace t;
  t.file = path;
  t.format = trace_format::claude_code;
  t.absolute_clock = true;
  issue_log log(t.summary, path);
  const bool compaction_file = std::filesystem::path(path).filename().string().find("acompact") != std::string::npos;

  std::vector<response> responses;
  std::map<std::string, std::size_t, std::less<>> by_key;
  // Per lane (main, sidechain, each echoed subagent): its last user line, and a compaction boundary.
  std::vector<double> last_user{unknown_time, unknown_time};
  std::vector<bool> boundary{false, false};
  std::vector<std::string> echo_agents;                     // lane − 2 → the subagent's id
  std::map<std::string, std::size_t, std::less<>> lane_of;  // subagent id → its lane

  // An assistant record's response: `msg` its message, `request_id` the API request's id.
  auto take_response = [&](std::int64_t n, std::size_t lane, double ts, const dom::element& msg,
                           std::string_view request_id, bool echoed) {
    const auto model = string_of(member(msg, "model")).value_or("unknown");
    dom::array content;
    const auto content_member = member(msg, "content");
    const bool has_content = content_member && !content_member->get_array().get(content);
    if (model == "<synthetic>") {
      // A plan's cut-off (cutoff_in), said in the message's text.
      if (has_content)
        for (const dom::element block : content)
          if (const auto said = string_of(member(block, "text")))
            if (auto c = cutoff_in(*said, ts, n, log)) t.cutoffs.push_back(*c);
      return log.skip(n, "synthetic message (no API call)");
    }
    const auto usage = member(msg, "usage");
    if (!usage || !usage->is_object()) return log.skip(n, "missing usage");
    const auto in = count_of(member(*usage, "input_tokens"));
    const auto out = count_of(member(*usage, "output_tokens"));
    if (!in || !out) return log.skip(n, "missing or invalid usage field", "input_tokens or output_tokens");
    const std::string_view message_id = string_of(member(msg, "id")).value_or("");
    const std::string_view key = message_id.empty() ? request_id : message_id;
    if (key.empty()) return log.skip(n, "assistant line without message.id or requestId");
    // An echo is keyed apart from the file's own lines (its own session), and matched by its
    // message too (echo_key), for an echo that lacks the request id.
    const std::string lane_key = echoed ? fmt::format("{}\n{}", lane, key) : std::string(key);
    auto it = by_key.find(lane_key);
    if (it == by_key.end()) {
      it = by_key.emplace(lane_key, responses.size()).first;
      response r;
      r.key = key;
      r.lane = lane;
      r.first_line = n;
      r.t_send = last_user[lane];
      r.t_first = ts;
      r.model = model;
      r.new_context = boundary[lane];
      if (!message_id.empty() && !request_id.empty()) r.response_key = response_key_of(message_id, request_id);
      if (!message_id.empty()) {
        r.echo_key = response_key_of(message_id, "");
        if (echoed && r.response_key == 0) r.response_key = response_key_of(message_id, "(echo)");
      }
      boundary[lane] = false;
      responses.push_back(r);
    }
    auto& r = responses[it->second];
    r.t_last = std::max(r.t_last, ts);
    merge_usage(r, *usage, *in, *out);
    if (has_content)
      for (const dom::element block : content) {
        const auto kind = string_of(member(block, "type")).value_or("");
        if (kind == "tool_use" && std::isnan(r.t_tool)) r.t_tool = ts;
        if (kind == "thinking" || kind == "redacted_thinking") r.output_kinds |= output_thinking;
        else if (kind == "text") r.output_kinds |= output_text;
        else if (kind == "tool_use") r.output_kinds |= output_tool_use;
      }
  };

  dom::parser parser;
  for_each_line(path, log, [&](std::int64_t n, std::string_view text) {
    const auto parsed = parse_record(parser, text, n, log);
    if (!parsed) return;
    ++t.summary.records_read;
    const dom::element j = *parsed;
    const auto type = string_of(member(j, "type"));
    if (!type) return log.skip(n, "record without a type");
    if (!known_types.contains(*type)) return log.skip(n, "unknown record type", std::string(*type));
    const std::size_t side = bool_of(member(j, "isSidechain")).value_or(false) ? 1 : 0;
    if (t.project.empty())
      if (const auto cwd = string_of(member(j, "cwd"))) t.project = *cwd;
    const auto ts_text = string_of(member(j, "timestamp"));
    std::optional<double> ts;
    if (ts_text) ts = parse_iso8601(*ts_text);
    if (*type == "user") {
      if (ts) last_user[side] = *ts;
      return;
    }
    if (*type == "system") {
      if (string_of(member(j, "subtype")) == "compact_boundary") boundary[side] = true;
      return;
    }
    if (*type == "progress") {
      // Claude Code 2.1 echoes each message of a running subagent into its parent's transcript:
      // {"type": "progress", "data": {"type": "agent_progress", "agentId", "message": {a record}}}.
      const auto data = member(j, "data");
      if (!data || string_of(member(*data, "type")) != "agent_progress") return;
      const auto inner = member(*data, "message");
      if (!inner || !inner->is_object()) return;
      const auto inner_type = string_of(member(*inner, "type"));
      if (inner_type != "assistant" && inner_type != "user") return;
      const std::string_view agent = string_of(member(*data, "agentId")).value_or("");
      auto lane_it = lane_of.find(agent);
      if (lane_it == lane_of.end()) {
        lane_it = lane_of.emplace(std::string(agent), last_user.size()).first;
        echo_agents.emplace_back(agent.empty() ? "unnamed" : agent);
        last_user.push_back(unknown_time);
        boundary.push_back(false);
      }
      const std::size_t lane = lane_it->second;
      std::optional<double> when;
      if (const auto inner_ts = string_of(member(*inner, "timestamp"))) when = parse_iso8601(*inner_ts);
      if (!when) when = ts;
      if (*inner_type == "user") {
        if (when) last_user[lane] = *when;
        return;
      }
      if (!when) return log.skip(n, "subagent echo without a valid timestamp");
      const auto msg = member(*inner, "message");
      if (!msg || !msg->is_object()) return log.skip(n, "subagent echo without a message");
      const std::string_view request_id =
          string_of(member(*inner, "requestId")).value_or(string_of(member(j, "requestId")).value_or(""));
      return take_response(n, lane, *when, *msg, request_id, true);
    }
    if (*type != "assistant") return;
    if (!ts) return log.skip(n, "assistant line without a valid timestamp");
    const auto msg = member(j, "message");
    if (!msg || !msg->is_object()) return log.skip(n, "assistant line without a message");
    take_response(n, side, *ts, *msg, string_of(member(j, "requestId")).value_or(""), false);
  });

  add_sessions(t, responses, echo_agents, compaction_file, log);
  finish_trace(t, log);
  return t;
}

} // namespace

} // namespace loopcast::detail
