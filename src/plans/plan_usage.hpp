// The pieces plan_fit.cpp and plan_backtest.cpp share (plan_fit.hpp): accounts, their usage under
// every counting rule, the windows their percentages measured, and the robust fit of samples.
#pragma once

#include "loopcast/plan_fit.hpp"

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace loopcast::detail {

/// A plan's usage by one account: requests in time order, each counted under every rule, with
/// prefix sums so the usage of any span costs two binary searches.
class rule_usage {
public:
  rule_usage() = default;
  /// (time, counted tokens per rule), any order; every row holds `rules` values.
  rule_usage(std::vector<std::pair<double, std::vector<double>>> rows, std::size_t rules);
  std::size_t size() const noexcept { return t_.size(); }
  std::size_t rules() const noexcept { return rules_; }
  double time(std::size_t i) const noexcept { return t_[i]; }
  std::size_t lower(double t) const noexcept;  ///< the first request at or after t
  std::size_t upper(double t) const noexcept;  ///< the first request after t
  /// Counted tokens of requests [i, j) under rule k.
  double sum(std::size_t k, std::size_t i, std::size_t j) const noexcept {
    return j > i ? cum_[j * rules_ + k] - cum_[i * rules_ + k] : 0.0;
  }
  /// Requests with times in [t0, t1).
  double between(std::size_t k, double t0, double t1) const noexcept { return sum(k, lower(t0), lower(t1)); }

private:
  std::size_t rules_ = 0;
  std::vector<double> t_, cum_;
};

/// A window of measured percentages: (time, used percent) of its snapshots, in time order.
struct percent_window {
  std::string source;
  double period_s = 0, resets_at = 0;
  std::vector<std::pair<double, double>> points;
};

/// One window of a rate-limit snapshot (Codex's `primary` or `secondary`): its percentage used,
/// its length (window_minutes, or limit_window_seconds; 299 and 10079 minutes, as older Codex
/// wrote them, are read as 300 and 10080) and when it resets (resets_at or reset_at, Unix s, or
/// resets_in_seconds / reset_after_seconds after the snapshot).
struct snapshot_window {
  int slot = 0;  ///< 0 primary, 1 secondary
  double used_percent = 0, period_s = 0, resets_at = 0;
};
/// The windows of one snapshot; `invalid` counts windows present but unreadable.
std::vector<snapshot_window> read_snapshot_windows(const rate_limit_snapshot& s, std::size_t& invalid);

/// An account with what the fit and the backtest need of it.
struct account_data {
  plan_account summary;
  std::vector<cap_rule> rules;
  rule_usage by_send, by_end;             ///< with estimated outputs
  rule_usage by_send_logged;              ///< with the logged outputs
  std::vector<plan_wall> walls;           ///< distinct, in time order
  std::vector<std::string> wall_sources;  ///< "file:line" of each
  std::vector<percent_window> windows;    ///< measured percentages, per window, in time order of their start
  std::string evidence;                   ///< "used_percent" or "statusline" for the windows
};

/// Splits the traces into accounts (Claude Code: by the logins and /status outputs in force;
/// Codex: rollouts that share a window are one account) with their usage. Notes what was left out.
std::vector<account_data> read_accounts(std::span<const recorded_trace> traces, std::span<const statusline_snapshot> statusline,
                                        std::vector<std::string>& notes);

/// The robust fit of one rule's samples (100 × usage / points each; plan_fit.hpp): fills `fit`
/// and, when `judge` is given, each sample's outlier mark (under the caps `caps`).
rule_fit fit_samples(const cap_rule& rule, const std::vector<double>& caps, std::vector<cap_sample>* judge = nullptr);

/// The samples of one account's window of `period_s`: its walls and its percentage windows.
std::vector<cap_sample> window_samples(const account_data& a, double period_s, double before = std::numeric_limits<double>::infinity(),
                                       bool logged_output = false);
/// The fit of one window: every rule, the best first.
window_fit fit_window(const account_data& a, double period_s, double before = std::numeric_limits<double>::infinity());

std::string window_label(double period_s);

/// The median (of two middle values, their mean); NaN for none.
double median_of(std::vector<double> v);

} // namespace loopcast::detail
