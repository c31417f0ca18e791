#include "loopcast/montecarlo.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/metrics.hpp"
#include "util/numbers.hpp"

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace loopcast {

namespace {
using detail::nan;

} // namespace

namespace {
// The 1-based ranks of a quantile interval's order statistics: l = 0 when there is no lower bound,
// u = n + 1 when there is no upper one.
struct order_ranks {
  std::int64_t l, u;
};

order_ranks compute_ranks(std::int64_t n, double q, double confidence) {
  const double alpha = 1.0 - confidence;
  const boost::math::binomial_distribution<double> b(static_cast<double>(n), q);
  // B = samples at or below the true quantile ~ Binomial(n, q). [x_(l), x_(u)] (1-based) covers
  // it with probability P(l <= B <= u − 1): take the largest l with P(B <= l − 1) <= alpha/2 and
  // the smallest u with P(B <= u − 1) >= 1 − alpha/2. The CDF is monotone in k, so both are the
  // first k in [0, n) where a condition on P(B <= k) turns true: a bisection, ~log2(n) CDFs each.
  auto first_k = [&](auto holds) {
    std::int64_t lo = 0, hi = n;  // the answer is in [lo, hi]; hi = n when it never holds
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (holds(boost::math::cdf(b, static_cast<double>(mid)))) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  return {first_k([&](double p) { return p > alpha / 2; }), first_k([&](double p) { return p >= 1 - alpha / 2; }) + 1};
}

// The ranks depend on (n, q, confidence) only, and a summary asks for the same few again and again
// (three quantiles of every metric of every option, all with n = the runs): the last 16 are kept,
// per thread.
order_ranks ranks(std::int64_t n, double q, double confidence) {
  struct entry {
    std::int64_t n = -1;
    double q = 0, confidence = 0;
    order_ranks r{};
  };
  thread_local std::array<entry, 16> memo;
  thread_local std::size_t next = 0;
  for (const auto& e : memo)
    if (e.n == n && e.q == q && e.confidence == confidence) return e.r;
  auto& e = memo[next];
  next = (next + 1) % memo.size();
  e = {n, q, confidence, compute_ranks(n, q, confidence)};
  return e.r;
}
} // namespace

estimate quantile_interval(std::span<const double> v, double q, double confidence) {
  if (v.empty()) return {nan, nan, nan};
  estimate e{sorted_quantile(v, q), nan, nan};
  const auto [l, u] = ranks(static_cast<std::int64_t>(v.size()), q, confidence);
  if (l >= 1) e.lo = v[static_cast<std::size_t>(l - 1)];
  if (u <= static_cast<std::int64_t>(v.size())) e.hi = v[static_cast<std::size_t>(u - 1)];
  return e;
}

estimate mean_interval(std::span<const double> v, double confidence) {
  if (v.empty()) return {nan, nan, nan};
  double sum = 0;
  for (double x : v) sum += x;
  const auto n = static_cast<double>(v.size());
  const double mean = sum / n;
  if (v.size() < 2) return {mean, nan, nan};
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / (n - 1));
  const double t = boost::math::quantile(boost::math::students_t_distribution<double>(n - 1), 1 - (1 - confidence) / 2);
  const double half = t * sd / std::sqrt(n);
  return {mean, mean - half, mean + half};
}

estimate proportion_interval(std::int64_t k, std::int64_t n, double confidence) {
  if (n <= 0) return {nan, nan, nan};
  using bd = boost::math::binomial_distribution<double>;
  const double alpha = (1 - confidence) / 2;
  const auto nn = static_cast<double>(n), kk = static_cast<double>(k);
  return {kk / nn, bd::find_lower_bound_on_p(nn, kk, alpha), bd::find_upper_bound_on_p(nn, kk, alpha)};
}

metric_distribution describe_samples(std::vector<double> v, double confidence) {
  std::erase_if(v, [](double x) { return std::isnan(x); });
  std::sort(v.begin(), v.end());
  metric_distribution d;
  d.count = v.size();
  d.p10 = quantile_interval(v, 0.10, confidence);
  d.p50 = quantile_interval(v, 0.50, confidence);
  d.p90 = quantile_interval(v, 0.90, confidence);
  std::vector<double> finite;
  finite.reserve(v.size());
  for (double x : v)
    if (std::isfinite(x)) finite.push_back(x);
  d.mean = mean_interval(finite, confidence);
  return d;
}


const metric_distribution& distribution_of(const option_distribution& d, mc_metric m) noexcept {
  switch (m) {
  case mc_metric::usd_per_task: return d.usd_per_task;
  case mc_metric::stall_share: return d.stall_share;
  case mc_metric::tasks_per_hour: return d.tasks_per_hour;
  case mc_metric::wall_s: return d.wall_s;
  }
  return d.usd_per_task;
}

std::vector<option_distribution> summarize_runs(const scenario& s, std::span<const run_summary> rows,
                                                const montecarlo_options& opt) {
  std::vector<option_distribution> out(s.options.size());
  for (std::size_t o = 0; o < s.options.size(); ++o) {
    auto& d = out[o];
    d.label = s.options[o].label;
    std::vector<double> first, stall, cost, tasks, wall;
    std::int64_t within = 0, refused = 0, sessions = 0, died = 0, hours = 0, hours_429 = 0;
    double stall_s = 0;
    for (const auto& r : rows) {
      if (r.option != o) continue;
      ++d.runs;
      d.runs_cut_off += r.cut_off ? 1 : 0;
      const bool hit = !std::isnan(r.first_429_s);
      // A request refused outright is a wall as a 429 is: the first of either.
      const double wall_at = std::fmin(hit ? r.first_429_s : std::numeric_limits<double>::infinity(),
                                       std::isnan(r.first_refused_s) ? std::numeric_limits<double>::infinity()
                                                                     : r.first_refused_s);
      first.push_back(wall_at);
      const bool refused_within = r.first_refused_s <= opt.horizon_s;  // false when NaN (none)
      within += (hit && r.first_429_s <= opt.horizon_s) || refused_within;
      refused += refused_within;
      sessions += r.sessions;
      died += r.sessions_died;
      hours += r.operation_hours;
      hours_429 += r.hours_with_429;
      if (r.operation_hours > 0) stall_s += r.stall_s;
      stall.push_back(r.stall_share);
      cost.push_back(r.usd_per_task);
      tasks.push_back(r.tasks_per_hour);
      wall.push_back(r.wall_s);
    }
    d.p_429_within = proportion_interval(within, d.runs, opt.confidence);
    d.p_refused_within = proportion_interval(refused, d.runs, opt.confidence);
    d.p_session_dies = proportion_interval(died, sessions, opt.confidence);
    d.p_429_per_hour = proportion_interval(hours_429, hours, opt.confidence);
    d.stall_hours_per_hour = hours > 0 ? stall_s / 3600.0 / static_cast<double>(hours) : std::numeric_limits<double>::quiet_NaN();
    d.first_429_s = describe_samples(std::move(first), opt.confidence);
    d.stall_share = describe_samples(std::move(stall), opt.confidence);
    d.usd_per_task = describe_samples(std::move(cost), opt.confidence);
    d.tasks_per_hour = describe_samples(std::move(tasks), opt.confidence);
    d.wall_s = describe_samples(std::move(wall), opt.confidence);
    const metric_distribution& m = distribution_of(d, opt.metric);
    const auto& e = m.mean;
    if (m.count >= 2 && e.value == 0 && e.hi == 0) d.relative_half_width = 0;  // always 0: known exactly
    else d.relative_half_width = e.value != 0 ? (e.hi - e.lo) / 2 / std::abs(e.value) : nan;
  }
  return out;
}

montecarlo_result run_montecarlo(const scenario& s, const montecarlo_options& opt) {
  if (!(opt.confidence > 0 && opt.confidence < 1))
    throw simulation_error(fmt::format("confidence must lie in (0, 1), found {}", opt.confidence));
  if (!(opt.precision >= 0) || !std::isfinite(opt.precision))
    throw simulation_error(fmt::format("precision must be a finite number >= 0, found {}", opt.precision));
  if (!(opt.horizon_s > 0) || !std::isfinite(opt.horizon_s))
    throw simulation_error(fmt::format("horizon must be a finite time > 0 s, found {}", opt.horizon_s));
  if (opt.precision == 0 && opt.seeds < 1) throw simulation_error(fmt::format("at least 1 seed is needed, found {}", opt.seeds));
  if (opt.precision > 0 && opt.max_seeds < 2)
    throw simulation_error(fmt::format("a precision target needs max_seeds >= 2, found {}", opt.max_seeds));

  montecarlo_result res;
  res.settings = opt;
  auto run_more = [&](std::int32_t count) {
    auto rows = run_seeds(s, consecutive_seeds(s.seed + static_cast<std::uint64_t>(res.seeds),
                                               static_cast<std::size_t>(count)), opt.threads);
    if (res.rows.empty()) res.rows = std::move(rows);  // (a copy of thousands of rows faults its pages in again)
    else res.rows.insert(res.rows.end(), rows.begin(), rows.end());
    res.seeds += count;
  };
  if (opt.precision == 0) {
    run_more(opt.seeds);
    res.options = summarize_runs(s, res.rows, opt);
    return res;
  }
  std::int32_t batch = std::min(opt.max_seeds, std::max<std::int32_t>(20, std::min(opt.seeds, opt.max_seeds)));
  for (;;) {
    run_more(batch);
    res.options = summarize_runs(s, res.rows, opt);
    res.precision_reached = std::all_of(res.options.begin(), res.options.end(), [&](const option_distribution& d) {
      return !std::isnan(d.relative_half_width) && d.relative_half_width <= opt.precision;
    });
    if (res.precision_reached || res.seeds >= opt.max_seeds) return res;
    batch = std::min(res.seeds, opt.max_seeds - res.seeds);  // double the total
  }
}

} // namespace loopcast
