// Sweeps: the grid on local threads, or one point at a time for Dask workers.
#include "common.hpp"
#include "documents.hpp"

#include <cstring>

namespace loopcast::python {

namespace {
sweep_spec load_spec(const std::string& json_text, const std::string& file, const std::string& models_dir) {
  return parse_sweep(json_text, file, *library_at(models_dir));
}
} // namespace

void register_sweep(py::module_& m) {
  m.def("run_summary_dtype", &run_summary_dtype, "The dtype of Monte Carlo and sweep rows (with the C++ layout).");
  m.def(
      "sweep_grid",
      [](const std::string& json_text, const std::string& file, const std::string& models_dir) {
        const auto s = load_spec(json_text, file, models_dir);
        py::list points;
        for (const auto& p : s.points) {
          py::list labels;
          for (const auto& o : p.scn.options) labels.append(o.label);
          points.append(py::make_tuple(p.values, labels));
        }
        return py::make_tuple(s.name, s.paths, points, s.seeds, s.base_json);
      },
      py::arg("json_text"), py::arg("file"), py::arg("models_dir"),
      "(name, paths, [(values as JSON, option labels) per point], seeds per point, base scenario JSON).");
  m.def(
      "run_sweep",
      [](const std::string& json_text, const std::string& file, const std::string& models_dir, unsigned threads) {
        const auto s = load_spec(json_text, file, models_dir);
        sweep_result r;
        {
          interruptible_release release;
          r = run_sweep(s, threads);
        }
        auto summary = to_python(sweep_document(s, r));
        return py::make_tuple(owned_rows(std::move(r.rows)), std::move(summary));
      },
      py::arg("json_text"), py::arg("file"), py::arg("models_dir"), py::arg("threads") = 0,
      "Runs the whole grid on threads; (rows point-major, summary dict).");
  m.def(
      "run_sweep_point",
      [](const std::string& json_text, const std::string& file, const std::string& models_dir, std::size_t point,
         unsigned threads) {
        const auto s = load_spec(json_text, file, models_dir);
        if (point >= s.points.size()) throw py::index_error("the sweep has " + std::to_string(s.points.size()) + " points");
        std::vector<run_summary> rows;
        {
          interruptible_release release;
          rows = run_sweep_point(s, point, threads);
        }
        return owned_rows(std::move(rows));
      },
      py::arg("json_text"), py::arg("file"), py::arg("models_dir"), py::arg("point"), py::arg("threads") = 1,
      "The rows of one grid point (seeds × options).");
  m.def(
      "sweep_summary",
      [](const std::string& json_text, const std::string& file, const std::string& models_dir, const py::array& rows) {
        const auto s = load_spec(json_text, file, models_dir);
        if (!rows.dtype().attr("__eq__")(run_summary_dtype()).cast<bool>() || rows.ndim() != 1 ||
            rows.itemsize() != static_cast<py::ssize_t>(sizeof(run_summary)))
          throw py::value_error("rows must be the structured array a sweep returned");
        sweep_result r;
        r.rows.resize(static_cast<std::size_t>(rows.shape(0)));
        const auto contiguous = py::array::ensure(rows, py::array::c_style);
        std::memcpy(static_cast<void*>(r.rows.data()), contiguous.data(), r.rows.size() * sizeof(run_summary));
        std::size_t offset = 0;
        montecarlo_options mo;
        for (const auto& p : s.points) {
          const std::size_t n = static_cast<std::size_t>(s.seeds) * p.scn.options.size();
          if (offset + n > r.rows.size()) throw py::value_error("fewer rows than the sweep's grid has runs");
          r.points.push_back(summarize_runs(p.scn, std::span<const run_summary>(r.rows).subspan(offset, n), mo));
          offset += n;
        }
        if (offset != r.rows.size()) throw py::value_error("more rows than the sweep's grid has runs");
        return to_python(sweep_document(s, r));
      },
      py::arg("json_text"), py::arg("file"), py::arg("models_dir"), py::arg("rows"),
      "The per-point summary (a dict) of rows gathered elsewhere (e.g. from Dask workers).");
}

} // namespace loopcast::python
