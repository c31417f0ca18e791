// The reports of a plan's fitted caps and their backtest (report/plans.hpp; docs/output.md).
#include "loopcast/report/plans.hpp"

#include "json/writer.hpp"
#include "util/text.hpp"
#include "util/time_zone.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace loopcast {

namespace {

using json = nlohmann::ordered_json;

json num(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

std::string when(const detail::zone& z, double t) {
  const auto c = z.local(t);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}", c.year, c.month, c.day, c.hour, c.minute);
}
std::string tokens(double x) {
  if (!std::isfinite(x)) return "-";
  if (x >= 1e6) return fmt::format("{:.2f}M", x / 1e6);
  if (x >= 1e4) return fmt::format("{:.0f}K", x / 1e3);
  return detail::grouped(x);
}
std::string share(double x) { return std::isfinite(x) ? fmt::format("{:.0f}%", 100 * x) : std::string("-"); }
std::string minutes(double s) { return std::isfinite(s) ? fmt::format("{:.0f} min", s / 60) : std::string("-"); }

json rule_json(const rule_fit& r) {
  return {{"rule", r.rule.name()}, {"cache_read", r.rule.cache_read}, {"opus", r.rule.opus}, {"haiku", r.rule.haiku},
          {"samples", r.samples}, {"inliers", r.inliers}, {"cap", num(r.cap)}, {"cap_low", num(r.cap_low)},
          {"cap_high", num(r.cap_high)}, {"p10", num(r.p10)}, {"p90", num(r.p90)}, {"sigma", num(r.sigma)},
          {"explained", num(r.explained)}};
}

void print_window(std::string& out, const window_fit& w, const detail::zone& z, bool verbose) {
  if (w.rules.empty()) return;
  const auto& b = w.rules.front();
  out += fmt::format("  {} window, from {} ({} sample{}):\n", w.window, w.evidence, w.samples.size(),
                     w.samples.size() == 1 ? "" : "s");
  if (!(b.cap > 0)) {
    out += "    no cap: no sample logged any usage\n";
    return;
  }
  if (std::isnan(b.sigma))
    out += fmt::format("    cap {} tokens ({}), from {} window{}: too few to give an interval\n", tokens(b.cap),
                       b.rule.name(), b.inliers, b.inliers == 1 ? "" : "s");
  else
    out += fmt::format("    cap {} tokens (80% interval {}–{}), counting {}\n"
                       "    windows vary: 80% of them between {} and {} (σ {:.2f}); {} of the samples explained\n",
                       tokens(b.cap), tokens(b.cap_low), tokens(b.cap_high), b.rule.name(), tokens(b.p10), tokens(b.p90),
                       b.sigma, share(b.explained));
  out += fmt::format("    best rule: {}\n", w.why_best);
  if (std::isfinite(w.cap_logged_output) && std::abs(w.cap_logged_output - b.cap) > 0.005 * b.cap)
    out += fmt::format("    counting the logged (partial) output counts instead: cap {}\n", tokens(w.cap_logged_output));
  if (w.levels.size() == 2) {
    const auto& lo = w.levels[0];
    const auto& hi = w.levels[1];
    if (std::isfinite(w.change_at))
      out += fmt::format("    a change near {}: {} windows at about {}, {} at about {} ({} before, {} after)\n",
                         when(z, w.change_at), lo.samples, tokens(lo.cap), hi.samples, tokens(hi.cap),
                         lo.last_t < hi.first_t ? tokens(lo.cap) : tokens(hi.cap),
                         lo.last_t < hi.first_t ? tokens(hi.cap) : tokens(lo.cap));
    else
      out += fmt::format("    two levels, mixed in time: {} windows at about {} and {} at about {} (two plans or "
                         "accounts in one?)\n", lo.samples, tokens(lo.cap), hi.samples, tokens(hi.cap));
  }
  constexpr int shown_outliers = 10;  // without --verbose: a long account's list would bury the cap
  int outliers = 0;
  for (const auto& s : w.samples) {
    if (!(s.outlier || verbose)) continue;
    if (s.outlier && !verbose && ++outliers > shown_outliers) continue;
      out += fmt::format("    {} {} → {}: {}{}{}\n", s.outlier ? "outlier" : "sample ", when(z, s.t0), when(z, s.t1),
                         s.points == 100 ? fmt::format("{} tokens before the wall", tokens(s.cap))
                                         : fmt::format("{} tokens over {:g} points = {}", tokens(s.cap * s.points / 100),
                                                       s.points, tokens(s.cap)),
                         s.outlier ? ": " : "", s.why);
  }
  if (outliers > shown_outliers)
    out += fmt::format("    … and {} more outliers (--verbose lists every sample)\n", outliers - shown_outliers);
  if (verbose)
    for (std::size_t i = 1; i < w.rules.size(); ++i) {
      const auto& r = w.rules[i];
      out += fmt::format("    rule {:<44} cap {:>8}  σ {}  explained {}\n", r.rule.name(), tokens(r.cap),
                         std::isnan(r.sigma) ? std::string("-") : fmt::format("{:.2f}", r.sigma), share(r.explained));
    }
}

json scores_json(const backtest_scores& s) {
  return {{"forecasts", s.forecasts}, {"median_abs_error_s", num(s.median_abs_error_s)},
          {"within_15_min", num(s.within_15_min)}, {"within_30_min", num(s.within_30_min)},
          {"coverage_p10_p90", num(s.coverage_p10_p90)}, {"false_walls", s.false_walls},
          {"missed_walls", s.missed_walls}, {"quiet_windows", s.quiet_windows}};
}
json pp_json(const percent_scores& s) {
  return {{"forecasts", s.forecasts}, {"median_abs_error_pp", num(s.median_abs_error_pp)},
          {"coverage_p10_p90", num(s.coverage_p10_p90)}};
}

} // namespace

