// Loading presets (models/*.json) strictly: the dispatcher from text, files and names to the
// readers of each kind (one file each beside this one), and the library of preset folders. The
// accepted keys of every kind are documented in docs/presets.md; keep the two in step.
#include "loopcast/presets.hpp"
#include "loopcast/files.hpp"
#include "loopcast/price_lists.hpp"

#include "readers.hpp"
#include "../json/writer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <span>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <unistd.h>

namespace loopcast {

using detail::node;
using namespace detail::preset;

namespace {

template <class T, class F>
T parse_with(std::string_view text, const std::string& file, F read) {
  const auto j = detail::parse_json(text, file);
  return read(node(j, "", file));
}

} // namespace

target parse_target(std::string_view text, const std::string& file) { return parse_with<target>(text, file, read_target); }
retry_policy parse_client(std::string_view text, const std::string& file) {
  return parse_with<retry_policy>(text, file, read_client);
}
workload parse_workload(std::string_view text, const std::string& file) {
  return parse_with<workload>(text, file, read_workload);
}
scenario_option parse_route(std::string_view text, const std::string& file, const preset_library& lib) {
  return parse_with<scenario_option>(text, file, [&](const node& n) { return read_route_option(n, lib); });
}
scenario parse_scenario(std::string_view text, const std::string& file, const preset_library& lib) {
  return parse_with<scenario>(text, file, [&](const node& n) { return read_scenario(n, lib); });
}

std::string resolved_preset_json(std::string_view text, const std::string& file, const preset_library& lib, int indent) {
  auto j = detail::parse_ordered_json(text, file);
  if (j.is_object() && j.value("kind", "") == "scenario") {
    const auto checked = detail::parse_json(text, file);
    (void)read_scenario(node(checked, "", file), lib);  // refuse a bad scenario with its own messages
    if (j.contains("workload")) j["workload"] = inline_reference(j["workload"], preset_kind::workload, file, lib);
    if (j.contains("fleet"))
      for (auto& g : j["fleet"]) g["workload"] = inline_reference(g["workload"], preset_kind::workload, file, lib);
    for (auto& o : j["options"]) {
      if (o.contains("target")) o["target"] = inline_reference(o["target"], preset_kind::target, file, lib);
      if (o.contains("route"))
        for (auto& t : o["route"]["targets"]) t = inline_reference(t, preset_kind::target, file, lib);
      o["client"] = inline_reference(o["client"], preset_kind::client, file, lib);
    }
  }
  return detail::dump(j, indent);
}

target load_target_file(const std::filesystem::path& f) { return parse_target(read_text_file(f.string()), f.string()); }
retry_policy load_client_file(const std::filesystem::path& f) {
  return parse_client(read_text_file(f.string()), f.string());
}
workload load_workload_file(const std::filesystem::path& f) {
  return parse_workload(read_text_file(f.string()), f.string());
}
scenario load_scenario_file(const std::filesystem::path& f, const preset_library& lib) {
  return parse_scenario(read_text_file(f.string()), f.string(), lib);
}

// ---- the library ---------------------------------------------------------------------------------
preset_library::preset_library(std::vector<std::filesystem::path> dirs) : dirs_(std::move(dirs)) {
  for (const auto& dir : dirs_) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      throw config_error(dir.string(), "", "presets directory does not exist");
    std::vector<std::filesystem::path> files;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::end(it);
         it.increment(ec))
      if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path());
    if (ec) throw config_error(dir.string(), "", fmt::format("cannot list presets: {}", ec.message()));
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      const std::string file = f.string();  // outlives the nodes that point to it
      const auto text = read_text_file(file);
      const auto j = detail::parse_json(text, file);
      const node root(j, "", file);
      preset_entry e;
      e.kind = read_enum<preset_kind>(root.at("kind"));
      e.name = read_name(root);
      e.description = read_description(root);
      e.file = f;
      e.origin = read_provenance(root);
      if (e.kind == preset_kind::target)
        for (auto [key, field] : {std::pair{"provider", &e.provider}, {"tier", &e.tier}, {"model", &e.model}})
          if (root.has(key)) *field = root.at(key).string();
      for (const auto& prev : entries_)
        if (prev.kind == e.kind && prev.name == e.name)
          throw config_error(f.string(), "/name",
                             fmt::format("{} preset \"{}\" is also defined in {}", to_string(e.kind), e.name,
                                         prev.file.string()));
      entries_.push_back(std::move(e));
    }
  }
}

const std::filesystem::path& preset_library::find(preset_kind kind, std::string_view name) const {
  std::vector<std::string> known;
  for (const auto& e : entries_) {
    if (e.kind != kind) continue;
    if (e.name == name) return e.file;
    known.push_back(e.name);
  }
  std::string where;
  for (const auto& d : dirs_) where += (where.empty() ? "" : ", ") + d.string();
  throw config_error(where, "", fmt::format("no {} preset named \"{}\" (known: {})", to_string(kind), name,
                                            known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
}

target preset_library::load_target(std::string_view name) const { return load_target_file(find(preset_kind::target, name)); }
retry_policy preset_library::load_client(std::string_view name) const {
  return load_client_file(find(preset_kind::client, name));
}
workload preset_library::load_workload(std::string_view name) const {
  return load_workload_file(find(preset_kind::workload, name));
}
scenario preset_library::load_scenario(std::string_view name) const {
  return load_scenario_file(find(preset_kind::scenario, name), *this);
}

std::filesystem::path default_models_dir() {
  if (const char* env = std::getenv("LOOPCAST_MODELS"); env && *env) return env;
  std::error_code ec;
  // Installed next to the executable: <prefix>/bin/loopcast → <prefix>/share/loopcast/models.
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = exe.parent_path().parent_path() / "share" / "loopcast" / "models";
    if (std::filesystem::is_directory(beside, ec)) return beside;
  }
  // A build-tree binary uses the source tree's presets; an installed library the installed ones.
  if (std::filesystem::is_directory(LOOPCAST_SOURCE_MODELS_DIR, ec)) return LOOPCAST_SOURCE_MODELS_DIR;
  return LOOPCAST_INSTALL_MODELS_DIR;
}

preset_library preset_library::standard() { return preset_library({default_models_dir()}); }

model_price_book catalogue_price_book(const preset_library& lib) {
  model_price_book book;
  book.source = "the preset catalogue";
  std::vector<const preset_entry*> targets;
  for (const auto& e : lib.entries())
    if (e.kind == preset_kind::target) targets.push_back(&e);
  std::sort(targets.begin(), targets.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  for (const auto* e : targets) {
    const auto t = lib.load_target(e->name);
    if (!t.prices || t.model.empty()) continue;
    book.add({normalize_model_name(t.model), t.model, t.name, *t.prices, t.cache.enabled && t.cache.write_charged});
  }
  return book;
}

model_price_book load_price_book(const std::string& price_list, const preset_library& lib) {
  return price_list.empty() ? catalogue_price_book(lib) : price_book_of(import_price_list(price_list));
}

std::optional<std::vector<std::pair<std::string, std::string>>> read_route_file(const std::string& path) {
  const auto j = nlohmann::ordered_json::parse(read_text_file(path), nullptr, false);
  if (!j.is_object() || j.contains("kind")) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : j.items()) {
    if (!v.is_string() || k.empty())
      throw config_error(path, "/" + k, "expected \"MODEL-PATTERN\": \"TARGET\" (a preset name or .json path)");
    out.emplace_back(k, v.get<std::string>());
  }
  if (out.empty()) throw config_error(path, "", "expected at least one \"MODEL-PATTERN\": \"TARGET\" pair");
  return out;
}

} // namespace loopcast
