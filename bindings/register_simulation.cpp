// Running scenarios: once (with its timeline) or over many seeds (Monte Carlo, all in C++).
#include "common.hpp"

#include <optional>

namespace loopcast::python {

void register_simulation(py::module_& m) {
  m.def(
      "run_scenario",
      [](const std::string& json_text, const std::string& file, const std::string& models_dir,
         std::optional<std::uint64_t> seed, bool record) {
        auto h = std::make_shared<run_holder>();
        h->scn = std::make_unique<scenario>(parse_scenario(json_text, file, preset_library({models_dir})));
        run_options ro;
        ro.seed = seed;
        ro.record_attempts = record;
        ro.record_charges = record;
        py::gil_scoped_release release;
        h->result = std::make_unique<scenario_result>(run_scenario(*h->scn, ro));
        return h;
      },
      py::arg("json_text"), py::arg("file"), py::arg("models_dir"), py::arg("seed") = py::none(),
      py::arg("record") = true, "Runs a scenario given as preset JSON.");
  m.def(
      "run_seeds",
      [](const std::string& json_text, const std::string& file, const std::string& models_dir,
         const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>& seeds) {
        const auto scn = parse_scenario(json_text, file, preset_library({models_dir}));
        std::vector<std::uint64_t> s(seeds.data(), seeds.data() + seeds.size());
        auto rows = std::make_unique<std::vector<run_summary>>();
        {
          py::gil_scoped_release release;
          *rows = run_seeds(scn, s);
        }
        auto* raw = rows.release();
        py::capsule owner(raw, [](void* p) { delete static_cast<std::vector<run_summary>*>(p); });
        return view(run_summary_dtype(), *raw, owner);
      },
      py::arg("json_text"), py::arg("file"), py::arg("models_dir"), py::arg("seeds"),
      "Runs a scenario once per seed; one row per seed and option (structured array).");
}

} // namespace loopcast::python
