// A subscription plan's caps learnt from agent logs (limits_inference.hpp, docs/plans.md).
#include "loopcast/limits_inference.hpp"
#include "loopcast/errors.hpp"

#include "plans/plan_usage.hpp"
#include "statusline/statusline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace loopcast {

namespace {

// The rules of what a cap may count, as weights of input, cache_read, cache_write, output, reasoning.
struct counting_rule {
  const char* name;
  std::array<double, 5> w;
};
constexpr std::array<counting_rule, 3> rules{{{"all tokens", {1, 1, 1, 1, 1}},
                                              {"all but cache reads", {1, 0, 1, 1, 1}},
                                              {"cache reads at 0.1", {1, 0.1, 1, 1, 1}}}};

double counted(const counting_rule& r, const token_counts& t) {
  return r.w[0] * static_cast<double>(t.input) + r.w[1] * static_cast<double>(t.cache_read) +
         r.w[2] * static_cast<double>(t.cache_writes()) + r.w[3] * static_cast<double>(t.output) +
         r.w[4] * static_cast<double>(t.reasoning);
}

std::string window_name(double period_s) {
  if (period_s == 5 * 3600.0) return "5-hour";
  if (period_s == 7 * 86400.0) return "weekly";
  return fmt::format("{:g}-minute", period_s / 60);
}

using per_rule = std::array<double, rules.size()>;

struct observation {
  double period_s;
  per_rule low{}, high{};
};

// Requests in time order with running sums of what each rule counts: the usage in any span in
// O(log n) (sorted once, n log n).
class usage_index {
public:
  // Each request by the time that orders it (its send, or its end).
  explicit usage_index(std::vector<std::pair<double, token_counts>> reqs) {
    std::sort(reqs.begin(), reqs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    t_.reserve(reqs.size());
    cum_.assign(reqs.size() + 1, per_rule{});
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      t_.push_back(reqs[i].first);
      for (std::size_t k = 0; k < rules.size(); ++k) cum_[i + 1][k] = cum_[i][k] + counted(rules[k], reqs[i].second);
    }
  }
  std::size_t size() const noexcept { return t_.size(); }
  double time(std::size_t i) const noexcept { return t_[i]; }
  // The first request at or after t (lower) or after t (upper).
  std::size_t lower(double t) const { return static_cast<std::size_t>(std::lower_bound(t_.begin(), t_.end(), t) - t_.begin()); }
  std::size_t upper(double t) const { return static_cast<std::size_t>(std::upper_bound(t_.begin(), t_.end(), t) - t_.begin()); }
  // Usage of requests [i, j) by rule k.
  double sum(std::size_t k, std::size_t i, std::size_t j) const noexcept { return j > i ? cum_[j][k] - cum_[i][k] : 0.0; }

private:
  std::vector<double> t_;
  std::vector<per_rule> cum_;
};

// One window of a Codex log: the first and last snapshot with the same reset time.
struct codex_window {
  double period_s = 0, resets_at = 0;
  double t0 = 0, p0 = 0, t1 = 0, p1 = 0;
  int snapshots = 0;
  std::vector<std::pair<double, double>> points;  // (t, percentage) of each snapshot, in order
};

// The windows of a run of percentage snapshots (Codex's `primary`/`secondary`, read as the fit
// reads them: detail::read_snapshot_windows): each from its first to its last snapshot with the
// same reset time.
std::vector<codex_window> percent_windows(const std::vector<rate_limit_snapshot>& snapshots, std::size_t& invalid) {
  std::vector<std::pair<double, std::vector<detail::snapshot_window>>> snaps;  // each snapshot read once, for both windows
  for (const auto& snap : snapshots) snaps.emplace_back(snap.t, detail::read_snapshot_windows(snap, invalid));
  std::vector<codex_window> windows;
  for (int slot = 0; slot < 2; ++slot) {
    std::optional<codex_window> cur;
    auto close = [&] {
      if (cur && cur->snapshots >= 2) windows.push_back(*cur);
      cur.reset();
    };
    for (const auto& [t_snap, ws] : snaps)
      for (const auto& w : ws) {
        if (w.slot != slot) continue;
        // The same window while its reset time holds (it jitters by a second between snapshots).
        if (!cur || cur->period_s != w.period_s || std::abs(cur->resets_at - w.resets_at) > 60 || w.used_percent < cur->p1) {
          close();
          cur = codex_window{w.period_s, w.resets_at, t_snap, w.used_percent, t_snap, w.used_percent, 0, {}};
        }
        cur->t1 = t_snap;
        cur->p1 = w.used_percent;
        cur->points.emplace_back(t_snap, w.used_percent);
        ++cur->snapshots;
      }
    close();
  }
  return windows;
}

// Within one window, the tokens per percentage point between snapshots at least 5 points apart:
// where the fastest and slowest of them differ more than 3-fold, what a point costs changed (a
// rule change, or usage the logs do not hold). The first such time, or NaN.
double step_change_in(const codex_window& w, const usage_index& by_end) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0, at = std::numeric_limits<double>::quiet_NaN();
  std::size_t from = 0;
  for (std::size_t k = 1; k < w.points.size(); ++k) {
    const auto [t0, p0] = w.points[from];
    const auto [t1, p1] = w.points[k];
    if (p1 - p0 < 5) continue;
    const double per_point = by_end.sum(0, by_end.upper(t0), by_end.upper(t1)) / (p1 - p0);
    if (per_point > 0) {
      const bool was_set = std::isfinite(lo);
      lo = std::min(lo, per_point);
      hi = std::max(hi, per_point);
      if (was_set && hi > 3 * lo && std::isnan(at)) at = t0;
    }
    from = k;
  }
  return at;
}

