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

#include <cstdint>
#include <span>
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

/// Decode (one token per weight read) and prefill (a chunk of tokens per weight read) rooflines.
roofline_curve roofline_decode(const roofline_hardware& hw) noexcept;
roofline_curve roofline_prefill(const roofline_hardware& hw) noexcept;

using speed_curve = std::variant<constant_curve, linear_curve, table_curve, roofline_curve>;

/// Seconds to process positions [x0, x1] (0 when x1 <= x0).
double integrate(const speed_curve& c, double x0, double x1) noexcept;
/// Per-token time at position x, in seconds per token.
double seconds_per_token_at(const speed_curve& c, double x) noexcept;
/// Tokens per second at position x.
inline double tokens_per_second_at(const speed_curve& c, double x) noexcept {
  return 1.0 / seconds_per_token_at(c, x);
}

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
};

/// Durations of one request, in seconds.
struct request_timing {
  double ttft_s;    ///< overhead + prefill
  double decode_s;  ///< generation of all output and reasoning tokens
};

/// Time of a request with `cached` prompt tokens from the cache, `uncached` more prompt tokens,
/// and `generated` output + reasoning tokens.
inline request_timing time_request(const speed_model& m, std::int64_t cached,
                                   std::int64_t uncached, std::int64_t generated) noexcept {
  const double k = static_cast<double>(cached);
  const double prompt = k + static_cast<double>(uncached);
  const double ttft = m.overhead_s + integrate(m.prefill, k, prompt) + k * m.cached_token_s;
  return {ttft, integrate(m.decode, prompt, prompt + static_cast<double>(generated))};
}

/// A measured sample: `tokens` processed at mean position `context_tokens` took `seconds`.
struct speed_sample {
  double context_tokens;
  double tokens;
  double seconds;
};

/// Least-squares fit of a linear per-token-time curve to samples (each sample's time is the
/// integral of a + b·x over its span). Throws loopcast::error with fewer than two distinct
/// contexts. `r_squared`, when given, receives the fit's coefficient of determination.
linear_curve fit_linear_curve(std::span<const speed_sample> samples, double* r_squared = nullptr);

} // namespace loopcast
