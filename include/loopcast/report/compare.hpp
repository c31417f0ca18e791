// loopcast — the report of `loopcast compare`: one row per option, the contract's verdict and the
// usability factors.
#pragma once

#include "loopcast/compare.hpp"
#include "loopcast/report/document.hpp"

#include <iosfwd>
#include <string>

namespace loopcast {

void write_compare_text(std::ostream& os, const compare_result& r);
document compare_document(const compare_result& r);
std::string compare_to_json(const compare_result& r, int indent = 2);

} // namespace loopcast
