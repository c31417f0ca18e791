// loopcast — prices by model name, for pricing recorded requests at their own model.
//
// A log names each request's model as the provider's API reports it ("claude-opus-4-5-20251101",
// "gpt-5.4", "anthropic/claude-haiku-4.5"); presets and price lists name it their own way
// ("claude-opus-4.5"). Both are compared after normalize_model_name: lower case, any
// "provider/" prefix and a trailing date (-YYYYMMDD or @YYYYMMDD) removed, '.' and '_' as '-'.
#pragma once

#include "loopcast/prices.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace loopcast {

std::string normalize_model_name(std::string_view model);

struct model_price_book {
  struct entry {
    std::string key;           ///< normalize_model_name of the model
    std::string model;         ///< as the source names it
    std::string from;          ///< the preset or price-list entry the prices come from
    price_sheet prices;
    bool write_charged = false;  ///< the provider bills newly cached tokens as cache writes
  };
  std::vector<entry> entries;  ///< the first entry of a key wins
  std::string source;          ///< "the preset catalogue", or the price list's file

  /// The prices of a model as a log names it; nullptr if the book does not know it.
  const entry* find(std::string_view model) const;
  /// Adds an entry unless its key is already there.
  void add(entry e);
};

} // namespace loopcast