// Windows with their percentage used (Codex's rate limits, Claude Code's statusline snapshots):
// between the first and last snapshot of a window the logged requests used ΔU while the
// percentage rose by Δp (whole numbers: ±1.5 in all).
void percent_observations(const std::string& label, const std::vector<rate_limit_snapshot>& snapshots,
                          const usage_index& by_end, std::vector<observation>& out, std::vector<std::string>& notes) {
  std::size_t invalid = 0;
  const auto windows = percent_windows(snapshots, invalid);
  if (invalid > 0)
    notes.push_back(fmt::format("{}: {} window snapshot{} without a used_percent from 0 to 100, a positive "
                                "window_minutes and a resets_at within ±10^11 s: not used",
                                label, invalid, invalid == 1 ? "" : "s"));
  if (windows.empty()) return;
  std::map<std::string, int> counts;
  int without_usage = 0;
  for (const auto& w : windows) {
    observation o{w.period_s, {}, {}};
    const double dp = w.p1 - w.p0;
    const std::size_t i = by_end.upper(w.t0), j = by_end.upper(w.t1);  // requests ending in (t0, t1]
    without_usage += j == i;
    for (std::size_t k = 0; k < rules.size(); ++k) {
      const double all = by_end.sum(k, i, j);
      const double last = j > i ? by_end.sum(k, j - 1, j) : 0.0;  // the last to end may not show yet
      o.low[k] = 100 * (all - last) / (dp + 1.5);
      // A window in which the logs hold nothing this rule counts bounds nothing: whatever moved its
      // percentage was used elsewhere (another machine, the web), not "a cap of 0".
      o.high[k] = dp > 1.5 && all > 0 ? 100 * all / (dp - 1.5) : std::numeric_limits<double>::infinity();
    }
    out.push_back(o);
    ++counts[window_name(w.period_s)];
    if (const double at = step_change_in(w, by_end); !std::isnan(at))
      notes.push_back(fmt::format("{}: in the {} window that resets at {:.0f} (Unix s), a percentage point cost more than "
                                  "3 times as many tokens from {:.0f} on as before: the plan's rule changed, or usage "
                                  "the logs do not hold (another machine, claude.ai) joined",
                                  label, window_name(w.period_s), w.resets_at, at));
  }
  if (without_usage > 0)
    notes.push_back(fmt::format("{}: {} window{} in which the logs hold no usage bound nothing", label, without_usage,
                                without_usage == 1 ? "" : "s"));
  std::string list;
  for (const auto& [name, n] : counts)
    list += fmt::format("{}{} {} window{}", list.empty() ? "" : ", ", n, name, n == 1 ? "" : "s");
  notes.push_back(fmt::format("{}: used_percent in {} ({} snapshots)", label, list, snapshots.size()));
}

