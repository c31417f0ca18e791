// A backtest of a plan's walls and percentages (plan_fit.hpp, docs/validation.md): for each truth
// in the logs, a forecast from `lead` before it that uses only the walls and windows that came
// before its window.
//
// A wall's forecast: the cap is lognormal around the fit of the earlier walls (its per-window σ
// and the centre's uncertainty; σ 0.25 where under 3 earlier walls agree), above what the window
// had admitted by the cut (it was still open then), and what the account
// does next is drawn from its own usage in 10-minute blocks (the window so far, or its last 24
// hours of activity while the window holds under 3 blocks). Each draw runs until the cap is met
// or the window reopens. The baseline burns at the window's average rate so far until it meets
// the fitted cap, conditioned the same way (its P10–P90 from the cap's). A window without a wall is forecast from `lead`
// before its last request; a forecast P50 before it reopens is a false wall.
//
// A percentage's forecast: the percentage at the last snapshot `lead` before a window's last,
// plus the tokens logged since over the tokens per point the earlier windows measured; the
// baseline extrapolates the points per hour the window had risen so far.
#include "plans/plan_usage.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

namespace loopcast {

namespace {

constexpr double five_h = 5 * 3600.0, block_s = 600, prior_sigma = 0.25;
constexpr double none = std::numeric_limits<double>::infinity();

double at(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double x = p * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<std::size_t>(std::floor(x));
  if (i + 1 >= sorted.size()) return sorted.back();
  const double a = sorted[i], b = sorted[i + 1];
  if (std::isinf(a) || std::isinf(b)) return x - static_cast<double>(i) < 0.5 ? a : b;
  return a + (b - a) * (x - static_cast<double>(i));
}

struct forecast {
  double p10 = none, p50 = none, p90 = none;
};

// The usage of [from, to) in 10-minute blocks.
std::vector<double> blocks_of(const detail::rule_usage& u, std::size_t k, double from, double to, bool active_only) {
  std::vector<double> out;
  for (double t = from; t + block_s <= to + 1e-9; t += block_s) {
    const double b = u.between(k, t, t + block_s);
    if (!active_only || b > 0) out.push_back(b);
  }
  return out;
}

// A fitted cap's centre and spread: the best rule's, with its index in the account's rules.
struct cap_model {
  std::size_t rule = 0;
  double log_cap = 0, sigma = prior_sigma, total_sigma = prior_sigma;
  int samples = 0;
};
std::optional<cap_model> model_before(const detail::account_data& a, double period_s, double before) {
  const auto f = detail::fit_window(a, period_s, before);
  if (f.rules.empty() || !(f.rules.front().cap > 0)) return std::nullopt;
  const auto& b = f.rules.front();
  cap_model m;
  for (std::size_t k = 0; k < a.rules.size(); ++k)
    if (a.rules[k].cache_read == b.rule.cache_read && a.rules[k].opus == b.rule.opus && a.rules[k].haiku == b.rule.haiku)
      m.rule = k;
  m.log_cap = std::log(b.cap);
  m.samples = b.inliers;
  if (!std::isnan(b.sigma)) m.sigma = std::max(b.sigma, 0.02);
  const double se = 1.2533 * m.sigma / std::sqrt(static_cast<double>(std::max(1, b.inliers)));
  m.total_sigma = std::sqrt(m.sigma * m.sigma + se * se);
  return m;
}

// The chance the cap is above what the window already admitted (it was still open at the cut):
// the draws of the cap are conditioned on it.
double open_share(const cap_model& m, double used) {
  if (!(used > 0)) return 1.0;
  const double z = (std::log(used) - m.log_cap) / m.total_sigma;
  return std::max(0.5 * std::erfc(z / std::sqrt(2.0)), 1e-9);
}

forecast wall_forecast(const detail::account_data& a, const cap_model& m, double start, double end, double cut, int draws,
                       rng& g) {
  const double used = a.by_send.between(m.rule, start, cut);
  auto pool = blocks_of(a.by_send, m.rule, start, cut, false);
  if (pool.size() < 3) pool = blocks_of(a.by_send, m.rule, std::max(cut - 86400, a.summary.first_t), cut, true);
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(draws));
  const double open = open_share(m, used);
  for (int d = 0; d < draws; ++d) {
    // Stratified, and above what the window already admitted: it had not walled at the cut.
    const double z = standard_normal_quantile(1 - open + open * (static_cast<double>(d) + uniform01(g)) / draws);
    double rem = std::exp(m.log_cap + m.total_sigma * z) - used, t = cut;
    if (rem <= 0) {
      times.push_back(cut);
      continue;
    }
    double wall = none;
    bool any = false;
    for (double b : pool) any = any || b > 0;
    while (any && t < end) {
      const double b = pool[static_cast<std::size_t>(uniform01(g) * static_cast<double>(pool.size()))];
      if (b >= rem) {
        wall = t + block_s * rem / b;
        break;
      }
      rem -= b;
      t += block_s;
    }
    times.push_back(wall < end ? wall : none);
  }
  std::sort(times.begin(), times.end());
  return {at(times, 0.1), at(times, 0.5), at(times, 0.9)};
}

forecast burn_rate(const detail::account_data& a, const cap_model& m, double start, double end, double cut) {
  const double used = a.by_send.between(m.rule, start, cut), rate = used / std::max(cut - start, 1.0);
  auto when = [&](double cap) {
    if (used >= cap) return cut;
    const double t = rate > 0 ? cut + (cap - used) / rate : none;
    return t < end ? t : none;
  };
  const double open = open_share(m, used);
  auto cap_at = [&](double p) { return std::exp(m.log_cap + m.total_sigma * standard_normal_quantile(1 - open + open * p)); };
  return {when(cap_at(0.1)), when(cap_at(0.5)), when(cap_at(0.9))};
}

struct tally {
  std::vector<double> errors;
  int covered = 0, judged = 0, false_walls = 0, missed = 0, quiet = 0, forecasts = 0;
  void wall(const forecast& f, double truth) {
    ++forecasts;
    ++judged;
    covered += f.p10 <= truth && truth <= f.p90;
    if (std::isinf(f.p50)) ++missed;
    else errors.push_back(std::abs(f.p50 - truth));
  }
  void quiet_window(const forecast& f) {
    ++quiet;
    false_walls += !std::isinf(f.p50);
  }
  backtest_scores scores() const {
    backtest_scores s;
    s.forecasts = forecasts;
    s.false_walls = false_walls;
    s.missed_walls = missed;
    s.quiet_windows = quiet;
    if (!errors.empty()) {
      s.median_abs_error_s = detail::median_of(errors);
      double in15 = 0, in30 = 0;
      for (double e : errors) {
        in15 += e <= 900;
        in30 += e <= 1800;
      }
      // within ±15 / ±30 minutes, of every wall forecast (a missed wall is not within)
      s.within_15_min = in15 / forecasts;
      s.within_30_min = in30 / forecasts;
    }
    if (judged > 0) s.coverage_p10_p90 = static_cast<double>(covered) / judged;
    return s;
  }
};

struct pp_tally {
  std::vector<double> errors;
  int covered = 0;
  void add(double predicted, double lo, double hi, double truth) {
    errors.push_back(std::abs(predicted - truth));
    covered += lo - 1 <= truth && truth <= hi + 1;
  }
  percent_scores scores(bool with_coverage) const {
    percent_scores s;
    s.forecasts = static_cast<std::int32_t>(errors.size());
    if (!errors.empty()) {
      s.median_abs_error_pp = detail::median_of(errors);
      if (with_coverage) s.coverage_p10_p90 = static_cast<double>(covered) / static_cast<double>(errors.size());
    }
    return s;
  }
};

// The 5-hour windows an account's requests opened (at the hour of the first request after the
// last one closed) that hold no wall: (start, last request's send).
std::vector<std::pair<double, double>> quiet_windows(const detail::account_data& a) {
  std::vector<std::pair<double, double>> out;
  std::vector<std::pair<double, double>> walled;
  for (const auto& w : a.walls)
    if (w.kind == wall_kind::five_hour && !std::isnan(w.resets_at_unix)) walled.emplace_back(w.window_start(), w.resets_at_unix);
  for (std::size_t i = 0; i < a.by_send.size();) {
    const double start = std::floor(a.by_send.time(i) / 3600) * 3600, end = start + five_h;
    const std::size_t j = std::max(i + 1, a.by_send.lower(end));
    bool clash = false;
    for (const auto& [s, e] : walled) clash = clash || (s < end && start < e);
    if (!clash) out.emplace_back(start, a.by_send.time(j - 1));
    i = j;
  }
  return out;
}

} // namespace

