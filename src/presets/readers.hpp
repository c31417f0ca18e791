// The readers of the preset kinds, shared by the files of src/presets/ (one per kind) and the
// dispatcher (library.cpp). Each reader takes a node of a parsed document and refuses, with the
// file and JSON pointer, anything docs/presets.md does not allow. Internal to loopcast.
#pragma once

#include "loopcast/names.hpp"
#include "loopcast/presets.hpp"

#include "json/reader.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// The keys every preset may have.
#define LOOPCAST_HEADER_KEYS "kind", "name", "description", "source", "read_on", "verified", "notes"

namespace loopcast::detail::preset {

inline constexpr double inf = std::numeric_limits<double>::infinity();
// Resource limits: far above any real session, low enough to refuse absurd input quickly.
inline constexpr std::int64_t max_tokens_value = 1'000'000'000'000;  // 10^12 tokens
inline constexpr std::int64_t max_turns = 1'000'000;
inline constexpr std::int64_t max_sessions = 1'000'000;
inline constexpr std::int64_t max_scenario_turns = 100'000'000;  // sessions × turns of one run

// A UTC time "YYYY-MM-DDTHH:MM:SSZ" as Unix seconds (scenario.cpp).
double parse_utc(const node& n);

// An enumeration read by the spellings of its table of names (names.hpp).
template <named_enum E>
E read_enum(const node& n) {
  static constexpr auto names = enum_spellings<E>();
  return *parse_name<E>(n.one_of(std::span<const std::string_view>(names)));
}


// The common header (header.cpp).
void check_kind(const node& root, preset_kind want);
/// The source of a preset written in code without one.
inline constexpr std::string_view provenance_in_code = "given in code (no source)";
provenance read_provenance(const node& root);
std::string read_name(const node& root);
std::string read_description(const node& root);
std::vector<std::string> read_string_list(const node& n);
distribution read_distribution(const node& n);

// Problems found while reading a document: each part is read even after another failed. One
// problem is thrown as it was; several as one error (`FILE: N problems:` and a line each), whose
// lines an enclosing document's list takes over one by one (header.cpp).
class problems {
public:
  explicit problems(std::string file) : file_(std::move(file)) {}
  template <class F>
  void gather(F&& read) {
    try {
      read();
    } catch (const config_error& e) {
      note(e);
    }
  }
  std::size_t count() const noexcept { return lines_.size(); }
  void throw_if_any() const;

private:
  void note(const config_error& e);
  std::string file_;
  std::exception_ptr first_;
  std::vector<std::string> lines_;
};

// One reader per kind, each in its file.
target read_target(const node& root);
retry_policy read_client(const node& root);
workload read_workload(const node& root);
scenario read_scenario(const node& root, const preset_library& lib);
/// A route object {"targets", "spill_after_s", "cooldown"} as an option (its targets' limits as
/// they are; scenario.cpp).
scenario_option read_route_option(const node& r, const preset_library& lib);

/// A bucket's limit: a whole number from 1 to 10^12 (target.cpp).
double read_limit(const node& n);
/// Sets the limits a scenario option's "limits" object names ({"BUCKET": N, …}) on `t`, then
/// refuses a bucket still without a published limit (scenario.cpp).
void set_option_limits(target& t, const node& option);

/// A path given relative to the preset `file` that names it.
std::filesystem::path sibling(const std::string& file, const std::string& ref);
/// A reference (name or .json path) as the referenced document (keys in file order); an inline
/// object as it is.
nlohmann::ordered_json inline_reference(const nlohmann::ordered_json& ref, preset_kind kind, const std::string& file,
                                        const preset_library& lib);

} // namespace loopcast::detail::preset
