// loopcast — prices (docs/model.md §6).
//
// Prices are USD per million tokens per class. Above a long-context threshold the whole request
// is priced at that tier (Claude and Gemini above 200K). A batch discount, a time-of-day
// multiplier (DeepSeek's off-peak half price) and a per-request fee apply on top. Reasoning is
// billed at the output price unless priced separately.
#pragma once

#include "loopcast/tokens.hpp"

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
const class_prices& prices_for_prompt(const price_sheet& p, std::int64_t prompt_tokens) noexcept;
/// The time-of-day multiplier at a Unix time (seconds).
double time_multiplier(const price_sheet& p, double unix_s) noexcept;

/// Cost of one request sent at Unix time `unix_s`, in USD, and its split per class.
struct request_cost {
  double total_usd = 0;
  double by_class_usd[token_class_count] = {};
};
request_cost price_request(const price_sheet& p, const token_counts& t, double unix_s,
                           bool batch = false, bool write_1h = false) noexcept;

} // namespace loopcast
