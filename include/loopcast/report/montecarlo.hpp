// loopcast — the reports of `loopcast montecarlo`: per option, quantiles with their confidence
// intervals (text, JSON), and one CSV row per run (docs/output.md).
#pragma once

#include "loopcast/montecarlo.hpp"
#include "loopcast/report/document.hpp"

#include <iosfwd>
#include <span>
#include <string>

namespace loopcast {

void write_montecarlo_text(std::ostream& os, const scenario& s, const montecarlo_result& r);
document montecarlo_document(const scenario& s, const montecarlo_result& r);
std::string montecarlo_to_json(const scenario& s, const montecarlo_result& r, int indent = 2);
/// One CSV row per run (seed × option): the run_summary columns with the option's label.
void write_runs_csv(std::ostream& os, const scenario& s, std::span<const run_summary> rows);

} // namespace loopcast
