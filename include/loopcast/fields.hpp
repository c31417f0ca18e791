// loopcast — one list of fields per record type.
//
// A record whose rows leave the library (as CSV, JSON, numpy arrays or pandas columns) declares
// its columns once, beside the struct, as a specialisation of `record_fields`:
//
//   template <> struct record_fields<run_summary> {
//     static constexpr std::tuple list{field{"seed", &run_summary::seed, ""}, field{"wall_s", &run_summary::wall_s, "s"}};
//   };
//
// and the writers iterate it with for_each_field: the CSV header and rows, the numpy dtype of the
// Python bindings, the column docs. Adding a column is one line here plus its computation.
#pragma once

#include <string_view>
#include <tuple>

namespace loopcast {

/// One column of a record: its name, the member holding it, and its unit ("" when a count or code).
template <class R, class M>
struct field {
  std::string_view name;
  M R::*member;
  std::string_view unit;

  using record = R;
  using value_type = M;
  constexpr const M& of(const R& r) const noexcept { return r.*member; }
};
// field{"name", &R::member, "unit"} deduces field<R, M> (spelled out for compilers without
// class template argument deduction for aggregates, e.g. clang 14).
template <class R, class M>
field(std::string_view, M R::*, std::string_view) -> field<R, M>;

/// Specialised beside each record type with `static constexpr std::tuple list{field{…}, …}`.
template <class R>
struct record_fields;

template <class R>
concept has_fields = requires { record_fields<R>::list; };

/// Calls f(field) for each field of R, in order.
template <has_fields R, class F>
constexpr void for_each_field(F&& f) {
  std::apply([&](const auto&... fs) { (f(fs), ...); }, record_fields<R>::list);
}

} // namespace loopcast
