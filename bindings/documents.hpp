// The library's report documents (loopcast/report/document.hpp: what `--json` prints) handed to
// Python as dicts and lists built directly from the document, without JSON text in between.
#pragma once

#include "common.hpp"

#include "loopcast/report.hpp"

namespace loopcast::python {

/// A document as Python objects: objects as dicts (in order), arrays as lists, null as None;
/// invalid UTF-8 from a log becomes U+FFFD (as --json writes it).
inline py::object to_python(const document& d) {
  using k = document::kind;
  auto text = [](const std::string& s) {
    return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
  };
  switch (d.type()) {
  case k::null: return py::none();
  case k::boolean: return py::bool_(d.as_bool());
  case k::integer: return py::int_(d.as_int());
  case k::unsigned_integer: return py::int_(d.as_uint());
  case k::number: return py::float_(d.as_double());
  case k::string: return text(d.as_string());
  case k::array: {
    py::list out(d.items().size());
    std::size_t i = 0;
    for (const auto& e : d.items()) out[i++] = to_python(e);
    return out;
  }
  case k::object: {
    py::dict out;
    for (const auto& [key, v] : d.members()) out[text(key)] = to_python(v);
    return out;
  }
  }
  return py::none();
}

} // namespace loopcast::python
