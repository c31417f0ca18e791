// The next wall of a running session (forecast.hpp).
#include "loopcast/forecast.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/limits/bucket.hpp"
#include "loopcast/metrics.hpp"
#include "loopcast/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace loopcast {

namespace {

struct sent {
  double t_send, t_end;
  token_counts tokens;
};

struct pending {
  double t;
  std::size_t bucket;
  double delta, t_admit;
  std::uint64_t ticket;
};

// A request's charges on every bucket: admitted at t (unless one refuses: returns its index),
// adjusted at t_end (queued).
class charger {
public:
  charger(const target& tgt, double start_unix_s) {
    for (const auto& b : tgt.limits) buckets_.emplace_back(b, start_unix_s);
  }
  std::optional<std::size_t> send(const token_counts& tk, double t, double t_end, bool charge_when_refused) {
    settle(t);
    std::optional<std::size_t> refused;
    std::array<bucket_charge, max_buckets> c{};
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      c[b] = charge_for(buckets_[b].config(), tk, tk.generated());
      if (!refused && buckets_[b].wait_for(c[b].at_admission, t) > 0) refused = b;
    }
    if (refused && !charge_when_refused) return refused;
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      const auto ticket = buckets_[b].charge(c[b].at_admission, t, t_end);
      if (c[b].at_completion != 0) pending_.push_back({t_end, b, c[b].at_completion, t, ticket});
    }
    return refused;
  }
  // Applies the adjustments due by t, in time order.
  void settle(double t) {
    std::sort(pending_.begin(), pending_.end(), [](const pending& a, const pending& b) { return a.t < b.t; });
    std::size_t k = 0;
    for (; k < pending_.size() && pending_[k].t <= t; ++k)
      buckets_[pending_[k].bucket].adjust(pending_[k].delta, pending_[k].t, pending_[k].t_admit, pending_[k].ticket);
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(k));
  }
  std::vector<bucket>& buckets() { return buckets_; }

private:
  std::vector<bucket> buckets_;
  std::vector<pending> pending_;
};

} // namespace

