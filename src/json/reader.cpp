#include "json/reader.hpp"
#include "json/parse.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace loopcast::detail {

namespace {

using json_parse_impl::escape_token;  // a key as a JSON pointer token (RFC 6901)

std::string fmt_number(double x) { return fmt::format("{}", x); }

template <class Json>
[[noreturn]] void throw_parse_problem(const json_parse_result<Json>& r, std::string_view text, const std::string& file) {
  if (r.too_deep) throw config_error(file, "", fmt::format("JSON nested deeper than {} levels", max_strict_json_depth));
  if (r.duplicate) throw config_error(file, r.pointer, r.message);
  if (r.syntax) {
    const auto [line, col] = line_column(text, r.byte);
    throw config_error(file, "", fmt::format("not valid JSON at line {}, column {}: {}", line, col, r.message));
  }
  throw config_error(file, "", fmt::format("not valid JSON: {}", r.message));
}
} // namespace

nlohmann::json parse_json(std::string_view text, const std::string& file) {
  auto r = parse_json_text<nlohmann::json>(text, max_strict_json_depth, /*refuse_duplicates=*/true);
  if (r.value) return std::move(*r.value);
  throw_parse_problem(r, text, file);
}

nlohmann::ordered_json parse_ordered_json(std::string_view text, const std::string& file) {
  auto r = parse_json_text<nlohmann::ordered_json>(text, max_strict_json_depth, /*refuse_duplicates=*/true);
  if (r.value) return std::move(*r.value);
  throw_parse_problem(r, text, file);
}

std::string describe(const nlohmann::json& j) {
  switch (j.type()) {
  case nlohmann::json::value_t::null: return "null";
  case nlohmann::json::value_t::boolean: return fmt::format("boolean {}", j.get<bool>());
  case nlohmann::json::value_t::string: {
    auto s = j.get<std::string>();
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return fmt::format("string \"{}\"", s);
  }
  case nlohmann::json::value_t::number_integer:
  case nlohmann::json::value_t::number_unsigned:
  case nlohmann::json::value_t::number_float: return fmt::format("number {}", j.dump());
  case nlohmann::json::value_t::object: return "an object";
  case nlohmann::json::value_t::array: return "an array";
  default: return "an unsupported value";
  }
}

void node::fail(const std::string& what) const { throw config_error(*file_, ptr_, what); }

void node::expect_keys(std::initializer_list<std::string_view> allowed) const {
  if (!j_->is_object()) fail(fmt::format("expected an object, found {}", describe(*j_)));
  // Every unknown key at once (one: the message names it at its own place).
  std::vector<std::string> unknown;
  for (const auto& [k, v] : j_->items()) {
    bool ok = false;
    for (auto a : allowed) ok = ok || a == k;
    if (!ok) unknown.push_back(k);
  }
  if (unknown.size() == 1)
    node(j_->at(unknown[0]), ptr_ + "/" + escape_token(unknown[0]), *file_)
        .fail(fmt::format("unknown key \"{}\" (allowed here: {})", unknown[0], fmt::join(allowed, ", ")));
  if (unknown.size() > 1) {
    std::string keys;
    for (const auto& k : unknown) keys += fmt::format("{}\"{}\"", keys.empty() ? "" : ", ", k);
    fail(fmt::format("unknown keys {} (allowed here: {})", keys, fmt::join(allowed, ", ")));
  }
}

node node::at(std::string_view key) const {
  if (!j_->is_object()) fail(fmt::format("expected an object, found {}", describe(*j_)));
  auto it = j_->find(key);
  if (it == j_->end()) fail(fmt::format("missing key \"{}\"", key));
  return child(*it, ptr_ + "/" + escape_token(key));
}

std::optional<node> node::find(std::string_view key) const {
  if (!j_->is_object()) fail(fmt::format("expected an object, found {}", describe(*j_)));
  auto it = j_->find(key);
  if (it == j_->end()) return std::nullopt;
  return child(*it, ptr_ + "/" + escape_token(key));
}

bool node::has(std::string_view key) const { return j_->is_object() && j_->contains(key); }

double node::number() const {
  if (!j_->is_number()) fail(fmt::format("expected a number, found {}", describe(*j_)));
  const double x = j_->get<double>();
  if (!std::isfinite(x)) fail(fmt::format("expected a finite number, found {}", j_->dump()));
  return x;
}

double node::number_in(double lo, double hi) const {
  const double x = number();
  if (x < lo || x > hi) {
    if (std::isinf(hi)) fail(fmt::format("expected a number >= {}, found {}", fmt_number(lo), j_->dump()));
    fail(fmt::format("expected a number between {} and {}, found {}", fmt_number(lo), fmt_number(hi), j_->dump()));
  }
  return x;
}

double node::non_negative() const { return number_in(0, HUGE_VAL); }

double node::positive() const {
  const double x = number();
  if (!(x > 0)) fail(fmt::format("expected a number > 0, found {}", j_->dump()));
  return x;
}

std::int64_t node::integer(std::int64_t lo, std::int64_t hi) const {
  const double x = number();
  if (x != std::floor(x)) fail(fmt::format("expected a whole number, found {}", j_->dump()));
  if (x < static_cast<double>(lo) || x > static_cast<double>(hi))
    fail(fmt::format("expected a whole number between {} and {}, found {}", lo, hi, j_->dump()));
  return static_cast<std::int64_t>(x);
}

bool node::boolean() const {
  if (!j_->is_boolean()) fail(fmt::format("expected true or false, found {}", describe(*j_)));
  return j_->get<bool>();
}

std::string node::string() const {
  if (!j_->is_string()) fail(fmt::format("expected a string, found {}", describe(*j_)));
  return j_->get<std::string>();
}

std::string node::one_of(std::initializer_list<std::string_view> names) const {
  return one_of(std::span<const std::string_view>(names.begin(), names.size()));
}

std::string node::one_of(std::span<const std::string_view> names) const {
  if (!j_->is_string())
    fail(fmt::format("expected one of {}, found {}", fmt::join(names, ", "), describe(*j_)));
  auto s = j_->get<std::string>();
  for (auto n : names)
    if (n == s) return s;
  fail(fmt::format("expected one of {}, found \"{}\"", fmt::join(names, ", "), s));
}

std::vector<node> node::array(std::size_t min_size) const {
  if (!j_->is_array()) fail(fmt::format("expected an array, found {}", describe(*j_)));
  if (j_->size() < min_size)
    fail(fmt::format("expected an array of at least {} element{}, found {}", min_size,
                     min_size == 1 ? "" : "s", j_->size()));
  std::vector<node> out;
  out.reserve(j_->size());
  for (std::size_t i = 0; i < j_->size(); ++i) out.push_back(child((*j_)[i], fmt::format("{}/{}", ptr_, i)));
  return out;
}

} // namespace loopcast::detail
