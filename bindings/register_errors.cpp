// loopcast::error and its kinds as Python exceptions carrying the same messages.
#include "common.hpp"

namespace loopcast::python {

void register_errors(py::module_& m) {
  // Translators are tried newest first, so the base class is registered before its kinds.
  auto& base = py::register_exception<error>(m, "Error");
  base.doc() = "Base class of every error loopcast raises.";
  py::register_exception<config_error>(m, "ConfigError", base.ptr()).doc() =
      "A preset, scenario or option is invalid; the message names the file and JSON pointer.";
  py::register_exception<trace_error>(m, "TraceError", base.ptr()).doc() =
      "A recorded log cannot be read; the message names the file and line.";
  py::register_exception<simulation_error>(m, "SimulationError", base.ptr()).doc() =
      "The simulation cannot run as configured.";
}

} // namespace loopcast::python
