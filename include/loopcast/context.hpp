// loopcast — what an agent does when its conversation outgrows the model's context window.
//
// Coding agents compact: once the prompt reaches a fraction of the window, they send one more
// request that reads the history and writes a summary, and continue from the system prompt, the
// task and that summary. Their thresholds (docs/agents.md has the sources):
//   Claude Code   once its last response's prompt + output reaches the window minus 33,000
//                 (the auto-compact window minus a fixed buffer: about 83.5% of 200K; a recorded
//                 compaction request in tests/data read 169,290 of 200,000 tokens)
//   opencode      when input + cache reads + output exceed the window minus the output reserve
//                 (min(model output limit, 32,000))
//   Codex         model_auto_compact_token_limit, 90% of the window by default
// The synthetic workload generator (workload.hpp) and replays (replay.hpp) use the same rule.
#pragma once

#include "loopcast/names.hpp"
#include <cstdint>
#include <optional>
#include <string_view>

namespace loopcast {

/// What a replay does with a recorded prompt that does not fit the target's window.
enum class context_policy : std::uint8_t {
  compact,   ///< at compact_at × window the agent compacts (a summary request) and continues
  truncate,  ///< the oldest history is dropped so that prompt + output fit (the cache misses after it)
  fail       ///< the request overflows: the session stops (context_overflow)
};
template <>
struct enum_names<context_policy> {
  static constexpr std::array table{enum_entry{context_policy::compact, "compact"},
                                    enum_entry{context_policy::truncate, "truncate"},
                                    enum_entry{context_policy::fail, "fail"}};
};

/// Default compaction threshold, as a fraction of the window (Claude Code's, see above).
inline constexpr double default_compact_at = 0.83;
/// Default summary length of a compaction request, in tokens (an assumption: agents do not log it).
inline constexpr std::int64_t default_summary_tokens = 4000;

/// The prompt size, in tokens, at which an agent with threshold `at_fraction` compacts.
inline double compaction_threshold(std::int64_t window_tokens, double at_fraction) noexcept {
  return at_fraction * static_cast<double>(window_tokens);
}
/// Whether a prompt of `prompt_tokens` calls for a compaction first.
inline bool needs_compaction(std::int64_t prompt_tokens, std::int64_t window_tokens, double at_fraction) noexcept {
  return static_cast<double>(prompt_tokens) >= compaction_threshold(window_tokens, at_fraction);
}

} // namespace loopcast
