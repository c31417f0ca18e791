// Preset files: where they are, and validation by the strict C++ loader.
#include "common.hpp"

namespace loopcast::python {

void register_presets(py::module_& m) {
  m.def("default_models_dir", [] { return default_models_dir().string(); },
        "The presets directory: $LOOPCAST_MODELS, else the installed or source models/.");
  m.def(
      "list_presets",
      [](const std::string& dir) {
        py::list out;
        const preset_library lib({dir});  // named: entries() refers into it
        for (const auto& e : lib.entries())
          out.append(py::make_tuple(std::string(to_string(e.kind)), e.name, e.description, e.file.string()));
        return out;
      },
      py::arg("models_dir"), "(kind, name, description, file) of every preset under models_dir.");
  m.def(
      "find_preset",
      [](const std::string& dir, const std::string& kind, const std::string& name) {
        const preset_library lib({dir});
        for (auto k : {preset_kind::target, preset_kind::client, preset_kind::workload, preset_kind::scenario})
          if (to_string(k) == kind) return lib.find(k, name).string();
        throw config_error("<python>", "", "unknown preset kind \"" + kind + "\"");
      },
      py::arg("models_dir"), py::arg("kind"), py::arg("name"), "The file of a preset.");
  m.def(
      "validate",
      [](const std::string& kind, const std::string& text, const std::string& file, const std::string& dir) {
        if (kind == "target") (void)parse_target(text, file);
        else if (kind == "client") (void)parse_client(text, file);
        else if (kind == "workload") (void)parse_workload(text, file);
        else if (kind == "scenario") (void)parse_scenario(text, file, preset_library({dir}));
        else throw config_error(file, "/kind", "unknown preset kind \"" + kind + "\"");
      },
      py::arg("kind"), py::arg("json_text"), py::arg("file"), py::arg("models_dir"),
      "Raises ConfigError (file and JSON pointer in the message) unless the JSON is a valid preset of that kind.");
}

} // namespace loopcast::python
