// loopcast — prices (docs/model.md §6).
//
// Prices are USD per million tokens per class. Above a long-context threshold the whole request
// is priced at that tier (Claude and Gemini above 200K). A batch discount, a time-of-day
// multiplier (DeepSeek's off-peak half price) and a per-request fee apply on top. Reasoning is
// billed at the output price unless priced separately.
#pragma once

#include "loopcast/tokens.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

namespace loopcast {

/// USD per million tokens of each class.
struct class_prices {
  double input = 0;
  double cache_read = 0;
  double cache_write_5m = 0;  ///< writes with the default (5-minute) TTL
  double cache_write_1h = 0;  ///< writes with the 1-hour TTL
  double output = 0;
  double reasoning = 0;       ///< equal to output unless priced separately
};

/// Prices that apply to the whole request once its prompt exceeds `above_prompt_tokens`.
struct context_tier {
  std::int64_t above_prompt_tokens = 0;
  class_prices usd_per_million;
};

/// A multiplier in force on some weekdays between two UTC hours.
struct time_window {
  std::uint8_t weekdays = 0x7f;  ///< bit d set = applies on weekday d (0 = Monday … 6 = Sunday)
  double start_hour_utc = 0;     ///< inclusive, hours in [0, 24)
  double end_hour_utc = 24;      ///< exclusive, hours in (0, 24]
  double multiplier = 1;
};

struct price_sheet {
  class_prices usd_per_million;
  std::vector<context_tier> long_context;  ///< sorted by threshold
  double batch_discount = 0;               ///< fraction off with the batch API, in [0, 1)
  bool batch_discounts_cache = true;       ///< whether the discount also applies to cache reads/writes
  double default_time_multiplier = 1;      ///< outside every time window
  std::vector<time_window> time_windows;   ///< first match wins
  double usd_per_request = 0;              ///< fixed fee per successful request
  /// Explicit cache storage (Gemini), USD per million tokens per hour: every newly cached token is
  /// charged for one cache TTL (refreshes on a hit are not charged again). 0: storage is free.
  double cache_storage_usd_per_million_hour = 0;
};

/// The prices in force for a request with this prompt size.
inline const class_prices& prices_for_prompt(const price_sheet& p, std::int64_t prompt_tokens) noexcept {
  const class_prices* chosen = &p.usd_per_million;
  for (const auto& tier : p.long_context)  // sorted by threshold: the last one exceeded wins
    if (prompt_tokens > tier.above_prompt_tokens) chosen = &tier.usd_per_million;
  return *chosen;
}

/// The time-of-day multiplier at a Unix time (seconds).
inline double time_multiplier(const price_sheet& p, double unix_s) noexcept {
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

/// Cost of one request sent at Unix time `unix_s`, in USD, and its split per class.
struct request_cost {
  double total_usd = 0;
  double by_class_usd[token_class_count] = {};
};
/// cache_write is billed at the 5-minute write price, cache_write_1h at the 1-hour one.
inline request_cost price_request(const price_sheet& p, const token_counts& t, double unix_s, bool batch = false) noexcept {
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
  put(token_class::cache_write, t.cache_write, c.cache_write_5m, bc);
  put(token_class::output, t.output, c.output, b);
  put(token_class::reasoning, t.reasoning, c.reasoning, b);
  put(token_class::cache_write_1h, t.cache_write_1h, c.cache_write_1h, bc);
  r.total_usd += p.usd_per_request;
  return r;
}

} // namespace loopcast
