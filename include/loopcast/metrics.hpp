// loopcast — metrics with the exact definitions of DESIGN.md §8.
//
//   effective throughput = (output + reasoning) / (t_end − t_send) of the attempt that succeeded;
//                          kept only if output + reasoning >= 50 and 0.2 s <= duration <= 3600 s
//   decode throughput    = (output + reasoning) / (t_end − t_first_token)
//   prefill share        = (t_first_token − t_send) / (t_end − t_send)
//   TTFT                 = t_first_token − t_send;  TPOT = (t_end − t_first_token) / (tokens − 1)
//   context/output ratio = prompt / (output + reasoning);  cache hit rate = cache_read / prompt
// Decode throughput, prefill share and TPOT use the same kept samples as effective throughput,
// among those that record their first token (t_first_token is NaN in logs without TTFT). A
// request without an end time (t_end NaN) counts only in the token ratios.
// Percentiles interpolate linearly between order statistics (numpy's default).
#pragma once

#include "loopcast/results.hpp"

#include <span>
#include <vector>

namespace loopcast {

struct percentiles {
  double p10 = 0, p25 = 0, p50 = 0, p75 = 0, p90 = 0;
  std::size_t count = 0;  ///< samples (0: every field is 0)
};

/// Percentile q in [0, 1] of the values (sorted in place). 0 for no values.
double percentile(std::vector<double>& values, double q);
percentiles summarize(std::vector<double> values);

/// Throughput filters of DESIGN.md §8.
inline constexpr std::int64_t min_generated_tokens = 50;
inline constexpr double min_duration_s = 0.2;
inline constexpr double max_duration_s = 3600.0;

struct request_metrics {
  percentiles effective_tps;     ///< tokens per second
  percentiles decode_tps;        ///< tokens per second
  percentiles prefill_share;     ///< fraction
  percentiles ttft_s;
  percentiles tpot_s;
  percentiles latency_s;         ///< end-to-end, every served request
  percentiles context_tokens;    ///< prompt per served request
  std::size_t samples_kept = 0;
  std::size_t dropped_short_output = 0;  ///< output + reasoning < 50
  std::size_t dropped_duration = 0;      ///< outside [0.2 s, 3600 s]
  std::size_t dropped_no_timing = 0;     ///< the log has no end time for the request
  double context_output_ratio = 0;  ///< total prompt / total generated
  double cache_hit_rate = 0;        ///< total cache_read / total prompt
};

request_metrics compute_request_metrics(std::span<const request_sample> requests);

} // namespace loopcast