void codex_observations(const recorded_trace& t, std::vector<observation>& out, std::vector<std::string>& notes) {
  // The trace's own requests by their end: what a window's percentages saw.
  std::vector<std::pair<double, token_counts>> reqs;
  for (const auto& s : t.sessions)
    for (const auto& q : s.requests) reqs.emplace_back(q.t_end, q.tokens);
  percent_observations(t.file, t.rate_limits, usage_index(std::move(reqs)), out, notes);
}

// Claude Code's cut-offs: the window that refused a request had admitted what came before it since
// it opened (a lower bound: before the last admitted request; an upper bound: with it).
void cutoff_observations(std::span<const recorded_trace> traces, const usage_index& by_send,
                         std::vector<observation>& out, std::vector<std::string>& notes) {
  std::size_t used = 0, unplaced = 0;
  double first = std::numeric_limits<double>::infinity(), last = -first;
  for (const auto& t : traces) {
    if (!t.absolute_clock) continue;
    for (const auto& c : t.walls) {
      if (wall_period_s(c.kind) == 0 || std::isnan(c.resets_at_unix)) continue;
      observation o{wall_period_s(c.kind), {}, {}};
      const std::size_t end = by_send.lower(c.t);  // requests sent before the cut-off
      if (c.kind == wall_kind::five_hour) {
        const double start = c.resets_at_unix - 5 * 3600.0;
        if (!(c.t >= start && c.t < c.resets_at_unix)) {
          ++unplaced;
          continue;
        }
        const std::size_t begin = by_send.lower(start);
        for (std::size_t k = 0; k < rules.size(); ++k) {
          o.low[k] = end > begin ? by_send.sum(k, begin, end - 1) : 0.0;  // what it held when it admitted the last
          o.high[k] = by_send.sum(k, begin, end);
        }
      } else {
        // A week whose start is not known lies within the week before the cut-off: an upper bound.
        const std::size_t begin = by_send.lower(c.t - wall_period_s(c.kind));
        for (std::size_t k = 0; k < rules.size(); ++k) {
          o.low[k] = 0;
          o.high[k] = by_send.sum(k, begin, end);
        }
      }
      out.push_back(o);
      ++used;
      first = std::min(first, c.t);
      last = std::max(last, c.t);
    }
  }
  if (used > 0)
    notes.push_back(fmt::format("{} usage-limit cut-off{} read (from {:.0f} to {:.0f}, Unix s)", used, used == 1 ? "" : "s",
                                first, last));
  if (unplaced > 0)
    notes.push_back(fmt::format("{} cut-off{} whose window reopens more than 5 hours after it: not a 5-hour window's, "
                                "not used", unplaced, unplaced == 1 ? "" : "s"));
}

// Usage alone bounds every cap from below. A plan admits a request while its window holds less than
// the cap, so a 5-hour window held more than the cap's worth only through its last request: the cap
// is above what the window held before its last. Windows open at the hour of the first request after
// the last one closed, as Claude's plans count, except where a cut-off placed one (`known`: window
// starts). A week whose reset the logs do not show overlaps at most two of the account's weeks, so a
// weekly cap is above half of what any 7 days held before their last request.
void usage_observations(const usage_index& by_send, std::vector<double> known, std::vector<observation>& out,
                        std::vector<std::string>& notes) {
  if (by_send.size() == 0) return;
  constexpr double five_h = 5 * 3600.0;
  std::sort(known.begin(), known.end());
  observation five{five_h, {}, {}}, week{7 * 86400.0, {}, {}};
  for (auto& h : five.high) h = std::numeric_limits<double>::infinity();
  for (auto& h : week.high) h = std::numeric_limits<double>::infinity();
  auto before_last = [&](observation& o, std::size_t i, std::size_t j, double scale) {
    if (j <= i + 1) return;
    for (std::size_t k = 0; k < rules.size(); ++k) o.low[k] = std::max(o.low[k], by_send.sum(k, i, j - 1) * scale);
  };
  std::size_t blocks = 0;
  for (std::size_t i = 0; i < by_send.size();) {
    const double t = by_send.time(i);
    // A window a cut-off placed, if one holds this request; else one opened at its hour, closed
    // early where a placed one begins.
    const auto next = std::upper_bound(known.begin(), known.end(), t);
    double start = first_use_window_start(window_anchor::first_use_hour, t, 0), end = start + five_h;
    if (next != known.begin() && *(next - 1) + five_h > t) {
      start = *(next - 1);
      end = start + five_h;
    } else if (next != known.end()) {
      end = std::min(end, *next);
    }
    const std::size_t j = std::max(i + 1, by_send.lower(end));
    before_last(five, i, j, 1.0);
    ++blocks;
    i = j;
  }
  for (std::size_t i = 0, j = 0; i < by_send.size(); ++i) {  // every 7 days from a request's send
    j = std::max(j, i);
    while (j < by_send.size() && by_send.time(j) < by_send.time(i) + week.period_s) ++j;
    before_last(week, i, j, 0.5);
  }
  out.push_back(five);
  out.push_back(week);
  notes.push_back(fmt::format("usage: {} request{} in {} 5-hour window{} bound the caps from below", by_send.size(),
                              by_send.size() == 1 ? "" : "s", blocks, blocks == 1 ? "" : "s"));
}

} // namespace