wall_forecast forecast_next_wall(const recorded_trace& trace, const target& tgt, const forecast_options& opt) {
  std::vector<sent> reqs;
  for (const auto& s : trace.sessions)
    for (const auto& q : s.requests)
      reqs.push_back({q.t_send, std::isfinite(q.t_end) ? std::max(q.t_end, q.t_send) : q.t_send, q.tokens});
  if (reqs.empty()) throw trace_error(trace.file, 0, "no request to forecast from");
  std::stable_sort(reqs.begin(), reqs.end(), [](const sent& a, const sent& b) { return a.t_send < b.t_send; });
  for (const auto& b : tgt.limits)
    if (b.limit_unpublished)
      throw simulation_error(fmt::format("target {}: bucket {} has no published limit; set it with --limit {}=N "
                                         "(docs/plans.md)", tgt.name, b.name, b.name));

  wall_forecast f;
  f.log = trace.file;
  f.requests = static_cast<std::int64_t>(reqs.size());
  f.absolute_clock = trace.absolute_clock;
  f.draws = opt.draws;
  const double t0 = reqs.front().t_send;
  const double start_unix = trace.absolute_clock ? t0 : 0.0;
  // The log so far, at its recorded times (relative to its first send).
  charger so_far(tgt, start_unix);
  for (const auto& r : reqs) {
    const auto refused = so_far.send(r.tokens, r.t_send - t0, r.t_end - t0, true);
    if (refused && !f.refused_at_s) {
      f.refused_at_s = r.t_send;
      f.refused_by = tgt.limits[*refused].name;
    }
  }
  const double last = reqs.back().t_send - t0;
  f.last_send_s = reqs.back().t_send;
  for (std::size_t b = 0; b < tgt.limits.size(); ++b)
    f.buckets.push_back({tgt.limits[b].name, so_far.buckets()[b].used(last), tgt.limits[b].limit, tgt.limits[b].period_s});
  if (tgt.limits.empty()) return f;

  // Growth: a least-squares line per class over the last requests; residuals and gaps per request.
  const std::size_t n = reqs.size();
  const std::size_t w = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(1, opt.window_requests)));
  const std::size_t first = n - w;
  std::array<double, 5> slope{}, icept{};
  double mx = 0;
  for (std::size_t k = first; k < n; ++k) mx += static_cast<double>(k);
  mx /= static_cast<double>(w);
  double sxx = 0;
  for (std::size_t k = first; k < n; ++k) sxx += (static_cast<double>(k) - mx) * (static_cast<double>(k) - mx);
  for (std::size_t c = 0; c < 5; ++c) {
    const auto cls = all_token_classes[c];
    double my = 0, sxy = 0;
    for (std::size_t k = first; k < n; ++k) my += static_cast<double>(reqs[k].tokens[cls]);
    my /= static_cast<double>(w);
    for (std::size_t k = first; k < n; ++k)
      sxy += (static_cast<double>(k) - mx) * (static_cast<double>(reqs[k].tokens[cls]) - my);
    slope[c] = sxx > 0 ? sxy / sxx : 0.0;
    icept[c] = my - slope[c] * mx;
    f.growth_per_request += slope[c];
  }
  // Request k's residuals, gap to the next send and duration; a single request repeats itself.
  struct step {
    std::array<double, 5> residual;
    double gap, duration;
  };
  std::vector<step> steps;
  for (std::size_t k = first; k < n; ++k) {
    step s{};
    for (std::size_t c = 0; c < 5; ++c)
      s.residual[c] = static_cast<double>(reqs[k].tokens[all_token_classes[c]]) - (icept[c] + slope[c] * static_cast<double>(k));
    s.gap = k > 0 ? reqs[k].t_send - reqs[k - 1].t_send : 0.0;
    s.duration = reqs[k].t_end - reqs[k].t_send;
    if (k > 0 || n == 1) steps.push_back(s);
  }
  double gaps = 0;
  for (const auto& s : steps) gaps += s.gap;
  f.gap_s = gaps / static_cast<double>(steps.size());
  if (!(f.gap_s > 0)) return f;  // every send at once: no pace to go on from

  std::vector<double> times, counts;
  std::map<std::string, int> by_bucket;
  for (std::int32_t d = 0; d < opt.draws; ++d) {
    rng g(derive_seed(opt.seed, static_cast<std::uint64_t>(d)));
    charger c = so_far;
    double t = last;
    for (std::int64_t i = 1; i <= 1'000'000; ++i) {
      const auto& s = steps[static_cast<std::size_t>(uniform01(g) * static_cast<double>(steps.size()))];
      t += s.gap > 0 ? s.gap : f.gap_s;
      if (t - last > opt.horizon_s) break;
      const double k = static_cast<double>(n - 1 + static_cast<std::size_t>(i));
      token_counts tk;
      std::array<std::int64_t*, 5> field{&tk.input, &tk.cache_read, &tk.cache_write, &tk.output, &tk.reasoning};
      for (std::size_t cl = 0; cl < 5; ++cl)
        *field[cl] = static_cast<std::int64_t>(std::max(0.0, std::round(icept[cl] + slope[cl] * k + s.residual[cl])));
      // A prompt cannot outgrow the window: the agent compacts or stops there; scale it back.
      if (const auto prompt = tk.prompt(); prompt > tgt.context_window_tokens && prompt > 0) {
        const double f_scale = static_cast<double>(tgt.context_window_tokens) / static_cast<double>(prompt);
        for (std::size_t cl = 0; cl < 3; ++cl) *field[cl] = static_cast<std::int64_t>(std::floor(static_cast<double>(*field[cl]) * f_scale));
      }
      if (const auto refused = c.send(tk, t, t + std::max(0.0, s.duration), false)) {
        times.push_back(t - last);
        counts.push_back(static_cast<double>(i - 1));
        ++by_bucket[tgt.limits[*refused].name];
        break;
      }
    }
  }
  f.hit_share = static_cast<double>(times.size()) / static_cast<double>(opt.draws);
  if (times.empty()) return f;
  std::vector<double> all = times;
  all.resize(static_cast<std::size_t>(opt.draws), std::numeric_limits<double>::infinity());
  std::sort(all.begin(), all.end());
  f.p10_s = sorted_quantile(all, 0.1);
  f.p50_s = sorted_quantile(all, 0.5);
  f.p90_s = sorted_quantile(all, 0.9);
  std::sort(counts.begin(), counts.end());
  f.requests_p50 = sorted_quantile(counts, 0.5);
  int most = 0;
  for (const auto& [name, k] : by_bucket)
    if (k > most) {
      most = k;
      f.bucket = name;
    }
  return f;
}

} // namespace loopcast
