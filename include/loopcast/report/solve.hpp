// loopcast — the report of `loopcast solve …`: the answer, how it was bracketed, every evaluation.
#pragma once

#include "loopcast/report/document.hpp"
#include "loopcast/solve.hpp"

#include <iosfwd>
#include <string>

namespace loopcast {

void write_solve_text(std::ostream& os, const scenario& s, const solve_result& r);
document solve_document(const scenario& s, const solve_result& r);
std::string solve_to_json(const scenario& s, const solve_result& r, int indent = 2);

} // namespace loopcast
