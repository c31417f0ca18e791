// How often forecasts of the next wall held the truth (forecast.hpp, docs/watch.md "Backtest"):
// each log cut at several points, the forecast from before the cut scored against the replay of
// the whole log, beside a straight-line burn-rate baseline.
#include "loopcast/forecast.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/limits/level_curve.hpp"
#include "loopcast/metrics.hpp"

#include "study/forecast_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace loopcast {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// The most bucket b held in its first window, over the run's operations (levels just after each).
double first_window_peak(const simulation_result& r, const bucket_config& cfg, std::size_t b) {
  std::vector<double> times;
  double start = inf;
  for (const auto& op : r.bucket_ops) {
    if (op.bucket != b) continue;
    if (!std::isfinite(start)) start = op.t;
    if (op.t >= start + cfg.period_s) break;
    const double after = std::nextafter(op.t, inf);
    if (times.empty() || after > times.back()) times.push_back(after);
  }
  if (times.empty()) return 0;
  const auto levels = replay_levels(bucket(cfg, r.start_unix_s), r.bucket_ops, b, times);
  return *std::max_element(levels.begin(), levels.end());
}

// The window of a fixed-window bucket that holds `t`: [start, end).
std::pair<double, double> window_at(const bucket_config& cfg, const simulation_result& r, std::size_t b, double t) {
  const double p = cfg.period_s;
  if (opens_at_first_use(cfg.anchor)) {
    double start = -inf;
    for (const auto& op : r.bucket_ops) {
      if (op.bucket != b || op.t > t) continue;
      const bool adds = op.q > 0;
      if (adds && !(op.t < start + p)) start = first_use_window_start(cfg.anchor, op.t, r.start_unix_s);
    }
    return {start, start + p};
  }
  const double anchor = cfg.anchor == window_anchor::epoch ? -std::fmod(r.start_unix_s - cfg.anchor_offset_s, p) : 0.0;
  const double start = anchor + std::floor((t - anchor) / p) * p;
  return {start, start + p};
}

// The straight-line burn rate's wall, s after `cut`: each fixed window's use so far in its
// current window, extended at the rate it grew there; in the next window at the same rate. NaN
// when the target has no fixed window.
double burn_rate_wall(const target& tgt, const simulation_result& r, double cut) {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t b = 0; b < tgt.limits.size(); ++b) {
    const auto& cfg = tgt.limits[b];
    if (cfg.algorithm != bucket_algorithm::fixed_window) continue;
    const double times[1] = {std::nextafter(cut, inf)};
    const double used = replay_levels(bucket(cfg, r.start_unix_s), r.bucket_ops, b, times)[0];
    const auto [start, end] = window_at(cfg, r, b, cut);
    double wall = inf;
    if (std::isfinite(start) && cut > start && used > 0) {
      const double rate = used / (cut - start);
      const double in_this = (cfg.limit - used) / rate;
      if (cut + in_this < end) wall = std::max(0.0, in_this);
      else if (cfg.limit / rate < cfg.period_s) wall = (end - cut) + cfg.limit / rate;
    }
    if (std::isnan(best) || wall < best) best = wall;
  }
  return best;
}

// The target with the caps set for one log: share × the most its whole replay held in each
// capped bucket's first window (the capped buckets unlimited while it is measured).
target capped_for(const recorded_trace& t, const target& tgt, const backtest_options& opt) {
  target measure = tgt;
  std::vector<std::size_t> capped;
  for (const auto& [name, share] : opt.caps) {
    auto* b = measure.find_bucket(name);
    if (!b) {
      std::string names;
      for (const auto& x : tgt.limits) names += (names.empty() ? "" : ", ") + x.name;
      throw std::invalid_argument(fmt::format("a cap on bucket \"{}\": the target {} has no bucket of that name (its buckets: {})",
                                              name, tgt.name, names.empty() ? "none" : names));
    }
    b->limit = 1e15;
    b->limit_unpublished = false;
    capped.push_back(static_cast<std::size_t>(b - measure.limits.data()));
  }
  if (capped.empty()) return tgt;
  const detail::forecast_replay replay(t, measure, opt.forecast);
  std::int64_t simulated = 0;
  const auto whole = replay.run(t, true, simulated);
  target out = tgt;
  for (std::size_t k = 0; k < capped.size(); ++k) {
    auto& b = out.limits[capped[k]];
    b.limit = std::max(1.0, std::ceil(opt.caps[k].second * first_window_peak(whole, measure.limits[capped[k]], capped[k])));
    b.limit_unpublished = false;
    drop_dated_limits(out, b.name);
  }
  return out;
}

// The CRPS of the members' logarithms against the truth's (times below 1 s at 1 s, beyond the
// horizon at the horizon): a score of relative error, the same for a wall minutes or days away.
double log_crps(std::vector<double> members, double truth, double horizon) {
  for (auto& x : members) x = std::log(std::clamp(x, 1.0, horizon));
  return detail::crps_of(std::move(members), std::log(std::clamp(truth, 1.0, horizon)));
}

double median_of(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  return sorted_quantile(v, 0.5);
}

double mean_of(const std::vector<double>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

} // namespace

