// Recorded logs: import, stats, replay, fit.
#include "common.hpp"

namespace loopcast::python {

namespace {
trace_format format_named(const std::string& name) {
  if (auto f = parse_trace_format(name)) return *f;
  throw trace_error("<python>", 0, "unknown format \"" + name + "\"");
}
} // namespace

void register_replay(py::module_& m) {
  py::class_<traces_holder, std::shared_ptr<traces_holder>>(m, "Traces", "Imported logs.")
      .def_property_readonly("count", [](const traces_holder& h) { return h.traces.size(); })
      .def("file", [](const traces_holder& h, std::size_t i) { return h.traces.at(i).file; })
      .def("format", [](const traces_holder& h, std::size_t i) { return std::string(to_string(h.traces.at(i).format)); })
      .def("models", [](const traces_holder& h, std::size_t i) { return h.traces.at(i).models; })
      .def("session_count", [](const traces_holder& h, std::size_t i) { return h.traces.at(i).sessions.size(); })
      .def("session_id", [](const traces_holder& h, std::size_t i, std::size_t s) { return h.traces.at(i).sessions.at(s).id; })
      .def("requests", [](py::object self, std::size_t i, std::size_t s) {
        return view(recorded_request_dtype(), self.cast<const traces_holder&>().traces.at(i).sessions.at(s).requests, self);
      }, "Recorded requests of session s of log i (structured array, a view).")
      .def("skipped", [](const traces_holder& h, std::size_t i) { return h.traces.at(i).summary.skipped; })
      .def("issues", [](const traces_holder& h, std::size_t i) {
        py::list v;
        for (const auto& x : h.traces.at(i).summary.issues) v.append(py::make_tuple(x.file, x.line, x.reason));
        return v;
      });

  m.def(
      "import_traces",
      [](const std::vector<std::string>& paths, const std::string& format) {
        auto h = std::make_shared<traces_holder>();
        std::vector<std::filesystem::path> p(paths.begin(), paths.end());
        h->traces = import_traces(p, format_named(format));
        return h;
      },
      py::arg("paths"), py::arg("format") = "auto", "Imports log files and directories.");
  m.def(
      "stats_json",
      [](const traces_holder& h, std::optional<std::string> price_target_json) {
        std::optional<target> t;
        if (price_target_json) t = parse_target(*price_target_json, "<price>");
        if (t && !t->prices) throw config_error("<price>", "", "the target has no prices");
        return stats_to_json(h.traces, compute_trace_stats(h.traces, t ? &*t->prices : nullptr));
      },
      py::arg("traces"), py::arg("price_target_json") = py::none(), "`loopcast stats --json` as a string.");
  m.def(
      "replay",
      [](const traces_holder& h, const std::vector<std::tuple<std::string, std::string, std::string>>& options,
         std::uint64_t seed, std::int64_t max_tokens, bool record) {
        auto r = std::make_shared<run_holder>();
        r->traces = h.traces;
        for (const auto& [label, target_json, client_json] : options) {
          scenario_option o;
          o.label = label;
          o.tgt = parse_target(target_json, label);
          o.client = parse_client(client_json, label);
          r->replay_options.push_back(std::move(o));
        }
        replay_options ro;
        ro.seed = seed;
        ro.default_max_tokens = max_tokens;
        ro.record_attempts = record;
        py::gil_scoped_release release;
        r->replay = std::make_unique<replay_result>(run_replay(r->traces, r->replay_options, ro));
        return r;
      },
      py::arg("traces"), py::arg("options"), py::arg("seed") = 1, py::arg("max_tokens") = 16384, py::arg("record") = true,
      "Replays the logs on (label, target JSON, client JSON) options.");
  m.def(
      "fit_json",
      [](const traces_holder& h, const std::string& name) { return fit_to_target_json(fit_speed_model(h.traces), name, h.traces); },
      py::arg("traces"), py::arg("name"), "A target preset (JSON) whose speed is fitted to the logs.");
}

} // namespace loopcast::python
