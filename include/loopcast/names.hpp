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

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

/// The edit distance of two names (insertions, deletions, substitutions, each 1).
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// The candidates closest to a mistyped `name` (at most `most`, nearest first, ties by order):
/// those within a third of the name's length in edits, or that contain it, or it them. Empty
/// when none is close: "did you mean" says nothing rather than something random.
inline std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates,
                                              std::size_t most = 3) {
  std::vector<std::pair<std::size_t, std::size_t>> near;  // (distance, index)
  const std::size_t allowed = std::max<std::size_t>(2, name.size() / 3);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    const std::size_t d = edit_distance(name, c);
    const bool contains = !name.empty() && (c.find(name) != std::string::npos || name.find(c) != std::string_view::npos);
    if (d <= allowed || contains) near.emplace_back(contains ? std::min(d, allowed) : d, i);
  }
  std::stable_sort(near.begin(), near.end());
  std::vector<std::string> out;
  for (std::size_t k = 0; k < near.size() && out.size() < most; ++k) out.push_back(candidates[near[k].second]);
  return out;
}

} // namespace loopcast
