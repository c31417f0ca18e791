// loopcast — one table of names per enumeration.
//
// Every enumeration whose values appear in presets, reports, the CLI or Python declares its
// spellings once, beside the enumeration, as a specialisation of `enum_names`:
//
//   enum class jitter_kind : std::uint8_t { none, full };
//   template <> struct enum_names<jitter_kind> {
//     static constexpr std::array table{enum_entry{jitter_kind::none, "none"}, enum_entry{jitter_kind::full, "full"}};
//   };
//
// and everything else derives from that table: `to_string`, `parse_name`, the list of values a
// preset reader accepts (and prints in its error), the CLI's messages and the Python constants.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace loopcast {

/// One value of an enumeration and its spelling.
template <class E>
struct enum_entry {
  E value;
  std::string_view name;
};
template <class E>
enum_entry(E, const char*) -> enum_entry<E>;

/// Specialised beside each enumeration with `static constexpr std::array<enum_entry<E>, N> table`.
template <class E>
struct enum_names;

/// An enumeration with a table of names.
template <class E>
concept named_enum = requires { enum_names<E>::table; };

/// The spelling of `e` ("?" for a value outside the table).
template <named_enum E>
constexpr std::string_view to_string(E e) noexcept {
  for (const auto& n : enum_names<E>::table)
    if (n.value == e) return n.name;
  return "?";
}

/// The value spelled `name`, or nullopt.
template <named_enum E>
constexpr std::optional<E> parse_name(std::string_view name) noexcept {
  for (const auto& n : enum_names<E>::table)
    if (n.name == name) return n.value;
  return std::nullopt;
}

/// Every value, in the table's order.
template <named_enum E>
constexpr auto enum_values() noexcept {
  constexpr auto& t = enum_names<E>::table;
  std::array<E, t.size()> out{};
  for (std::size_t i = 0; i < t.size(); ++i) out[i] = t[i].value;
  return out;
}

/// Every spelling, in the table's order.
template <named_enum E>
constexpr auto enum_spellings() noexcept {
  constexpr auto& t = enum_names<E>::table;
  std::array<std::string_view, t.size()> out{};
  for (std::size_t i = 0; i < t.size(); ++i) out[i] = t[i].name;
  return out;
}

/// The spellings for a message: "a, b or c", or with `quoted` "\"a\", \"b\" or \"c\"".
template <named_enum E>
std::string spelling_list(bool quoted = false) {
  constexpr auto& t = enum_names<E>::table;
  std::string out;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i > 0) out += i + 1 == t.size() ? " or " : ", ";
    if (quoted) out += '"';
    out += t[i].name;
    if (quoted) out += '"';
  }
  return out;
}

} // namespace loopcast
