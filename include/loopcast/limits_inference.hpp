// loopcast — rate limits inferred from what providers send back: response headers and 429 messages.
//
// Headers (raw HTTP text, or JSON maps; several snapshots over time) of Cerebras
// (x-ratelimit-{limit,remaining,reset}-{tokens-minute,requests-day}, reset in seconds), OpenAI
// (x-ratelimit-{limit,remaining,reset}-{requests,tokens}, reset like "6m0s"), and Anthropic
// (anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}, reset an
// RFC 3339 time, read against the response's `date`) become buckets: limit, period, and the refill
// rate each snapshot implies, (limit − remaining) / seconds to reset. A continuous (token) bucket
// refills at limit / period, so the implied rates agree with it; otherwise the evidence says so.
// retry-after / retry-after-ms mean the provider tells clients when to retry.
//
// 429 messages of the form "… Limit L, Used U, Requested R. Please try again in T" are checked
// against the token-bucket law T = (U + R − L) / (L / period).
#pragma once

#include "loopcast/limits/bucket_config.hpp"
#include "loopcast/trace.hpp"

#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace loopcast {

struct header_snapshot {
  std::string source;                          ///< "file:line" (raw text) or "file#/index" (JSON)
  double time_unix_s = std::numeric_limits<double>::quiet_NaN();  ///< from `date` or a JSON "time"; NaN: unknown
  std::map<std::string, std::string> headers;  ///< lower-case names
};

/// Reads snapshots from raw HTTP header text (responses separated by blank lines or status lines)
/// or from JSON (one object of header → value, or an array of them; an optional "time" holds the
/// Unix time in seconds or an RFC 3339 time). Throws config_error naming the file and place.
std::vector<header_snapshot> parse_header_snapshots(std::string_view text, const std::string& file);

struct inferred_bucket {
  bucket_config config;
  std::string header;              ///< the header family it came from
  std::vector<double> implied_rates;  ///< per snapshot with a reset: (limit − remaining) / reset, units per second
  std::string evidence;            ///< what the snapshots say about the algorithm
};

struct limits_inference {
  std::string provider;            ///< "cerebras", "openai", "anthropic" or "unknown"
  bool sends_retry_after = false;
  std::vector<inferred_bucket> buckets;
  std::vector<std::string> notes;
};

limits_inference infer_limits(std::span<const header_snapshot> snapshots);
/// The "limits" object of a target preset (docs/presets.md).
std::string limits_fragment_json(const limits_inference& r, int indent = 2);

struct rate_limit_message {
  std::string source;              ///< where it was found
  std::string text;
  std::string unit;                ///< "tokens" or "requests" ("input tokens", … as a stated limit says)
  double period_s = 60;            ///< from "per min" / "per day" (60 when not said)
  double limit = 0, used = 0, requested = 0;
  double stated_wait_s = 0;
  double predicted_wait_s = 0;     ///< (used + requested − limit) / (limit / period)
  bool consistent = false;         ///< within 5 ms or 0.5% of the stated wait
  /// false: the message states a limit and its period only (Anthropic's "rate limit of 30,000
  /// input tokens per minute"); used, requested and the waits are NaN, nothing is checked.
  bool checkable = true;
};

/// Finds "Limit L, Used U, Requested R … try again in T" in a message, or else a stated limit
/// ("rate limit of N UNIT per PERIOD"); nullopt if it is neither.
std::optional<rate_limit_message> parse_rate_limit_message(std::string_view text);
/// Every such message in a file's lines or JSON strings.
std::vector<rate_limit_message> find_rate_limit_messages(std::string_view text, const std::string& file);

/// "6m0s", "1.5s", "20ms", "11.054s", "2h1m" → seconds; nullopt if malformed.
std::optional<double> parse_duration(std::string_view s);