plan_backtest backtest_plan(std::span<const recorded_trace> traces, std::span<const statusline_snapshot> statusline,
                            const plan_backtest_options& options) {
  plan_backtest r;
  if (options.leads_s.empty()) throw std::invalid_argument("limits backtest: give at least one --lead");
  for (double l : options.leads_s)
    if (!(l > 0 && l < 7 * 86400.0)) throw std::invalid_argument(fmt::format("limits backtest: a lead of {:g} s is not between 0 and 7 days", l));
  if (options.draws < 10) throw std::invalid_argument(fmt::format("limits backtest: {} draws are too few (at least 10)", options.draws));
  auto accounts = detail::read_accounts(traces, statusline, r.notes);
  if (!options.account.empty())
    std::erase_if(accounts, [&](const auto& a) { return a.summary.name.find(options.account) == std::string::npos; });
  std::vector<tally> model(options.leads_s.size()), base(options.leads_s.size());
  std::vector<pp_tally> pp(options.leads_s.size()), pp_base(options.leads_s.size());
  rng g(derive_seed(options.seed, 56));
  int no_fit = 0, young = 0, other_walls = 0, pp_no_fit = 0, pp_short = 0;
  for (const auto& a : accounts) {
    bool any_wall = false;
    for (const auto& w : a.walls) {
      if (w.kind != wall_kind::five_hour || std::isnan(w.resets_at_unix)) {
        ++other_walls;
        continue;
      }
      const double start = w.window_start(), end = w.resets_at_unix;
      if (!(w.t >= start && w.t < end)) {
        ++other_walls;
        continue;
      }
      ++r.walls;
      any_wall = true;
      const auto m = model_before(a, five_h, start);
      if (!m) {
        ++no_fit;
        continue;
      }
      for (std::size_t l = 0; l < options.leads_s.size(); ++l) {
        const double cut = w.t - options.leads_s[l];
        if (cut <= start) {
          ++young;
          continue;
        }
        model[l].wall(wall_forecast(a, *m, start, end, cut, options.draws, g), w.t);
        base[l].wall(burn_rate(a, *m, start, end, cut), w.t);
      }
    }
    if (any_wall)
      for (const auto& [start, last] : quiet_windows(a)) {
        const auto m = model_before(a, five_h, start);
        if (!m) continue;
        for (std::size_t l = 0; l < options.leads_s.size(); ++l) {
          const double cut = last - options.leads_s[l];
          if (cut <= start) continue;
          model[l].quiet_window(wall_forecast(a, *m, start, start + five_h, cut, options.draws, g));
          base[l].quiet_window(burn_rate(a, *m, start, start + five_h, cut));
        }
      }
    // Measured percentages.
    for (const auto& pw : a.windows) {
      if (pw.points.size() < 2 || pw.points.back().second - pw.points.front().second < 5) continue;
      ++r.windows_with_percent;
      const auto m = model_before(a, pw.period_s, pw.points.front().first);
      if (!m) {
        ++pp_no_fit;
        continue;
      }
      const auto [t_last, truth] = pw.points.back();
      const auto [t0, p0] = pw.points.front();
      for (std::size_t l = 0; l < options.leads_s.size(); ++l) {
        const double cut = t_last - options.leads_s[l];
        auto it = std::upper_bound(pw.points.begin(), pw.points.end(), cut, [](double x, const auto& p) { return x < p.first; });
        if (it == pw.points.begin()) {
          ++pp_short;
          continue;
        }
        const auto [tc, pc] = *std::prev(it);
        const double used = a.by_end.sum(m->rule, a.by_end.upper(tc), a.by_end.upper(t_last));
        // The window's own tokens per point so far, where it rose 3 points or more, joins the
        // earlier windows' by precision (its error: a point of rounding over the rise, and 0.1
        // of drift within a window).
        double log_cap = m->log_cap, sigma = m->total_sigma;
        const double own_points = pc - p0;
        const double own_used = a.by_end.sum(m->rule, a.by_end.upper(t0), a.by_end.upper(tc));
        if (own_points >= 3 && own_used > 0) {
          const double own = std::log(100 * own_used / own_points);
          const double v_own = 1 / (own_points * own_points) + 0.01, v_prior = sigma * sigma;
          log_cap = (log_cap / v_prior + own / v_own) / (1 / v_prior + 1 / v_own);
          sigma = std::sqrt(1 / (1 / v_prior + 1 / v_own));
        }
        const double z = standard_normal_quantile(0.9) * sigma;
        auto pred = [&](double c) { return pc + 100 * used / std::exp(c); };
        pp[l].add(pred(log_cap), pred(log_cap + z), pred(log_cap - z), truth);
        const double slope = tc > t0 ? (pc - p0) / (tc - t0) : 0.0;
        const double b = pc + slope * (t_last - tc);
        pp_base[l].add(b, b, b, truth);
      }
    }
  }
  for (std::size_t l = 0; l < options.leads_s.size(); ++l)
    r.leads.push_back({options.leads_s[l], model[l].scores(), base[l].scores(), pp[l].scores(true), pp_base[l].scores(false)});
  if (no_fit > 0)
    r.notes.push_back(fmt::format("{} wall{} with no earlier wall or window of the account to fit a cap on: not forecast",
                                  no_fit, no_fit == 1 ? "" : "s"));
  if (young > 0)
    r.notes.push_back(fmt::format("{} wall forecast{} not made: the window was younger than the lead", young,
                                  young == 1 ? "" : "s"));
  if (other_walls > 0)
    r.notes.push_back(fmt::format("{} wall{} not of a 5-hour window with a stated reset (weekly, spend caps, extra "
                                  "usage, unknown): not backtested", other_walls, other_walls == 1 ? "" : "s"));
  if (pp_no_fit > 0)
    r.notes.push_back(fmt::format("{} percentage window{} with no earlier window of the account to learn tokens per "
                                  "point from: not forecast", pp_no_fit, pp_no_fit == 1 ? "" : "s"));
  if (pp_short > 0)
    r.notes.push_back(fmt::format("{} percentage forecast{} not made: the window's snapshots span less than the lead",
                                  pp_short, pp_short == 1 ? "" : "s"));
  return r;
}

} // namespace loopcast
