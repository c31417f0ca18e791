// `loopcast watch`: the next wall of a running session, as a line of text or a JSON document.
#include "loopcast/report.hpp"

#include "loopcast/version.hpp"

#include "report/documents.hpp"
#include "util/text.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <ctime>
#include <ostream>

namespace loopcast {

namespace {

std::string span(double s) {
  if (std::isinf(s)) return "beyond the horizon";
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  if (s < 2 * 86400) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} days", s / 86400);
}

std::string when(const wall_forecast& f, double t) {
  if (!f.absolute_clock) return fmt::format("{:.1f} s", t);
  const auto tt = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

nlohmann::ordered_json finite_or_null(double x) { return std::isfinite(x) ? nlohmann::ordered_json(x) : nullptr; }

} // namespace

namespace detail {

nlohmann::ordered_json forecast_doc(const wall_forecast& f) {
  nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
  for (const auto& b : f.buckets) {
    nlohmann::ordered_json wall = nullptr;
    if (b.wall)
      wall = {{"p10_s", finite_or_null(b.wall->p10_s)}, {"p50_s", finite_or_null(b.wall->p50_s)},
              {"p90_s", finite_or_null(b.wall->p90_s)}, {"p10_at_least", b.wall->p10_at_least},
              {"p50_at_least", b.wall->p50_at_least}, {"p90_at_least", b.wall->p90_at_least},
              {"hit_share", b.wall->hit_share}};
    buckets.push_back({{"name", b.name}, {"used", b.used}, {"limit", b.limit}, {"period_s", b.period_s},
                       {"resets_in_s", b.resets_in_s}, {"wall", wall}});
  }
  const bool hit = f.hit_share > 0;
  return {{"log", f.log},
          {"requests", f.requests},
          {"last_send_s", f.last_send_s},
          {"absolute_clock", f.absolute_clock},
          {"buckets", buckets},
          {"refused_so_far", f.refused_at_s ? nlohmann::ordered_json{{"t_s", *f.refused_at_s}, {"bucket", f.refused_by}}
                                            : nlohmann::ordered_json(nullptr)},
          {"gap_s", f.steps > 0 ? nlohmann::ordered_json(f.gap_s) : nlohmann::ordered_json(nullptr)},
          {"growth_tokens_per_request", f.steps > 0 ? nlohmann::ordered_json(f.growth_per_request) : nlohmann::ordered_json(nullptr)},
          {"steps_resampled", f.steps},
          {"next_wall",
           {{"bucket", hit && !f.bucket.empty() ? nlohmann::ordered_json(f.bucket) : nlohmann::ordered_json(nullptr)},
            {"first_refused_by", [&] {
               nlohmann::ordered_json o = nlohmann::ordered_json::object();
               for (const auto& [name, share] : f.first_by) o[name] = share;
               return o;
             }()},
            {"p10_s", finite_or_null(f.p10_s)},
            {"p50_s", finite_or_null(f.p50_s)},
            {"p90_s", finite_or_null(f.p90_s)},
            {"p10_at_least", f.p10_at_least},
            {"p50_at_least", f.p50_at_least},
            {"p90_at_least", f.p90_at_least},
            {"p50_at_s", finite_or_null(f.last_send_s + f.p50_s)},
            {"requests_p50", hit ? nlohmann::ordered_json(f.requests_p50) : nlohmann::ordered_json(nullptr)},
            {"hit_share", f.hit_share},
            {"draws", f.draws},
            {"draws_censored", f.draws_censored},
            {"censored_at_s", finite_or_null(f.censored_at_s)},
            {"requests_simulated", f.requests_simulated}}}};
}

// Each window's own wall in one backtest row.
nlohmann::ordered_json windows_doc(const std::vector<window_score>& ws) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& w : ws)
    out.push_back({{"bucket", w.bucket}, {"truth_s", w.truth_s}, {"p10_s", finite_or_null(w.p10_s)},
                   {"p50_s", finite_or_null(w.p50_s)}, {"p90_s", finite_or_null(w.p90_s)}, {"covered", w.covered},
                   {"p50_error", w.p50_error}});
  return out;
}

