// loopcast — prices by model name, for pricing recorded requests at their own model.
//
// A log names each request's model as the provider's API reports it ("claude-opus-4-5-20251101",
// "gpt-5.4", "anthropic/claude-haiku-4.5"); presets and price lists name it their own way
// ("claude-opus-4.5"). Both are compared after normalize_model_name: lower case, any
// "provider/" prefix and a trailing date (-YYYYMMDD or @YYYYMMDD) removed, '.' and '_' as '-'.
//
// A book joins several sources in order of preference (the user's price list, the preset
// catalogue, the bundled LiteLLM snapshot): a model is priced by the first source that knows it.
// Within one source, the provider's own entry wins over a reseller's (azure_ai/, bedrock/,
// vertex_ai/, openrouter/ …) of the same model, unless the log names the reseller's entry itself.
#pragma once

#include "loopcast/prices.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace loopcast {

std::string normalize_model_name(std::string_view model);

/// Whether a price-list id or provider names a reseller of other companies' models (a cloud
/// marketplace or a router) rather than the model's own provider.
bool is_reseller(std::string_view id_or_provider);

struct model_price_book {
  /// Where a book's prices come from.
  struct source_info {
    std::string name;  ///< "the preset catalogue", "LiteLLM price map (bundled)", or a list's file
    std::string date;  ///< the list's date (YYYY-MM-DD: a bundled list's own, a file's last change), or ""
  };
  struct entry {
    std::string key;           ///< normalize_model_name of the model
    std::string model;         ///< as the source names it
    std::string from;          ///< the preset or price-list entry the prices come from
    price_sheet prices;
    bool write_charged = false;  ///< the provider bills newly cached tokens as cache writes
    bool reseller = false;       ///< a reseller's entry (is_reseller)
    std::uint32_t source = 0;    ///< index into sources
  };
  std::vector<source_info> sources;
  std::vector<entry> entries;

  /// The prices of a model as a log names it; nullptr if the book does not know it. An entry
  /// whose id is the log's name exactly (case aside) first, else by normalized name: the first
  /// source that knows it, the provider's own entry before a reseller's, then the first added.
  const entry* find(std::string_view model) const;
  /// Adds an entry of source `e.source` (kept even when its key is known: find() chooses).
  void add(entry e);
  /// Adds `other`'s sources and entries after this book's (lower preference).
  void append(const model_price_book& other);
  /// "NAME" or "NAME, DATE" for an entry's source.
  std::string source_label(const entry& e) const;

private:
  std::unordered_map<std::string, std::size_t> exact_, best_;  ///< lower-case id / key → entry
  bool better(const entry& a, const entry& b) const noexcept;
};

} // namespace loopcast
