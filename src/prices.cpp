#include "loopcast/prices.hpp"
#include "loopcast/price_book.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace loopcast {

const class_prices& prices_for_prompt(const price_sheet& p, std::int64_t prompt_tokens) noexcept {
  const class_prices* chosen = &p.usd_per_million;
  for (const auto& tier : p.long_context)  // sorted by threshold: the last one exceeded wins
    if (prompt_tokens > tier.above_prompt_tokens) chosen = &tier.usd_per_million;
  return *chosen;
}

double time_multiplier(const price_sheet& p, double unix_s) noexcept {
  if (p.time_windows.empty()) return p.default_time_multiplier;
  const double days = std::floor(unix_s / 86400.0);
  const double hour = (unix_s - days * 86400.0) / 3600.0;
  // 1970-01-01 was a Thursday: weekday (0 = Monday) = (days + 3) mod 7.
  const auto weekday = static_cast<int>(std::fmod(std::fmod(days + 3.0, 7.0) + 7.0, 7.0));
  for (const auto& w : p.time_windows)
    if ((w.weekdays >> weekday) & 1u)
      if (hour >= w.start_hour_utc && hour < w.end_hour_utc) return w.multiplier;
  return p.default_time_multiplier;
}

request_cost price_request(const price_sheet& p, const token_counts& t, double unix_s, bool batch,
                           bool write_1h) noexcept {
  const class_prices& c = prices_for_prompt(p, t.prompt());
  const double m = time_multiplier(p, unix_s);
  const double b = batch ? 1.0 - p.batch_discount : 1.0;
  const double bc = batch && p.batch_discounts_cache ? b : 1.0;
  request_cost r;
  auto put = [&](token_class k, std::int64_t n, double usd_per_million, double discount) {
    const double usd = static_cast<double>(n) * usd_per_million * 1e-6 * m * discount;
    r.by_class_usd[static_cast<std::size_t>(k)] = usd;
    r.total_usd += usd;
  };
  put(token_class::input, t.input, c.input, b);
  put(token_class::cache_read, t.cache_read, c.cache_read, bc);
  put(token_class::cache_write, t.cache_write, write_1h ? c.cache_write_1h : c.cache_write_5m, bc);
  put(token_class::output, t.output, c.output, b);
  put(token_class::reasoning, t.reasoning, c.reasoning, b);
  r.total_usd += p.usd_per_request;
  return r;
}

} // namespace loopcast

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