backtest_result backtest_forecasts(const std::vector<recorded_trace>& traces, const target& tgt,
                                   const backtest_options& opt) {
  detail::check_forecast_options(opt.forecast);
  for (double c : opt.cuts)
    if (!(c > 0 && c < 1)) throw std::invalid_argument(fmt::format("a cut is a share of a log's requests in (0, 1), not {}", c));
  for (const auto& [name, share] : opt.caps)
    if (!(share > 0 && share <= 10))
      throw std::invalid_argument(fmt::format("--cap {}={}: expected a share of the first window's use in (0, 10]", name, share));
  backtest_result out;
  // The draws stop at the next wall unless each window's own wall is scored too.
  forecast_options fo = opt.forecast;
  fo.each_window = opt.each_window;
  std::vector<std::vector<double>> window_errors;
  std::vector<std::int32_t> window_covered;
  std::vector<double> errors, crps, base_errors, base_crps;
  for (const auto& trace : traces) {
    if (trace.totals || trace.request_count() < 2) {
      out.notes.push_back(fmt::format("{}: fewer than 2 requests, left out", trace.file));
      continue;
    }
    const target tg = capped_for(trace, tgt, opt);
    const detail::forecast_replay whole_replay(trace, tg, opt.forecast);
    std::int64_t simulated = 0;
    const auto whole = whole_replay.run(trace, false, simulated);
    if (!whole.first_429) {
      out.notes.push_back(fmt::format("{}: the whole log meets no wall on {}, left out", trace.file, tg.name));
      continue;
    }
    // Each bucket's first refusal in the whole log, the client waiting out each window's reset.
    std::vector<double> first_refusal(tg.limits.size(), inf);
    if (opt.each_window)
      first_refusal = detail::first_refusals(whole_replay.run(trace, false, simulated, true), tg.limits.size(), -inf);
    const auto n = trace.request_count();
    for (double share : opt.cuts) {
      const auto k = std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(share * static_cast<double>(n))), 1, n - 1);
      const auto cut = cut_trace(trace, k);
      const auto f = forecast_next_wall(cut, tg, fo);
      const double cut_s = f.last_send_s - whole_replay.origin();
      if (!(whole.first_429->time_s > cut_s)) {
        out.notes.push_back(fmt::format("{} cut at {:.0f}%: the wall came before the cut, left out", trace.file, 100 * share));
        continue;
      }
      if (f.steps == 0) {
        out.notes.push_back(fmt::format("{} cut at {:.0f}%: one request per session before the cut, no pace to "
                                        "forecast from, left out", trace.file, 100 * share));
        continue;
      }
      backtest_row row;
      row.log = trace.file;
      row.cut_share = share;
      row.requests = f.requests;
      row.truth_s = whole.first_429->time_s - cut_s;
      row.truth_bucket = whole.first_429->bucket_name;
      row.p10_s = f.p10_s;
      row.p50_s = f.p50_s;
      row.p90_s = f.p90_s;
      row.censored = f.p10_at_least || f.p50_at_least || f.p90_at_least;
      row.covered = f.p10_s <= row.truth_s && row.truth_s <= f.p90_s;
      row.missed = std::isinf(f.p50_s);
      const double horizon = opt.forecast.horizon_s;
      row.p50_error = std::abs(std::min(f.p50_s, horizon) - row.truth_s) / row.truth_s;
      row.crps = log_crps(f.draws_s, row.truth_s, horizon);
      // The baseline, from the replay of the log up to the cut.
      const detail::forecast_replay cut_replay(cut, tg, opt.forecast);
      const auto so_far = cut_replay.run(cut, true, simulated);
      row.baseline_s = burn_rate_wall(tg, so_far, cut_s);
      row.baseline_error = std::abs(std::min(row.baseline_s, horizon) - row.truth_s) / row.truth_s;
      row.baseline_crps = std::isnan(row.baseline_s) ? row.baseline_s : log_crps({row.baseline_s}, row.truth_s, horizon);
      for (std::size_t b = 0; b < f.buckets.size() && opt.each_window; ++b) {
        if (!std::isfinite(first_refusal[b]) || !(first_refusal[b] > cut_s) || !f.buckets[b].wall) continue;
        const auto& w = *f.buckets[b].wall;
        window_score ws{f.buckets[b].name, first_refusal[b] - cut_s, w.p10_s, w.p50_s, w.p90_s, false, 0.0};
        ws.covered = w.p10_s <= ws.truth_s && ws.truth_s <= w.p90_s;
        ws.p50_error = std::abs(std::min(w.p50_s, horizon) - ws.truth_s) / ws.truth_s;
        window_errors.resize(std::max(window_errors.size(), b + 1));
        window_covered.resize(window_errors.size(), 0);
        window_errors[b].push_back(ws.p50_error);
        window_covered[b] += ws.covered ? 1 : 0;
        row.windows.push_back(std::move(ws));
      }
      out.rows.push_back(row);
      errors.push_back(row.p50_error);
      crps.push_back(row.crps);
      if (!std::isnan(row.baseline_s)) {
        base_errors.push_back(row.baseline_error);
        base_crps.push_back(row.baseline_crps);
      }
    }
  }
  out.forecasts = static_cast<std::int32_t>(out.rows.size());
  if (!out.rows.empty()) {
    std::int32_t covered = 0;
    for (const auto& r : out.rows) {
      covered += r.covered ? 1 : 0;
      out.missed += r.missed ? 1 : 0;
    }
    out.coverage = static_cast<double>(covered) / static_cast<double>(out.rows.size());
  }
  for (std::size_t b = 0; b < window_errors.size(); ++b) {
    if (window_errors[b].empty()) continue;
    window_summary w;
    w.bucket = tgt.limits[b].name;
    w.forecasts = static_cast<std::int32_t>(window_errors[b].size());
    w.coverage = static_cast<double>(window_covered[b]) / static_cast<double>(w.forecasts);
    w.median_p50_error = median_of(window_errors[b]);
    out.windows.push_back(std::move(w));
  }
  out.median_p50_error = median_of(errors);
  out.mean_crps = mean_of(crps);
  out.median_baseline_error = median_of(base_errors);
  out.mean_baseline_crps = mean_of(base_crps);
  return out;
}

} // namespace loopcast
