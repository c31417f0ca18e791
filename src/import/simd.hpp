// Reading logs with simdjson (a validating parser at disk speed) under the same rules as the
// nlohmann-based helpers of common.hpp: a member given twice keeps its last value, a number must be
// finite, a count whole and within max_token_count. Where simdjson refuses a text, the strict
// reader (json/parse.hpp) parses it again so that the message is the one every log gets. Internal
// to loopcast; only the importers that parse large logs include it.
#pragma once

#include "import/common.hpp"

#include <simdjson.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopcast::detail {

namespace dom = simdjson::dom;

/// o[key] when o is an object that has it (the last of a repeated key).
inline std::optional<dom::element> member(dom::element o, std::string_view key) {
  dom::object obj;
  if (o.get_object().get(obj)) return std::nullopt;
  std::optional<dom::element> found;
  for (const auto field : obj)
    if (field.key == key) found = field.value;
  return found;
}

/// The same rules as number_at, count_at, string_at and bool_at.
inline std::optional<double> number_of(const std::optional<dom::element>& e) {
  if (!e || !e->is_number()) return std::nullopt;
  const double x = e->get_double().value_unsafe();
  if (!std::isfinite(x)) return std::nullopt;
  return x;
}
inline std::optional<std::int64_t> count_of(const std::optional<dom::element>& e) {
  const auto x = number_of(e);
  if (!x || *x < 0 || *x != std::floor(*x) || *x > static_cast<double>(max_token_count)) return std::nullopt;
  return static_cast<std::int64_t>(*x);
}
inline std::optional<std::string_view> string_of(const std::optional<dom::element>& e) {
  if (!e || !e->is_string()) return std::nullopt;
  return e->get_string().value_unsafe();
}
inline std::optional<bool> bool_of(const std::optional<dom::element>& e) {
  if (!e || !e->is_bool()) return std::nullopt;
  return e->get_bool().value_unsafe();
}

/// Why simdjson refused a text that the strict reader accepts.
inline std::string refusal(simdjson::error_code err) {
  const bool number = err == simdjson::NUMBER_ERROR;
  return fmt::format("not read: {}{}", simdjson::error_message(err),
                     number ? " (a number beyond what 64-bit integers and doubles hold)" : "");
}

/// Whole JSON documents (single-document formats), read and parsed with simdjson (validated
/// whole: syntax, UTF-8 and nesting). Where simdjson refuses one, the strict reader parses it
/// again to say where and why; what that reader accepts but simdjson does not (an integer beyond
/// 64 bits) is refused with simdjson's reason. Keep one per thread: a directory of traces then
/// reuses the text buffer and the parser's memory instead of faulting in fresh pages per file.
class document_reader {
public:
  /// The document; valid until the next parse.
  dom::element parse(const std::string& path) {
    constexpr std::uintmax_t max_bytes = 512u << 20;  // as read_json_document
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw trace_error(path, 0, fmt::format("cannot read file: {}", ec.message()));
    if (size == 0) throw trace_error(path, 0, "empty file");
    if (size > max_bytes) throw trace_error(path, 0, fmt::format("file is {} bytes; at most {} are read", size, max_bytes));
    const auto n = static_cast<std::size_t>(size);
    if (text_.size() < n + simdjson::SIMDJSON_PADDING) text_.resize(n + simdjson::SIMDJSON_PADDING);
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw trace_error(path, 0, "cannot open file");
    const std::size_t got = std::fread(text_.data(), 1, n, f);
    std::fclose(f);
    if (got != n) throw trace_error(path, 0, "read error (the file changed while it was read)");
    std::fill_n(text_.data() + n, simdjson::SIMDJSON_PADDING, '\0');
    simdjson::error_code err = simdjson::SUCCESS;
    if (parser_.capacity() < n || parser_.max_depth() != static_cast<std::size_t>(max_json_depth))
      err = parser_.allocate(n, max_json_depth);
    dom::element doc;
    if (!err) err = parser_.parse(text_.data(), n, /*realloc_if_needed=*/false).get(doc);
    if (!err) return doc;
    (void)read_json_document(path);  // throws the located message
    throw trace_error(path, 0, refusal(err));
  }

  /// A long-lived process (a notebook) does not keep a large trace's buffers after its import.
  void release_if_large() {
    constexpr std::size_t kept_bytes = 64u << 20;
    if (text_.size() <= kept_bytes) return;
    text_ = std::vector<char>();
    parser_ = dom::parser();
  }

private:
  std::vector<char> text_;  // the file, then SIMDJSON_PADDING bytes
  dom::parser parser_;
};

static_assert(line_padding >= simdjson::SIMDJSON_PADDING);

/// One JSONL record (a line from for_each_line, followed by line_padding readable bytes): the parsed line, or nullopt for a blank line or one that is not JSON (skipped
/// with reason "not JSON" and the strict reader's message). Valid until the parser's next parse.
inline std::optional<dom::element> parse_record(dom::parser& parser, std::string_view text, std::int64_t line,
                                                issue_log& log) {
  if (text.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;  // blank
  simdjson::error_code err = simdjson::SUCCESS;
  if (parser.max_depth() != static_cast<std::size_t>(max_json_depth) || parser.capacity() < text.size())
    err = parser.allocate(std::max<std::size_t>(text.size(), 1 << 16), max_json_depth);
  dom::element e;
  // In place: for_each_line's lines are followed by line_padding readable bytes.
  if (!err) err = parser.parse(text.data(), text.size(), /*realloc_if_needed=*/false).get(e);
  if (!err) return e;
  if (parse_line(text, line, log)) log.skip(line, "not JSON", refusal(err));
  return std::nullopt;
}

} // namespace loopcast::detail
