// loopcast — importing the price lists users already keep (nothing is downloaded).
//
// LiteLLM's model_prices_and_context_window.json (USD per token) and models.dev's api.json (USD
// per million) are mapped onto price_sheet:
//   LiteLLM     input_cost_per_token → input, cache_read_input_token_cost → cache_read,
//               cache_creation_input_token_cost(_above_1hr) → cache_write_5m (1h),
//               output_cost_per_token → output, output_cost_per_reasoning_token → reasoning,
//               *_above_{128k,200k,256k,272k}_tokens and tiered_pricing → long-context tiers,
//               *_batches → batch discount, *_priority / *_flex → variants,
//               input_cost_per_request → usd_per_request, max_input_tokens, rpm, tpm;
//   models.dev  cost.{input, output, reasoning, cache_read, cache_write} (one write price, taken
//               as the 5-minute one), cost.tiers[{tier: {type: "context", size}}] → tiers,
//               limit.{context, output}.
// Unknown fields are ignored. Missing prices follow loopcast's conventions (cache reads and
// reasoning priced as input and output) with a note. Contradictions and implausible values are
// warnings naming the model and the field; a value that is not a non-negative number is skipped.
#pragma once

#include "loopcast/names.hpp"
#include "loopcast/price_book.hpp"
#include "loopcast/prices.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopcast {

enum class price_list_format : std::uint8_t { automatic, litellm, models_dev };
template <>
struct enum_names<price_list_format> {
  static constexpr std::array table{enum_entry{price_list_format::automatic, "auto"},
                                    enum_entry{price_list_format::litellm, "litellm"},
                                    enum_entry{price_list_format::models_dev, "models.dev"}};
};

struct price_warning {
  std::string model;
  std::string field;
  std::string message;
};

struct imported_model {
  std::string id;        ///< LiteLLM key, or "provider/model" for models.dev
  std::string provider;
  price_sheet prices;
  std::vector<std::pair<std::string, price_sheet>> variants;  ///< e.g. {"priority", …}
  std::int64_t context_window_tokens = 0;  ///< 0: not given
  std::int64_t max_output_tokens = 0;
  double rpm = 0, tpm = 0;                 ///< LiteLLM's rate limits when given (0: not given)
  std::vector<std::string> notes;          ///< defaults applied
  bool priced = true;                      ///< false: no token prices, or a price field was rejected (see warnings)
};

struct price_list {
  std::string file;
  price_list_format format = price_list_format::automatic;
  std::vector<imported_model> models;
  std::vector<price_warning> warnings;
  /// LiteLLM entries left out because their "mode" is not a text model's (chat, completion,
  /// responses), by mode; empty with all_modes.
  std::map<std::string, std::size_t> skipped_modes;
};

/// Parses a price list; throws config_error naming the file for a file that is neither format.
/// `only` keeps the models whose id is in it (all when empty); an id that matches nothing is an error.
/// LiteLLM entries of other modes (image generation, embeddings, audio, …) are left out unless
/// `all_modes` (or named in `only`): agents' logs price text models.
price_list parse_price_list(std::string_view json_text, const std::string& file,
                            price_list_format format = price_list_format::automatic,
                            const std::vector<std::string>& only = {}, bool all_modes = false);
price_list import_price_list(const std::string& path, price_list_format format = price_list_format::automatic,
                             const std::vector<std::string>& only = {}, bool all_modes = false);

/// Prices by model from a price list (ids as the list names them, e.g. LiteLLM's
/// "claude-opus-4-5-20251101" or models.dev's "anthropic/claude-opus-4-5"), as one source named
/// `name` (default: the list's file) of `date` (YYYY-MM-DD, "" when unknown).
model_price_book price_book_of(const price_list& list, const std::string& name = {}, const std::string& date = {});

/// A price sheet as the "prices" object of a target preset (docs/presets.md).
std::string price_sheet_json(const price_sheet& p, int indent = 2);

/// A target preset (JSON) named `name` for model `m`: the base target preset's limits, cache,
/// speed and window (`base_json`, e.g. `resolved_preset_json` of it) with the model's imported
/// prices, its source and notes extended, `verified` false. Throws config_error when the base is
/// not a cloud target or the model has no usable prices (a target is never priced at zero).
std::string target_with_prices(std::string_view base_json, const std::string& base_file, const imported_model& m,
                               const std::string& list_file, const std::string& name);

} // namespace loopcast
