#include "loopcast/errors.hpp"

#include <fmt/format.h>

namespace loopcast {

namespace {
std::string located(const std::string& file, const std::string& pointer, const std::string& what) {
  if (pointer.empty()) return fmt::format("{}: {}", file, what);
  return fmt::format("{}: {}: {}", file, pointer, what);
}
} // namespace

config_error::config_error(std::string file, std::string pointer, const std::string& what)
    : error(located(file, pointer, what)), file_(std::move(file)), pointer_(std::move(pointer)),
      reason_(what) {}

trace_error::trace_error(std::string file, long line, const std::string& what)
    : error(line > 0 ? fmt::format("{}:{}: {}", file, line, what) : fmt::format("{}: {}", file, what)),
      file_(std::move(file)), line_(line) {}

} // namespace loopcast
