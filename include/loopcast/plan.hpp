// loopcast — a subscription plan: a flat monthly fee for usage capped by windows (docs/plans.md).
//
// A plan target (target_kind::plan) has no token prices: its buckets are the plan's windows (a
// 5-hour window that opens at the first request, a weekly cap, …) and its cost is the fee. A run
// is charged its share of the month's fee by wall clock, fee × wall / month, as a local machine's
// hardware is amortised: the price of the work if the plan were used around the clock at this
// pace. How far the plan's caps let that pace go over a month is plan_cost_of() (metrics.hpp).
#pragma once

#include <string>

namespace loopcast {

/// The length of a month for plan fees: a Gregorian year / 12 = 30.4375 days, in seconds.
inline constexpr double plan_month_s = 365.25 / 12 * 86400;

struct plan_terms {
  std::string name;            ///< the plan as its provider names it, e.g. "Claude Max 5x"
  double monthly_fee_usd = 0;  ///< USD per month
};

/// The share of a month's fee that `wall_s` seconds of wall clock take.
inline double plan_fee_share(const plan_terms& p, double wall_s) noexcept {
  return p.monthly_fee_usd * wall_s / plan_month_s;
}

} // namespace loopcast
