// loopcast — reports of a scenario run: human-readable text, JSON, and a per-attempt CSV.
// The JSON schema and the CSV columns are documented in docs/output.md.
#pragma once

#include "loopcast/scenario.hpp"

#include <iosfwd>
#include <string>

namespace loopcast {

/// The half-minute report of `loopcast run`.
void write_text_report(std::ostream& os, const scenario_result& r);
/// The whole result as JSON (schema version 1), pretty-printed with `indent` spaces (-1: compact).
std::string to_json(const scenario_result& r, int indent = 2);
/// One row per request attempt of every option.
void write_timeline_csv(std::ostream& os, const scenario_result& r);

} // namespace loopcast
