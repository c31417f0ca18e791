// `loopcast watch`: the next wall of a running session, as a line of text or a JSON document.
#include "loopcast/report.hpp"

#include "report/documents.hpp"
#include "util/text.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <ctime>
#include <ostream>

namespace loopcast {

namespace {

std::string span(double s) {
  if (std::isinf(s)) return "beyond the horizon";
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  if (s < 2 * 86400) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} days", s / 86400);
}

std::string when(const wall_forecast& f, double t) {
  if (!f.absolute_clock) return fmt::format("{:.1f} s", t);
  const auto tt = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

nlohmann::ordered_json finite_or_null(double x) { return std::isfinite(x) ? nlohmann::ordered_json(x) : nullptr; }

} // namespace

namespace detail {

nlohmann::ordered_json forecast_doc(const wall_forecast& f) {
  nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
  for (const auto& b : f.buckets)
    buckets.push_back({{"name", b.name}, {"used", b.used}, {"limit", b.limit}, {"period_s", b.period_s}});
  const bool hit = f.hit_share > 0;
  return {{"log", f.log},
          {"requests", f.requests},
          {"last_send_s", f.last_send_s},
          {"absolute_clock", f.absolute_clock},
          {"buckets", buckets},
          {"refused_so_far", f.refused_at_s ? nlohmann::ordered_json{{"t_s", *f.refused_at_s}, {"bucket", f.refused_by}}
                                            : nlohmann::ordered_json(nullptr)},
          {"gap_s", f.gap_s},
          {"growth_tokens_per_request", f.growth_per_request},
          {"next_wall",
           {{"bucket", hit ? nlohmann::ordered_json(f.bucket) : nlohmann::ordered_json(nullptr)},
            {"p10_s", finite_or_null(f.p10_s)},
            {"p50_s", finite_or_null(f.p50_s)},
            {"p90_s", finite_or_null(f.p90_s)},
            {"p50_at_s", finite_or_null(f.last_send_s + f.p50_s)},
            {"requests_p50", hit ? nlohmann::ordered_json(f.requests_p50) : nlohmann::ordered_json(nullptr)},
            {"hit_share", f.hit_share},
            {"draws", f.draws}}}};
}

} // namespace detail

std::string forecast_to_json(const wall_forecast& f, int indent) { return detail::dump(detail::forecast_doc(f), indent); }

void write_forecast_text(std::ostream& os, const wall_forecast& f, double horizon_s) {
  fmt::print(os, "{} requests, the last sent at {}", f.requests, when(f, f.last_send_s));
  for (const auto& b : f.buckets)
    fmt::print(os, "; {} {} of {} ({:.0f}%)", b.name, detail::grouped(b.used), detail::grouped(b.limit),
               b.limit > 0 ? 100 * b.used / b.limit : 0.0);
  fmt::print(os, "\n");
  if (f.refused_at_s) fmt::print(os, "  this target would already have refused the request sent at {} ({})\n",
                                 when(f, *f.refused_at_s), f.refused_by);
  if (f.buckets.empty()) {
    fmt::print(os, "  no limits: no wall ahead\n");
    return;
  }
  if (!(f.gap_s > 0)) {
    fmt::print(os, "  one send so far: no pace to forecast from\n");
    return;
  }
  if (f.hit_share == 0) {
    fmt::print(os, "  next wall: none within {} in {} draws (a request every {:.0f} s, {:+.0f} tokens per request)\n",
               span(horizon_s), f.draws, f.gap_s, f.growth_per_request);
    return;
  }
  fmt::print(os, "  next wall: {} in {} (P10 {}, P90 {}), at {}, after about {:.0f} more requests; {:.0f}% of {} draws "
                 "meet it within {} (a request every {:.0f} s, {:+.0f} tokens per request)\n",
             f.bucket, span(f.p50_s), span(f.p10_s), span(f.p90_s),
             std::isfinite(f.p50_s) ? when(f, f.last_send_s + f.p50_s) : std::string("—"), f.requests_p50,
             100 * f.hit_share, f.draws, span(horizon_s), f.gap_s, f.growth_per_request);
}

} // namespace loopcast
