// loopcast — inverse questions, answered by searching over the simulator.
//
// Each question evaluates the scenario (one option, or all of them) over a fixed set of seeds
// (scenario.seed + 0, 1, …) at trial values of one quantity, assumes the criterion is monotone in
// it, brackets the answer by doubling (or halving) and then bisects. The result lists every
// evaluation, so users see how the answer was bracketed.
//
//   max agents      the most sessions (of a one-group fleet) for which the fraction of seeds with
//                   a 429 within the horizon stays <= max_p429;
//   min limit       the smallest factor on the option's limits (all buckets, or one) for which
//                   the mean stall share stays <= max_stall_share and no session dies;
//   cheapest option the option with the lowest mean $ per task among those meeting the same
//                   stall criterion (give the tiers to compare as the scenario's options);
//   break-even      the utilisation u at which a local target's cost per task, with its hardware
//                   amortised and idle power while unused, equals a cloud option's:
//                      local(u) = e + (A + (1 − u)·I) / (u·T)
//                   with e the electricity per task and T the tasks per hour while busy (both
//                   simulated), A = hardware_usd / lifetime_hours and I = idle power × price per
//                   hour; so u* = (A + I) / (T·(c − e) + I), c = the cloud's $ per task.
#pragma once

#include "loopcast/montecarlo.hpp"
#include "loopcast/scenario.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loopcast {

/// One evaluation during a search.
struct solve_step {
  double x = 0;          ///< the trial value (agents, limit factor, option index, utilisation)
  std::string label;     ///< what x means here, e.g. "5 agents", "×1.25", an option label
  estimate value;        ///< the criterion's value with its interval (P(429), mean stall share, …)
  double usd_per_task = 0;  ///< mean over the seeds (NaN when no task completed)
  bool meets = false;    ///< whether the criterion held
};

struct solve_result {
  std::string question;   ///< e.g. "max-agents"
  bool found = false;     ///< false: no trial value met the criterion (the text says why)
  double answer = 0;      ///< agents, factor, option index or utilisation
  std::string answer_text;
  double bracket_lo = 0, bracket_hi = 0;  ///< the answer lies in [lo, hi] (as far as the seeds can tell)
  std::vector<solve_step> steps;          ///< in evaluation order
  std::vector<std::string> notes;
};

struct solve_common {
  std::size_t option = 0;       ///< the option evaluated (max agents, min limit)
  std::int32_t seeds = 20;      ///< per evaluation
  unsigned threads = 1;         ///< 0: one per core
};

struct max_agents_query : solve_common {
  double max_p429 = 0.1;        ///< fraction of seeds with a 429 within the horizon
  double horizon_s = 3600;
  std::int32_t max_agents = 4096;
};

struct min_limit_query : solve_common {
  double max_stall_share = 0.05;
  std::string bucket;           ///< empty: every bucket scaled by the same factor
  double relative_tolerance = 0.01;
  double max_factor = 1e4;
};

struct cheapest_query : solve_common {
  double max_stall_share = 0.05;
};

/// For breakeven_query::local and ::cloud: the scenario's first option of that kind.
inline constexpr std::size_t first_of_kind = static_cast<std::size_t>(-1);

struct breakeven_query : solve_common {
  std::size_t local = first_of_kind;  ///< the local option (needs power.hardware_usd and lifetime_hours)
  std::size_t cloud = first_of_kind;  ///< the cloud option
  double hardware_usd = 0;      ///< > 0: replaces the local target's power.hardware_usd
  double lifetime_hours = 0;    ///< > 0: replaces its power.lifetime_hours
};

/// Each throws simulation_error for a question the scenario cannot answer (no such option or
/// bucket, a local target without hardware cost, a fleet of several groups for max agents, …).
solve_result solve_max_agents(const scenario& s, const max_agents_query& q);
solve_result solve_min_limit(const scenario& s, const min_limit_query& q);
solve_result solve_cheapest_option(const scenario& s, const cheapest_query& q);
solve_result solve_breakeven(const scenario& s, const breakeven_query& q);

} // namespace loopcast
