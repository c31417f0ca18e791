// `--on` as the command line and Python give it, into a replay's model map (replay.hpp).
#include "loopcast/errors.hpp"
#include "loopcast/replay.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

namespace loopcast {

namespace {

// 'TARGET>TARGET…' as its target references.
std::vector<std::string> chain_of(const std::string& ref) {
  std::vector<std::string> refs;
  std::size_t start = 0;
  for (;;) {
    const auto gt = ref.find('>', start);
    auto name = ref.substr(start, gt == std::string::npos ? std::string::npos : gt - start);
    if (name.empty()) throw std::invalid_argument(fmt::format("--on \"{}\": expected TARGET>TARGET[>TARGET…]", ref));
    refs.push_back(std::move(name));
    if (gt == std::string::npos) break;
    start = gt + 1;
  }
  if (refs.size() > max_route_targets)
    throw std::invalid_argument(fmt::format("--on \"{}\": {} targets; a route has at most {}", ref, refs.size(),
                                            max_route_targets));
  return refs;
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

model_map_spec split_model_map(const std::string& spec) {
  model_map_spec m;
  std::vector<std::pair<std::string, std::string>> pairs;
  std::error_code ec;
  const bool json_file = spec.size() > 5 && spec.ends_with(".json") && std::filesystem::is_regular_file(spec, ec);
  const auto file = json_file ? read_route_file(spec) : std::nullopt;
  if (file) {
    pairs = *file;
    m.file_label = std::filesystem::path(spec).stem().string();
  } else if (json_file) {  // a target's file, whatever its path holds ('=' or '>' in a folder's name)
    m.entries.push_back({"*", {spec}});
    return m;
  } else if (spec.find('=') != std::string::npos) {
    pairs = pairs_of(spec);
  } else {
    pairs.emplace_back("*", spec);
  }
  for (auto& [pattern, ref] : pairs) m.entries.push_back({std::move(pattern), chain_of(ref)});
  return m;
}

model_map parse_model_map(const std::string& spec, const preset_library& lib, const retry_policy& client,
                          const route_policy& routing, bool no_limits) {
  const auto split = split_model_map(spec);
  model_map m;
  for (const auto& [pattern, refs] : split.entries) {
    scenario_option o;
    for (const auto& ref : refs) {
      o.targets.push_back(lib.load_target_ref(ref));
      if (no_limits) o.targets.back().limits.clear();
    }
    if (o.targets.size() > 1) o.routing = routing;
    o.label = o.name();
    o.client = client;
    m.entries.push_back({pattern, std::move(o)});
  }
  // A map's column is named after its targets (a route file's after the file); the replay's
  // "Routes by model" gives the patterns.
  if (split.entries.size() == 1) {
    m.label = m.entries.front().option.name();
  } else if (!split.file_label.empty()) {
    m.label = split.file_label;
  } else {
    for (const auto& e : m.entries) m.label += (m.label.empty() ? "" : "+") + e.option.name();
  }
  if (no_limits) m.label += " (no limits)";
  return m;
}

} // namespace loopcast
