// Fuzz entry points, shared by the libFuzzer executables (tests/fuzz, `cmake --preset fuzz`) and
// the regression test that replays every saved input in the normal build.
//
// Each consumes arbitrary bytes. Returning normally or throwing loopcast::error (a reported
// problem) is correct behaviour; anything else — another exception, a crash, a sanitizer report,
// a hang, or a violated invariant (checked here: e.g. a NaN in a result) — is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace loopcast::fuzz {

void preset(const std::uint8_t* data, std::size_t size);          ///< first byte picks the preset kind
void claude_code(const std::uint8_t* data, std::size_t size);
void codex(const std::uint8_t* data, std::size_t size);
void kv_cache_tester(const std::uint8_t* data, std::size_t size);
void loopcast_jsonl(const std::uint8_t* data, std::size_t size);
void swe_agent(const std::uint8_t* data, std::size_t size);
void opencode_rows(const std::uint8_t* data, std::size_t size);   ///< a message row, then part rows, one per line
void detect(const std::uint8_t* data, std::size_t size);          ///< format detection + import
void price_list(const std::uint8_t* data, std::size_t size);      ///< LiteLLM / models.dev price lists
void rate_limit_headers(const std::uint8_t* data, std::size_t size);  ///< header captures and 429 messages
/// Two bytes pick a target (oversize rule, window, client, engine) and the replay's options; the
/// rest is a log of any format, imported, measured and replayed (the simulator's path).
void replay(const std::uint8_t* data, std::size_t size);
/// A byte (segments, timeline), then a route option (docs/routing.md: its targets, spill and
/// cooldown), run for three sessions: shares add up, and each attempt stays in its segment.
void route(const std::uint8_t* data, std::size_t size);

/// Two bytes pick a plan window or token bucket and the forecast's options; the rest is a log,
/// imported and forecast on it (bounded work, ordered quantiles, censored draws never "no wall").
void forecast(const std::uint8_t* data, std::size_t size);

/// The entry point called `name` (as the executables and regression folders are named), or nullptr.
using entry = void (*)(const std::uint8_t*, std::size_t);
entry find(std::string_view name);

} // namespace loopcast::fuzz
