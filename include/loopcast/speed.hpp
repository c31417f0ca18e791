// loopcast — speed as a function of context (docs/model.md §5).
//
// A speed curve gives the time to process one token at position x (in seconds per token).
// Processing positions x0..x1 takes the integral of that curve over [x0, x1], computed exactly:
//   constant     s(x) = s0                      ∫ = s0·(x1 − x0)
//   linear       s(x) = a + b·x                 ∫ = a·(x1 − x0) + b·(x1² − x0²)/2
//   table        s(x) piecewise linear between measured (context, tokens/s) points, flat
//                beyond the first and last point; ∫ = sum of trapezoids
//   roofline     s(x) = max(m0 + m1·x, c0 + c1·x): memory-bound vs compute-bound time, from
//                hardware figures; ∫ splits at the crossing point
// A request takes overhead + prefill + decode, where prefill(n new tokens after k cached) =
// ∫ prefill over [k, k+n] + k · cached_token_s, and decode(m tokens at context c) = ∫ decode over
// [c, c+m]. TTFT = overhead + prefill.
#pragma once

#include "loopcast/tokens.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

namespace loopcast {

/// s(x) = seconds_per_token.
struct constant_curve {
  double seconds_per_token = 0;
};

/// s(x) = a_s + b_s_per_token · x (decode is memory-bound: weights plus a KV cache that grows with x).
struct linear_curve {
  double a_s = 0;            ///< per-token time at position 0, in seconds
  double b_s_per_token = 0;  ///< growth of the per-token time per position, in seconds per token
};

/// Measured points (context, tokens per second); per-token time is interpolated linearly.
struct table_curve {
  std::vector<double> context_tokens;     ///< strictly increasing positions, in tokens
  std::vector<double> seconds_per_token;  ///< 1 / measured tokens per second at each position
};

/// Hardware description from which a roofline curve is built.
struct roofline_hardware {
  double memory_bandwidth_bytes_per_s = 0;  ///< in bytes per second
  double flops_per_s = 0;                   ///< dense FLOP/s of the accelerator
  double parameters = 0;                    ///< active parameters per token
  double bytes_per_parameter = 2;           ///< weight precision, in bytes
  double kv_bytes_per_token = 0;            ///< KV-cache bytes per token of context
  double attention_flops_per_position = 0;  ///< attention FLOPs per generated token per context position
  double utilisation = 0.6;                 ///< achieved fraction of peak, in (0, 1]
  double prefill_chunk_tokens = 512;        ///< prefill processes this many tokens per weight read
};

/// s(x) = max(mem0 + mem1·x, cmp0 + cmp1·x), in seconds per token.
struct roofline_curve {
  double mem0_s = 0, mem1_s_per_token = 0;
  double cmp0_s = 0, cmp1_s_per_token = 0;
};

using speed_curve = std::variant<constant_curve, linear_curve, table_curve, roofline_curve>;

namespace detail {
// ∫ (a + b·x) dx over [x0, x1].
inline double linear_integral(double a, double b, double x0, double x1) noexcept {
  return a * (x1 - x0) + 0.5 * b * (x1 * x1 - x0 * x0);
}

// Table: per-token time interpolated linearly between points, flat outside them.
inline double table_at(const table_curve& t, double x) noexcept {
  const auto& xs = t.context_tokens;
  const auto& ys = t.seconds_per_token;
  if (x <= xs.front()) return ys.front();
  if (x >= xs.back()) return ys.back();
  const auto i = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), x) - xs.begin());
  const double f = (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
  return ys[i - 1] + f * (ys[i] - ys[i - 1]);
}

// Sum of trapezoids: exact for a piecewise-linear per-token time.
inline double table_integral(const table_curve& t, double x0, double x1) noexcept {
  const auto& xs = t.context_tokens;
  double total = 0;
  double a = x0;
  // Points strictly inside (x0, x1) split the integral into linear pieces.
  auto it = std::upper_bound(xs.begin(), xs.end(), x0);
  for (; it != xs.end() && *it < x1; ++it) {
    total += 0.5 * (table_at(t, a) + table_at(t, *it)) * (*it - a);
    a = *it;
  }
  total += 0.5 * (table_at(t, a) + table_at(t, x1)) * (x1 - a);
  return total;
}

