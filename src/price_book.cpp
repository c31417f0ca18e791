#include "loopcast/price_book.hpp"

#include <algorithm>
#include <cctype>

namespace loopcast {

std::string normalize_model_name(std::string_view model) {
  if (const auto slash = model.rfind('/'); slash != std::string_view::npos) model.remove_prefix(slash + 1);
  std::string s(model);
  for (auto& c : s) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '.' || c == '_') c = '-';
  }
  // A trailing date: -20251101 or @20251101.
  if (s.size() > 9) {
    const auto tail = std::string_view(s).substr(s.size() - 9);
    const bool date = (tail[0] == '-' || tail[0] == '@') &&
                      std::all_of(tail.begin() + 1, tail.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (date) s.resize(s.size() - 9);
  }
  return s;
}

const model_price_book::entry* model_price_book::find(std::string_view model) const {
  const auto key = normalize_model_name(model);
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

void model_price_book::add(entry e) {
  if (e.key.empty()) e.key = normalize_model_name(e.model);
  for (const auto& x : entries)
    if (x.key == e.key) return;
  entries.push_back(std::move(e));
}

} // namespace loopcast
