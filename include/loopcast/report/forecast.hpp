// loopcast — the reports of `loopcast watch` (docs/watch.md): a session's next wall.
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

} // namespace loopcast
