// loopcast — error messages in the header-only core, without a formatting library.
//
// detail::message(parts...) concatenates strings and numbers. A double is written as fmt's "{}"
// writes it (the shortest text that reads back to the same value, in fixed notation for decimal
// exponents from -4 to 15 and in scientific notation otherwise), so the core's messages read the
// same as the rest of the library's; fixed(x, digits) writes "{:.Nf}".
#pragma once

#include <charconv>
#include <cmath>
#include <concepts>
#include <string>
#include <string_view>

namespace loopcast::detail {

/// A double written with a fixed number of decimals (as "{:.2f}").
struct fixed {
  double value;
  int digits;
};

inline void append(std::string& s, std::string_view v) { s += v; }
inline void append(std::string& s, const char* v) { s += v; }
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, char v) { s += v; }

template <std::integral I>
  requires(!std::same_as<I, char> && !std::same_as<I, bool>)
void append(std::string& s, I v) {
  char buf[24];
  s.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

inline void append(std::string& s, double v) {
  if (std::isnan(v)) {
    s += std::signbit(v) ? "-nan" : "nan";
    return;
  }
  if (std::isinf(v)) {
    s += v < 0 ? "-inf" : "inf";
    return;
  }
  char buf[40];
  // The shortest round-trip digits in scientific form tell the decimal exponent.
  const auto sci = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific).ptr;
  const std::string_view text(buf, static_cast<std::size_t>(sci - buf));
  int exp10 = 0;
  const auto e = text.find('e') + 1;
  std::from_chars(text.data() + e + (text[e] == '+'), text.data() + text.size(), exp10);
  if (exp10 < -4 || exp10 >= 16) {
    s += text;
    return;
  }
  s.append(buf, std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed).ptr);
}

inline void append(std::string& s, fixed v) {
  if (!std::isfinite(v.value)) return append(s, v.value);
  char buf[400];  // DBL_MAX has 309 digits before the point
  s.append(buf, std::to_chars(buf, buf + sizeof buf, v.value, std::chars_format::fixed, v.digits).ptr);
}

/// The parts, concatenated.
template <class... Parts>
std::string message(const Parts&... parts) {
  std::string s;
  (append(s, parts), ...);
  return s;
}

} // namespace loopcast::detail