nlohmann::ordered_json backtest_doc(const backtest_result& r, const backtest_options& opt) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& x : r.rows)
    rows.push_back({{"log", x.log}, {"cut_share", x.cut_share}, {"requests", x.requests}, {"truth_s", x.truth_s},
                    {"truth_bucket", x.truth_bucket}, {"p10_s", finite_or_null(x.p10_s)}, {"p50_s", finite_or_null(x.p50_s)},
                    {"p90_s", finite_or_null(x.p90_s)}, {"censored", x.censored}, {"covered", x.covered},
                    {"missed", x.missed}, {"p50_error", x.p50_error}, {"crps", x.crps},
                    {"baseline_s", std::isnan(x.baseline_s) ? nlohmann::ordered_json(nullptr) : finite_or_null(x.baseline_s)},
                    {"baseline_error", nan_or(x.baseline_error)}, {"baseline_crps", nan_or(x.baseline_crps)},
                    {"windows", windows_doc(x.windows)}});
  nlohmann::ordered_json caps = nlohmann::ordered_json::object();
  for (const auto& [name, share] : opt.caps) caps[name] = share;
  nlohmann::ordered_json summaries = nlohmann::ordered_json::array();
  for (const auto& w : r.windows)
    summaries.push_back({{"bucket", w.bucket}, {"forecasts", w.forecasts}, {"coverage_p10_p90", nan_or(w.coverage)},
                         {"median_p50_error", nan_or(w.median_p50_error)}});
  return {{"cuts", opt.cuts},
          {"caps", caps},
          {"draws", opt.forecast.draws},
          {"recent_requests", opt.forecast.recent_requests},
          {"horizon_s", opt.forecast.horizon_s},
          {"forecasts", r.forecasts},
          {"coverage_p10_p90", nan_or(r.coverage)},
          {"missed_walls", r.missed},
          {"median_p50_error", nan_or(r.median_p50_error)},
          {"mean_crps", nan_or(r.mean_crps)},
          {"baseline",
           {{"method", "straight-line burn rate in the current window"},
            {"median_error", nan_or(r.median_baseline_error)},
            {"mean_crps", nan_or(r.mean_baseline_crps)}}},
          {"windows", summaries},
          {"notes", r.notes},
          {"rows", rows}};
}

} // namespace detail

std::string forecast_to_json(const wall_forecast& f, int indent) { return detail::dump(detail::forecast_doc(f), indent); }
std::string backtest_to_json(const backtest_result& r, const backtest_options& opt, int indent) {
  return detail::dump(detail::backtest_doc(r, opt), indent);
}

namespace {
// "12 s", "1.5 min", or "≥ 12 s" for a quantile known only from below.
std::string bound(double s, bool at_least) { return (at_least ? "≥ " : "") + span(s); }

// The pace the continuation resamples: "a request every 0.3 s".
std::string pace(const wall_forecast& f) {
  return fmt::format("a request every {}, {:+.0f} tokens per request", f.gap_s < 10 ? fmt::format("{:.2g} s", f.gap_s)
                                                                                     : fmt::format("{:.0f} s", f.gap_s),
                     f.growth_per_request);
}
} // namespace

namespace {
// Each bucket's own wall, the session waiting out the others' (forecast_options::each_window): one
// line, when there is more than one bucket.
void write_each_window(std::ostream& os, const wall_forecast& f, double horizon_s) {
  if (f.buckets.size() < 2 || !f.buckets.front().wall) return;
  std::string parts;
  for (const auto& b : f.buckets) {
    const auto& w = *b.wall;
    parts += parts.empty() ? "" : "; ";
    if (w.hit_share == 0)
      parts += fmt::format("{} none within {}", b.name, span(horizon_s));
    else
      parts += fmt::format("{} in {} (P10 {}, P90 {}; {:.0f}% of draws)", b.name, bound(w.p50_s, w.p50_at_least),
                           bound(w.p10_s, w.p10_at_least), bound(w.p90_s, w.p90_at_least), 100 * w.hit_share);
  }
  fmt::print(os, "  each window, the session waiting out the others' resets: {}\n", parts);
}
} // namespace

