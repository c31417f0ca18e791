// Helpers shared by the report writers. Internal to loopcast.
#pragma once

#include "loopcast/scenario.hpp"

#include <string>

namespace loopcast::detail {

/// A CSV field: quoted (with doubled quotes) when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s);
/// 1234567 → "1,234,567".
std::string grouped(double x);

/// The outcome of an option over all its sessions: the common outcome, or "mixed".
std::string overall_outcome(const simulation_result& r);
/// Compactions and the first and largest context of a script.
struct script_summary {
  std::size_t requests = 0, compactions = 0;
  std::int64_t first_context = 0, max_context = 0, last_context = 0;
};
script_summary summarize_script(const session_script& s);

/// Cost per hour of wall clock, USD; 0 when the wall clock is 0.
double usd_per_hour(const simulation_result& r);
/// USD per 1,000 generated (output + reasoning) tokens.
double usd_per_1k_generated(const simulation_result& r);

/// Index of the first cloud and the first local option, or -1.
struct comparison_pair {
  int cloud = -1, local = -1;
};
comparison_pair find_comparison(const scenario_result& r);

} // namespace loopcast::detail
