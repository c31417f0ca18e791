// Reports of `loopcast montecarlo` and `loopcast sweep`: text, JSON and per-run CSV.
#include "loopcast/report.hpp"
#include "loopcast/version.hpp"

#include "report/common.hpp"
#include "report/documents.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <ostream>
#include <string>
#include <type_traits>

namespace loopcast {

using json = nlohmann::ordered_json;

namespace {

// A number for text: "never" for +inf (a censored time), "?" for an unknown bound.
std::string num(double x, const char* fmt_spec) {
  if (std::isnan(x)) return "?";
  if (std::isinf(x)) return "never";  // a time to the first 429 in runs that had none
  return fmt::format(fmt::runtime(fmt_spec), x);
}

std::string est(const estimate& e, const char* f) {
  return fmt::format("{} [{}, {}]", num(e.value, f), num(e.lo, f), num(e.hi, f));
}

void line(std::ostream& os, const char* name, const metric_distribution& d, const char* f) {
  fmt::print(os, "  {:<16} P10 {:<26} P50 {:<26} P90 {}\n", name, est(d.p10, f), est(d.p50, f), est(d.p90, f));
}

// A run_summary row as CSV, by its field list (scenario.hpp); the option's label follows its index.
// A NaN (no 429, no completed task) is an empty cell.
void write_run_fields(std::ostream& os, const scenario& s, const run_summary& r) {
  std::string line;
  for_each_field<run_summary>([&](const auto& f) {
    if (!line.empty()) line += ',';
    const auto v = f.of(r);
    if constexpr (std::is_floating_point_v<std::decay_t<decltype(v)>>) {
      if (!std::isnan(v)) line += fmt::format("{}", v);
    } else {
      line += fmt::format("{}", v);
    }
    if (f.name == "option") {
      line += ',';
      line += detail::csv_field(s.options.at(r.option).label);
    }
  });
  fmt::print(os, "{}\n", line);
}
std::string run_columns() {
  std::string head;
  for_each_field<run_summary>([&](const auto& f) {
    if (!head.empty()) head += ',';
    head += f.name;
    if (f.name == "option") head += ",label";
  });
  return head;
}
} // namespace

void write_montecarlo_text(std::ostream& os, const scenario& s, const montecarlo_result& r) {
  const auto& o = r.settings;
  fmt::print(os, "loopcast {} — Monte Carlo of scenario {}: {} seeds ({} … {}), {:.0f}% intervals\n", version_string,
             s.name, r.seeds, s.seed, s.seed + static_cast<std::uint64_t>(r.seeds) - 1, 100 * o.confidence);
  if (o.precision > 0)
    fmt::print(os, "Target: mean {} within ±{:.1f}% — {}\n", to_string(o.metric), 100 * o.precision,
               r.precision_reached ? "reached" : fmt::format("NOT reached at the limit of {} seeds", o.max_seeds));
  fmt::print(os, "Quantiles are [lower, upper] order statistics; \"?\" means too few seeds for that bound.\n");
  for (const auto& d : r.options) {
    fmt::print(os, "\n== {} ({} runs) ==\n", d.label, d.runs);
    if (d.runs_cut_off > 0)
      fmt::print(os, "  cut off: {} of {} runs reached the attempt budget ({} attempts): the sessions still running "
                     "there were stopped, so those runs' figures cover only what happened before\n",
                 d.runs_cut_off, d.runs, s.attempt_budget);
    fmt::print(os, "  {:<16} {}\n", fmt::format("P(429 ≤ {:.0f} s)", o.horizon_s), est(d.p_429_within, "{:.3f}"));
    if (d.p_refused_within.value > 0)  // counted in P(429) above: a provider answers such a request with a 429
      fmt::print(os, "  {:<16} {} (a request no bucket can ever admit; counted in P(429))\n",
                 fmt::format("P(refused ≤ {:.0f} s)", o.horizon_s), est(d.p_refused_within, "{:.3f}"));
    fmt::print(os, "  {:<16} {}\n", "P(session dies)", est(d.p_session_dies, "{:.3f}"));
    if (has_arrivals(s)) {  // a team's working hours: figures per hour of operation
      fmt::print(os, "  {:<16} {} (hours of the working days with at least one 429)\n", "P(429) per hour",
                 est(d.p_429_per_hour, "{:.3f}"));
      fmt::print(os, "  {:<16} {}\n", "hours lost / h",
                 std::isnan(d.stall_hours_per_hour)
                     ? std::string("n/a")
                     : fmt::format("{:.3f} (session-hours spent waiting out 429s, per hour of operation)",
                                   d.stall_hours_per_hour));
    }
    line(os, "first 429 (s)", d.first_429_s, "{:.1f}");
    line(os, "stall share", d.stall_share, "{:.3f}");
    line(os, "$ per task", d.usd_per_task, "{:.4f}");
    line(os, "tasks per hour", d.tasks_per_hour, "{:.1f}");
    line(os, "wall clock (s)", d.wall_s, "{:.1f}");
    fmt::print(os, "  {:<16} {} (±{})\n", fmt::format("mean {}", to_string(o.metric)),
               est(distribution_of(d, o.metric).mean, "{:.4f}"),
               std::isnan(d.relative_half_width) ? std::string("?") : fmt::format("{:.1f}%", 100 * d.relative_half_width));
  }
}

namespace detail {
nlohmann::ordered_json montecarlo_doc(const scenario& s, const montecarlo_result& r) {
  const auto& o = r.settings;
  json j;
  j["schema_version"] = 1;
  j["loopcast_version"] = version_string;
  j["scenario"] = s.name;
  j["seeds"] = r.seeds;
  j["first_seed"] = s.seed;
  j["confidence"] = o.confidence;
  j["horizon_s"] = o.horizon_s;
  j["precision"] = o.precision > 0 ? json(o.precision) : json(nullptr);
  j["metric"] = to_string(o.metric);
  j["precision_reached"] = r.precision_reached;
  json opts = json::array();
  for (const auto& d : r.options) opts.push_back(detail::fields_json(d));
  j["options"] = opts;
  return j;
}
} // namespace detail

std::string montecarlo_to_json(const scenario& s, const montecarlo_result& r, int indent) {
  return detail::dump(detail::montecarlo_doc(s, r), indent);
}

void write_runs_csv(std::ostream& os, const scenario& s, std::span<const run_summary> rows) {
  fmt::print(os, "{}\n", run_columns());
  for (const auto& r : rows) write_run_fields(os, s, r);
}

void write_sweep_text(std::ostream& os, const sweep_spec& s, const sweep_result& r) {
  fmt::print(os, "loopcast {} — sweep {}: {} points × {} seeds\n", version_string, s.name, s.points.size(), s.seeds);
  if (!s.description.empty()) fmt::print(os, "{}\n", s.description);
  fmt::print(os, "Medians over the seeds with their 95% intervals; P(429) is within 3600 s.\n\n");
  std::string head;
  for (const auto& p : s.paths) head += fmt::format("{:<14} ", p.substr(p.rfind('/') + 1));
  fmt::print(os, "{:>5}  {}{:<12} {:>15} {:>21} {:>28} {:>10}\n", "point", head, "option", "P(429)", "stall share P50",
             "$ per task P50", "tasks/h");
  std::int64_t cut = 0, runs = 0;
  for (const auto& point : r.points)
    for (const auto& d : point) {
      cut += d.runs_cut_off;
      runs += d.runs;
    }
  if (cut > 0)
    fmt::print(os, "Cut off: {} of {} runs reached the attempt budget (\"attempt_budget\"); their figures cover only what "
                   "happened before.\n\n", cut, runs);
  for (std::size_t p = 0; p < s.points.size(); ++p) {
    std::string vals;
    for (const auto& v : s.points[p].values) vals += fmt::format("{:<14} ", v);
    for (const auto& d : r.points[p])
      fmt::print(os, "{:>5}  {}{:<12} {:>15} {:>21} {:>28} {:>10}\n", p + 1, vals, d.label, est(d.p_429_within, "{:.2f}"),
                 est(d.stall_share.p50, "{:.3f}"), est(d.usd_per_task.p50, "{:.4f}"), num(d.tasks_per_hour.p50.value, "{:.1f}"));
  }
}

namespace detail {
nlohmann::ordered_json sweep_doc(const sweep_spec& s, const sweep_result& r) {
  json j;
  j["schema_version"] = 1;
  j["loopcast_version"] = version_string;
  j["sweep"] = s.name;
  j["parameters"] = s.paths;
  j["seeds"] = s.seeds;
  json points = json::array();
  for (std::size_t p = 0; p < s.points.size(); ++p) {
    json values = json::object();
    for (std::size_t i = 0; i < s.paths.size(); ++i) values[s.paths[i]] = json::parse(s.points[p].values[i]);
    json opts = json::array();
    for (const auto& d : r.points[p]) opts.push_back(detail::fields_json(d));
    points.push_back({{"point", p + 1}, {"values", values}, {"first_seed", s.points[p].scn.seed}, {"options", opts}});
  }
  j["points"] = points;
  return j;
}
} // namespace detail

std::string sweep_to_json(const sweep_spec& s, const sweep_result& r, int indent) {
  return detail::dump(detail::sweep_doc(s, r), indent);
}

void write_sweep_csv(std::ostream& os, const sweep_spec& s, const sweep_result& r) {
  fmt::print(os, "point");
  for (const auto& p : s.paths) fmt::print(os, ",{}", detail::csv_field(p));
  fmt::print(os, ",{}\n", run_columns());
  std::size_t row = 0;
  for (std::size_t p = 0; p < s.points.size(); ++p) {
    std::string prefix = fmt::format("{}", p + 1);
    for (const auto& v : s.points[p].values) prefix += fmt::format(",{}", detail::csv_field(v));
    const std::size_t n = static_cast<std::size_t>(s.seeds) * s.points[p].scn.options.size();
    for (std::size_t k = 0; k < n; ++k, ++row) {
      os << prefix << ',';
      write_run_fields(os, s.points[p].scn, r.rows[row]);
    }
  }
}

} // namespace loopcast
