#include "report_common.hpp"

#include <fmt/format.h>

#include <cmath>

namespace loopcast::detail {

std::string grouped(double x) {
  const auto n = static_cast<long long>(std::llround(x));
  auto digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string overall_outcome(const simulation_result& r) {
  if (r.sessions.empty()) return "completed";
  const auto first = r.sessions.front().outcome;
  for (const auto& s : r.sessions)
    if (s.outcome != first) return "mixed";
  return std::string(to_string(first));
}

script_summary summarize_script(const session_script& s) {
  script_summary out;
  out.requests = s.requests.size();
  for (const auto& r : s.requests) {
    out.compactions += r.compaction ? 1 : 0;
    out.max_context = std::max(out.max_context, r.prompt_tokens);
  }
  if (!s.requests.empty()) {
    out.first_context = s.requests.front().prompt_tokens;
    out.last_context = s.requests.back().prompt_tokens;
  }
  return out;
}

double usd_per_hour(const simulation_result& r) { return r.wall_s > 0 ? r.cost_usd / (r.wall_s / 3600.0) : 0.0; }

double usd_per_1k_generated(const simulation_result& r) {
  const auto g = r.tokens.generated();
  return g > 0 ? r.cost_usd / (static_cast<double>(g) / 1000.0) : 0.0;
}

comparison_pair find_comparison(const scenario_result& r) {
  comparison_pair p;
  for (std::size_t i = 0; i < r.options.size(); ++i) {
    const auto kind = r.options[i].option->tgt.kind;
    if (kind == target_kind::cloud && p.cloud < 0) p.cloud = static_cast<int>(i);
    if (kind == target_kind::local && p.local < 0) p.local = static_cast<int>(i);
  }
  if (p.cloud < 0 || p.local < 0) return {};
  return p;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}

} // namespace loopcast::detail
