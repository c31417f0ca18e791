#include "loopcast/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace loopcast {

// Linear interpolation between order statistics at rank q·(n − 1) (numpy's "linear").
double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double rank = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (rank - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

percentiles summarize(std::vector<double> v) {
  percentiles p;
  p.count = v.size();
  if (v.empty()) return p;
  p.p10 = percentile(v, 0.10);
  p.p25 = percentile(v, 0.25);
  p.p50 = percentile(v, 0.50);
  p.p75 = percentile(v, 0.75);
  p.p90 = percentile(v, 0.90);
  return p;
}

request_metrics compute_request_metrics(std::span<const request_sample> requests) {
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
      ++m.dropped_no_timing;
      continue;
    }
    const bool has_first = !std::isnan(r.t_first_token);  // logs without TTFT
    lat.push_back(duration);
    if (has_first) ttft.push_back(r.t_first_token - r.t_send);
    if (r.generated < min_generated_tokens) {
      ++m.dropped_short_output;
      continue;
    }
    if (duration < min_duration_s || duration > max_duration_s) {
      ++m.dropped_duration;
      continue;
    }
    ++m.samples_kept;
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
  m.context_output_ratio = generated > 0 ? prompt / generated : 0.0;
  m.cache_hit_rate = prompt > 0 ? cache_read / prompt : 0.0;
  return m;
}

} // namespace loopcast
