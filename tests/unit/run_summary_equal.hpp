// Field-by-field equality of Monte Carlo rows (NaN equals NaN; struct padding is not compared).
#pragma once

#include "loopcast/scenario.hpp"

#include <cmath>

namespace loopcast::test_support {

inline bool same_number(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

inline bool same_row(const run_summary& a, const run_summary& b) {
  return a.seed == b.seed && a.option == b.option && same_number(a.first_429_s, b.first_429_s) &&
         a.wall_s == b.wall_s && a.stall_s == b.stall_s && a.stall_share == b.stall_share && a.cost_usd == b.cost_usd &&
         same_number(a.usd_per_task, b.usd_per_task) && a.tasks_per_hour == b.tasks_per_hour &&
         a.output_tps == b.output_tps && same_number(a.effective_tps_p50, b.effective_tps_p50) &&
         same_number(a.ttft_p50_s, b.ttft_p50_s) &&
         a.sessions == b.sessions && a.completed == b.completed && a.rate_limited == b.rate_limited &&
         a.attempts == b.attempts && a.sessions_died == b.sessions_died && a.requests_served == b.requests_served &&
         a.operation_hours == b.operation_hours && a.hours_with_429 == b.hours_with_429 &&
         same_number(a.stall_hours_per_hour, b.stall_hours_per_hour);
}

} // namespace loopcast::test_support
