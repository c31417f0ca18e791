// loopcast — the reports of a plan's fitted caps and of their backtest (`limits infer --logs`,
// `limits backtest`; docs/plans.md, docs/validation.md): text for a person, JSON for a program.
#pragma once

#include "loopcast/plan_choice.hpp"
#include "loopcast/plan_fit.hpp"

#include <string>
#include <vector>

namespace loopcast {

/// The fit as text: per account, per window, the cap under the best rule with its interval, the
/// spread, the outliers named, levels or a change point; `verbose` adds every rule and sample.
std::string plan_fit_text(const plan_fit& f, bool verbose = false);
std::string plan_fit_to_json(const plan_fit& f, int indent = 2);
std::string plan_backtest_text(const plan_backtest& b);
std::string plan_backtest_to_json(const plan_backtest& b, int indent = 2);
/// `loopcast plans`: the verdict, then one row per option (its $ a month, hours a week waiting for
/// resets with the caps' interval, the first waits on the clock of `time_zone` — empty: the
/// machine's), then where each option's caps come from.
std::string plan_choice_text(const plan_choice& c, const std::string& time_zone = {});
std::string plan_choice_to_json(const plan_choice& c, int indent = 2);
/// Several agents' comparisons (`loopcast plans --json`): {"agents": [one plan_choice_to_json each]}.
std::string plan_choices_to_json(const std::vector<plan_choice>& cs, int indent = 2);

} // namespace loopcast
