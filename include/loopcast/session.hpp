// loopcast — a session as the simulator sees it: the requests an agent will send, in order.
//
// A session script is source-agnostic: the synthetic generator (workload.hpp) writes one from a
// seed, and a log importer writes one from a recorded session. It fixes what is sent (token
// sequence, prefix structure, max_tokens) and the agent's own delays (tool runs, thinking);
// the simulator decides when each request is sent, served, refused or retried on a target.
#pragma once

#include "loopcast/fields.hpp"
#include "loopcast/prefix_cache.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace loopcast {

/// What a session script may hold: a simulation (and every importer) refuses values outside these.
inline constexpr std::int64_t max_script_tokens = 10'000'000'000'000;  ///< any token count, 10^13
inline constexpr double max_script_delay_s = 1e7;   ///< agent time before a request, and a recorded time (116 days)
inline constexpr double max_session_start_s = 2e11; ///< a session's start (logs: times within ±10^11 s)
inline constexpr std::uint64_t max_lineages = std::uint64_t{1} << 31;  ///< prefix-cache lineages over all sessions

/// One request of a session.
struct request_spec {
  std::int64_t prompt_tokens = 0;     ///< context sent, in tokens
  std::int64_t output_tokens = 0;     ///< visible output the model writes, in tokens
  std::int64_t reasoning_tokens = 0;  ///< thinking tokens the model writes, in tokens
  std::int64_t max_tokens = 0;        ///< the request's max_tokens (reserved by some buckets)
  double delay_before_s = 0;          ///< agent time (tool runs, thinking) between the previous
                                      ///< request's end and this one's send, in seconds
  std::uint32_t runs_begin = 0;       ///< this request's prefix runs: script.runs[begin, begin+count)
  std::uint32_t runs_count = 0;
  std::int32_t turn = 0;              ///< the agent turn (1-based); compaction requests share the next turn's number
  bool compaction = false;            ///< a request that replaces the history by a summary
  // (Two one-bit flags: with the segment and the output kinds they fill the 8 bytes after `turn`,
  // so a request stays 56 bytes: a Monte Carlo seed of a fleet holds millions.)
  bool inserted : 1 = false;          ///< added by a replay's context policy (not in the recording)
  bool write_1h : 1 = false;          ///< the client asks for 1-hour cache writes (a replay: the recording
                                      ///< wrote to the 1-hour cache); a target that sells them keeps them an hour
  /// A route with segments (route_policy::segments, a replay's model map): the segment of
  /// targets this request is sent to; 0 otherwise.
  std::uint8_t segment = 0;
  std::uint8_t output_kinds = 0;      ///< replays: what the recorded response held (output_kind bits; 0: unknown)
};

/// A replayed request's recorded times (session_script::recorded).
struct recorded_timing {
  double ttft_s = -1;      ///< the recorded time to first token, s (< 0: unknown)
  double duration_s = -1;  ///< the recorded send-to-end time, s (< 0: unknown)
};
/// The columns of a scripted request (numpy).
template <>
struct record_fields<request_spec> {
  static constexpr std::tuple list{
      field{"prompt_tokens", &request_spec::prompt_tokens, "tokens"},
      field{"output_tokens", &request_spec::output_tokens, "tokens"},
      field{"reasoning_tokens", &request_spec::reasoning_tokens, "tokens"},
      field{"max_tokens", &request_spec::max_tokens, "tokens"},
      field{"delay_before_s", &request_spec::delay_before_s, "s"},
      field{"turn", &request_spec::turn, ""},
      field{"compaction", &request_spec::compaction, ""}};
};

/// The requests of one session and their prefix structure.
struct session_script {
  std::string source;                  ///< where it came from ("workload NAME seed N", a log path)
  std::vector<request_spec> requests;
  /// Prefix runs of all requests (see prefix_cache.hpp). A request's last run may end past its
  /// prompt: the positions past it are not part of the request (the cache reads runs only up to
  /// the prompt). So requests whose prompts grow in the same lineages may share one copy of their
  /// runs. With open_last_run, see end_of().
  std::vector<prefix_run> runs;
  /// Each request's last run ends at its prompt, whatever its stored end: a generated session's
  /// requests share one growing copy of their runs between two compactions, a cache break that keeps
  /// every run cutting the last one short (its stored end) and appending one. Readers of the runs
  /// take a run's end from end_of().
  bool open_last_run = false;
  std::uint32_t lineages = 0;          ///< lineage ids used are < lineages
  std::uint32_t shared_lineages = 0;   ///< ids < shared_lineages are shared by every session of
                                       ///< the same script family (e.g. the system prompt)
  /// Replays: each request's recorded times, one per request; empty when none were recorded (a
  /// generated session), so that a generated request carries none of their 16 bytes.
  std::vector<recorded_timing> recorded;

  /// Request i's recorded times (unknown ones < 0; all unknown when none were recorded).
  recorded_timing recorded_of(std::size_t i) const noexcept {
    return i < recorded.size() ? recorded[i] : recorded_timing{};
  }

  /// The request's runs as stored (with open_last_run, the last one's end is end_of()'s).
  std::span<const prefix_run> runs_of(const request_spec& r) const noexcept {
    return {runs.data() + r.runs_begin, r.runs_count};
  }
  /// Where the request's k-th run ends, in tokens.
  std::int64_t end_of(const request_spec& r, std::uint32_t k) const noexcept {
    return open_last_run && k + 1 == r.runs_count ? r.prompt_tokens : runs[r.runs_begin + k].end_tokens;
  }
  /// The request's runs with their ends as end_of() gives them, in `out` (replaced).
  void runs_of(const request_spec& r, std::vector<prefix_run>& out) const {
    out.clear();
    for (std::uint32_t k = 0; k < r.runs_count; ++k) out.push_back({runs[r.runs_begin + k].lineage, end_of(r, k)});
  }
};

} // namespace loopcast
