// loopcast — recorded agent sessions (docs/model.md §7, "replayed session").
//
// An importer turns a log into a recorded_trace: sessions of recorded requests with the times
// and token counts the log shows, converted into loopcast's token classes (docs/model.md §2). Times
// are seconds on the log's own clock: Unix time for timestamped logs (Claude Code, Codex,
// opencode), seconds from the trace start for kv-cache-tester traces. A request's t_end is the
// end of its generation, cut at its first tool's start when the turn ends in a tool call, so
// tool time never counts as model time.
//
// Problems with single records (a line that is not JSON, a missing usage field, an unknown event)
// are collected in the trace's import_summary with file and line, and the record is skipped; a
// file named on its own that yields no usable request is a trace_error (among many, it is counted).
#pragma once

#include "loopcast/names.hpp"
#include "loopcast/prefix_cache.hpp"
#include "loopcast/tokens.hpp"
#include "loopcast/walls.hpp"

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopcast {

enum class trace_format : std::uint8_t {
  automatic,        ///< detect from the content
  claude_code,      ///< Claude Code session JSONL (~/.claude/projects/…/*.jsonl)
  codex,            ///< OpenAI Codex CLI rollout JSONL
  opencode,         ///< opencode's SQLite database, or its older JSON storage folder
  kv_cache_tester,  ///< kv-cache-tester trace JSON (per-request hash_ids)
  swe_agent,        ///< SWE-agent .traj (per-task totals only)
  loopcast          ///< loopcast's own JSONL trace (docs/trace-format.md)
};
template <>
struct enum_names<trace_format> {
  static constexpr std::array table{enum_entry{trace_format::automatic, "auto"},
                                    enum_entry{trace_format::claude_code, "claude-code"},
                                    enum_entry{trace_format::codex, "codex"},
                                    enum_entry{trace_format::opencode, "opencode"},
                                    enum_entry{trace_format::kv_cache_tester, "kv-cache-tester"},
                                    enum_entry{trace_format::swe_agent, "swe-agent"},
                                    enum_entry{trace_format::loopcast, "loopcast"}};
};

inline constexpr double unknown_time = std::numeric_limits<double>::quiet_NaN();

/// Where a request was served: the plan's own API, or something that does not count against it.
enum class request_backend : std::uint8_t {
  first_party,   ///< the provider's own API (what a plan's windows count)
  vertex,        ///< Google Vertex AI (Claude Code's message ids msg_vrtx_…)
  bedrock,       ///< AWS Bedrock (msg_bdrk_…)
  relay,         ///< a proxy or relay (a response without the provider's request id)
  other_vendor,  ///< another vendor's model behind the agent (a model the agent's provider does not make)
  unknown        ///< the log does not say (every non-Claude-Code log)
};
template <>
struct enum_names<request_backend> {
  static constexpr std::array table{enum_entry{request_backend::first_party, "first_party"},
                                    enum_entry{request_backend::vertex, "vertex"},
                                    enum_entry{request_backend::bedrock, "bedrock"},
                                    enum_entry{request_backend::relay, "relay"},
                                    enum_entry{request_backend::other_vendor, "other_vendor"},
                                    enum_entry{request_backend::unknown, "unknown"}};
};

struct recorded_request {
  double t_send = 0;                  ///< when the request was sent, s on the log's clock
  double t_first_token = unknown_time;///< first token, s; NaN when the log has no TTFT
  double t_end = 0;                   ///< generation end (cut at the first tool's start), s;
                                      ///< NaN when the log has no response timing for it
  double delay_before_s = unknown_time;  ///< agent time before this send as the log records it
                                         ///< (kv-cache-tester think_time); NaN: derive from times
  token_counts tokens;                ///< in loopcast's classes
  std::int32_t model = 0;             ///< index into recorded_trace::models
  bool compaction = false;            ///< a compaction (summary) request
  bool new_context = false;           ///< the prompt does not extend the previous one (after a compaction)
  std::uint8_t output_kinds = 0;      ///< what the response held: output_kind bits (speed.hpp); 0 unknown
  double cost_usd = unknown_time;     ///< as recorded; NaN when the log has none
  std::uint32_t runs_begin = 0;       ///< prefix runs in recorded_trace::runs (when has_prefix)
  std::uint32_t runs_count = 0;
  std::int64_t source_line = 0;       ///< line (or row) of the record in its file
  /// The API response's identity across files (a hash of Claude Code's message.id + requestId, of
  /// a Codex token_count's time and running total); 0 when the log gives none. Two requests with
  /// one key are one response logged twice (drop_repeated_responses).
  std::uint64_t response_key = 0;
  /// The response's message alone (a hash of Claude Code's message.id; 0: none), for an echo.
  std::uint64_t echo_key = 0;
  request_backend backend = request_backend::unknown;  ///< where it was served (Claude Code's ids say)
  /// Characters of what the response wrote (text, thinking, tool inputs), when the log holds it;
  /// -1 unknown. Against a partial streaming output count (plan_usage), it estimates the output.
  std::int32_t output_chars = -1;
  /// Logged only as an echo in another session's log (Claude Code's `progress` records of a
  /// subagent): counted unless the response is logged anywhere else (drop_repeated_responses).
  bool echo = false;
};
/// The columns of a recorded request (numpy; `model` indexes recorded_trace::models).
template <>
struct record_fields<recorded_request> {
  static constexpr std::tuple list{
      field{"t_send", &recorded_request::t_send, "s"},
      field{"t_first_token", &recorded_request::t_first_token, "s"},
      field{"t_end", &recorded_request::t_end, "s"},
      field{"tokens", &recorded_request::tokens, "tokens"},
      field{"model", &recorded_request::model, ""},
      field{"compaction", &recorded_request::compaction, ""},
      field{"cost_usd", &recorded_request::cost_usd, "USD"},
      field{"source_line", &recorded_request::source_line, ""}};
};

struct recorded_session {
  std::string id;
  std::string file;
  std::int32_t parent = -1;           ///< index of the parent session for subagents, -1 otherwise
  std::vector<recorded_request> requests;  ///< in order of t_send
};

/// What could not be used, and why.
struct import_issue {
  std::string file;
  std::int64_t line = 0;  ///< 1-based line or row; 0 for the whole file
  std::string reason;
};

struct import_summary {
  std::int64_t records_read = 0;      ///< lines, rows or entries examined
  std::int64_t requests = 0;          ///< requests produced
  std::map<std::string, std::int64_t> skipped;  ///< reason → records skipped for it
  std::vector<import_issue> issues;   ///< the first 200 problems, with file and line
  std::int64_t issues_total = 0;
};

/// A provider's rate-limit state as the log recorded it (Codex `rate_limits`), kept verbatim.
struct rate_limit_snapshot {
  double t = 0;        ///< when it was recorded, s on the log's clock
  std::string json;    ///< the snapshot object, as JSON text
};

/// Who was logged in from a moment on, as the log says: `/status`'s "Email:" or "Login method:"
/// lines, or a "Login successful" after `/login` (an account not yet named).
struct account_marker {
  double t = 0;           ///< when, s on the log's clock
  std::string account;    ///< an email, else the login method ("Claude Max account"); "" for a /login not yet named
  std::string plan;       ///< the login method when said ("Claude Max account", "Claude Pro account"), else ""
};

/// Per-task totals, for logs that have nothing finer (SWE-agent).
struct recorded_totals {
  std::int64_t api_calls = 0;
  std::int64_t tokens_sent = 0;
  std::int64_t tokens_received = 0;
  double cost_usd = unknown_time;
};

struct recorded_trace {
  std::string file;
  trace_format format = trace_format::automatic;
  std::vector<std::string> models;
  std::vector<recorded_session> sessions;
  std::vector<prefix_run> runs;       ///< prefix runs of every request (when has_prefix)
  std::uint32_t lineages = 0;
  bool has_ttft = false;              ///< at least one request records its first token
  bool has_prefix = false;            ///< the prefix structure is known exactly (hash ids)
  bool absolute_clock = false;        ///< times are Unix seconds
  std::string machine;                ///< the machine it was copied from (import_machines); "" when not said
  std::string project;                ///< the folder the agent worked in, as the log records it (Claude
                                      ///< Code's and Codex's cwd); "" when it does not say
  std::optional<recorded_totals> totals;  ///< totals-only logs (sessions is empty)
  std::vector<rate_limit_snapshot> rate_limits;  ///< as recorded, consecutive duplicates dropped
  std::vector<plan_wall> walls;                  ///< a plan's limit messages, as written (dedupe_walls counts each once)
  std::vector<account_marker> accounts;          ///< logins and /status outputs, in time order
  import_summary summary;

  std::size_t request_count() const noexcept;
};

/// The agent's own time between two requests of a session: as recorded, else send − previous end,
/// else (no end recorded) send − previous send (docs/trace-format.md, "kv-cache-tester timing").
double agent_delay(const recorded_request& prev, const recorded_request& r) noexcept;

/// Whether request r of a session starts a new context after prev: the log says so, prev was a
/// compaction, or r's prompt is less than half of prev's (a compaction or /clear the log does not
/// flag). A compaction request itself (r.compaction) still reads the old context.
inline bool context_restarts(const recorded_request& prev, const recorded_request& r) noexcept {
  return r.new_context || prev.compaction || 2 * r.tokens.prompt() < prev.tokens.prompt();
}

/// The models the logs' requests name, each once, in order of first appearance.
std::vector<std::string> models_of(const std::vector<recorded_trace>& traces);

/// Whether a model name matches a shell pattern ("claude-opus-*"); an empty pattern or "*" matches all.
bool model_matches(const std::string& pattern, const std::string& model) noexcept;

/// Detects the format of a file or directory from its content (throws trace_error if unknown).
trace_format detect_trace_format(const std::filesystem::path& path);

/// Imports one log file (or an opencode storage folder). Throws trace_error when the file cannot
/// be read, is of no known format, or yields no usable request.
recorded_trace import_trace(const std::filesystem::path& path, trace_format format = trace_format::automatic);

/// Two machines' clocks, from the responses both logged (a transcript copied to one and resumed
/// there, a session mirrored): how far `machine`'s timestamps run ahead of `against`'s.
struct clock_offset {
  std::string machine, against;
  std::int64_t responses = 0;  ///< responses both logged
  double median_s = 0;         ///< median of machine's send time − against's, s
};

/// What reading a set of logs passed over and noticed, beside the traces it returns.
struct import_notes {
  std::vector<import_issue> not_logs;       ///< files under folders that are no log of a known format, or empty
  std::vector<clock_offset> clock_offsets;  ///< per pair of machines that logged the same responses
};

/// One machine's logs: a name and where its copy is (a folder, a file, `-`).
struct machine_root {
  std::string machine;           ///< "" for logs not put on any machine
  std::filesystem::path path;
};

/// Imports files and directories: a directory is an opencode storage folder, or else every file in
/// it (recursively) is imported on its own, whatever its format. Each API response counts once
/// across all of them (drop_repeated_responses). A file that yields no request (a subagent file
/// holding only a limit message, an empty session) stays in the result with no session, its
/// summary saying why and its cut-offs and rate-limit snapshots kept; a file under a folder that is
/// no log of a known format (or is empty) is passed over and listed in `notes`. Files are read
/// on `threads` workers (0: every core), with the same result whatever the count. Throws
/// trace_error for a file named that cannot be read or is no log, and when no file yields a request.
std::vector<recorded_trace> import_traces(const std::vector<std::filesystem::path>& paths,
                                          trace_format format = trace_format::automatic,
                                          import_notes* notes = nullptr, unsigned threads = 0);

/// import_traces over the logs of several machines: each trace's `machine` says whose it is, each
/// response counts once across all of them, and `notes` gives the clock offsets the responses two
/// machines both logged show.
std::vector<recorded_trace> import_machines(const std::vector<machine_root>& roots,
                                            trace_format format = trace_format::automatic,
                                            import_notes* notes = nullptr, unsigned threads = 0);

/// The skip reason of a response that an earlier log already holds.
inline constexpr std::string_view repeated_response_reason = "a response already counted in another file";

/// Counts each API response once across logs, as ccusage does: a request whose response_key an
/// earlier log holds is dropped (logs in the order of their first send, then of their path: the
/// original before a transcript copied from it when a session is resumed or forked), the kept
/// one taking each token class's largest count (the final usage of a streamed message). Each log's
/// summary counts what it lost under repeated_response_reason; a session left with no request
/// goes, and a log left with none stays with no session. A response a log holds only as an echo
/// (recorded_request::echo: Claude Code's progress records of a subagent) gives way to the same
/// response logged anywhere else, matched by its key or by its message alone (echo_key). Returns
/// the responses dropped; `offsets` (when given) gets, per pair of machines, the clock offset
/// that the responses both logged show.
std::int64_t drop_repeated_responses(std::vector<recorded_trace>& traces, std::vector<clock_offset>* offsets = nullptr);

/// Several logs of one account as one trace: every session that feeds a plan's windows, from
/// each machine and agent, on one clock (Unix seconds). Sessions keep their order (log by log),
/// models are merged by name, and each log keeps its own prefix structure (the lineages of two
/// logs never meet). `file` lists the logs. A log without requests (drop_repeated_responses can
/// leave one so) is passed over. Throws trace_error, naming the log, when none has a request, and
/// for one with relative times (kv-cache-tester), totals only, or a prefix structure the others lack.
recorded_trace merge_logs(const std::vector<recorded_trace>& logs);

/// A place where an agent keeps its logs.
struct log_location {
  std::string agent;             ///< "claude-code", "codex", "opencode"
  std::filesystem::path path;
};

/// The agents' default log places that exist (docs/trace-format.md, "Where agents keep their
/// logs"): Claude Code's `projects` folder under each directory of $CLAUDE_CONFIG_DIR (a comma-
/// separated list), else under ~/.config/claude and ~/.claude; Codex's `sessions` under $CODEX_HOME,
/// else ~/.codex; opencode's `opencode.db`, else its `storage` folder, under $XDG_DATA_HOME/opencode,
/// else ~/.local/share/opencode.
std::vector<log_location> default_log_locations();

/// Imports every log the default places hold: each .jsonl file under the Claude Code and Codex
/// folders, and opencode's database or storage, by import_traces' rule for a folder's files (a file
/// with no request stays without sessions; one that is no log, or a folder that cannot be listed,
/// is listed in `notes`). Empty when the places hold no file; throws trace_error when no file
/// yields a request.
std::vector<recorded_trace> import_default_logs(const std::vector<log_location>& places,
                                                import_notes* notes = nullptr, unsigned threads = 0);

/// Writes a trace as loopcast JSONL (docs/trace-format.md); import_trace reads it back.
void write_loopcast_jsonl(std::ostream& os, const recorded_trace& t);

} // namespace loopcast