/// A subscription plan's cap learnt from agent logs (`loopcast limits infer --logs`,
/// docs/plans.md): the interval of caps consistent with every observation, for one window and one
/// rule of what the cap counts. Two kinds of evidence:
///   Codex `rate_limits` snapshots (used_percent of each window, its length and reset time): between
///     the first and last snapshot of one window, the logged requests used ΔU and the percentage
///     rose by Δp. Percentages are whole (rounded or truncated), so the true rise lies in
///     (Δp − 1.5, Δp + 1.5): cap ≥ 100·ΔU / (Δp + 1.5), always (usage the logs miss only raises
///     Δp); cap ≤ 100·ΔU / (Δp − 1.5) if the logs hold all the account's usage in that span. The
///     request that ended last is counted in the upper bound only (its usage may not show yet).
///   Claude Code's cut-offs ("usage limit reached|EPOCH"): the 5-hour window [EPOCH − 5 h, EPOCH)
///     refused a request, so cap ≤ the usage logged in it before the refusal (if the logs hold all
///     the usage); every request it admitted says cap > the usage before it (always).
struct plan_cap_interval {
  std::string window;        ///< "5-hour", "weekly", or "N-minute"
  double period_s = 0;
  std::string counts;        ///< the rule: "all tokens", "all but cache reads", "cache reads at 0.1"
  double low = 0;            ///< the cap is above this, in counted tokens
  double high = std::numeric_limits<double>::infinity();  ///< and at most this (infinite: no bound)
  std::int32_t observations = 0;
  bool consistent = true;    ///< low <= high: the rule fits every observation
};
struct plan_inference {
  std::vector<plan_cap_interval> caps;  ///< per window, per rule
  std::vector<std::string> notes;       ///< what was read, and what could not be used
};
/// One window of a plan as Claude Code's statusline reports it: the percentage used, and when the
/// window resets.
struct window_usage {
  double used_percent = 0;
  double resets_at_unix = 0;
};
/// A snapshot of a Claude plan's windows: what Claude Code (2.1.80 and later) passes to a
/// statusline command on standard input as `rate_limits` (`five_hour`, `seven_day`, each with
/// `used_percentage` and `resets_at`), with the time it was taken.
struct statusline_snapshot {
  double t = 0;                           ///< Unix s
  std::string session_id;
  std::optional<window_usage> five_hour, seven_day;
};
/// The statusline input `json` (Claude Code's), taken at `now_unix`; nullopt when it carries no
/// `rate_limits` (an older Claude Code, an API key instead of a plan, before the first response).
/// Throws config_error naming `source` for input that is not a JSON object or holds a window out of
/// range (a percentage outside 0–100, a reset time past ±10^11 s).
std::optional<statusline_snapshot> parse_statusline_input(std::string_view json, double now_unix,
                                                          const std::string& source = "<stdin>");
/// The snapshot as one line of a statusline log (JSON, no newline).
std::string statusline_log_line(const statusline_snapshot& s);
/// A statusline log written by `loopcast statusline` (docs/plans.md), in time order. A line that is
/// not a snapshot is skipped and counted in `skipped`; an unreadable file is a trace_error.
std::vector<statusline_snapshot> read_statusline_log(const std::string& path, std::size_t* skipped = nullptr);

/// Bounds a plan's caps from the traces (docs/plans.md): Codex's rate-limit snapshots, Claude
/// Code's usage-limit cut-offs, statusline snapshots of a Claude plan's percentages (with the
/// usage of the Claude Code logs among the traces), and the usage of any dated log (lower bounds);
/// in O(n log n) of the requests, with one summary note per kind of evidence, a note where what a
/// percentage point costs changes within a window, and a note on what would bound a cap that
/// nothing bounds from above. Throws trace_error naming the first log when none is dated.
plan_inference infer_plan_caps(std::span<const recorded_trace> traces,
                               std::span<const statusline_snapshot> statusline = {}, const std::string& statusline_file = "");

/// Everything captured files say about a provider's limits (`loopcast limits infer FILE…`).
struct limits_evidence {
  std::size_t snapshots = 0;                 ///< header snapshots read
  limits_inference inferred;                 ///< buckets from the headers
  std::vector<rate_limit_message> messages;  ///< 429 messages, each checked against the bucket law
};
/// Reads the files (header captures and/or logs with 429 messages). Throws config_error naming a
/// file that holds neither, or the files when none holds a known provider's headers or a message.
limits_evidence infer_limits_from_files(const std::vector<std::string>& files);

} // namespace loopcast
