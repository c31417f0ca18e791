// The common header of every preset (kind, name, description, provenance) and distributions.
#include "loopcast/presets.hpp"

#include "presets/readers.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <chrono>

namespace loopcast::detail::preset {

namespace {
// Several problems of one document as one error; an enclosing document's list takes its lines.
class problem_list : public config_error {
public:
  problem_list(const std::string& file, std::vector<std::string> lines)
      : config_error(file, "", fmt::format("{} problems:\n{}", lines.size(), fmt::join(lines, "\n"))),
        lines_(std::move(lines)) {}
  const std::vector<std::string>& lines() const noexcept { return lines_; }

private:
  std::vector<std::string> lines_;
};
} // namespace

void problems::note(const config_error& e) {
  if (lines_.empty()) first_ = std::current_exception();
  if (const auto* list = dynamic_cast<const problem_list*>(&e); list && e.file() == file_) {
    lines_.insert(lines_.end(), list->lines().begin(), list->lines().end());
    return;
  }
  // Its place in this document, or the whole message when it came from another file.
  const auto& r = e.reason();
  lines_.push_back("  " + (e.file() != file_ ? std::string(e.what()) : e.pointer().empty() ? r : e.pointer() + ": " + r));
}

void problems::throw_if_any() const {
  if (lines_.size() == 1) std::rethrow_exception(first_);
  if (!lines_.empty()) throw problem_list(file_, lines_);
}

// ---- common header ---------------------------------------------------------------------------

void check_kind(const node& root, preset_kind want) {
  const auto k = read_enum<preset_kind>(root.at("kind"));
  if (k != want)
    root.at("kind").fail(fmt::format("expected a {} preset, found kind \"{}\"", to_string(want), to_string(k)));
}

std::string read_date(const node& n) {
  const auto s = n.string();
  const bool shape = s.size() == 10 && s[4] == '-' && s[7] == '-' &&
                     std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '-'; });
  if (!shape) n.fail(fmt::format("expected a date YYYY-MM-DD, found \"{}\"", s));
  return s;
}

std::string read_source(const node& n) {
  if (n.is_string()) {
    auto s = n.string();
    if (s.empty()) n.fail("expected a non-empty source");
    return s;
  }
  std::vector<std::string> parts;
  for (const auto& e : n.array(1)) parts.push_back(e.string());
  return fmt::format("{}", fmt::join(parts, "; "));
}

provenance read_provenance(const node& root) {
  provenance p;
  const bool in_code = root.provenance_optional();
  p.source = in_code && !root.has("source") ? std::string(provenance_in_code) : read_source(root.at("source"));
  p.read_on = in_code && !root.has("read_on") ? std::string{} : read_date(root.at("read_on"));
  p.verified = root.has("verified") ? root.at("verified").boolean() : !in_code || root.has("source");
  if (auto n = root.find("notes")) {
    if (!n->is_string())
      for (const auto& e : n->array()) (void)e.string();
  }
  return p;
}

std::string read_name(const node& root) {
  auto s = root.at("name").string();
  if (s.empty() || s.find_first_of(" \t\n/\\") != std::string::npos)
    root.at("name").fail(fmt::format("expected a name without spaces or slashes, found \"{}\"", s));
  return s;
}

std::string read_description(const node& root) {
  return root.has("description") ? root.at("description").string() : std::string{};
}

std::vector<std::string> read_string_list(const node& n) {
  std::vector<std::string> out;
  for (const auto& e : n.array()) out.push_back(e.string());
  return out;
}

// ---- distributions -----------------------------------------------------------------------------
distribution read_distribution(const node& n) {
  const auto kind = n.at("kind").one_of({"fixed", "uniform", "lognormal", "gamma", "empirical", "quantiles"});
  if (kind == "fixed") {
    n.expect_keys({"kind", "value"});
    return fixed_dist{n.at("value").non_negative()};
  }
  if (kind == "uniform") {
    n.expect_keys({"kind", "low", "high"});
    const double lo = n.at("low").non_negative();
    const double hi = n.at("high").non_negative();
    if (hi < lo) n.at("high").fail(fmt::format("expected high >= low ({}), found {}", lo, hi));
    return uniform_dist{lo, hi};
  }
  if (kind == "lognormal") {
    n.expect_keys({"kind", "median", "p90"});
    const double med = n.at("median").positive();
    const double p90 = n.at("p90").positive();
    if (p90 < med) n.at("p90").fail(fmt::format("expected p90 >= median ({}), found {}", med, p90));
    return lognormal_dist{med, p90};
  }
  if (kind == "gamma") {
    n.expect_keys({"kind", "shape", "scale"});
    return gamma_dist{n.at("shape").positive(), n.at("scale").positive()};
  }
  if (kind == "quantiles") {
    n.expect_keys({"kind", "p", "values"});
    quantile_dist q;
    for (const auto& v : n.at("p").array(2)) q.p.push_back(v.number_in(0, 1));
    for (const auto& v : n.at("values").array(2)) q.values.push_back(v.non_negative());
    if (q.p.size() != q.values.size())
      n.at("values").fail(fmt::format("expected as many values as probabilities ({}), found {}", q.p.size(), q.values.size()));
    if (q.p.front() != 0.0 || q.p.back() != 1.0)
      n.at("p").fail(fmt::format("expected probabilities from 0 to 1, found {} to {}", q.p.front(), q.p.back()));
    for (std::size_t i = 1; i < q.p.size(); ++i) {
      if (q.p[i] <= q.p[i - 1])
        n.at("p").fail(fmt::format("expected rising probabilities, found {} after {} (entry {})", q.p[i], q.p[i - 1], i));
      if (q.values[i] < q.values[i - 1])
        n.at("values").fail(fmt::format("expected values that never fall, found {} after {} (entry {})", q.values[i],
                                        q.values[i - 1], i));
    }
    return q;
  }
  n.expect_keys({"kind", "values"});
  empirical_dist e;
  for (const auto& v : n.at("values").array(1)) e.values.push_back(v.non_negative());
  return e;
}

} // namespace loopcast::detail::preset
