// The compiled part of the `loopcast` Python package: loopcast._core.
#include "common.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "loopcast's compiled core (use the `loopcast` package, not this module directly)";
  m.attr("__version__") = loopcast::version_string;
  loopcast::python::register_errors(m);
  loopcast::python::register_presets(m);
  loopcast::python::register_results(m);
  loopcast::python::register_simulation(m);
  loopcast::python::register_replay(m);
  loopcast::python::register_sweep(m);
  loopcast::python::register_solve(m);
  loopcast::python::register_catalogue(m);
}
