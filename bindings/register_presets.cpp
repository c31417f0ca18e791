// Preset files: where they are, and validation by the strict C++ loader.
#include "common.hpp"

#include <map>
#include <mutex>
#include <sys/stat.h>

namespace loopcast::python {

namespace {

// What says a models directory's index is out of date: its folders' paths and modification times
// (a file added, removed or renamed changes its folder's). A file edited in place is read afresh
// whenever it is loaded; only an in-place change of a preset's name escapes this, and a lookup that
// misses re-indexes before it fails (find_preset).
std::vector<std::pair<std::string, std::int64_t>> stamp_of(const std::filesystem::path& dir) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  const auto add = [&](const std::filesystem::path& p) {
    struct stat st{};
    if (::stat(p.c_str(), &st) == 0)
      out.emplace_back(p.string(), static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec);
  };
  add(dir);
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::end(it);
       it.increment(ec))
    if (it->is_directory(ec)) add(it->path());
  return out;
}

} // namespace

std::shared_ptr<const preset_library> library_at(const std::optional<std::string>& dir, bool fresh) {
  struct cached {
    decltype(stamp_of({})) stamp;
    std::shared_ptr<const preset_library> lib;
  };
  static std::mutex m;
  static std::map<std::string, cached> libraries;
  const std::string key = dir ? *dir : default_models_dir().string();
  auto stamp = stamp_of(key);
  if (!fresh) {
    const std::lock_guard lock(m);
    if (auto it = libraries.find(key); it != libraries.end() && it->second.stamp == stamp) return it->second.lib;
  }
  auto lib = std::make_shared<const preset_library>(std::vector<std::filesystem::path>{key});
  const std::lock_guard lock(m);
  libraries[key] = {std::move(stamp), lib};
  return lib;
}

void register_presets(py::module_& m) {
  m.def("default_models_dir", [] { return default_models_dir().string(); },
        "The presets directory: $LOOPCAST_MODELS, else the installed or source models/.");
  m.def(
      "list_presets",
      [](const std::string& dir) {
        py::list out;
        const auto lib = library_at(dir, true);  // a listing reads every header afresh; held: entries() refers into it
        for (const auto& e : lib->entries())
          out.append(py::make_tuple(std::string(to_string(e.kind)), e.name, e.description, e.file.string()));
        return out;
      },
      py::arg("models_dir"), "(kind, name, description, file) of every preset under models_dir.");
  m.def(
      "find_preset",
      [](const std::string& dir, const std::string& kind, const std::string& name) {
        for (auto k : {preset_kind::target, preset_kind::client, preset_kind::workload, preset_kind::scenario}) {
          if (to_string(k) != kind) continue;
          try {
            return library_at(dir)->find(k, name).string();
          } catch (const config_error&) {
            return library_at(dir, true)->find(k, name).string();  // a name changed in place: index afresh
          }
        }
        throw config_error("<python>", "", "unknown preset kind \"" + kind + "\"");
      },
      py::arg("models_dir"), py::arg("kind"), py::arg("name"), "The file of a preset.");
  m.def(
      "validate",
      [](const std::string& kind, const std::string& text, const std::string& file, const std::string& dir) {
        if (kind == "target") (void)parse_target(text, file);
        else if (kind == "client") (void)parse_client(text, file);
        else if (kind == "workload") (void)parse_workload(text, file);
        else if (kind == "scenario") (void)parse_scenario(text, file, *library_at(dir));
        else throw config_error(file, "/kind", "unknown preset kind \"" + kind + "\"");
      },
      py::arg("kind"), py::arg("json_text"), py::arg("file"), py::arg("models_dir"),
      "Raises ConfigError (file and JSON pointer in the message) unless the JSON is a valid preset of that kind.");
}

} // namespace loopcast::python
