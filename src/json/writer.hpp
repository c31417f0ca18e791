// Writing JSON for output: the one serialiser every writer of the library uses (reports,
// importers' normalised logs, fitted presets). Internal to loopcast.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace loopcast::detail {

/// Serialises JSON for output. Strings from logs may hold invalid UTF-8 (a model name, a quoted
/// bad record): such bytes become U+FFFD instead of making the dump throw.
inline std::string dump(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace loopcast::detail
