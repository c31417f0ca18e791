// loopcast — the reports of `loopcast replay`: the recorded run and each option side by side.
#pragma once

#include "loopcast/replay.hpp"
#include "loopcast/report/document.hpp"
#include "loopcast/report/logs.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace loopcast {

/// The recorded run and each option side by side, the notes, then what the logs held
/// (write_logs_summary).
void write_replay_text(std::ostream& os, const std::vector<recorded_trace>& traces, const replay_result& r,
                       const logs_listing& listing = {});
document replay_document(const std::vector<recorded_trace>& traces, const replay_result& r);
std::string replay_to_json(const std::vector<recorded_trace>& traces, const replay_result& r, int indent = 2);

} // namespace loopcast
