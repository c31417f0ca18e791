// Statusline snapshots as the rate-limit snapshots plan inference reads. Internal to loopcast.
#pragma once

#include "loopcast/limits_inference.hpp"

#include <span>
#include <vector>

namespace loopcast::detail {

/// Each snapshot in Codex's form: {"primary": {"used_percent", "window_minutes": 300, "resets_at"},
/// "secondary": {… 10080 …}}, so that one reader bounds the caps from both.
std::vector<rate_limit_snapshot> statusline_as_rate_limits(std::span<const statusline_snapshot> snapshots);

} // namespace loopcast::detail
