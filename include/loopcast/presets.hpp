// loopcast — presets: targets, clients, workloads and scenarios as JSON files in models/.
//
// Loading is strict: an unknown key, a missing key, a wrong type, a negative, NaN or infinite
// number, or an impossible combination is a config_error naming the file and JSON pointer.
// Presets refer to each other by name; a preset_library finds them in its directories.
#pragma once

#include "loopcast/names.hpp"
#include "loopcast/price_book.hpp"
#include "loopcast/retry.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/target.hpp"
#include "loopcast/workload.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loopcast {

enum class preset_kind : std::uint8_t { target, client, workload, scenario };
template <>
struct enum_names<preset_kind> {
  static constexpr std::array table{enum_entry{preset_kind::target, "target"},
                                    enum_entry{preset_kind::client, "client"},
                                    enum_entry{preset_kind::workload, "workload"},
                                    enum_entry{preset_kind::scenario, "scenario"}};
};

struct preset_entry {
  preset_kind kind;
  std::string name;
  std::string description;
  std::filesystem::path file;
  std::string provider, tier, model;  ///< targets only
  provenance origin;                  ///< source (several joined with "; "), date read, verified
};

/// The presets found under one or more directories (searched recursively for *.json).
class preset_library {
public:
  /// Throws config_error on an unreadable or duplicated preset.
  explicit preset_library(std::vector<std::filesystem::path> dirs);
  /// The library over default_models_dir().
  static preset_library standard();

  const std::vector<preset_entry>& entries() const noexcept { return entries_; }
  const std::vector<std::filesystem::path>& dirs() const noexcept { return dirs_; }
  /// The file of a preset; throws config_error naming the known presets of that kind otherwise.
  const std::filesystem::path& find(preset_kind kind, std::string_view name) const;

  target load_target(std::string_view name) const;
  /// A target named by a preset name or a .json file's path.
  target load_target_ref(const std::string& ref) const;
  retry_policy load_client(std::string_view name) const;
  workload load_workload(std::string_view name) const;
  scenario load_scenario(std::string_view name) const;

private:
  std::vector<std::filesystem::path> dirs_;
  std::vector<preset_entry> entries_;
};

/// Prices by model from the library's cloud targets (the first target of a model, by name,
/// wins; every tier of a provider bills a model alike). For pricing recorded requests.
model_price_book catalogue_price_book(const preset_library& lib);

/// The price list that comes with loopcast: LiteLLM's map in <models>/prices/litellm/, dated by
/// the source.json beside it (the library's folders first, then default_models_dir()'s).
struct bundled_price_list {
  std::filesystem::path file;
  std::string name;  ///< "LiteLLM price map (bundled)"
  std::string date;  ///< the snapshot's date, YYYY-MM-DD
};
/// nullopt when no folder holds one.
std::optional<bundled_price_list> find_bundled_price_list(const preset_library& lib);

/// The prices to price recorded requests with, in order of preference: the LiteLLM or models.dev
/// list at `price_list` (else at $LOOPCAST_PRICE_LIST) when one is given; the library's
/// catalogue; and, unless a list was given, the bundled snapshot (find_bundled_price_list) for the
/// models the catalogue lacks. `models`: the models to be priced; when every one is known before
/// the snapshot, it is not read (it takes about 0.1 s); empty: read it anyway.
model_price_book load_price_book(const std::string& price_list, const preset_library& lib,
                                 const std::vector<std::string>& models = {});

/// The models directory: $LOOPCAST_MODELS; else share/loopcast/models beside the shared library
/// or the program (an installed copy: <prefix>/lib or <prefix>/bin); else, for a program or
/// library that runs from loopcast's build tree, the source tree's models/; else the install
/// prefix's (never the checkout of the machine it was built on: it may be gone).
std::filesystem::path default_models_dir();

/// Where default_models_dir() looks, as data (tests pass their own; `exists` tells a directory).
struct models_dir_search {
  std::string env;                                 ///< $LOOPCAST_MODELS ("" when unset)
  std::vector<std::filesystem::path> binaries;     ///< the library's file, then the program's
  std::filesystem::path build_dir, source_models, install_models;
};
std::filesystem::path choose_models_dir(const models_dir_search& s,
                                        const std::function<bool(const std::filesystem::path&)>& exists);

/// Parse presets from JSON text; `file` is used in error messages.
target parse_target(std::string_view json_text, const std::string& file);
retry_policy parse_client(std::string_view json_text, const std::string& file);
workload parse_workload(std::string_view json_text, const std::string& file);
/// References to other presets by name are resolved through `lib`.
scenario parse_scenario(std::string_view json_text, const std::string& file, const preset_library& lib);
/// A route as a scenario option's "route" holds it ({"targets", "spill_after_s", "cooldown"};
/// docs/routing.md): the option's targets and policy, labelled by its name.
scenario_option parse_route(std::string_view json_text, const std::string& file, const preset_library& lib);

/// The preset's JSON with every reference to another preset (by name or .json path) replaced by
/// that preset's own JSON, so that every parameter of a scenario has a JSON pointer (sweeps use
/// these pointers). Other kinds come back as they are. Pretty-printed with `indent` spaces.
std::string resolved_preset_json(std::string_view json_text, const std::string& file, const preset_library& lib,
                                 int indent = 2);

/// Load a preset file of the given kind (throws config_error when it is of another kind).
target load_target_file(const std::filesystem::path& file);
retry_policy load_client_file(const std::filesystem::path& file);
workload load_workload_file(const std::filesystem::path& file);
scenario load_scenario_file(const std::filesystem::path& file, const preset_library& lib);

/// A route file: a JSON object of "MODEL-PATTERN": "TARGET" pairs (a preset name or a .json path
/// each), as `loopcast replay --on FILE` takes. nullopt when the file is not one (a target preset
/// is an object with "kind", and a bad file is left to the preset loader's messages); a
/// config_error for an object that is neither.
std::optional<std::vector<std::pair<std::string, std::string>>> read_route_file(const std::string& path);

} // namespace loopcast
