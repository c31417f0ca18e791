#include "loopcast/prices.hpp"

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
