// `loopcast fit` (the fitted speed as a target preset) and `loopcast validate` (replays against
// held-out recordings).
#include "loopcast/report.hpp"
#include "loopcast/speed_fit.hpp"
#include "loopcast/version.hpp"

#include "report/common.hpp"
#include "report/documents.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include "loopcast/validate.hpp"

namespace loopcast {

using detail::grouped;
using detail::nan_or;
using detail::tps_or_na;
using detail::usd_or_na;
using json = nlohmann::ordered_json;

namespace detail {
nlohmann::ordered_json fit_to_target_doc(const speed_fit& f, const std::string& name,
                                         const std::vector<recorded_trace>& traces, const fit_preset_options& opt) {
  auto curve = [](const speed_curve& c) {
    const auto& l = std::get<linear_curve>(c);
    return json{{"kind", "linear"}, {"a_s_per_token", l.a_s}, {"b_s_per_token_per_position", l.b_s_per_token}};
  };
  std::vector<std::string> files;
  std::int64_t window = 0;
  for (const auto& t : traces) {
    files.push_back(t.file);
    for (const auto& s : t.sessions)
      for (const auto& r : s.requests) window = std::max(window, r.tokens.total());
  }
  json j;
  j["kind"] = "target";
  j["name"] = name;
  j["description"] = fmt::format("Speed fitted by `loopcast fit` to {} requests (R² {:.3f}, median |error| {:.1f}%)", f.samples,
                                 f.r_squared, 100 * f.abs_rel_error.p50);
  j["type"] = "local";
  j["provider"] = "fitted";
  j["tier"] = "fitted";
  j["model"] = f.models.size() == 1 ? f.models.front() : name;
  j["source"] = files;
  j["read_on"] = detail::today_utc();
  j["verified"] = false;
  json notes = json::array({"Only the speed is fitted. Add limits, cache rules and prices (or power) before relying on costs.",
                            fmt::format("Residuals |predicted - recorded| / recorded: P10 {:.3f}, P50 {:.3f}, P90 {:.3f}.",
                                        f.abs_rel_error.p10, f.abs_rel_error.p50, f.abs_rel_error.p90)});
  for (const auto& n : f.notes) notes.push_back(n);
  j["notes"] = notes;
  // The logs do not record the model's window. The agent did not compact below the largest
  // recorded request (`window`: prompt + output), whichever rule it follows (docs/replay.md): at
  // 83% of the window on the prompt, or at the window minus 33,000 on the last response (Claude
  // Code). The smallest window consistent with both, rounded up to 1,024 tokens.
  constexpr std::int64_t claude_code_reserve = 33000;
  const auto largest = std::max<std::int64_t>(window, 1);
  const double smallest = std::max(static_cast<double>(largest) / default_compact_at,
                                   static_cast<double>(largest + claude_code_reserve + 1));
  auto needed = static_cast<std::int64_t>(std::ceil(smallest / 1024.0)) * 1024;
  if (opt.context_window_tokens > 0) {
    needed = opt.context_window_tokens;
  } else {
    notes.push_back(fmt::format("context_window_tokens {} is assumed: the smallest window (in 1,024s) at which an agent "
                                "compacting at {:.0f}% of it, or at {} tokens below it, would not have compacted before "
                                "the largest recorded request ({} tokens). Set the model's real window (--context-window).",
                                needed, 100 * default_compact_at, claude_code_reserve, window));
  }
  j["notes"] = notes;
  j["context_window_tokens"] = needed;
  j["limits"] = {{"sends_retry_after", false}, {"buckets", json::array()}};
  j["cache"] = {{"enabled", true}, {"block_tokens", 1}, {"min_tokens", 0}, {"ttl_s", 86400}, {"write_charged", false}};
  j["speed"] = {{"overhead_s", f.model.overhead_s}, {"prefill", curve(f.model.prefill)},
                {"cached_token_s", f.model.cached_token_s}, {"decode", curve(f.model.decode)}};
  if (!f.model.hour_factors.empty()) j["speed"]["hour_factors"] = f.model.hour_factors;
  if (const auto& o = f.model.output; o.any()) {
    auto round4 = [](double x) { return std::round(x * 1e4) / 1e4; };
    j["speed"]["output_factors"] = {{"thinking", round4(o.thinking)}, {"text", round4(o.text)},
                                    {"tool_use", round4(o.tool_use)}, {"unknown", round4(o.unknown)}};
  }
  if (f.model.context_max_tokens > 0)
    j["speed"]["context_max_tokens"] = static_cast<std::int64_t>(std::ceil(f.model.context_max_tokens));
  if (opt.noise && f.noise_sigma > 0) {
    j["speed"]["noise"] = {{"kind", "lognormal"}, {"median", f.noise_median},
                           {"p90", f.noise_median * std::exp(z90 * f.noise_sigma)}};
    if (f.session_sigma > 0) j["speed"]["noise"]["session_p90"] = std::exp(z90 * f.session_sigma);
    notes.push_back(fmt::format("speed.noise: each request's time is multiplied by a log-normal factor (median {:.3f}, "
                                "log-space spread {:.3f}) and each session's by one of median 1 and spread {:.3f}, "
                                "fitted to the residuals, drawn from the seed",
                                f.noise_median, f.noise_sigma, f.session_sigma));
    j["notes"] = notes;
  }
  j["power"] = {{"load_power_w", 0}, {"idle_power_w", 0}, {"usd_per_kwh", 0}};
  return j;
}
} // namespace detail

std::string fit_to_target_json(const speed_fit& f, const std::string& name, const std::vector<recorded_trace>& traces,
                               const fit_preset_options& opt) {
  return detail::dump(detail::fit_to_target_doc(f, name, traces, opt), 2);
}

namespace detail {
nlohmann::ordered_json validation_doc(const validation_result& r) {
  const auto& sm = r.summary;
  json j;
  j["schema_version"] = 1;
  j["loopcast_version"] = version_string;
  j["seeds"] = r.seeds;
  j["notes"] = r.notes;
  json traces = json::array();
  for (const auto& v : r.traces)
    traces.push_back({{"file", v.file}, {"requests", v.requests}, {"ape_p50", nan_or(v.ape_p50)}, {"ape_p90", nan_or(v.ape_p90)},
                      {"bias_p50", nan_or(v.bias_p50)}, {"total_error", nan_or(v.total_error)}, {"ks", nan_or(v.ks)},
                      {"cache_share_diff", nan_or(v.cache_share_diff)}, {"total_recorded_s", nan_or(v.total_recorded_s)},
                      {"total_p10_s", nan_or(v.total_p10_s)}, {"total_p90_s", nan_or(v.total_p90_s)}});
  j["traces"] = traces;
  json models = json::array();
  for (const auto& m : r.models)
    models.push_back({{"model", m.model}, {"requests", m.requests}, {"ape_p50", nan_or(m.ape_p50)},
                      {"coverage_p10_p90", nan_or(m.coverage)}});
  j["models"] = models;
  j["summary"] = {{"traces", sm.traces}, {"requests", sm.requests}, {"ape_p50_median", nan_or(sm.ape_p50_median)},
                  {"ape_p50_p90", nan_or(sm.ape_p50_p90)}, {"bias_median", nan_or(sm.bias_median)},
                  {"total_error_abs_median", nan_or(sm.total_error_abs_median)},
                  {"total_error_abs_max", nan_or(sm.total_error_abs_max)}, {"ks_median", nan_or(sm.ks_median)},
                  {"coverage_p10_p90", nan_or(sm.coverage)}, {"total_coverage_p10_p90", nan_or(sm.total_coverage)},
                  {"cache_share_diff_median", nan_or(sm.cache_share_diff_median)}, {"ttft_requests", sm.ttft_requests},
                  {"ttft_ape_median", nan_or(sm.ttft_ape_median)}};
  return j;
}
} // namespace detail

std::string validation_to_json(const validation_result& r, int indent) {
  return detail::dump(detail::validation_doc(r), indent);
}

} // namespace loopcast
