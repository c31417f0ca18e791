// loopcast — the reports of `loopcast watch` (docs/watch.md): a session's next wall, and the
// backtest of such forecasts.
#pragma once

#include "loopcast/forecast.hpp"
#include "loopcast/report/document.hpp"

#include <iosfwd>
#include <string>

namespace loopcast {

document forecast_document(const wall_forecast& f);
std::string forecast_to_json(const wall_forecast& f, int indent = 2);
/// The buckets now and the next wall, a few lines.
void write_forecast_text(std::ostream& os, const wall_forecast& f, double horizon_s);

document backtest_document(const backtest_result& r, const backtest_options& opt);
std::string backtest_to_json(const backtest_result& r, const backtest_options& opt, int indent = 2);
/// A row per forecast, then coverage, errors and scores beside the burn-rate baseline.
void write_backtest_text(std::ostream& os, const backtest_result& r, const backtest_options& opt);

} // namespace loopcast
