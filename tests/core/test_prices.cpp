// Prices (docs/model.md §6) and local energy cost.
#include "loopcast/power.hpp"
#include "loopcast/prices.hpp"

#include <gtest/gtest.h>

#include <chrono>

using namespace loopcast;

namespace {
double unix_at(int y, unsigned m, unsigned d, int hour) {
  using namespace std::chrono;
  const auto days = sys_days{year{y} / month{m} / day{d}}.time_since_epoch().count();
  return static_cast<double>(days) * 86400.0 + hour * 3600.0;
}
price_sheet cerebras_qwen() {
  price_sheet p;
  p.usd_per_million = {0.99, 0.99, 0, 0, 1.49, 1.49};
  return p;
}
} // namespace

// The article's bill: 1,534,667 billed input tokens (1,264,128 cache reads) at $0.99/M and
// 34,935 output tokens (6,866 visible + 28,069 reasoning) at $1.49/M:
//   270,539 × 0.99e-6 + 1,264,128 × 0.99e-6 + 34,935 × 1.49e-6 = 0.267834 + 1.251487 + 0.052053 = $1.571374
TEST(Prices, ReferenceBillIs1_5714) {
  const token_counts billed{1534667 - 1264128, 1264128, 0, 6866, 28069};
  const auto c = price_request(cerebras_qwen(), billed, 0);
  EXPECT_NEAR(c.total_usd, 1.5714, 1e-4);
  EXPECT_NEAR(c.by_class_usd[static_cast<int>(token_class::cache_read)], 1.251487, 1e-6);
  EXPECT_NEAR(c.by_class_usd[static_cast<int>(token_class::output)] +
                  c.by_class_usd[static_cast<int>(token_class::reasoning)], 0.052053, 1e-6);
}

// Claude Sonnet: base 3 / 0.30 / 3.75 / 15; above 200K the whole request at 6 / 0.60 / 7.50 / 22.50.
TEST(Prices, LongContextTierPricesTheWholeRequest) {
  price_sheet p;
  p.usd_per_million = {3.0, 0.30, 3.75, 6.0, 15.0, 15.0};
  p.long_context.push_back({200000, {6.0, 0.60, 7.50, 12.0, 22.50, 22.50}});
  // 250K prompt (50K input, 200K cache reads), 1K output: 0.3 + 0.12 + 0.0225 = $0.4425
  EXPECT_NEAR(price_request(p, {50000, 200000, 0, 1000, 0}, 0).total_usd, 0.4425, 1e-12);
  // Exactly 200K is not above the threshold: 0.15 + 0.045 + 0.015 = $0.21
  EXPECT_NEAR(price_request(p, {50000, 150000, 0, 1000, 0}, 0).total_usd, 0.21, 1e-12);
  // Cache writes by lifetime, each class at its own price: 10K 5-minute writes × 3.75e-6, 10K
  // 1-hour writes × 6e-6, and both in one request.
  EXPECT_NEAR(price_request(p, {0, 0, 10000, 0, 0}, 0).total_usd, 0.0375, 1e-12);
  EXPECT_NEAR(price_request(p, {0, 0, 0, 0, 0, 10000}, 0).total_usd, 0.06, 1e-12);
  const auto both = price_request(p, {0, 0, 10000, 0, 0, 10000}, 0);
  EXPECT_NEAR(both.total_usd, 0.0975, 1e-12);
  EXPECT_NEAR(both.by_class_usd[static_cast<std::size_t>(token_class::cache_write_1h)], 0.06, 1e-12);
}

TEST(Prices, BatchDiscountWithAndWithoutCacheClasses) {
  price_sheet p;
  p.usd_per_million = {2.0, 1.0, 0, 0, 10.0, 10.0};
  p.batch_discount = 0.5;
  const token_counts t{1000000, 1000000, 0, 100000, 0};  // $2 + $1 + $1 = $4 without discount
  EXPECT_NEAR(price_request(p, t, 0, false).total_usd, 4.0, 1e-12);
  EXPECT_NEAR(price_request(p, t, 0, true).total_usd, 2.0, 1e-12);
  p.batch_discounts_cache = false;  // cache reads stay at $1
  EXPECT_NEAR(price_request(p, t, 0, true).total_usd, 2.5, 1e-12);
}

// DeepSeek v4-flash: peak 01:00–04:00 and 06:00–10:00 UTC Monday–Friday at list price, half price otherwise.
TEST(Prices, TimeOfDayWindows) {
  price_sheet p;
  p.usd_per_million = {0.30, 0.006, 0, 0, 1.20, 1.20};
  p.default_time_multiplier = 0.5;
  const std::uint8_t weekdays = 0x1f;  // Monday–Friday
  p.time_windows = {{weekdays, 1, 4, 1.0}, {weekdays, 6, 10, 1.0}};
  const token_counts t{1000000, 0, 0, 0, 0};  // $0.30 at list price
  EXPECT_NEAR(price_request(p, t, unix_at(2026, 5, 4, 2)).total_usd, 0.30, 1e-12);   // Monday 02:00: peak
  EXPECT_NEAR(price_request(p, t, unix_at(2026, 5, 4, 5)).total_usd, 0.15, 1e-12);   // Monday 05:00: off-peak
  EXPECT_NEAR(price_request(p, t, unix_at(2026, 5, 8, 9)).total_usd, 0.30, 1e-12);   // Friday 09:00: peak
  EXPECT_NEAR(price_request(p, t, unix_at(2026, 5, 9, 2)).total_usd, 0.15, 1e-12);   // Saturday 02:00: off-peak
  EXPECT_NEAR(price_request(p, t, unix_at(2026, 5, 4, 10)).total_usd, 0.15, 1e-12);  // 10:00 is past the window
}

TEST(Prices, PerRequestFee) {
  price_sheet p;
  p.usd_per_million = {1, 1, 0, 0, 1, 1};
  p.usd_per_request = 0.002;
  EXPECT_NEAR(price_request(p, {1000, 0, 0, 0, 0}, 0).total_usd, 0.001 + 0.002, 1e-15);
}

// 11 minutes at 500 W and $0.1844/kWh: 660 s × 500 W = 0.091667 kWh → $0.016903.
TEST(Power, ReferenceLocalRunCosts1_69Cents) {
  const power_config p{500, 500, 0.1844, 0, 0};
  const auto c = local_cost(p, 400, 660);  // busy or idle, the whole machine draws 500 W
  EXPECT_NEAR(c.energy_kwh, 0.0916667, 1e-7);
  EXPECT_NEAR(c.total_usd(), 0.0169, 1e-4);
}

TEST(Power, LoadIdleAndAmortisation) {
  // 30 min serving at 450 W, 30 min idle at 50 W: (450·1800 + 50·1800) J = 0.25 kWh at $0.20 = $0.05;
  // a $3,000 machine over 10,000 h costs $0.30 per hour of wall clock.
  const power_config p{450, 50, 0.20, 3000, 10000};
  const auto c = local_cost(p, 1800, 3600);
  EXPECT_NEAR(c.energy_kwh, 0.25, 1e-12);
  EXPECT_NEAR(c.electricity_usd, 0.05, 1e-12);
  EXPECT_NEAR(c.amortisation_usd, 0.30, 1e-12);
}
