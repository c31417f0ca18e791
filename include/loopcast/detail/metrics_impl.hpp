// loopcast — the definitions of metrics.hpp's functions (header-only, as the rest of the core).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace loopcast {

inline double sorted_quantile(std::span<const double> v, double q) noexcept {
  const double rank = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, v.size() - 1);
  const double f = rank - static_cast<double>(lo);
  if (f == 0.0 || v[lo] == v[hi]) return v[lo];
  return v[lo] + f * (v[hi] - v[lo]);
}

namespace detail::metrics {
// The values of ranks k and k + 1 (0-based; k + 1 < last − first) of [first, last), reordered.
inline std::pair<double, double> two_ranks(std::vector<double>::iterator first, std::vector<double>::iterator last,
                                    std::size_t k) {
  const auto at = first + static_cast<std::ptrdiff_t>(k);
  std::nth_element(first, at, last);
  return {*at, *std::min_element(at + 1, last)};
}

// two_ranks(v, lo) of a large v. Two values of an evenly spaced sample bracket the ranks (with a
// margin of about four standard errors of a sample quantile); one pass counts the values below and
// between them, and when both ranks fall between, a second pass moves those values to v's front and
// only they are selected from: two streaming passes and a selection among about 1/8 of the values
// instead of a selection among all of them. When the bracket misses (a sample unlike the whole),
// the plain selection; either way the values are those of the sorted v.
inline std::pair<double, double> ranks_by_bracket(std::vector<double>& v, std::size_t lo) {
  const std::size_t n = v.size();
  constexpr std::size_t sample_size = 1024;
  std::array<double, sample_size> sample;
  for (std::size_t i = 0; i < sample_size; ++i) sample[i] = v[i * (n / sample_size)];
  std::sort(sample.begin(), sample.end());
  const auto at = static_cast<std::ptrdiff_t>(static_cast<double>(lo) / static_cast<double>(n) * sample_size);
  constexpr std::ptrdiff_t margin = 64;  // 4·√(1024·¼)
  const double low = sample[static_cast<std::size_t>(std::max<std::ptrdiff_t>(at - margin, 0))];
  const double high = sample[static_cast<std::size_t>(std::min<std::ptrdiff_t>(at + margin, sample_size - 1))];
  std::size_t below = 0, between = 0;
  for (const double x : v) {  // (& rather than &&: no branch on each value's side of the bracket)
    below += static_cast<std::size_t>(x < low);
    between += static_cast<std::size_t>((x >= low) & (x <= high));
  }
  if (!(below <= lo && lo + 1 < below + between)) return two_ranks(v.begin(), v.end(), lo);
  std::size_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = v[i];
    v[m] = x;
    m += static_cast<std::size_t>((x >= low) & (x <= high));
  }
  return two_ranks(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m), lo - below);
}

// The same value as sorted_quantile(sorted v, q), by selection (v is reordered); NaN for no values.
inline double select_percentile(std::vector<double>& v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double rank = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  if (lo + 1 >= v.size()) return *std::max_element(v.begin(), v.end());  // (q = 1, or one value)
  const auto [a, b] = v.size() >= 16384 ? ranks_by_bracket(v, lo) : two_ranks(v.begin(), v.end(), lo);
  return a + (rank - static_cast<double>(lo)) * (b - a);
}
} // namespace detail::metrics

inline double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return sorted_quantile(v, q);
}

inline percentiles summarize(std::vector<double> v) {
  percentiles p;
  p.count = v.size();
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());  // once, not once per percentile
  p.p10 = sorted_quantile(v, 0.10);
  p.p25 = sorted_quantile(v, 0.25);
  p.p50 = sorted_quantile(v, 0.50);
  p.p75 = sorted_quantile(v, 0.75);
  p.p90 = sorted_quantile(v, 0.90);
  return p;
}

inline request_metrics compute_request_metrics(std::span<const request_sample> requests) {
  request_metrics m;
  std::vector<double> eff, dec, share, ttft, tpot, lat, ctx;
  eff.reserve(requests.size());
  double prompt = 0, cache_read = 0, generated = 0;
  for (const auto& r : requests) {
    const double duration = r.t_end - r.t_send;
    prompt += static_cast<double>(r.prompt);
    cache_read += static_cast<double>(r.cache_read);
    generated += static_cast<double>(r.generated);
    ctx.push_back(static_cast<double>(r.prompt));
    if (std::isnan(duration)) {
      ++m.samples.dropped_no_timing;
      continue;
    }
    const bool has_first = !std::isnan(r.t_first_token);  // logs without TTFT
    lat.push_back(duration);
    if (has_first) ttft.push_back(r.t_first_token - r.t_send);
    if (r.generated < min_generated_tokens) {
      ++m.samples.dropped_short_output;
      continue;
    }
    if (duration < min_duration_s || duration > max_duration_s) {
      ++m.samples.dropped_duration;
      continue;
    }
    ++m.samples.kept;
    const double g = static_cast<double>(r.generated);
    eff.push_back(g / duration);
    if (!has_first) continue;
    const double decode_s = r.t_end - r.t_first_token;
    if (decode_s > 0) dec.push_back(g / decode_s);
    share.push_back((r.t_first_token - r.t_send) / duration);
    tpot.push_back(decode_s / (g - 1.0));
  }
  m.effective_tps = summarize(std::move(eff));
  m.decode_tps = summarize(std::move(dec));
  m.prefill_share = summarize(std::move(share));
  m.ttft_s = summarize(std::move(ttft));
  m.tpot_s = summarize(std::move(tpot));
  m.latency_s = summarize(std::move(lat));
  m.context_tokens = summarize(std::move(ctx));
  m.context_output_ratio = generated > 0 ? prompt / generated : std::numeric_limits<double>::quiet_NaN();
  m.cache_hit_rate = prompt > 0 ? cache_read / prompt : std::numeric_limits<double>::quiet_NaN();
  return m;
}