// max(m0 + m1·x, c0 + c1·x) integrated exactly by splitting at the crossing.
inline double roofline_integral(const roofline_curve& r, double x0, double x1) noexcept {
  const double dm = r.mem1_s_per_token - r.cmp1_s_per_token;
  const double d0 = r.mem0_s - r.cmp0_s;  // memory − compute at x = 0
  auto piece = [&](double a, double b) {
    const double mid = 0.5 * (a + b);
    return (r.mem0_s + r.mem1_s_per_token * mid >= r.cmp0_s + r.cmp1_s_per_token * mid)
               ? linear_integral(r.mem0_s, r.mem1_s_per_token, a, b)
               : linear_integral(r.cmp0_s, r.cmp1_s_per_token, a, b);
  };
  if (dm != 0.0) {
    const double xc = -d0 / dm;
    if (xc > x0 && xc < x1) return piece(x0, xc) + piece(xc, x1);
  }
  return piece(x0, x1);
}
} // namespace detail

/// Seconds to process positions [x0, x1] (0 when x1 <= x0).
inline double integrate(const speed_curve& c, double x0, double x1) noexcept {
  if (!(x1 > x0)) return 0.0;
  switch (c.index()) {
  case 0: return std::get<constant_curve>(c).seconds_per_token * (x1 - x0);
  case 1: {
    const auto& l = std::get<linear_curve>(c);
    return detail::linear_integral(l.a_s, l.b_s_per_token, x0, x1);
  }
  case 2: return detail::table_integral(std::get<table_curve>(c), x0, x1);
  case 3: return detail::roofline_integral(std::get<roofline_curve>(c), x0, x1);
  }
  return 0.0;
}

/// Per-token time at position x, in seconds per token.
inline double seconds_per_token_at(const speed_curve& c, double x) noexcept {
  switch (c.index()) {
  case 0: return std::get<constant_curve>(c).seconds_per_token;
  case 1: {
    const auto& l = std::get<linear_curve>(c);
    return l.a_s + l.b_s_per_token * x;
  }
  case 2: return detail::table_at(std::get<table_curve>(c), x);
  case 3: {
    const auto& r = std::get<roofline_curve>(c);
    return std::max(r.mem0_s + r.mem1_s_per_token * x, r.cmp0_s + r.cmp1_s_per_token * x);
  }
  }
  return 0.0;
}

/// The decode roofline: every generated token reads all weights and the KV cache of its context
/// once (memory time), and costs 2 FLOPs per parameter plus attention over its context (compute).
inline roofline_curve roofline_decode(const roofline_hardware& hw) noexcept {
  const double bw = hw.memory_bandwidth_bytes_per_s * hw.utilisation;
  const double fl = hw.flops_per_s * hw.utilisation;
  return {hw.parameters * hw.bytes_per_parameter / bw, hw.kv_bytes_per_token / bw,
          2.0 * hw.parameters / fl, hw.attention_flops_per_position / fl};
}

/// The prefill roofline: a chunk of tokens shares one read of the weights and of the KV cache, so
/// the memory time per token is divided by the chunk size; compute is the same per token as in decode.
inline roofline_curve roofline_prefill(const roofline_hardware& hw) noexcept {
  auto r = roofline_decode(hw);
  r.mem0_s /= hw.prefill_chunk_tokens;
  r.mem1_s_per_token /= hw.prefill_chunk_tokens;
  return r;
}

/// Tokens per second at position x.
inline double tokens_per_second_at(const speed_curve& c, double x) noexcept {
  return 1.0 / seconds_per_token_at(c, x);
}

/// A request's time factor per kind of output (speed_model::output).
struct output_factors {
  double thinking = 1, text = 1, tool_use = 1;  ///< multiplied when the response held the kind
  double unknown = 1;                           ///< the whole factor when the kinds are unknown
  bool any() const noexcept { return thinking != 1 || text != 1 || tool_use != 1 || unknown != 1; }
};

