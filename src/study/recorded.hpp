// What the shaping of recorded sessions and their replay share. Internal to loopcast.
#pragma once

#include "loopcast/trace.hpp"

#include <vector>

namespace loopcast::detail {

/// Throws trace_error for a log of per-task totals only (nothing to replay).
void refuse_totals_only(const recorded_trace& t);
/// The clock origin: the earliest send over traces on an absolute clock, each trace's own otherwise.
double origin_of(const std::vector<recorded_trace>& traces, const recorded_trace& t);

} // namespace loopcast::detail
