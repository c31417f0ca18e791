// Loading presets (models/*.json) strictly: the dispatcher from text, files and names to the
// readers of each kind (one file each beside this one), and the library of preset folders. The
// accepted keys of every kind are documented in docs/presets.md; keep the two in step.
#include "loopcast/presets.hpp"
#include "loopcast/names.hpp"
#include "loopcast/files.hpp"
#include "loopcast/price_lists.hpp"

#include "presets/readers.hpp"
#include "json/writer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <span>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <vector>
#include <dlfcn.h>
#include <unistd.h>

namespace loopcast {

using detail::node;
using namespace detail::preset;

namespace {

template <class T, class F>
T parse_with(std::string_view text, const std::string& file, F read, bool in_code = true) {
  const auto j = detail::parse_json(text, file);
  return read(node(j, "", file).allow_missing_provenance(in_code));
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

// Preset files must say where their figures come from.
target load_target_file(const std::filesystem::path& f) {
  return parse_with<target>(read_text_file(f.string()), f.string(), read_target, false);
}
retry_policy load_client_file(const std::filesystem::path& f) {
  return parse_with<retry_policy>(read_text_file(f.string()), f.string(), read_client, false);
}
workload load_workload_file(const std::filesystem::path& f) {
  return parse_with<workload>(read_text_file(f.string()), f.string(), read_workload, false);
}
scenario load_scenario_file(const std::filesystem::path& f, const preset_library& lib) {
  return parse_with<scenario>(read_text_file(f.string()), f.string(),
                              [&](const node& n) { return read_scenario(n, lib); }, false);
}

// ---- the library ---------------------------------------------------------------------------------
namespace {

// The index reads each file's header only: its kind, name, description, provenance and a target's
// provider, tier and model. These keys, taken from a fast parse of the whole file, become a
// document of their own, which the same readers check (a header's keys are top-level, so their
// messages name the same pointers).
constexpr std::array<std::string_view, 10> header_keys{"kind",     "name",  "description", "source", "read_on",
                                                       "verified", "notes", "provider",    "tier",   "model"};
constexpr std::size_t max_preset_depth = detail::max_strict_json_depth;  // as the strict reader's

bool has_repeated_key(simdjson::dom::element e) {
  if (simdjson::dom::array a; !e.get_array().get(a)) {
    for (const auto v : a)
      if (has_repeated_key(v)) return true;
    return false;
  }
  simdjson::dom::object o;
  if (e.get_object().get(o)) return false;
  // A preset's objects are small: their keys compared pairwise, on the stack (sorted past 16).
  constexpr std::size_t small = 16;
  std::array<std::string_view, small> few;
  std::vector<std::string_view> many;
  std::size_t n = 0;
  for (const auto field : o) {
    if (has_repeated_key(field.value)) return true;
    if (n < small) {
      if (std::find(few.begin(), few.begin() + static_cast<std::ptrdiff_t>(n), field.key) != few.begin() + static_cast<std::ptrdiff_t>(n)) return true;
      few[n] = field.key;
    } else {
      if (many.empty()) many.assign(few.begin(), few.end());
      many.push_back(field.key);
    }
    ++n;
  }
  std::sort(many.begin(), many.end());
  return std::adjacent_find(many.begin(), many.end()) != many.end();
}

// A value read by simdjson, as the strict reader's document holds it.
nlohmann::json to_json(simdjson::dom::element e) {
  if (simdjson::dom::array a; !e.get_array().get(a)) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto v : a) out.push_back(to_json(v));
    return out;
  }
  if (simdjson::dom::object o; !e.get_object().get(o)) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto field : o) out[std::string(field.key)] = to_json(field.value);
    return out;
  }
  if (std::string_view v; !e.get_string().get(v)) return std::string(v);
  if (bool v; !e.get_bool().get(v)) return v;
  if (std::int64_t v; e.is_int64() && !e.get_int64().get(v)) return v;
  if (std::uint64_t v; e.is_uint64() && !e.get_uint64().get(v)) return v;
  if (double v; !e.get_double().get(v)) return v;
  return nullptr;
}