std::string plan_fit_text(const plan_fit& f, bool verbose) {
  const detail::zone z;
  std::string out = fmt::format("A plan's caps, learnt from {} (times in {}; docs/plans.md):\n",
                                detail::count_of(static_cast<long long>(f.accounts.size()), "account"), z.name());
  for (const auto& a : f.accounts) {
    out += fmt::format("\n{}{}: {} from {} ({} to {})", a.name, a.plan.empty() || a.plan == a.name ? "" : " (" + a.plan + ")",
                       detail::count_of(a.requests, "plan request"), detail::count_of(a.logs, "log"), when(z, a.first_t),
                       when(z, a.last_t));
    if (a.walls > 0)
      out += fmt::format(", {} (written {} times)", detail::count_of(a.walls, "wall"), a.wall_copies);
    out += "\n";
    bool any = false;
    for (const auto& w : f.windows)
      if (w.account == a.name) {
        print_window(out, w, z, verbose);
        any = true;
      }
    if (!any)
      out += "  nothing measures a cap: no wall with a stated reset, and no window whose percentage rose 5 points or more\n";
  }
  for (const auto& n : f.notes) out += fmt::format("note: {}\n", n);
  return out;
}

std::string plan_fit_to_json(const plan_fit& f, int indent) {
  json accounts = json::array(), windows = json::array(), walls = json::array();
  for (const auto& a : f.accounts)
    accounts.push_back({{"name", a.name}, {"plan", a.plan}, {"logs", a.logs}, {"requests", a.requests},
                        {"off_plan_requests", a.off_plan}, {"off_plan_share", num(a.off_plan_share)}, {"walls", a.walls},
                        {"wall_copies", a.wall_copies}, {"partial_outputs", a.partial_outputs},
                        {"logged_output", a.logged_output}, {"estimated_output", a.estimated_output},
                        {"first_t", a.first_t}, {"last_t", a.last_t}});
  for (const auto& w : f.windows) {
    json rules = json::array(), samples = json::array(), levels = json::array();
    for (const auto& r : w.rules) rules.push_back(rule_json(r));
    for (const auto& s : w.samples)
      samples.push_back({{"source", s.source}, {"t0", s.t0}, {"t1", s.t1}, {"resets_at", s.resets_at}, {"points", s.points},
                         {"cap", num(s.cap)}, {"outlier", s.outlier}, {"why", s.why}});
    for (const auto& l : w.levels)
      levels.push_back({{"cap", l.cap}, {"samples", l.samples}, {"first_t", l.first_t}, {"last_t", l.last_t}});
    windows.push_back({{"account", w.account}, {"window", w.window}, {"period_s", w.period_s}, {"evidence", w.evidence},
                       {"best", w.rules.empty() ? json(nullptr) : rule_json(w.rules.front())}, {"why_best", w.why_best},
                       {"cap_logged_output", num(w.cap_logged_output)}, {"levels", levels},
                       {"change_at", num(w.change_at)}, {"rules", rules}, {"samples", samples}});
  }
  for (std::size_t i = 0; i < f.walls.size(); ++i) {
    const auto& w = f.walls[i];
    walls.push_back({{"account", f.wall_accounts[i]}, {"t", w.t}, {"resets_at", num(w.resets_at_unix)},
                     {"kind", std::string(to_string(w.kind))}, {"copies", w.copies}, {"text", w.text}});
  }
  return detail::dump(json{{"accounts", accounts}, {"windows", windows}, {"walls", walls}, {"notes", f.notes}}, indent);
}

