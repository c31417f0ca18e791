// One JSON parser for presets, price lists and logs: linear in the size of the text, with a depth
// limit (the document is built by an event handler on nlohmann's iterative SAX parser, so deep
// input cannot exhaust the stack and no per-value callback makes it quadratic), and optionally
// refusing duplicate object keys (nlohmann would keep the last value silently). Internal to
// loopcast.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopcast::detail {

template <class Json>
struct json_parse_result {
  std::optional<Json> value;  ///< the document, when it parsed
  std::size_t byte = 0;       ///< syntax errors: 1-based byte offset of the error
  std::string message;        ///< what went wrong
  std::string pointer;        ///< duplicate keys: the JSON pointer of the object
  bool syntax = false;        ///< a syntax error (byte is meaningful)
  bool too_deep = false;
  bool duplicate = false;
};

namespace json_parse_impl {

/// A key as a JSON pointer token (RFC 6901: '~' → "~0", '/' → "~1").
inline std::string escape_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

template <class Json>
class dom_builder {
public:
  using number_integer_t = typename Json::number_integer_t;
  using number_unsigned_t = typename Json::number_unsigned_t;
  using number_float_t = typename Json::number_float_t;
  using string_t = typename Json::string_t;
  using binary_t = typename Json::binary_t;

  dom_builder(json_parse_result<Json>& out, int max_depth, bool refuse_duplicates)
      : out_(out), max_depth_(max_depth), refuse_duplicates_(refuse_duplicates) {}

  Json root;

  bool null() { return add(Json(nullptr)); }
  bool boolean(bool v) { return add(Json(v)); }
  bool number_integer(number_integer_t v) { return add(Json(v)); }
  bool number_unsigned(number_unsigned_t v) { return add(Json(v)); }
  bool number_float(number_float_t v, const string_t&) { return add(Json(v)); }
  bool string(string_t& v) { return add(Json(std::move(v))); }
  bool binary(binary_t& v) { return add(Json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(string_t& k) {
    if (refuse_duplicates_ && stack_.back()->contains(k)) {
      out_.duplicate = true;
      out_.pointer = pointer();
      out_.message = "duplicate key \"" + std::string(k) + "\" (each key may appear once)";
      return false;
    }
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    out_.syntax = true;
    out_.byte = position;
    std::string msg = e.what();
    // "[json.exception.parse_error.101] parse error at line 3, column 11: what": the caller names
    // the place (throw_parse_problem), so only "what" is kept.
    if (auto p = msg.find("parse error"); p != std::string::npos) {
      const auto colon = msg.find(": ", p);
      msg = colon != std::string::npos ? msg.substr(colon + 2) : msg.substr(p);
    }
    else if (auto q = msg.find("] "); q != std::string::npos) msg = msg.substr(q + 2);
    out_.message = msg;
    return false;
  }

private:
  // Where a new value goes: the root, the end of the open array, or the open object's key.
  Json* place(Json&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    Json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    Json& slot = top[key_];
    slot = std::move(v);
    return &slot;
  }
  bool add(Json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(Json&& container) {
    if (static_cast<int>(stack_.size()) >= max_depth_) {
      out_.too_deep = true;
      out_.message = "nested deeper than " + std::to_string(max_depth_) + " levels";
      return false;
    }
    const std::string token = stack_.empty() ? std::string() : stack_.back()->is_array()
                                                                   ? std::to_string(stack_.back()->size())
                                                                   : escape_token(key_);
    stack_.push_back(place(std::move(container)));
    tokens_.push_back(token);
    return true;
  }
  bool close() {
    stack_.pop_back();
    tokens_.pop_back();
    return true;
  }
  std::string pointer() const {
    std::string p;
    for (std::size_t i = 1; i < tokens_.size(); ++i) p += "/" + tokens_[i];
    return p;
  }

  json_parse_result<Json>& out_;
  int max_depth_;
  bool refuse_duplicates_;
  std::vector<Json*> stack_;  // the open containers, outermost first
  std::vector<std::string> tokens_;
  string_t key_;
};

} // namespace json_parse_impl

/// Parses `text` (linear time, nesting at most `max_depth`, duplicate keys refused on request).
template <class Json = nlohmann::json>
json_parse_result<Json> parse_json_text(std::string_view text, int max_depth, bool refuse_duplicates) {
  json_parse_result<Json> out;
  json_parse_impl::dom_builder<Json> b(out, max_depth, refuse_duplicates);
  bool ok = false;
  try {
    ok = Json::sax_parse(text.begin(), text.end(), &b, nlohmann::detail::input_format_t::json, true, false);
  } catch (const typename Json::exception& e) {  // e.g. a number out of range
    std::string msg = e.what();
    if (auto q = msg.find("] "); q != std::string::npos) msg = msg.substr(q + 2);
    out.message = msg;
    return out;
  }
  if (ok) out.value = std::move(b.root);
  return out;
}

/// 1-based line and column of a 1-based byte offset.
inline std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t byte) {
  std::size_t line = 1, col = 1;
  const std::size_t end = std::min<std::size_t>(byte == 0 ? 0 : byte - 1, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

} // namespace loopcast::detail
