// The library's report documents (src/report_json.hpp: what `--json` prints) handed to Python as
// dicts and lists built directly from the document, without JSON text in between.
#pragma once

#include "common.hpp"

#include "report/documents.hpp"  // src/: the documents

#include <nlohmann/json.hpp>

namespace loopcast::python {

/// A JSON document as Python objects: objects as dicts (in order), arrays as lists; a non-finite
/// number is None (as `--json` writes null); invalid UTF-8 from a log becomes U+FFFD (as there).
inline py::object to_python(const nlohmann::ordered_json& j) {
  using t = nlohmann::ordered_json::value_t;
  switch (j.type()) {
  case t::boolean: return py::bool_(j.get<bool>());
  case t::number_integer: return py::int_(j.get<std::int64_t>());
  case t::number_unsigned: return py::int_(j.get<std::uint64_t>());
  case t::number_float: {
    const double x = j.get<double>();
    return std::isfinite(x) ? py::object(py::float_(x)) : py::object(py::none());
  }
  case t::string: {
    const auto& s = j.get_ref<const std::string&>();
    return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
  }
  case t::array: {
    py::list out(j.size());
    std::size_t i = 0;
    for (const auto& e : j) out[i++] = to_python(e);
    return out;
  }
  case t::object: {
    py::dict out;
    for (const auto& [k, v] : j.items())
      out[py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(k.data(), static_cast<Py_ssize_t>(k.size()), "replace"))] =
          to_python(v);
    return out;
  }
  default: return py::none();  // null, binary, discarded
  }
}

} // namespace loopcast::python
