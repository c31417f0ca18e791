#include "loopcast/speed.hpp"

#include <algorithm>
#include <cmath>

namespace loopcast {

namespace {

// ∫ (a + b·x) dx over [x0, x1].
double linear_integral(double a, double b, double x0, double x1) noexcept {
  return a * (x1 - x0) + 0.5 * b * (x1 * x1 - x0 * x0);
}

// Table: per-token time interpolated linearly between points, flat outside them.
double table_at(const table_curve& t, double x) noexcept {
  const auto& xs = t.context_tokens;
  const auto& ys = t.seconds_per_token;
  if (x <= xs.front()) return ys.front();
  if (x >= xs.back()) return ys.back();
  const auto i = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), x) - xs.begin());
  const double f = (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
  return ys[i - 1] + f * (ys[i] - ys[i - 1]);
}

// Sum of trapezoids: exact for a piecewise-linear per-token time.
double table_integral(const table_curve& t, double x0, double x1) noexcept {
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
double roofline_integral(const roofline_curve& r, double x0, double x1) noexcept {
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

} // namespace

double integrate(const speed_curve& c, double x0, double x1) noexcept {
  if (!(x1 > x0)) return 0.0;
  switch (c.index()) {
  case 0: return std::get<constant_curve>(c).seconds_per_token * (x1 - x0);
  case 1: {
    const auto& l = std::get<linear_curve>(c);
    return linear_integral(l.a_s, l.b_s_per_token, x0, x1);
  }
  case 2: return table_integral(std::get<table_curve>(c), x0, x1);
  case 3: return roofline_integral(std::get<roofline_curve>(c), x0, x1);
  }
  return 0.0;
}

double seconds_per_token_at(const speed_curve& c, double x) noexcept {
  switch (c.index()) {
  case 0: return std::get<constant_curve>(c).seconds_per_token;
  case 1: {
    const auto& l = std::get<linear_curve>(c);
    return l.a_s + l.b_s_per_token * x;
  }
  case 2: return table_at(std::get<table_curve>(c), x);
  case 3: {
    const auto& r = std::get<roofline_curve>(c);
    return std::max(r.mem0_s + r.mem1_s_per_token * x, r.cmp0_s + r.cmp1_s_per_token * x);
  }
  }
  return 0.0;
}

// Decode: every generated token reads all weights and the KV cache of its context once
// (memory time), and costs 2 FLOPs per parameter plus attention over its context (compute).
roofline_curve roofline_decode(const roofline_hardware& hw) noexcept {
  const double bw = hw.memory_bandwidth_bytes_per_s * hw.utilisation;
  const double fl = hw.flops_per_s * hw.utilisation;
  return {hw.parameters * hw.bytes_per_parameter / bw, hw.kv_bytes_per_token / bw,
          2.0 * hw.parameters / fl, hw.attention_flops_per_position / fl};
}

// Prefill: a chunk of tokens shares one read of the weights and of the KV cache, so the memory
// time per token is divided by the chunk size; compute is the same per token as in decode.
roofline_curve roofline_prefill(const roofline_hardware& hw) noexcept {
  auto r = roofline_decode(hw);
  r.mem0_s /= hw.prefill_chunk_tokens;
  r.mem1_s_per_token /= hw.prefill_chunk_tokens;
  return r;
}

} // namespace loopcast
