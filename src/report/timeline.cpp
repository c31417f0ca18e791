// One row per request attempt (`loopcast run --timeline FILE`); columns in docs/output.md.
#include "loopcast/report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <ostream>

namespace loopcast {

void write_timeline_csv(std::ostream& os, const scenario_result& res) { write_timeline_csv(os, res.options); }

void write_timeline_csv(std::ostream& os, std::span<const option_result> options) {
  // Bucket columns: the union of every option's bucket names, in order of appearance.
  std::vector<std::string> names;
  for (const auto& o : options)
    for (const auto& b : o.option->buckets())
      if (std::find(names.begin(), names.end(), b.name) == names.end()) names.push_back(b.name);

  std::string token_columns;  // the six classes, by token_counts' field list
  for_each_field<token_counts>([&](const auto& f) { (token_columns += f.name) += ','; });
  fmt::print(os, "option,session,request,turn,attempt,compaction,status,t_send_s,t_first_token_s,t_end_s,"
                 "retry_after_s,wait_s,refused_by,{}context,cost_usd", token_columns);
  for (const auto& n : names) fmt::print(os, ",used_{}", n);
  fmt::print(os, "\n");

  for (const auto& o : options) {
    const auto limits = o.option->buckets();
    std::vector<int> column(names.size(), -1);  // which of this option's buckets fills each column
    for (std::size_t b = 0; b < limits.size(); ++b)
      column[static_cast<std::size_t>(std::find(names.begin(), names.end(), limits[b].name) - names.begin())] =
          static_cast<int>(b);
    const std::size_t nb = limits.size();
    for (std::size_t i = 0; i < o.sim.attempts.size(); ++i) {
      const auto& a = o.sim.attempts[i];
      fmt::print(os, "{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},", o.label, a.session + 1, a.request, a.turn, a.attempt,
                 a.compaction ? 1 : 0, to_string(a.status), a.t_send, a.t_first_token, a.t_end);
      if (a.retry_after_s >= 0) fmt::print(os, "{:.6f}", a.retry_after_s);
      fmt::print(os, ",{:.6f},{},", a.wait_s,
                 a.refused_by >= 0 ? limits[static_cast<std::size_t>(a.refused_by)].name : std::string{});
      for_each_field<token_counts>([&](const auto& f) { fmt::print(os, "{},", f.of(a.tokens)); });
      fmt::print(os, "{},{:.8f}", a.tokens.prompt(), a.cost_usd);
      for (std::size_t c = 0; c < names.size(); ++c) {
        if (column[c] < 0) fmt::print(os, ",");
        else fmt::print(os, ",{:.1f}", o.sim.bucket_levels[i * nb + static_cast<std::size_t>(column[c])]);
      }
      fmt::print(os, "\n");
    }
  }
}

} // namespace loopcast