inline request_medians compute_request_medians(std::span<const request_sample> requests) {
  median_samples samples;
  samples.effective_tps.reserve(requests.size());
  samples.ttft_s.reserve(requests.size());
  for (const auto& r : requests) add_median_samples(r, samples.effective_tps, samples.ttft_s);
  return compute_request_medians(samples);
}

inline request_medians compute_request_medians(median_samples& samples) {
  return {detail::metrics::select_percentile(samples.effective_tps, 0.5), detail::metrics::select_percentile(samples.ttft_s, 0.5)};
}

inline double session_rate_429(const session_result& s) noexcept {
  return s.attempts > 0 ? static_cast<double>(s.rate_limited) / s.attempts : 0.0;
}

inline double session_stall_share(const session_result& s) noexcept {
  const double d = s.end_s - s.start_s;
  return d > 0 ? s.stall_s / d : 0.0;
}

inline fleet_metrics compute_fleet_metrics(const simulation_result& r) {
  fleet_metrics f;
  double busy = 0;
  std::int64_t served = 0;
  for (const auto& s : r.sessions) {
    ++f.sessions;
    if (s.outcome == session_outcome::completed) ++f.completed;
    f.attempts += s.attempts;
    f.rate_limited += s.rate_limited;
    f.stall_s += s.stall_s;
    busy += s.end_s - s.start_s;
    served += s.requests_served;
  }
  f.died = f.sessions - f.completed;
  f.p_session_dies = f.sessions > 0 ? static_cast<double>(f.died) / f.sessions : 0.0;
  f.rate_429 = f.attempts > 0 ? static_cast<double>(f.rate_limited) / static_cast<double>(f.attempts) : 0.0;
  f.stall_share = busy > 0 ? f.stall_s / busy : 0.0;
  f.wall_s = r.wall_s;
  f.cost_usd = r.cost_usd;
  if (r.wall_s > 0) {
    f.tasks_per_hour = f.completed * 3600.0 / r.wall_s;
    f.requests_per_s = static_cast<double>(served) / r.wall_s;
    f.output_tps = static_cast<double>(r.tokens.generated()) / r.wall_s;
    f.usd_per_hour = r.cost_usd * 3600.0 / r.wall_s;
  }
  f.usd_per_task = f.completed > 0 ? r.cost_usd / f.completed : std::numeric_limits<double>::quiet_NaN();
  return f;
}

inline std::vector<std::optional<bucket_load>> bucket_loads(const simulation_result& r, std::span<const bucket_config> limits) {
  double first = std::numeric_limits<double>::infinity(), last = -first;
  for (const auto& s : r.sessions) {
    if (s.attempts == 0) continue;
    first = std::min(first, s.start_s);
    last = std::max(last, s.end_s - s.stall_s);
  }
  const double span = last - first;
  std::vector<std::optional<bucket_load>> out(r.buckets.size());
  for (std::size_t b = 0; b < r.buckets.size() && b < limits.size(); ++b) {
    const auto& cfg = limits[b];
    if (cfg.algorithm == bucket_algorithm::concurrency || !(span > 0) || !(cfg.limit > 0)) continue;
    bucket_load l;
    l.span_s = span;
    l.offered_per_period = r.buckets[b].charged * cfg.period_s / span;
    l.ratio = l.offered_per_period / cfg.limit;
    l.min_span_s = std::max(span, (r.buckets[b].charged / cfg.limit - 1) * cfg.period_s);
    out[b] = l;
  }
  return out;
}

inline std::optional<plan_cost> plan_cost_of(const simulation_result& r, const target& tgt) {
  if (!tgt.plan) return std::nullopt;
  std::int64_t tasks = 0;
  for (const auto& s : r.sessions) tasks += s.outcome == session_outcome::completed;
  if (tasks == 0 || !(r.wall_s > 0)) return std::nullopt;
  plan_cost c;
  c.fee_share_usd = plan_fee_share(*tgt.plan, r.wall_s);
  const double n = static_cast<double>(tasks);
  const double by_time = n * plan_month_s / r.wall_s;
  c.tasks_per_month = by_time;
  c.limited_by = "wall clock";
  for (std::size_t b = 0; b < r.buckets.size() && b < tgt.limits.size(); ++b) {
    const auto& cfg = tgt.limits[b];
    if (cfg.algorithm == bucket_algorithm::concurrency || !(r.buckets[b].charged > 0)) continue;
    const double by_bucket = n * (cfg.limit / r.buckets[b].charged) * (plan_month_s / cfg.period_s);
    if (by_bucket < c.tasks_per_month) {
      c.tasks_per_month = by_bucket;
      c.limited_by = cfg.name;
    }
  }
  c.limited_share = c.tasks_per_month / by_time;
  c.usd_per_task = tgt.plan->monthly_fee_usd / c.tasks_per_month;
  c.usd_per_hour = tgt.plan->monthly_fee_usd / (c.tasks_per_month * (r.wall_s / n) / 3600.0);
  return c;
}

} // namespace loopcast
