// Shared helpers of the log importers. Internal to loopcast.
#pragma once

#include "loopcast/errors.hpp"
#include "loopcast/session.hpp"
#include "loopcast/trace.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace loopcast::detail {

/// Longest line an importer reads; a longer one is skipped (and reported), never loaded whole.
inline constexpr std::size_t max_line_bytes = 64u << 20;
/// Deepest JSON nesting read from a log (real logs nest a dozen levels).
inline constexpr int max_json_depth = 256;
/// Largest token count accepted in a log (10^13, as a script); a larger one is an invalid usage field.
inline constexpr std::int64_t max_token_count = max_script_tokens;
/// Bounds of the times, delays and costs a log may hold (finish_trace refuses others).
inline constexpr double max_abs_time_s = 1e11;       ///< ±3,000 years around the clock's origin
inline constexpr double max_delay_s = max_script_delay_s;  ///< agent time before a request (116 days)
inline constexpr double max_request_cost_usd = 1e6;  ///< recorded cost of one request
/// Largest KV block size of a kv-cache-tester trace, in tokens.
inline constexpr std::int64_t max_block_tokens = 1 << 20;

/// Records problems with single records, capped, with their counts by reason.
class issue_log {
public:
  issue_log(import_summary& s, std::string file) : s_(s), file_(std::move(file)) {}
  void skip(std::int64_t line, const std::string& reason, const std::string& detail = {});
  void note(std::int64_t line, const std::string& what);  ///< a problem that skipped nothing
  const std::string& file() const noexcept { return file_; }

private:
  import_summary& s_;
  std::string file_;
};

/// Readable bytes that follow every line for_each_line gives (simdjson parses a line in place when
/// at least SIMDJSON_PADDING bytes after it may be read).
inline constexpr std::size_t line_padding = 64;

/// Calls f(line_number, text) for each line of a file; lines over max_line_bytes are reported to
/// `log` and skipped without being held in memory. `text` points into the reader's buffer (valid
/// during the call, followed by line_padding readable bytes). Throws trace_error if the file
/// cannot be read.
void for_each_line(const std::string& path, issue_log& log,
                   const std::function<void(std::int64_t, std::string_view)>& f);

/// Parses a JSON line; nullopt (and a skip with reason "not JSON") on failure.
std::optional<nlohmann::json> parse_line(std::string_view text, std::int64_t line, issue_log& log);

/// "2026-02-10T21:11:56.846Z" (or with an offset +hh:mm) → Unix seconds; nullopt if malformed.
std::optional<double> parse_iso8601(std::string_view s);

/// The integer at j[key], if present, a whole number, and in [0, max_token_count].
std::optional<std::int64_t> count_at(const nlohmann::json& j, std::string_view key);
/// The number at j[key], if present and finite.
std::optional<double> number_at(const nlohmann::json& j, std::string_view key);
/// The boolean at j[key], if present and a boolean.
std::optional<bool> bool_at(const nlohmann::json& j, std::string_view key);
/// The string at j[key], if present.
std::optional<std::string> string_at(const nlohmann::json& j, std::string_view key);

/// A response_key from the texts that identify a response (FNV-1a over them, never 0).
std::uint64_t response_key_of(std::string_view a, std::string_view b) noexcept;

/// Index of a model name in the trace's list (added when new).
std::int32_t model_index(recorded_trace& t, std::string_view name);

/// Removes the sessions without requests, keeping each parent index on its session (-1 when the
/// parent went).
void drop_empty_sessions(recorded_trace& t);

/// Sorts each session's requests by t_send (noting out-of-order records) and fills
/// summary.requests. A trace left with no request is returned so (its cut-offs and rate-limit
/// snapshots still count); import_trace refuses it, a folder's import skips and counts it.
void finish_trace(recorded_trace& t, issue_log& log);
/// "no usable request in N records read (skipped: …)": why a trace holds no request.
std::string no_request_reason(const recorded_trace& t);

/// opencode: the first token and first tool start of a message, from its parts (ms → s).
struct opencode_part_times {
  double first_token = unknown_time;
  double first_tool = unknown_time;
};
void add_opencode_part(opencode_part_times& p, const nlohmann::json& part);
/// opencode: one message row → a request, or nullopt (not an assistant message, or skipped with its reason).
std::optional<recorded_request> decode_opencode_message(const nlohmann::json& m, const opencode_part_times& parts,
                                                        std::int64_t row, recorded_trace& t, issue_log& log);

/// One log format: how detection recognises it from a parsed record (the first lines of a JSONL
/// log, or a whole JSON document; nullptr: never from a record) and how it is imported.
struct importer {
  trace_format format;
  bool (*recognises)(const nlohmann::json& record);
  recorded_trace (*import)(const std::string& path);
};

// The importers, each defined in its own file; the registry (import.cpp) lists them in the order
// detection asks them.
extern const importer claude_code_importer;
extern const importer codex_importer;
extern const importer opencode_importer;  // a SQLite database or a storage folder (detect_trace_format)
extern const importer kv_cache_tester_importer;
extern const importer swe_agent_importer;
extern const importer loopcast_jsonl_importer;

/// A file that is no log of a known format, or empty (detect_trace_format): a folder's import
/// skips and counts it; a file named on its own is refused with it.
class not_a_log : public trace_error {
public:
  using trace_error::trace_error;
};

/// Reads a whole JSON document (for single-document formats), with a size limit.
nlohmann::json read_json_document(const std::string& path, std::uintmax_t max_bytes = 512u << 20);

} // namespace loopcast::detail
