// Running scenarios: once (with its timeline) or over many seeds (Monte Carlo, all in C++).
#include "common.hpp"
#include "documents.hpp"

#include <optional>

namespace loopcast::python {

namespace {
// The rows as a structured array owning its storage, and the summary as a dict (montecarlo JSON).
py::tuple rows_and_summary(const scenario& scn, montecarlo_result r) {
  auto summary = to_python(montecarlo_document(scn, r));
  return py::make_tuple(owned_rows(std::move(r.rows)), std::move(summary));
}
} // namespace

void register_simulation(py::module_& m) {
  m.def(
      "run_scenario",
      [](const std::string& json_text, const std::string& file, const std::string& models_dir,
         std::optional<std::uint64_t> seed, bool record) {
        auto h = std::make_shared<run_holder>();
        auto scn = std::make_shared<const scenario>(parse_scenario(json_text, file, *library_at(models_dir)));
        run_options ro;
        ro.seed = seed;
        ro.record_attempts = record;
        ro.record_charges = record;
        interruptible_release release;
        h->result = std::make_unique<scenario_result>(run_scenario(std::move(scn), ro));
        return h;
      },
      py::arg("json_text"), py::arg("file"), py::arg("models_dir"), py::arg("seed") = py::none(),
      py::arg("record") = true, "Runs a scenario given as preset JSON.");
  m.def(
      "run_seeds",
      [](const std::string& json_text, const std::string& file, const std::string& models_dir,
         const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>& seeds, unsigned threads,
         double confidence, double horizon_s) {
        const auto scn = parse_scenario(json_text, file, *library_at(models_dir));
        std::vector<std::uint64_t> s(seeds.data(), seeds.data() + seeds.size());
        montecarlo_result r;
        r.settings.confidence = confidence;
        r.settings.horizon_s = horizon_s;
        r.settings.threads = threads;
        {
          interruptible_release release;
          r.rows = run_seeds(scn, s, threads);
          r.seeds = static_cast<std::int32_t>(s.size());
          r.options = summarize_runs(scn, r.rows, r.settings);
        }
        return rows_and_summary(scn, std::move(r));
      },
      py::arg("json_text"), py::arg("file"), py::arg("models_dir"), py::arg("seeds"), py::arg("threads") = 1,
      py::arg("confidence") = 0.95, py::arg("horizon_s") = 3600.0,
      "Runs a scenario once per seed; (rows: one per seed and option, summary dict).");
  m.def(
      "run_montecarlo",
      [](const std::string& json_text, const std::string& file, const std::string& models_dir, std::int32_t seeds,
         double precision, const std::string& metric, std::int32_t max_seeds, double confidence, double horizon_s,
         unsigned threads) {
        const auto scn = parse_scenario(json_text, file, *library_at(models_dir));
        montecarlo_options o;
        o.seeds = seeds;
        o.precision = precision;
        o.max_seeds = max_seeds;
        o.confidence = confidence;
        o.horizon_s = horizon_s;
        o.threads = threads;
        const auto chosen = parse_name<mc_metric>(metric);
        if (!chosen)
          throw py::value_error("metric must be " + spelling_list<mc_metric>() + ", not " + metric);
        o.metric = *chosen;
        montecarlo_result r;
        {
          interruptible_release release;
          r = run_montecarlo(scn, o);
        }
        return rows_and_summary(scn, std::move(r));
      },
      py::arg("json_text"), py::arg("file"), py::arg("models_dir"), py::arg("seeds"), py::arg("precision"),
      py::arg("metric"), py::arg("max_seeds"), py::arg("confidence"), py::arg("horizon_s"), py::arg("threads"),
      "Monte Carlo with seeds scenario.seed + 0, 1, …; (rows, summary dict).");
}

} // namespace loopcast::python
