// loopcast — the reports of `loopcast run`: the text report, the whole result as JSON, and one
// CSV row per request attempt (docs/output.md).
#pragma once

#include "loopcast/report/document.hpp"
#include "loopcast/scenario.hpp"

#include <iosfwd>
#include <span>
#include <string>

namespace loopcast {

/// The half-minute report of `loopcast run`.
void write_text_report(std::ostream& os, const scenario_result& r);
/// The whole result (schema version 1).
document run_document(const scenario_result& r);
/// run_document as JSON, pretty-printed with `indent` spaces (-1: compact).
std::string to_json(const scenario_result& r, int indent = 2);
/// One row per request attempt of every option.
void write_timeline_csv(std::ostream& os, const scenario_result& r);
void write_timeline_csv(std::ostream& os, std::span<const option_result> options);

} // namespace loopcast