void write_forecast_text(std::ostream& os, const wall_forecast& f, double horizon_s) {
  fmt::print(os, "{}, the last sent at {}", detail::count_of(f.requests, "request"), when(f, f.last_send_s));
  for (const auto& b : f.buckets) {
    fmt::print(os, "; {} {} of {} ({:.0f}%)", b.name, detail::grouped(b.used), detail::grouped(b.limit),
               b.limit > 0 ? 100 * b.used / b.limit : 0.0);
    if (b.resets_in_s > 0) fmt::print(os, ", empty again at {}", when(f, f.last_send_s + b.resets_in_s));
  }
  fmt::print(os, "\n");
  if (f.refused_at_s) {
    fmt::print(os, "  at the wall: this target would already have refused the request sent at {} ({})\n",
               when(f, *f.refused_at_s), f.refused_by);
    return;
  }
  if (f.buckets.empty()) {
    fmt::print(os, "  no limits: no wall ahead\n");
    return;
  }
  if (f.steps == 0 || !(f.gap_s > 0)) {
    fmt::print(os, "  no pace to forecast from yet (one send per session so far)\n");
    return;
  }
  const std::string censored =
      f.draws_censored == 0 ? ""
                            : fmt::format("; {} draw{} stopped by the work budget {} after the last send (the wall later)",
                                          f.draws_censored, f.draws_censored == 1 ? "" : "s", span(f.censored_at_s));
  if (f.hit_share == 0) {
    // A draw the work budget stopped says nothing past where it stopped: the headline claims only
    // what every draw simulated.
    if (f.draws_censored > 0)
      fmt::print(os, "  next wall: none within {} (simulated); beyond that unknown ({} of {} draws stopped by the work "
                     "budget; {})\n",
                 span(f.censored_at_s), f.draws_censored, f.draws, pace(f));
    else
      fmt::print(os, "  next wall: none within {} in {} draws ({})\n", span(horizon_s), f.draws, pace(f));
    return;
  }
  // Which bucket refused first, over the same draws as the time: "five_hour first in 70% of draws, weekly in 20%".
  std::string first;
  for (const auto& [name, share] : f.first_by)
    first += fmt::format("{}{} {:.0f}%", first.empty() ? "" : ", ", name, 100 * share);
  if (!std::isfinite(f.p50_s)) {
    fmt::print(os, "  next wall: beyond {} in half the draws{} (P10 {}); {:.0f}% of {} draws meet one within it, first "
                   "refused by: {} ({}){}\n",
               span(horizon_s), f.p50_at_least ? " simulated" : "", bound(f.p10_s, f.p10_at_least), 100 * f.hit_share,
               f.draws, first, pace(f), censored);
  } else {
    fmt::print(os, "  next wall: {} in {} (P10 {}, P90 {}), at {}, after about {:.0f} more requests; {:.0f}% of {} draws "
                   "meet one within {}, first refused by: {} ({}){}\n",
               f.bucket, bound(f.p50_s, f.p50_at_least), bound(f.p10_s, f.p10_at_least), bound(f.p90_s, f.p90_at_least),
               (f.p50_at_least ? "≥ " : "") + when(f, f.last_send_s + f.p50_s), f.requests_p50, 100 * f.hit_share, f.draws,
               span(horizon_s), first, pace(f), censored);
  }
  write_each_window(os, f, horizon_s);
}

void write_backtest_text(std::ostream& os, const backtest_result& r, const backtest_options& opt) {
  std::string caps;
  for (const auto& [name, share] : opt.caps) caps += fmt::format("{}{} = {:g} × its first window's use", caps.empty() ? "" : ", ", name, share);
  fmt::print(os, "loopcast {} — backtest of the next-wall forecast ({} draws, the last {} requests resampled{})\n",
             version_string, opt.forecast.draws, opt.forecast.recent_requests, caps.empty() ? "" : "; " + caps);
  fmt::print(os, "\n  {:<44} {:>4} {:>6} {:>9} {:>9} {:>9} {:>9} {:>4} {:>7} {:>6} {:>9} {:>7}\n", "log", "cut", "reqs",
             "truth", "P10", "P50", "P90", "in", "P50 err", "CRPS", "burn rate", "its err");
  for (const auto& x : r.rows) {
    std::string name = x.log;
    if (name.size() > 44) name = "~" + name.substr(name.size() - 43);
    fmt::print(os, "  {:<44} {:>3.0f}% {:>6} {:>9} {:>9} {:>9} {:>9} {:>4} {:>6.0f}% {:>6.2f} {:>9} {:>6.0f}%\n", name,
               100 * x.cut_share, x.requests, span(x.truth_s), span(x.p10_s), span(x.p50_s), span(x.p90_s),
               x.covered ? "yes" : "no", 100 * x.p50_error, x.crps, std::isnan(x.baseline_s) ? "n/a" : span(x.baseline_s),
               100 * x.baseline_error);
  }
  auto pct = [](double x) { return std::isnan(x) ? std::string("n/a") : fmt::format("{:.1f}%", 100 * x); };
  auto num = [](double x) { return std::isnan(x) ? std::string("n/a") : fmt::format("{:.3f}", x); };
  fmt::print(os, "\n  {} forecasts: truth inside P10–P90 in {} (nominal 80%); {} missed wall{}; median P50 error {} of the "
                 "time remaining; mean CRPS {} (of log seconds)\n",
             r.forecasts, pct(r.coverage), r.missed, r.missed == 1 ? "" : "s", pct(r.median_p50_error), num(r.mean_crps));
  fmt::print(os, "  straight-line burn rate: median error {}, mean CRPS {}\n", pct(r.median_baseline_error),
             num(r.mean_baseline_crps));
  for (const auto& w : r.windows)
    fmt::print(os, "  {}'s own wall (the session waiting out the other windows): {} forecasts, truth inside P10–P90 in {}; "
                   "median P50 error {}\n",
               w.bucket, w.forecasts, pct(w.coverage), pct(w.median_p50_error));
  for (const auto& n : r.notes) fmt::print(os, "  note: {}\n", n);
}

} // namespace loopcast
