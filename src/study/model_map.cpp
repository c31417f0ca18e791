// `--on` as the command line and Python give it, into a replay's model map (replay.hpp).
#include "loopcast/errors.hpp"
#include "loopcast/replay.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

namespace loopcast {

namespace {

// One option: a target, or 'TARGET>TARGET…', a route (docs/routing.md).
scenario_option option_of(const std::string& ref, const preset_library& lib, const route_policy& routing,
                          bool no_limits) {
  scenario_option o;
  std::size_t start = 0;
  for (;;) {
    const auto gt = ref.find('>', start);
    const auto name = ref.substr(start, gt == std::string::npos ? std::string::npos : gt - start);
    if (name.empty()) throw std::invalid_argument(fmt::format("--on \"{}\": expected TARGET>TARGET[>TARGET…]", ref));
    o.targets.push_back(lib.load_target_ref(name));
    if (no_limits) o.targets.back().limits.clear();
    if (gt == std::string::npos) break;
    start = gt + 1;
  }
  if (o.targets.size() > max_route_targets)
    throw std::invalid_argument(fmt::format("--on \"{}\": {} targets; a route has at most {}", ref, o.targets.size(),
                                            max_route_targets));
  if (o.targets.size() > 1) o.routing = routing;
  return o;
}

// 'PATTERN=TARGET,PATTERN=TARGET…' as pairs.
std::vector<std::pair<std::string, std::string>> pairs_of(const std::string& spec) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const auto comma = spec.find(',', start);
    const auto item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw std::invalid_argument(
          fmt::format("--on \"{}\": expected PATTERN=TARGET[,PATTERN=TARGET…], found \"{}\"", spec, item));
    pairs.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return pairs;
}

} // namespace

model_map parse_model_map(const std::string& spec, const preset_library& lib, const retry_policy& client,
                          const route_policy& routing, bool no_limits) {
  model_map m;
  std::vector<std::pair<std::string, std::string>> pairs;
  std::error_code ec;
  const auto file = spec.size() > 5 && spec.ends_with(".json") && std::filesystem::exists(spec, ec)
                        ? read_route_file(spec)
                        : std::nullopt;
  if (file) {
    pairs = *file;
    m.label = std::filesystem::path(spec).stem().string();
  } else if (spec.find('=') != std::string::npos) {
    pairs = pairs_of(spec);
  } else {
    pairs.emplace_back("*", spec);
  }
  for (const auto& [pattern, target_ref] : pairs) {
    scenario_option o = option_of(target_ref, lib, routing, no_limits);
    o.label = o.name();
    o.client = client;
    m.entries.push_back({pattern, std::move(o)});
  }
  // A map's column is named after its targets; the replay's "Routes by model" gives the patterns.
  if (pairs.size() == 1) {
    m.label = m.entries.front().option.name();
  } else if (!file) {
    m.label.clear();
    for (const auto& e : m.entries) m.label += (m.label.empty() ? "" : "+") + e.option.name();
  }
  if (no_limits) m.label += " (no limits)";
  return m;
}

} // namespace loopcast
