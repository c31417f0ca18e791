// loopcast Python bindings: shared declarations. The bindings hold no logic: they convert
// arguments, call the library, and expose its results (zero-copy where they are arrays).
#pragma once

#include <loopcast/loopcast.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <signal.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace loopcast::python {

namespace py = pybind11;

void register_errors(py::module_& m);
void register_presets(py::module_& m);
void register_results(py::module_& m);
void register_simulation(py::module_& m);
void register_replay(py::module_& m);
void register_sweep(py::module_& m);
void register_solve(py::module_& m);
void register_catalogue(py::module_& m);

/// Long work in C++: the GIL released and Ctrl-C honoured. While it lives, SIGINT asks the work to
/// stop (request_interrupt, interrupt.hpp): it stops within one simulation's 16,384 events, or
/// before its next seed, point, draw or file, and `interrupted` reaches Python as
/// KeyboardInterrupt. Python's own SIGINT handler is restored after.
class interruptible_release {
public:
  interruptible_release();
  ~interruptible_release();
  interruptible_release(const interruptible_release&) = delete;
  interruptible_release& operator=(const interruptible_release&) = delete;

private:
  struct sigaction previous_ {};
  bool installed_ = false;
  std::optional<py::gil_scoped_release> release_;
};

/// The preset library of a models directory (nullopt: default_models_dir()), indexed once and
/// reused while its folders do not change (a file added, removed or renamed); `fresh`: index anew.
std::shared_ptr<const preset_library> library_at(const std::optional<std::string>& dir, bool fresh = false);

/// An enumeration's spellings as a Python tuple (names.hpp).
template <named_enum E>
py::tuple spellings() {
  py::tuple out(enum_names<E>::table.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = py::str(enum_names<E>::table[i].name.data(), enum_names<E>::table[i].name.size());
  return out;
}

/// The results of one run: a scenario (with what it ran) or a replay. Python arrays view its
/// vectors directly, holding a reference to it.
struct run_holder {
  std::unique_ptr<scenario_result> result;
  std::unique_ptr<replay_result> replay;
  std::vector<recorded_trace> traces;

  const std::vector<option_result>& options() const { return result ? result->options : replay->options; }
};

/// The recorded logs of an import.
struct traces_holder {
  std::vector<recorded_trace> traces;
};

/// Structured dtypes matching the C++ records field by field (offsets from offsetof).
py::dtype attempt_dtype();
py::dtype request_dtype();
py::dtype session_dtype();
py::dtype run_summary_dtype();
py::dtype request_spec_dtype();
py::dtype recorded_request_dtype();

/// Marks an array read-only: it views records the library owns.
inline py::array read_only(py::array a) {
  a.attr("setflags")(py::arg("write") = false);
  return a;
}

/// A read-only 1-D array viewing the records of `v` (stride sizeof(T)), kept alive by `base`.
template <class T>
py::array view(const py::dtype& dt, const std::vector<T>& v, py::handle base) {
  return read_only(py::array(dt, {static_cast<py::ssize_t>(v.size())}, {static_cast<py::ssize_t>(sizeof(T))}, v.data(), base));
}

/// Monte Carlo or sweep rows as a read-only structured array that owns them.
inline py::array owned_rows(std::vector<run_summary> rows) {
  auto* raw = new std::vector<run_summary>(std::move(rows));
  py::capsule owner(raw, [](void* p) { delete static_cast<std::vector<run_summary>*>(p); });
  return view(run_summary_dtype(), *raw, owner);
}

} // namespace loopcast::python
