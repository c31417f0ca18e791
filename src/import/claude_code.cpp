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
#include "loopcast/walls.hpp"

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
  request_backend backend = request_backend::unknown;
  std::int64_t output_chars = 0;  // summed over the response's lines (a content block each)
  std::string model;
  bool new_context = false;
  std::uint8_t output_kinds = 0;  // the content blocks' types (output_kind bits)
};

const std::set<std::string, std::less<>> known_types{
    "user", "assistant", "progress", "file-history-snapshot", "system", "summary", "queue-operation",
    "attachment", "custom-title", "tag"};

// The characters a content value holds: strings' lengths, keys' and values', through objects and
// arrays (a tool's input), without building any string.
std::int64_t chars_in(const dom::element& e, int depth = 0) {
  if (depth > 32) return 0;
  switch (e.type()) {
  case dom::element_type::STRING: return static_cast<std::int64_t>(std::string_view(e.get_string().value_unsafe()).size());
  case dom::element_type::ARRAY: {
    std::int64_t n = 0;
    const dom::array a = e.get_array().value_unsafe();
    for (const dom::element x : a) n += chars_in(x, depth + 1);
    return n;
  }
  case dom::element_type::OBJECT: {
    std::int64_t n = 0;
    const dom::object o = e.get_object().value_unsafe();
    for (const auto field : o) n += static_cast<std::int64_t>(field.key.size()) + chars_in(field.value, depth + 1);
    return n;
  }
  default: return 0;
  }
}

// Where a response was served, from its ids and model: Vertex and Bedrock write their own message
// ids; a relay answers without the provider's request id; another vendor's model behind Claude
// Code is not Anthropic's.
request_backend backend_of(std::string_view message_id, std::string_view request_id, std::string_view model) {
  if (message_id.starts_with("msg_vrtx_")) return request_backend::vertex;
  if (message_id.starts_with("msg_bdrk_")) return request_backend::bedrock;
  if (!model.starts_with("claude")) return request_backend::other_vendor;
  if (request_id.empty()) return request_backend::relay;
  return request_backend::first_party;
}

// A user record's text (a string, or the text blocks of an array).
std::string user_text(const dom::element& msg) {
  const auto content = member(msg, "content");
  if (!content) return {};
  if (const auto s = string_of(content)) return std::string(*s);
  std::string out;
  dom::array blocks;
  if (!content->get_array().get(blocks))
    for (const dom::element b : blocks)
      if (const auto s = string_of(member(b, "text"))) out += *s;
  return out;
}

// An account marker in a slash command's output: "Login successful" after /login, or /status's
// "Login method: Claude Max account" and "Email: …" lines.
std::optional<account_marker> account_in(std::string_view text, double t) {
  const auto open = text.find("<local-command-stdout>");
  if (open == std::string_view::npos) return std::nullopt;
  const auto body = text.substr(open + 22, text.find("</local-command-stdout>", open) - open - 22);
  auto line_after = [&](std::string_view key) -> std::string {
    const auto at = body.find(key);
    if (at == std::string_view::npos) return {};
    auto rest = body.substr(at + key.size());
    rest = rest.substr(0, rest.find_first_of("\r\n"));
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
    return std::string(rest);
  };
  account_marker m{t, line_after("Email:"), line_after("Login method:")};
  if (m.account.empty()) m.account = m.plan;
  if (m.account.empty() && body.find("Login successful") == std::string_view::npos) return std::nullopt;
  return m;
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
    q.backend = r.backend;
    q.output_chars = static_cast<std::int32_t>(std::min<std::int64_t>(r.output_chars, std::numeric_limits<std::int32_t>::max()));
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
      // A plan's wall (walls.hpp), said in the message's text.
      if (has_content)
        for (const dom::element block : content)
          if (const auto said = string_of(member(block, "text"))) {
            auto reading = read_wall_text(*said, ts);
            if (reading.wall) {
              reading.wall->source_line = n;
              t.walls.push_back(std::move(*reading.wall));
            } else if (!reading.problem.empty()) {
              log.note(n, reading.problem);
            }
          }
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
    const std::string echo_lane_key = echoed ? fmt::format("{}\n{}", lane, key) : std::string();
    const std::string_view lane_key = echoed ? std::string_view(echo_lane_key) : key;
    auto it = by_key.find(lane_key);
    if (it == by_key.end()) {
      it = by_key.emplace(std::string(lane_key), responses.size()).first;
      response r;
      r.key = key;
      r.lane = lane;
      r.first_line = n;
      r.t_send = last_user[lane];
      r.t_first = ts;
      r.model = model;
      r.new_context = boundary[lane];
      if (!message_id.empty() && !request_id.empty()) r.response_key = response_key_of(message_id, request_id);
      r.backend = backend_of(message_id, request_id, model);
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
        if (kind == "text") r.output_chars += chars_in(*member(block, "text"));
        else if (kind == "thinking") r.output_chars += member(block, "thinking") ? chars_in(*member(block, "thinking")) : 0;
        else if (kind == "tool_use" && member(block, "input")) r.output_chars += chars_in(*member(block, "input")) + static_cast<std::int64_t>(string_of(member(block, "name")).value_or("").size());
        if (kind == "thinking" || kind == "redacted_thinking") r.output_kinds |= output_thinking;
        else if (kind == "text") r.output_kinds |= output_text;
        else if (kind == "tool_use") r.output_kinds |= output_tool_use;
      }
  };

  thread_local dom::parser parser;  // its memory kept for the thread's next file
  struct release {
    ~release() {  // a long line's room is given back
      if (parser.capacity() > (8u << 20)) parser = dom::parser();
    }
  } const release_at_end;
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
      // A slash command's output: who is logged in from now on (/login, /status).
      // (The line is searched first: a prompt or a tool's output is not copied to look in it.)
      if (const auto msg = member(j, "message");
          ts && msg && msg->is_object() && text.find("local-command-stdout") != std::string_view::npos)
        if (const auto said = user_text(*msg); said.find("<local-command-stdout>") != std::string::npos)
          if (auto m = account_in(said, *ts)) t.accounts.push_back(std::move(*m));
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
