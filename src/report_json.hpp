// JSON pieces shared by the report writers. Internal to loopcast.
#pragma once

#include "loopcast/scenario.hpp"

#include "json/writer.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

namespace loopcast::detail {

nlohmann::ordered_json tokens_json(const token_counts& t);
/// A number, or null when it is NaN (a statistic without samples).
inline nlohmann::ordered_json nan_or(double x) { return std::isnan(x) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(x); }
/// Today's UTC date as YYYY-MM-DD (a fitted preset's read_on).
std::string today_utc();
nlohmann::ordered_json pct_json(const percentiles& p);
/// effective_tps … cache_hit_rate, as in docs/output.md.
nlohmann::ordered_json metrics_json(const request_metrics& m);
/// One simulated option, as in docs/output.md.
nlohmann::ordered_json option_json(const option_result& o);

} // namespace loopcast::detail
