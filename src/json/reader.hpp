// Strict reading of JSON documents: every access names the JSON pointer of the value, every
// problem becomes a config_error "FILE: /pointer: expected …, found …". Internal to loopcast.
#pragma once

#include "loopcast/errors.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace loopcast::detail {

/// How deep parse_json nests at most.
inline constexpr int max_strict_json_depth = 64;

/// Parses text as JSON (nesting at most max_strict_json_depth deep, in linear time); syntax errors
/// name the line and column, a duplicate key the JSON pointer of its object.
nlohmann::json parse_json(std::string_view text, const std::string& file);
/// The same, keeping the keys' order.
nlohmann::ordered_json parse_ordered_json(std::string_view text, const std::string& file);

class node {
public:
  node(const nlohmann::json& j, std::string pointer, const std::string& file)
      : j_(&j), ptr_(std::move(pointer)), file_(&file) {}

  const std::string& pointer() const noexcept { return ptr_; }
  const std::string& file() const noexcept { return *file_; }
  const nlohmann::json& raw() const noexcept { return *j_; }
  /// A preset written in code (a Python dict, JSON text given to parse_*) may leave out its
  /// provenance; a preset file may not. Members and elements inherit it.
  bool provenance_optional() const noexcept { return provenance_optional_; }
  node& allow_missing_provenance(bool v) noexcept {
    provenance_optional_ = v;
    return *this;
  }
  [[noreturn]] void fail(const std::string& what) const;

  bool is_object() const noexcept { return j_->is_object(); }
  bool is_boolean() const noexcept { return j_->is_boolean(); }
  bool is_string() const noexcept { return j_->is_string(); }
  bool is_null() const noexcept { return j_->is_null(); }

  /// Requires an object whose keys are all in `allowed`.
  void expect_keys(std::initializer_list<std::string_view> allowed) const;
  /// A required member of an object.
  node at(std::string_view key) const;
  /// An optional member of an object.
  std::optional<node> find(std::string_view key) const;
  bool has(std::string_view key) const;

  /// A finite number.
  double number() const;
  /// A finite number in [lo, hi] ("at least", "between" in the message).
  double number_in(double lo, double hi) const;
  double non_negative() const;
  double positive() const;
  /// A whole number in [lo, hi].
  std::int64_t integer(std::int64_t lo, std::int64_t hi) const;
  bool boolean() const;
  std::string string() const;
  /// One of the given names; the message lists them.
  std::string one_of(std::initializer_list<std::string_view> names) const;
  std::string one_of(std::span<const std::string_view> names) const;
  std::vector<node> array(std::size_t min_size = 0) const;

private:
  const nlohmann::json* j_;
  std::string ptr_;
  const std::string* file_;
  bool provenance_optional_ = false;

  node child(const nlohmann::json& j, std::string pointer) const {
    node n(j, std::move(pointer), *file_);
    n.provenance_optional_ = provenance_optional_;
    return n;
  }
};

/// A short description of a JSON value for messages: `string "abc"`, `number -5`, `object`.
std::string describe(const nlohmann::json& j);

} // namespace loopcast::detail
