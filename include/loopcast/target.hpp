// loopcast — what a session runs against: a cloud provider's tier or a local deployment.
//
// A target bundles the rate-limit buckets of one organisation (empty for a local engine), the
// prefix cache, the speed model, the context window, and token prices (cloud), power draw and
// electricity price (local) or a subscription's monthly fee (plan, its caps as buckets). Plain
// data, loaded from models/targets/*.json.
#pragma once

#include "loopcast/engine.hpp"
#include "loopcast/plan.hpp"
#include "loopcast/power.hpp"
#include "loopcast/prefix_cache.hpp"
#include "loopcast/prices.hpp"
#include "loopcast/limits/bucket_config.hpp"
#include "loopcast/speed.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopcast {

/// cloud: priced per token; local: priced by energy (and hardware); plan: a subscription's flat
/// monthly fee (plan.hpp), its caps as buckets.
enum class target_kind : std::uint8_t { cloud, local, plan };
template <>
struct enum_names<target_kind> {
  static constexpr std::array table{enum_entry{target_kind::cloud, "cloud"}, enum_entry{target_kind::local, "local"},
                                    enum_entry{target_kind::plan, "plan"}};
};

/// Where a preset's numbers come from.
struct provenance {
  std::string source;     ///< URL(s) or citation
  std::string read_on;    ///< date the source was read, YYYY-MM-DD
  bool verified = true;   ///< false where the source is second-hand
};

/// A bucket limit that held only for a span of time: a plan's rules change with dates (Claude's
/// 5-hour limits doubled on 2026-05-06). `factor` is the limit then relative to the preset's own.
struct dated_limit {
  std::string bucket;
  double from_unix_s = -std::numeric_limits<double>::infinity();  ///< in force from (inclusive)
  double until_unix_s = std::numeric_limits<double>::infinity();  ///< … until (exclusive)
  double factor = 1;
  std::string source;
};

struct target {
  std::string name;
  std::string description;
  target_kind kind = target_kind::cloud;
  std::string provider;   ///< e.g. "cerebras", "local"
  std::string tier;       ///< e.g. "developer"
  std::string model;      ///< e.g. "qwen-3.8-27b"
  std::vector<bucket_config> limits;    ///< rate-limit buckets (organisation-wide for this model)
  std::vector<dated_limit> dated_limits;  ///< limits as they stood at other dates (target_at)
  bool sends_retry_after = true;        ///< 429 responses tell the client when to retry
  cache_config cache;
  speed_model speed;
  std::int64_t context_window_tokens = 131072;  ///< prompt + generated must fit, in tokens
  std::int64_t max_output_tokens = 0;  ///< the model's largest max_tokens (0: not given); replays cap at it
  std::optional<price_sheet> prices;    ///< token prices (cloud)
  std::optional<power_config> power;    ///< energy model (local)
  std::optional<plan_terms> plan;       ///< subscription fee (plan)
  std::optional<engine_config> engine;  ///< batching and memory of a local engine (none: every request alone)
  provenance origin;

  /// The bucket named `bucket_name`, or nullptr.
  bucket_config* find_bucket(std::string_view bucket_name) noexcept {
    for (auto& b : limits)
      if (b.name == bucket_name) return &b;
    return nullptr;
  }
  const bucket_config* find_bucket(std::string_view bucket_name) const noexcept {
    return const_cast<target*>(this)->find_bucket(bucket_name);
  }
};

/// The target as its rules stand from Unix time `unix_s` on: each bucket's limit is its limit then
/// (times the factor of every dated limit of it in force then), and each later date where one of
/// its dated limits begins or ends becomes a limit step (bucket_config::limit_steps), which a run
/// that crosses it takes when it happens. The result has no dated limits left; applied again at a
/// later date, it takes the steps up to it. A NaN date (a log on a relative clock) gives the
/// preset's own limits and no steps.
inline target target_at(const target& t, double unix_s);
/// The date whose rules a run starting at `start_unix_s` meets: that date, or NaN (the preset's
/// own, today's, rules) for a run with no date — t = 0 at the Unix epoch, as a scenario without
/// start_time_utc or a replay of logs on a relative clock starts.
inline double rules_date(double start_unix_s) noexcept {
  return start_unix_s > 0 ? start_unix_s : std::numeric_limits<double>::quiet_NaN();
}
/// Forgets one bucket's dated limits and limit steps: a limit the user sets (a scenario's
/// "limits", `--limit`) is that bucket's limit at any date.
inline void drop_dated_limits(target& t, std::string_view bucket);
/// The dated limits of `t` that begin or end strictly inside (from, until): the rule changes a run
/// over that span meets (and takes, as limit steps of target_at(t, from)).
inline std::vector<dated_limit> rule_changes_within(const target& t, double from, double until);

/// Most buckets a target may have (the simulator keeps per-request bucket state in fixed arrays).
inline constexpr std::size_t max_buckets = 16;

} // namespace loopcast

#include "loopcast/detail/target_rules.hpp"
