// Plain-text formatting shared by every layer that writes text (the model's error messages, the
// reports, the CLI). Internal to loopcast; below the reports, so solve and the importers need
// not reach up into them.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

namespace loopcast::detail {

/// A CSV field: quoted (with doubled quotes) when it holds a comma, a quote or a line break.
inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}

/// 1234567 → "1,234,567" (rounded to a whole number).
inline std::string grouped(double x) {
  const auto n = static_cast<long long>(std::llround(x));
  auto digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

/// "1 request", "2 requests": a count and its noun, plural unless the count is 1.
inline std::string count_of(long long n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

} // namespace loopcast::detail
