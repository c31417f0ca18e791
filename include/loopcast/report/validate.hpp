// loopcast — the reports of `loopcast validate` (docs/output.md, docs/validation.md): replays
// against held-out recordings, and fitted workloads against real sessions.
#pragma once

#include "loopcast/report/document.hpp"
#include "loopcast/validate.hpp"
#include "loopcast/workload_fit.hpp"

#include <string>

namespace loopcast {

document validation_document(const validation_result& r);
std::string validation_to_json(const validation_result& r, int indent = 2);
document workload_validation_document(const workload_validation& r);
std::string workload_validation_to_json(const workload_validation& r, int indent = 2);

} // namespace loopcast
