// loopcast — the reports of `loopcast replay`: the recorded run and each option side by side.
#pragma once

#include "loopcast/replay.hpp"
#include "loopcast/report/document.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace loopcast {

void write_replay_text(std::ostream& os, const std::vector<recorded_trace>& traces, const replay_result& r);
document replay_document(const std::vector<recorded_trace>& traces, const replay_result& r);
std::string replay_to_json(const std::vector<recorded_trace>& traces, const replay_result& r, int indent = 2);

} // namespace loopcast