// The file's header keys as a document, when simdjson reads the whole file (syntax, UTF-8,
// nesting) and no object in it repeats a key; nullopt otherwise, and the strict reader then parses
// the file and says what is wrong with it.
std::optional<nlohmann::json> header_of(const std::string& text, simdjson::dom::parser& parser) {
  if (parser.capacity() < text.size() || parser.max_depth() != max_preset_depth)
    if (parser.allocate(text.size(), max_preset_depth)) return std::nullopt;
  const simdjson::padded_string padded(text);
  simdjson::dom::element doc;
  if (parser.parse(padded).get(doc) || has_repeated_key(doc)) return std::nullopt;
  simdjson::dom::object root;
  if (doc.get_object().get(root)) return std::nullopt;
  nlohmann::json header = nlohmann::json::object();
  for (const auto field : root)
    if (std::find(header_keys.begin(), header_keys.end(), field.key) != header_keys.end())
      header[std::string(field.key)] = to_json(field.value);
  return header;
}

} // namespace

preset_library::preset_library(std::vector<std::filesystem::path> dirs) : dirs_(std::move(dirs)) {
  for (const auto& dir : dirs_) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      throw config_error(dir.string(), "", "presets directory does not exist (set $LOOPCAST_MODELS or pass a models directory)");
    std::vector<std::filesystem::path> files;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::end(it);
         it.increment(ec)) {
      // The bundled price lists (models/prices/) are data, not presets (bundled_price_list()).
      if (it.depth() == 0 && it->is_directory() && it->path().filename() == "prices") {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path());
    }
    if (ec) throw config_error(dir.string(), "", fmt::format("cannot list presets: {}", ec.message()));
    std::sort(files.begin(), files.end());
    simdjson::dom::parser parser;
    for (const auto& f : files) {
      const std::string file = f.string();  // outlives the nodes that point to it
      const auto text = read_text_file(file);
      auto header = header_of(text, parser);
      const auto j = header ? std::move(*header) : detail::parse_json(text, file);  // (throws what is wrong)
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
  // A short list is shown whole; a long one (the targets) by its nearest names and a count.
  if (known.size() > 12) {
    const auto near = closest_names(name, known);
    throw config_error(where, "", fmt::format("no {} preset named \"{}\"{} ({} {} presets: `loopcast presets --kind {}`)",
                                              to_string(kind), name,
                                              near.empty() ? "" : fmt::format("; did you mean {}?", fmt::join(near, " or ")),
                                              known.size(), to_string(kind), to_string(kind)));
  }
  throw config_error(where, "", fmt::format("no {} preset named \"{}\" (known: {})", to_string(kind), name,
                                            known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
}

target preset_library::load_target(std::string_view name) const { return load_target_file(find(preset_kind::target, name)); }
target preset_library::load_target_ref(const std::string& ref) const {
  std::error_code ec;
  if (ref.ends_with(".json") && std::filesystem::is_regular_file(ref, ec)) return load_target_file(ref);
  if ((ref.ends_with(".json") || ref.find('/') != std::string::npos) && !std::filesystem::exists(ref, ec))
    throw config_error(ref, "", fmt::format("no such file (from {}; a target is a .json file or a preset name)",
                                            std::filesystem::current_path(ec).string()));
  return load_target(ref);
}
retry_policy preset_library::load_client(std::string_view name) const {
  return load_client_file(find(preset_kind::client, name));
}
workload preset_library::load_workload(std::string_view name) const {
  return load_workload_file(find(preset_kind::workload, name));
}
scenario preset_library::load_scenario(std::string_view name) const {
  return load_scenario_file(find(preset_kind::scenario, name), *this);
}

std::filesystem::path choose_models_dir(const models_dir_search& s,
                                        const std::function<bool(const std::filesystem::path&)>& exists) {
  if (!s.env.empty()) return s.env;
  // Installed: <prefix>/bin/loopcast or <prefix>/lib[/<multiarch>]/libloopcast.so →
  // <prefix>/share/loopcast/models.
  for (const auto& b : s.binaries) {
    auto up = b.parent_path();
    for (int level = 0; level < 2 && up.has_parent_path() && up != up.parent_path(); ++level) {
      up = up.parent_path();
      if (auto beside = up / "share" / "loopcast" / "models"; exists(beside)) return beside;
    }
  }
  // A program or library of loopcast's own build tree reads the source tree's presets.
  const auto inside = [](const std::filesystem::path& p, const std::filesystem::path& dir) {
    const auto rel = p.lexically_normal().lexically_relative(dir.lexically_normal());
    return !dir.empty() && !rel.empty() && *rel.begin() != "..";
  };
  for (const auto& b : s.binaries)
    if (inside(b, s.build_dir) && exists(s.source_models)) return s.source_models;
  return s.install_models;
}

namespace {

// The file this function's code was loaded from: the shared library, or the program that linked
// the static one.
std::filesystem::path this_binary() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&this_binary), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  auto p = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path{} : p;
}

} // namespace

