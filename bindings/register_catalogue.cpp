// The catalogue: price lists imported (and turned into targets) and limits inferred from captures;
// and the progress handler long work reports to.
#include "common.hpp"
#include "documents.hpp"

#include <loopcast/plan_fit.hpp>
#include <loopcast/progress.hpp>
#include <loopcast/report/plans.hpp>

#include <optional>

namespace loopcast::python {

namespace {
price_list_format price_format(const std::string& format) {
  const auto f = parse_name<price_list_format>(format);
  if (!f) throw py::value_error("format must be " + spelling_list<price_list_format>() + ", not " + format);
  return *f;
}
} // namespace

void register_catalogue(py::module_& m) {
  m.def(
      "import_prices",
      [](const std::string& file, const std::string& format, const std::vector<std::string>& models, bool all_modes) {
        return to_python(price_list_document(import_price_list(file, price_format(format), models, all_modes)));
      },
      py::arg("file"), py::arg("format") = "auto", py::arg("models") = std::vector<std::string>{},
      py::arg("all_modes") = false, "`loopcast prices import --json` as a dict.");
  m.def(
      "target_with_prices",
      [](const std::string& file, const std::string& format, const std::string& model, const std::string& base_json,
         const std::string& base_file, const std::string& name) {
        const auto list = import_price_list(file, price_format(format), {model}, false);
        auto text = target_with_prices(base_json, base_file, list.models.at(0), file, name);
        (void)parse_target(text, "<" + name + ">");  // what is returned loads as a target
        return text;
      },
      py::arg("file"), py::arg("format"), py::arg("model"), py::arg("base_json"), py::arg("base_file"), py::arg("name"),
      "A target preset (JSON): the base target with the model's imported prices.");
  m.def(
      "infer_limits",
      [](const std::vector<std::string>& files) { return to_python(limits_document(infer_limits_from_files(files))); },
      py::arg("files"), "`loopcast limits infer --json` as a dict.");
  m.def(
      "infer_plan_caps",
      [](const std::vector<std::string>& logs) {
        const auto traces = import_traces({logs.begin(), logs.end()}, trace_format::automatic);
        return to_python(plan_caps_document(infer_plan_caps(traces)));
      },
      py::arg("logs"), "`loopcast limits infer --logs --json` as a dict.");
  m.def(
      "fit_plan",
      [](const std::vector<std::string>& logs, const std::string& account) {
        const auto traces = import_traces({logs.begin(), logs.end()}, trace_format::automatic);
        plan_fit_options o;
        o.account = account;
        return plan_fit_to_json(fit_plan(traces, {}, o), -1);
      },
      py::arg("logs"), py::arg("account") = "", "`loopcast limits infer --logs --json`'s \"fit\", as JSON text.");
  m.def(
      "backtest_plan",
      [](const std::vector<std::string>& logs, const std::vector<double>& leads_s, const std::string& account, int draws) {
        const auto traces = import_traces({logs.begin(), logs.end()}, trace_format::automatic);
        plan_backtest_options o;
        o.leads_s = leads_s;
        o.account = account;
        o.draws = draws;
        return plan_backtest_to_json(backtest_plan(traces, {}, o), -1);
      },
      py::arg("logs"), py::arg("leads_s"), py::arg("account") = "", py::arg("draws") = 400,
      "`loopcast limits backtest --json`, as JSON text.");
  m.def(
      "set_progress",
      [](std::optional<py::function> f) {
        if (!f) {
          set_progress_handler({});
          return;
        }
        // Called from the worker threads (the caller released the GIL), one call at a time.
        set_progress_handler([fn = std::move(*f)](const progress_update& u) {
          py::gil_scoped_acquire gil;
          try {
            fn(std::string(u.task), u.done, u.total, u.elapsed_s, u.finished);
          } catch (py::error_already_set& e) {
            e.discard_as_unraisable("loopcast progress");
          }
        });
      },
      py::arg("callback"),
      "callback(task, done, total, elapsed_s, finished) for the progress of long work; None: no reports.");
}

} // namespace loopcast::python