std::string plan_backtest_text(const plan_backtest& b) {
  std::string out = fmt::format("Backtest of a plan's walls and percentages ({} wall{} and {} window{} of measured "
                                "percentages to check; docs/validation.md)\n",
                                b.walls, b.walls == 1 ? "" : "s", b.windows_with_percent, b.windows_with_percent == 1 ? "" : "s");
  bool walls = false, pct = false;
  for (const auto& l : b.leads) {
    walls = walls || l.walls.forecasts > 0 || l.walls.quiet_windows > 0;
    pct = pct || l.percent.forecasts > 0;
  }
  if (walls) {
    out += fmt::format("\nWalls, forecast from each lead before them (model | burn-rate baseline):\n"
                       "{:>7} {:>9} {:>17} {:>15} {:>15} {:>15} {:>11} {:>11}\n",
                       "lead", "forecasts", "median error", "within 15 min", "within 30 min", "P10-P90 held", "false", "missed");
    for (const auto& l : b.leads) {
      const auto& m = l.walls;
      const auto& s = l.walls_baseline;
      out += fmt::format("{:>7} {:>9} {:>17} {:>15} {:>15} {:>15} {:>11} {:>11}\n", minutes(l.lead_s), m.forecasts,
                         minutes(m.median_abs_error_s) + " | " + minutes(s.median_abs_error_s),
                         share(m.within_15_min) + " | " + share(s.within_15_min),
                         share(m.within_30_min) + " | " + share(s.within_30_min),
                         share(m.coverage_p10_p90) + " | " + share(s.coverage_p10_p90),
                         fmt::format("{} | {}", m.false_walls, s.false_walls), fmt::format("{} | {}", m.missed_walls, s.missed_walls));
    }
    out += fmt::format("  (false: of {} windows without a wall, forecast from the lead before their last request)\n",
                       b.leads.front().walls.quiet_windows);
  }
  if (pct) {
    out += fmt::format("\nPercentages, the last of each window forecast from each lead before it (tokens per point | "
                       "points per hour):\n{:>7} {:>9} {:>21} {:>13}\n", "lead", "forecasts", "median error", "P10-P90 held");
    for (const auto& l : b.leads)
      out += fmt::format("{:>7} {:>9} {:>21} {:>13}\n", minutes(l.lead_s), l.percent.forecasts,
                         fmt::format("{:.1f} | {:.1f} points", l.percent.median_abs_error_pp, l.percent_baseline.median_abs_error_pp),
                         share(l.percent.coverage_p10_p90));
  }
  if (!walls && !pct) out += "  nothing to backtest: no wall with a stated reset and no window of measured percentages with an earlier one to learn from\n";
  for (const auto& n : b.notes) out += fmt::format("note: {}\n", n);
  return out;
}

