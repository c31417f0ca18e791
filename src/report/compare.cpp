// `loopcast compare`: one row per option, the contract's verdict and the usability factors.
#include "loopcast/report.hpp"
#include "loopcast/version.hpp"

#include "report/documents.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <ostream>

namespace loopcast {

using json = nlohmann::ordered_json;
namespace {
std::string fmt_or(double x, const char* spec, const char* none = "-") {
  return std::isnan(x) ? std::string(none) : fmt::format(fmt::runtime(spec), x);
}
std::string contract_text(const task_contract& c) {
  std::string s;
  auto add = [&](std::string part) { s += (s.empty() ? "" : ", ") + part; };
  if (c.ttft_p50_max_s) add(fmt::format("TTFT P50 ≤ {:g} s", *c.ttft_p50_max_s));
  if (c.ttft_p90_max_s) add(fmt::format("TTFT P90 ≤ {:g} s", *c.ttft_p90_max_s));
  if (c.effective_tps_p50_min) add(fmt::format("effective P50 ≥ {:g} tok/s", *c.effective_tps_p50_min));
  if (c.wall_per_task_max_s) add(fmt::format("≤ {:g} s per task", *c.wall_per_task_max_s));
  if (c.usd_per_task_max) add(fmt::format("≤ ${:g} per task", *c.usd_per_task_max));
  if (c.stall_share_max) add(fmt::format("stall share ≤ {:g}", *c.stall_share_max));
  if (c.must_complete) add("every session completes");
  return s;
}
} // namespace

void write_compare_text(std::ostream& os, const compare_result& r) {
  fmt::print(os, "loopcast {} — compare: {} ({}), {} session{} {:g} s apart, {} seed{}\n", version_string, r.workload,
             r.contract.task, r.sessions, r.sessions == 1 ? "" : "s", r.stagger_s, r.seeds, r.seeds == 1 ? "" : "s");
  fmt::print(os, "Contract: {}\n\n", contract_text(r.contract));
  fmt::print(os, "{:<34} {:>13} {:>13} {:>9} {:>7} {:>7} {:>14} {:>10} {:>9}  {:<9} {}\n", "option", "eff. P50/P90",
             "TTFT P50/P90", "s/task", "429s", "stall", "lifetime", "$/task", "$/hour", "gate", "verdict");
  for (const auto& row : r.rows) {
    const auto lifetime = std::isnan(row.lifetime_p50_s)
                              ? std::string("no wall")
                              : fmt::format("{:.0f} s ({:.0f}%)", row.lifetime_p50_s, 100 * row.stopped_share);
    fmt::print(os, "{:<34} {:>13} {:>13} {:>9.1f} {:>7.1f} {:>6.1f}% {:>14} {:>10} {:>9}  {:<9} {}\n", row.label,
               fmt::format("{:.0f}/{:.0f}", row.effective_tps.p50, row.effective_tps.p90),
               fmt::format("{:.2f}/{:.2f}", row.ttft_s.p50, row.ttft_s.p90), row.wall_per_task_s, row.rate_limited,
               100 * row.stall_share, lifetime, fmt_or(row.usd_per_task, "{:.4f}"), fmt_or(row.usd_per_hour, "{:.2f}"),
               row.gate, row.meets ? "meets" : "fails");
  }
  bool any_fail = false;
  for (const auto& row : r.rows) {
    if (row.meets) continue;
    if (!any_fail) fmt::print(os, "\nWhy the others fail:\n");
    any_fail = true;
    std::string why;
    for (const auto& f : row.failures) why += fmt::format("{}{}", why.empty() ? "" : "; ", f);
    fmt::print(os, "  {}: {}\n", row.label, why);
  }
  fmt::print(os, "\nlifetime: median time before a wall (first 429 or death) stops a session, and the share of sessions "
                 "stopped; gate: intelligence score against the bar (--score MODEL=X --bar Y).\n");
}

namespace detail {
nlohmann::ordered_json compare_doc(const compare_result& r) {
  auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
  const auto& c = r.contract;
  json rows = json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"label", row.label}, {"model", row.model}, {"effective_tps", detail::pct_json(row.effective_tps)},
                    {"ttft_s", detail::pct_json(row.ttft_s)}, {"wall_per_task_s", row.wall_per_task_s},
                    {"rate_limited", row.rate_limited}, {"stall_share", row.stall_share},
                    {"p_session_dies", row.p_session_dies}, {"death", row.death.empty() ? json(nullptr) : json(row.death)},
                    {"context_lifetime_p50_s", row.lifetime_p50_s}, {"stopped_share", row.stopped_share},
                    {"usd_per_task", row.usd_per_task}, {"usd_per_hour", row.usd_per_hour}, {"gate", row.gate},
                    {"intelligence", opt(row.intelligence)}, {"meets", row.meets}, {"failures", row.failures}});
  json j = {{"schema_version", 1}, {"loopcast_version", version_string}, {"workload", r.workload},
            {"contract", {{"task", c.task}, {"ttft_p50_max_s", opt(c.ttft_p50_max_s)}, {"ttft_p90_max_s", opt(c.ttft_p90_max_s)},
                          {"effective_tps_p50_min", opt(c.effective_tps_p50_min)},
                          {"wall_per_task_max_s", opt(c.wall_per_task_max_s)}, {"usd_per_task_max", opt(c.usd_per_task_max)},
                          {"stall_share_max", opt(c.stall_share_max)}, {"must_complete", c.must_complete}}},
            {"sessions", r.sessions}, {"stagger_s", r.stagger_s}, {"seeds", r.seeds}, {"options", rows}};
  return j;
}
} // namespace detail

std::string compare_to_json(const compare_result& r, int indent) {
  return detail::dump(detail::compare_doc(r), indent);
}

} // namespace loopcast
