// Results as numpy structured arrays viewing the C++ records (no copies), and the run object.
#include "common.hpp"
#include "documents.hpp"

#include <cstddef>
#include <sstream>
#include <type_traits>

namespace loopcast::python {

// numpy's format of a field's C++ type.
template <class M>
constexpr const char* numpy_format() {
  if constexpr (std::is_same_v<M, double>) return "<f8";
  else if constexpr (std::is_same_v<M, bool>) return "?";
  else if constexpr (std::is_enum_v<M> && sizeof(M) == 1) return "u1";  // a code; the names are in _core
  else if constexpr (std::is_same_v<M, std::int64_t>) return "<i8";
  else if constexpr (std::is_same_v<M, std::uint64_t>) return "<u8";
  else if constexpr (std::is_same_v<M, std::int32_t>) return "<i4";
  else if constexpr (std::is_same_v<M, std::uint32_t>) return "<u4";
  else if constexpr (std::is_same_v<M, std::int16_t>) return "<i2";
  else if constexpr (std::is_same_v<M, std::uint8_t>) return "u1";
  else static_assert(sizeof(M) == 0, "a field type without a numpy format");
}

// The columns of a record with a field list (fields.hpp) at `base` within the probe; a member
// that has a field list itself (token_counts) becomes its columns.
template <has_fields R>
void add_columns(const R& probe, const char* base, py::list& names, py::list& formats, py::list& offsets) {
  for_each_field<R>([&](const auto& f) {
    using M = typename std::decay_t<decltype(f)>::value_type;
    const M& member = probe.*f.member;
    if constexpr (has_fields<M>) {
      add_columns(member, base, names, formats, offsets);
    } else {
      names.append(std::string(f.name));
      formats.append(numpy_format<M>());
      offsets.append(reinterpret_cast<const char*>(&member) - base);
    }
  });
}

// The dtype of a record with a field list, with the C++ layout.
template <has_fields R>
py::dtype dtype_of() {
  py::list names, formats, offsets;
  const R probe{};
  add_columns(probe, reinterpret_cast<const char*>(&probe), names, formats, offsets);
  return py::dtype(names, formats, offsets, static_cast<py::ssize_t>(sizeof(R)));
}

py::dtype attempt_dtype() { return dtype_of<attempt_record>(); }
py::dtype request_dtype() { return dtype_of<request_sample>(); }
py::dtype session_dtype() { return dtype_of<session_result>(); }
py::dtype run_summary_dtype() { return dtype_of<run_summary>(); }

py::dtype request_spec_dtype() { return dtype_of<request_spec>(); }
py::dtype recorded_request_dtype() { return dtype_of<recorded_request>(); }

void register_results(py::module_& m) {
  m.attr("ATTEMPT_STATUS") = spellings<attempt_status>();
  m.attr("SESSION_OUTCOME") = spellings<session_outcome>();

  py::class_<run_holder, std::shared_ptr<run_holder>>(m, "Run", "The result of a scenario run or a replay.")
      .def_property_readonly("option_count", [](const run_holder& r) { return r.options().size(); })
      .def("option_label", [](const run_holder& r, std::size_t i) { return r.options().at(i).label; })
      .def("bucket_names",
           [](const run_holder& r, std::size_t i) {
             std::vector<std::string> names;
             for (const auto& b : r.options().at(i).option->buckets()) names.push_back(b.name);
             return names;
           })
      .def("bucket_limits",
           [](const run_holder& r, std::size_t i) {
             std::vector<double> v;
             for (const auto& b : r.options().at(i).option->buckets()) v.push_back(b.limit);
             return v;
           })
      .def("bucket_rules",
           [](const run_holder& r, std::size_t i) {
             std::vector<std::pair<std::string, std::string>> v;
             for (const auto& b : r.options().at(i).option->buckets())
               v.emplace_back(std::string(to_string(b.charging)), std::string(to_string(b.oversize)));
             return v;
           }, "Each bucket of option i's target (in bucket_names' order): (charging, oversize) as the presets spell them.")
      .def("context_window", [](const run_holder& r, std::size_t i) {
        return r.options().at(i).option->window();
      }, "The context window of option i's target (a route: its largest), in tokens (prompt + generated must fit).")
      .def("attempts", [](py::object self, std::size_t i) {
        return view(attempt_dtype(), self.cast<const run_holder&>().options().at(i).sim.attempts, self);
      }, "Per-attempt timeline of option i (structured array, a view).")
      .def("requests", [](py::object self, std::size_t i) {
        return view(request_dtype(), self.cast<const run_holder&>().options().at(i).sim.requests, self);
      }, "Served requests of option i (structured array, a view).")
      .def("sessions", [](py::object self, std::size_t i) {
        return view(session_dtype(), self.cast<const run_holder&>().options().at(i).sim.sessions, self);
      }, "Per-session summary of option i (structured array, a view).")
      .def("bucket_levels", [](py::object self, std::size_t i) {
        const auto& o = self.cast<const run_holder&>().options().at(i);
        const auto nb = static_cast<py::ssize_t>(o.option->buckets().size());
        const auto n = nb == 0 ? 0 : static_cast<py::ssize_t>(o.sim.bucket_levels.size()) / nb;
        return read_only(py::array(py::dtype::of<double>(), {n, nb},
                                   {static_cast<py::ssize_t>(sizeof(double)) * nb, static_cast<py::ssize_t>(sizeof(double))},
                                   o.sim.bucket_levels.data(), self));
      }, "Units in use of each bucket when each attempt arrived: attempts × buckets (a view).")
      .def("bucket_curve", [](const run_holder& r, std::size_t i, std::size_t b, std::size_t grid) {
        const auto& o = r.options().at(i);
        const auto limits = o.option->buckets();
        if (b >= limits.size()) throw py::index_error(detail::message("bucket ", b, " of an option with ", limits.size(), " buckets"));
        level_curve c = bucket_level_curve(o.sim, limits[b], b, grid);
        return py::make_tuple(py::array_t<double>(static_cast<py::ssize_t>(c.t.size()), c.t.data()),
                              py::array_t<double>(static_cast<py::ssize_t>(c.used.size()), c.used.data()));
      }, py::arg("option"), py::arg("bucket"), py::arg("grid") = 2000,
         "Bucket b's units in use over the run (times, levels): before and after each of its operations and at "
         "`grid` even times between, replayed from the recorded bucket operations; empty arrays without a timeline.")
      .def("script", [](py::object self, std::size_t session) {
        const auto& r = self.cast<const run_holder&>();
        if (!r.result) throw simulation_error("a replay has no generated scripts");
        return view(request_spec_dtype(), r.result->scripts.at(session).requests, self);
      }, "The requests session k sent (structured array, a view).")
      .def("summary", [](const run_holder& r) {
        return to_python(r.result ? run_document(*r.result) : replay_document(r.traces, *r.replay));
      }, "The whole result as a dict (the JSON of docs/output.md).")
      .def("report", [](const run_holder& r) {
        std::ostringstream os;
        if (r.result) write_text_report(os, *r.result);
        else write_replay_text(os, r.traces, *r.replay);
        return os.str();
      }, "The text report of `loopcast run` / `loopcast replay`.")
      .def("timeline_csv", [](const run_holder& r) {
        std::ostringstream os;
        write_timeline_csv(os, r.options());
        return os.str();
      }, "One CSV row per attempt, as `--timeline` writes.");
}

} // namespace loopcast::python