std::string plan_backtest_to_json(const plan_backtest& b, int indent) {
  json leads = json::array();
  for (const auto& l : b.leads)
    leads.push_back({{"lead_s", l.lead_s},
                     {"walls", scores_json(l.walls)},
                     {"baseline", scores_json(l.walls_baseline)},
                     {"percent", pp_json(l.percent)},
                     {"percent_baseline", pp_json(l.percent_baseline)}});
  return detail::dump(json{{"walls", b.walls}, {"windows_with_percent", b.windows_with_percent}, {"leads", leads},
                           {"notes", b.notes}},
                      indent);
}

namespace {
std::string hours(double h) { return h < 10 ? fmt::format("{:.1f} h", h) : fmt::format("{:.0f} h", h); }
std::string days(double d) { return d < 10 ? fmt::format("{:.1f} d", d) : fmt::format("{:.0f} d", d); }
const char* caps_word(plan_caps_source s) {
  switch (s) {
    case plan_caps_source::assumed: return "assumed";
    case plan_caps_source::fitted: return "fitted";
    case plan_caps_source::given: return "given";
    case plan_caps_source::none: break;
  }
  return "published";
}
json plan_choice_json(const plan_choice& c) {
  json rows = json::array();
  for (const auto& r : c.rows) {
    json walls = json::array();
    for (const auto& w : r.waits_at) walls.push_back({{"start_unix_s", w.start_unix_s}, {"hours", w.hours}, {"bucket", w.bucket}});
    json filled = json::array();
    for (const auto& f : r.filled_by) filled.push_back({{"project", f.project}, {"share", f.share}});
    rows.push_back({{"label", r.label}, {"targets", r.targets}, {"plan", r.plan}, {"fee_usd_month", r.fee_usd_month},
                    {"metered_usd_month", r.metered_usd_month}, {"usd_month", r.usd_month},
                    {"usd_month_low", r.usd_low}, {"usd_month_high", r.usd_high},
                    {"blocked_hours_week", r.blocked_hours_week}, {"blocked_hours_week_low", r.blocked_low},
                    {"blocked_hours_week_high", r.blocked_high}, {"late_days", r.late_days},
                    {"late_days_low", r.late_low}, {"late_days_high", r.late_high}, {"pace", r.pace},
                    {"pace_low", r.pace_low}, {"pace_high", r.pace_high}, {"waits", r.walls},
                    {"waits_at", walls}, {"filled_by", filled},
                    {"stranded_share", std::isfinite(r.stranded_share) ? json(r.stranded_share) : json(nullptr)},
                    {"stranded_weeks", r.stranded_weeks}, {"sessions", r.sessions}, {"sessions_cut", r.sessions_cut},
                    {"caps", caps_word(r.caps)}, {"caps_note", r.caps_note}, {"other_model", r.other_model.empty() ? json(nullptr) : json(r.other_model)},
                    {"within_limit", r.within_limit}});
  }
  return json{{"agent", c.agent}, {"span_days", c.span_days}, {"requests", c.requests}, {"verdict", c.verdict},
              {"rows", rows}, {"notes", c.notes}};
}
} // namespace

