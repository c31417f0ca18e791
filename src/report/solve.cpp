// `loopcast solve`: every evaluation of an inverse question, and its answer (text and JSON).
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
std::string num(double x) { return std::isnan(x) ? std::string("?") : fmt::format("{:.4f}", x); }
} // namespace

void write_solve_text(std::ostream& os, const scenario& s, const solve_result& r) {
  fmt::print(os, "loopcast {} — {} on scenario {}\n", version_string, r.question, s.name);
  for (const auto& n : r.notes) fmt::print(os, "  {}\n", n);
  fmt::print(os, "\n  {:<4} {:<22} {:>10} {:>22} {:>12}  {}\n", "step", "trial", "value", "interval", "$ per task", "meets");
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const auto& st = r.steps[i];
    const auto interval = std::isnan(st.value.lo) ? std::string() : fmt::format("[{}, {}]", num(st.value.lo), num(st.value.hi));
    fmt::print(os, "  {:<4} {:<22} {:>10} {:>22} {:>12}  {}\n", i + 1, st.label, num(st.value.value), interval,
               num(st.usd_per_task), st.meets ? "yes" : "no");
  }
  fmt::print(os, "\nAnswer: {}\n", r.answer_text);
  if (r.found && r.bracket_lo != r.bracket_hi)
    fmt::print(os, "Bracket: {:.4g} meets the criterion, {:.4g} does not ({} evaluations)\n",
               r.question == "max-agents" ? r.bracket_lo : r.bracket_hi,
               r.question == "max-agents" ? r.bracket_hi : r.bracket_lo, r.steps.size());
}

namespace detail {
nlohmann::ordered_json solve_doc(const scenario& s, const solve_result& r) {
  json steps = json::array();
  for (const auto& st : r.steps)
    steps.push_back({{"x", st.x}, {"label", st.label}, {"value", st.value.value}, {"lo", st.value.lo}, {"hi", st.value.hi},
                     {"usd_per_task", st.usd_per_task}, {"meets", st.meets}});
  json j = {{"schema_version", 1}, {"loopcast_version", version_string}, {"scenario", s.name},
            {"question", r.question}, {"found", r.found}, {"answer", r.found ? json(r.answer) : json(nullptr)},
            {"answer_text", r.answer_text}, {"bracket", {r.bracket_lo, r.bracket_hi}}, {"notes", r.notes},
            {"steps", steps}};
  return j;
}
} // namespace detail

std::string solve_to_json(const scenario& s, const solve_result& r, int indent) {
  return detail::dump(detail::solve_doc(s, r), indent);
}

} // namespace loopcast
