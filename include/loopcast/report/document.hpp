// loopcast — a report as a document: the small JSON-like value every report builds, which `--json`
// prints (docs/output.md) and Python hands over as dicts and lists. Null, a boolean, a whole
// number, a number, a string, an array, or an object whose keys keep their order. A statistic
// without samples is null, never 0; a number is finite (a non-finite one is null).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace loopcast {

class document {
public:
  using array = std::vector<document>;
  using object = std::vector<std::pair<std::string, document>>;
  enum class kind : std::uint8_t { null, boolean, integer, unsigned_integer, number, string, array, object };

  document() = default;
  explicit document(bool b) : v_(b) {}
  explicit document(std::int64_t i) : v_(i) {}
  explicit document(std::uint64_t u) : v_(u) {}
  explicit document(double x) : v_(x) {}
  explicit document(std::string s) : v_(std::move(s)) {}
  explicit document(array a) : v_(std::move(a)) {}
  explicit document(object o) : v_(std::move(o)) {}

  kind type() const noexcept { return static_cast<kind>(v_.index()); }
  bool is_null() const noexcept { return type() == kind::null; }
  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  std::uint64_t as_uint() const { return std::get<std::uint64_t>(v_); }
  double as_double() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const array& items() const { return std::get<array>(v_); }
  const object& members() const { return std::get<object>(v_); }
  /// An object's member named `key`; nullptr when there is none (or this is not an object).
  const document* find(std::string_view key) const noexcept {
    if (type() != kind::object) return nullptr;
    for (const auto& [k, v] : std::get<object>(v_))
      if (k == key) return &v;
    return nullptr;
  }

private:
  std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::string, array, object> v_;
};

/// The document as JSON text (what --json prints), pretty-printed with `indent` spaces (-1: compact).
std::string to_json_text(const document& d, int indent = 2);

} // namespace loopcast
