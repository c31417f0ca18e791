// loopcast::error and its kinds as Python exceptions carrying the same messages.
#include "common.hpp"

#include <thread>

namespace loopcast::python {

namespace {
std::thread::id python_main_thread;  // the thread that imported the module: Python's main thread
} // namespace

void register_errors(py::module_& m) {
  python_main_thread = std::this_thread::get_id();
  // Translators are tried newest first, so the base class is registered before its kinds.
  auto& base = py::register_exception<error>(m, "Error");
  base.doc() = "Base class of every error loopcast raises.";
  py::register_exception<config_error>(m, "ConfigError", base.ptr()).doc() =
      "A preset, scenario or option is invalid; the message names the file and JSON pointer.";
  py::register_exception<trace_error>(m, "TraceError", base.ptr()).doc() =
      "A recorded log cannot be read; the message names the file and line.";
  py::register_exception<simulation_error>(m, "SimulationError", base.ptr()).doc() =
      "The simulation cannot run as configured.";
  // Long work stopped by Ctrl-C (interruptible_release): Python's own KeyboardInterrupt.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const interrupted&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  });
}

interruptible_release::interruptible_release() {
  // Only on Python's main thread, where SIGINT is Python's to handle (a call from a worker thread,
  // a Dask worker's, leaves the process's handler alone).
  if (std::this_thread::get_id() == python_main_thread) {
    clear_interrupt();
    struct sigaction sa {};
    sa.sa_handler = [](int) { request_interrupt(); };
    sigemptyset(&sa.sa_mask);
    installed_ = ::sigaction(SIGINT, &sa, &previous_) == 0;
  }
  release_.emplace();
}

interruptible_release::~interruptible_release() {
  release_.reset();  // (the GIL back first: Python's handler may run once it is restored)
  if (installed_) {
    ::sigaction(SIGINT, &previous_, nullptr);
    clear_interrupt();
  }
}

} // namespace loopcast::python
