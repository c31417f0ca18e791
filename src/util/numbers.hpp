// loopcast — constants the compiled library's sources share (private).
#pragma once

#include <limits>

namespace loopcast::detail {

/// A statistic without samples, a figure that does not apply: NaN (null in JSON, empty in CSV).
inline constexpr double nan = std::numeric_limits<double>::quiet_NaN();

} // namespace loopcast::detail
