// Progress on a terminal: one line on stderr, redrawn in place, for work that takes a while.
#include "cli/cli.hpp"

#include "loopcast/progress.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace loopcast::cli {

namespace {

std::string duration(double s) {
  if (!std::isfinite(s)) return "?";
  const auto t = static_cast<long>(std::lround(s));
  return t >= 3600 ? fmt::format("{}h{:02}m", t / 3600, t % 3600 / 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}

} // namespace

void install_progress_bar(bool quiet) {
  if (quiet || !::isatty(STDERR_FILENO)) return;
  double after_s = 2.0;  // work shorter than this shows nothing
  if (const char* env = std::getenv("LOOPCAST_PROGRESS_AFTER_S"); env && *env) {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (end != env && *end == '\0' && std::isfinite(v) && v >= 0) after_s = v;
  }
  set_progress_handler([after_s, drawn = false](const progress_update& u) mutable {
    if (u.finished) {
      if (drawn) std::fputs("\r\033[K", stderr);  // the line goes: the result follows on stdout
      drawn = false;
      return;
    }
    if (u.elapsed_s < after_s || u.done == 0) return;
    const double rate = static_cast<double>(u.done) / u.elapsed_s;
    const double eta = static_cast<double>(u.total - std::min(u.done, u.total)) / rate;
    fmt::print(stderr, "\r\033[Kloopcast: {} {}/{} ({:.0f}%), {:.0f}/s, ETA {}", u.task, u.done, u.total,
               u.total > 0 ? 100.0 * static_cast<double>(u.done) / static_cast<double>(u.total) : 0.0, rate,
               duration(eta));
    std::fflush(stderr);
    drawn = true;
  });
}

} // namespace loopcast::cli
