// loopcast — the reports of `loopcast sweep`: one line per grid point and option; JSON with every
// point's distributions; CSV with one row per run and a column per swept parameter.
#pragma once

#include "loopcast/report/document.hpp"
#include "loopcast/sweep.hpp"

#include <iosfwd>
#include <string>

namespace loopcast {

void write_sweep_text(std::ostream& os, const sweep_spec& s, const sweep_result& r);
document sweep_document(const sweep_spec& s, const sweep_result& r);
std::string sweep_to_json(const sweep_spec& s, const sweep_result& r, int indent = 2);
void write_sweep_csv(std::ostream& os, const sweep_spec& s, const sweep_result& r);

} // namespace loopcast
