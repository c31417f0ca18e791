// What the shaping of recorded sessions and their replay share. Internal to loopcast.
#pragma once

#include "loopcast/trace.hpp"

#include <vector>

namespace loopcast::detail {

/// Throws trace_error for a log of per-task totals only (nothing to replay).
void refuse_totals_only(const recorded_trace& t);
/// Each trace's clock origin: the earliest send over all the traces when every one is on an
/// absolute clock (or totals only), else each trace's own earliest send (0 without requests).
/// Linear in the requests' sessions, computed once for all traces.
std::vector<double> origins_of(const std::vector<recorded_trace>& traces);

} // namespace loopcast::detail