std::filesystem::path default_models_dir() {
  models_dir_search s;
  if (const char* env = std::getenv("LOOPCAST_MODELS"); env && *env) s.env = env;
  std::error_code ec;
  if (auto lib = this_binary(); !lib.empty()) s.binaries.push_back(lib);
  if (auto exe = std::filesystem::read_symlink("/proc/self/exe", ec); !ec) s.binaries.push_back(exe);
  s.build_dir = LOOPCAST_BUILD_DIR;
  s.source_models = LOOPCAST_SOURCE_MODELS_DIR;
  s.install_models = LOOPCAST_INSTALL_MODELS_DIR;
  return choose_models_dir(s, [](const std::filesystem::path& p) {
    std::error_code e;
    return std::filesystem::is_directory(p, e);
  });
}

preset_library preset_library::standard() { return preset_library({default_models_dir()}); }

model_price_book catalogue_price_book(const preset_library& lib) {
  model_price_book book;
  book.sources.push_back({"the preset catalogue", ""});
  std::vector<const preset_entry*> targets;
  for (const auto& e : lib.entries())
    if (e.kind == preset_kind::target) targets.push_back(&e);
  std::sort(targets.begin(), targets.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  // Of two presets of one model, the one with long-context tiers prices a log (its first entry
  // wins): a recorded prompt above a tier's threshold ran in the window that tier belongs to (the
  // 1M Sonnet window), and below it both price alike.
  std::vector<target> loaded;
  for (const auto* e : targets) loaded.push_back(lib.load_target(e->name));
  std::stable_partition(loaded.begin(), loaded.end(), [](const target& t) { return t.prices && !t.prices->long_context.empty(); });
  for (const auto& t : loaded) {
    if (!t.prices || t.model.empty()) continue;
    model_price_book::entry x;
    x.key = normalize_model_name(t.model);
    x.model = t.model;
    x.from = t.name;
    x.prices = *t.prices;
    x.write_charged = t.cache.enabled && t.cache.write_charged;
    book.add(std::move(x));
  }
  return book;
}

std::optional<bundled_price_list> find_bundled_price_list(const preset_library& lib) {
  auto dirs = lib.dirs();
  dirs.push_back(default_models_dir());
  for (const auto& d : dirs) {
    const auto where = d / "prices" / "litellm";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(where / "source.json", ec)) continue;
    const auto meta_file = (where / "source.json").string();
    const auto meta = detail::parse_json(read_text_file(meta_file), meta_file);
    const node m(meta, "", meta_file);
    bundled_price_list b;
    b.file = where / m.at("file").string();
    b.name = m.at("name").string() + " (bundled)";
    b.date = m.at("date").string();
    return b;
  }
  return std::nullopt;
}

namespace {
// The day a file last changed (UTC), "" when unknown.
std::string changed_on(const std::string& file) {
  std::error_code ec;
  const auto t = std::filesystem::last_write_time(file, ec);
  if (ec) return {};
  const auto sys = std::chrono::file_clock::to_sys(t);
  const std::chrono::year_month_day ymd{std::chrono::floor<std::chrono::days>(sys)};
  return fmt::format("{:04d}-{:02d}-{:02d}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}
} // namespace

model_price_book load_price_book(const std::string& price_list, const preset_library& lib,
                                 const std::vector<std::string>& models) {
  std::string list = price_list;
  if (list.empty())
    if (const char* env = std::getenv("LOOPCAST_PRICE_LIST"); env && *env) list = env;
  model_price_book book;
  if (!list.empty()) book = price_book_of(import_price_list(list), list, changed_on(list));
  book.append(catalogue_price_book(lib));
  if (!list.empty()) return book;
  const bool all_known = !models.empty() && std::all_of(models.begin(), models.end(), [&](const std::string& m) {
    return book.find(m) != nullptr;
  });
  if (all_known) return book;
  if (const auto b = find_bundled_price_list(lib))
    book.append(price_book_of(import_price_list(b->file.string()), b->name, b->date));
  return book;
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