std::string plan_choice_text(const plan_choice& c, const std::string& time_zone) {
  const detail::zone z = time_zone.empty() ? detail::zone() : detail::zone(time_zone);
  std::string out = c.agent.empty() ? std::string() : fmt::format("{}: ", c.agent);
  out += fmt::format("{}.\n\n", c.verdict);
  out += fmt::format("  {:<36} {:>20} {:>20} {:>14} {:>6} {:>9}  first waits ({})\n", "option", "$/month",
                     "waiting a week", "keeps pace", "waits", "cut", z.name());
  const auto percent = [](double x) { return x >= 0.995 ? std::string("100%") : fmt::format("{:.2g}%", 100 * x); };
  for (const auto& r : c.rows) {
    auto price = !r.plan                        ? fmt::format("${:.2f}", r.metered_usd_month)
                 : r.metered_usd_month >= 0.5 ? fmt::format("${:.0f} + ${:.0f}", r.fee_usd_month, r.metered_usd_month)
                                              : fmt::format("${:.0f}", r.fee_usd_month);
    if (r.usd_high - r.usd_low >= 0.5) price += fmt::format(" (${:.0f}–{:.0f})", r.usd_low, r.usd_high);
    const auto wait = r.blocked_low != r.blocked_high
                          ? fmt::format("{} ({:.1f}–{:.1f})", hours(r.blocked_hours_week), r.blocked_low, r.blocked_high)
                          : hours(r.blocked_hours_week);
    const auto pace = percent(r.pace_low) == percent(r.pace_high)
                          ? percent(r.pace)
                          : fmt::format("{} ({}–{})", percent(r.pace), percent(r.pace_low), percent(r.pace_high));
    std::string first;
    if (r.pace < 0.5 && r.late_days > 7 && !r.waits_at.empty())
      first = fmt::format("from {} on the work falls behind: it takes {:.2g}× as long, finishing {} late",
                          when(z, r.waits_at.front().start_unix_s), 1 / r.pace, days(r.late_days));
    else
      for (std::size_t i = 0; i < std::min<std::size_t>(r.waits_at.size(), 5); ++i) {
        const auto& w = r.waits_at[i];
        first += fmt::format("{}{} {} {}", first.empty() ? "" : ", ", when(z, w.start_unix_s), w.bucket, hours(w.hours));
      }
    out += fmt::format("  {:<36} {:>20} {:>20} {:>14} {:>6} {:>9}  {}\n", r.label, price, wait, pace, r.walls,
                       fmt::format("{}/{}", r.sessions_cut, r.sessions), first.empty() ? "-" : first);
  }
  out += "\n  $/month: a plan's fee (+ its extra usage at API list prices), or the API's tokens at list price, "
         "scaled to a month, with the least and most at the caps' low and high ends; waiting: hours a week some "
         "session waits for a reset (at the caps replayed; in brackets the least and the most at the caps' low and "
         "high ends); keeps pace: the share of your recorded pace the option keeps up with (the logs' span over the "
         "span the replay took: the waits hold the work back); cut: sessions that did not finish\n";
  for (const auto& r : c.rows) out += fmt::format("  caps of {}: {} ({})\n", r.label, r.caps_note, r.targets);
  for (const auto& r : c.rows) {
    if (r.filled_by.empty()) continue;
    std::string by;
    double rest = 0;
    for (std::size_t i = 0; i < r.filled_by.size(); ++i)
      if (i < 3) by += fmt::format("{}{} {:.0f}%", by.empty() ? "" : ", ", r.filled_by[i].project, 100 * r.filled_by[i].share);
      else rest += r.filled_by[i].share;
    if (rest > 0) by += fmt::format(", {} more {:.0f}%", r.filled_by.size() - 3, 100 * rest);
    out += fmt::format("  the windows that refused on {} were filled by: {}\n", r.label, by);
  }
  for (const auto& r : c.rows)
    if (r.stranded_weeks > 0)
      out += fmt::format("  stranded on {}: {:.0f}% of the weekly allowance unused in the {} week{} its 5-hour window "
                         "refused\n",
                         r.label, 100 * r.stranded_share, r.stranded_weeks, r.stranded_weeks == 1 ? "" : "s");
  for (const auto& n : c.notes) out += fmt::format("  note: {}\n", n);
  return out;
}

std::string plan_choice_to_json(const plan_choice& c, int indent) { return plan_choice_json(c).dump(indent); }

std::string plan_choices_to_json(const std::vector<plan_choice>& cs, int indent) {
  json a = json::array();
  for (const auto& c : cs) a.push_back(plan_choice_json(c));
  return json{{"agents", a}}.dump(indent);
}

} // namespace loopcast