/// How long a request takes on one deployment.
struct speed_model {
  double overhead_s = 0;      ///< fixed time per request (network, queueing, scheduling), in seconds
  speed_curve prefill;        ///< per uncached prompt token at its position
  double cached_token_s = 0;  ///< per cached prompt token, in seconds
  speed_curve decode;         ///< per generated token at its position
  /// Request-to-request noise of a hosted API: each request's time is multiplied by a log-normal
  /// factor with this median and spread (log-space standard deviation; 0: no noise), drawn
  /// from the session's seed. Fitted by `loopcast fit` from the residuals.
  double noise_median = 1;
  double noise_sigma = 0;
  /// Session-to-session noise: every request of a session is further multiplied by one
  /// log-normal factor of median 1 and this log-space spread, drawn once per session (hosted
  /// APIs serve whole sessions faster or slower than others). 0: none.
  double session_sigma = 0;
  /// The longest context (prompt + generated tokens) the speeds were fitted on; past it each
  /// per-token time stays at its value there rather than following the fitted curve's growth
  /// (a straight line fitted up to 60K tokens says little about 500K). 0: no bound.
  double context_max_tokens = 0;
  /// Time of day: every request sent in UTC hour h (0–23) takes hour_factors[h] times as long
  /// (hosted APIs slow down at busy hours). Empty: none; else exactly 24 factors. Fitted by
  /// `loopcast fit` from logs with clock times, when they support it.
  std::vector<double> hour_factors;
  /// What the response held: a request whose recorded response held thinking, text or a tool
  /// call (request_spec::output_kinds) takes the product of those kinds' factors times as long;
  /// one whose kinds are unknown (synthetic sessions) takes `unknown`, the fitted requests'
  /// geometric mean, so that a session of unknown kinds is as fast as the fitted mix. All 1: none.
  output_factors output = {};
};

/// The factor of a response that held `kinds` (output_kind bits; 0: unknown).
inline double output_factor(const output_factors& f, std::uint8_t kinds) noexcept {
  if (kinds == 0) return f.unknown;
  return ((kinds & output_thinking) ? f.thinking : 1.0) * ((kinds & output_text) ? f.text : 1.0) *
         ((kinds & output_tool_use) ? f.tool_use : 1.0);
}

/// The UTC hour (0–23) of a Unix time, s.
inline std::size_t utc_hour(double unix_s) noexcept {
  const double h = std::floor(unix_s / 3600.0);
  const double r = h - 24.0 * std::floor(h / 24.0);
  return r >= 0 && r < 24 ? static_cast<std::size_t>(r) : 0;
}

/// Durations of one request, in seconds.
struct request_timing {
  double ttft_s;    ///< overhead + prefill
  double decode_s;  ///< generation of all output and reasoning tokens
};

/// Seconds to process positions [x0, x1] with the per-token time held at its value at `bound`
/// beyond it (bound <= 0: none).
inline double integrate_bounded(const speed_curve& c, double x0, double x1, double bound) noexcept {
  if (!(bound > 0) || x1 <= bound) return integrate(c, x0, x1);
  if (!(x1 > x0)) return 0.0;
  const double edge = seconds_per_token_at(c, bound);
  if (x0 >= bound) return edge * (x1 - x0);
  return integrate(c, x0, bound) + edge * (x1 - bound);
}

/// Time of a request with `cached` prompt tokens from the cache, `uncached` more prompt tokens,
/// and `generated` output + reasoning tokens.
inline request_timing time_request(const speed_model& m, std::int64_t cached,
                                   std::int64_t uncached, std::int64_t generated) noexcept {
  const double k = static_cast<double>(cached);
  const double prompt = k + static_cast<double>(uncached);
  const double end = prompt + static_cast<double>(generated);
  if (m.context_max_tokens > 0 && end > m.context_max_tokens) [[unlikely]] {
    const double bound = m.context_max_tokens;
    return {m.overhead_s + integrate_bounded(m.prefill, k, prompt, bound) + k * m.cached_token_s,
            integrate_bounded(m.decode, prompt, end, bound)};
  }
  return {m.overhead_s + integrate(m.prefill, k, prompt) + k * m.cached_token_s, integrate(m.decode, prompt, end)};
}

} // namespace loopcast