plan_inference infer_plan_caps(std::span<const recorded_trace> traces, std::span<const statusline_snapshot> statusline,
                               const std::string& statusline_file) {
  plan_inference r;
  std::vector<observation> obs;
  std::vector<std::pair<double, token_counts>> dated, claude_ends;
  for (const auto& t : traces) {
    if (!t.rate_limits.empty()) codex_observations(t, obs, r.notes);
    if (!t.absolute_clock) continue;
    for (const auto& s : t.sessions)
      for (const auto& q : s.requests) {
        dated.emplace_back(q.t_send, q.tokens);
        if (t.format == trace_format::claude_code) claude_ends.emplace_back(q.t_end, q.tokens);
      }
  }
  if (!statusline.empty()) {
    // The statusline's windows are the account's: every Claude Code log's requests count in them.
    percent_observations(statusline_file.empty() ? std::string("statusline") : statusline_file,
                         detail::statusline_as_rate_limits(statusline), usage_index(std::move(claude_ends)), obs, r.notes);
  }
  const usage_index by_send(std::move(dated));
  cutoff_observations(traces, by_send, obs, r.notes);
  std::vector<double> known;  // the 5-hour windows the cut-offs placed
  for (const auto& t : traces)
    if (t.absolute_clock)
      for (const auto& c : t.walls)
        if (c.kind == wall_kind::five_hour && c.t >= c.resets_at_unix - 5 * 3600.0 && c.t < c.resets_at_unix)
          known.push_back(c.resets_at_unix - 5 * 3600.0);
  usage_observations(by_send, std::move(known), obs, r.notes);
  if (obs.empty())
    throw trace_error(traces.empty() ? std::string("(no logs)") : traces.front().file, 0,
                      "no dated requests, rate-limit snapshots (Codex) or usage-limit cut-offs (Claude Code) to learn a "
                      "plan's caps from");
  std::map<double, std::vector<const observation*>> by_period;
  for (const auto& o : obs) by_period[o.period_s].push_back(&o);
  for (const auto& [period, list] : by_period) {
    bool bounded_above = false;
    for (std::size_t k = 0; k < rules.size(); ++k) {
      plan_cap_interval c;
      c.window = window_name(period);
      c.period_s = period;
      c.counts = rules[k].name;
      for (const auto* o : list) {
        c.low = std::max(c.low, o->low[k]);
        c.high = std::min(c.high, o->high[k]);
      }
      c.observations = static_cast<std::int32_t>(list.size());
      c.consistent = c.low <= c.high;
      bounded_above = bounded_above || std::isfinite(c.high);
      r.caps.push_back(c);
    }
    if (!bounded_above)
      r.notes.push_back(fmt::format("nothing bounds the {} cap from above: a cut-off in the logs (a \"limit reached\" "
                                    "message), statusline snapshots of the plan's percentage used (docs/plans.md), or "
                                    "Codex's used_percent would",
                                    window_name(period)));
  }
  return r;
}

} // namespace loopcast
