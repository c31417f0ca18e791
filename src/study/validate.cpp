#include "loopcast/speed_fit.hpp"
#include "loopcast/validate.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/workload_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace loopcast {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return unknown_time;
  return summarize(std::move(v)).p50;
}

// Largest distance between the empirical distribution functions of a and b.
double ks_distance(std::vector<double> a, std::vector<double> b) {
  if (a.empty() || b.empty()) return unknown_time;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::size_t i = 0, j = 0;
  double d = 0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    d = std::max(d, std::abs(static_cast<double>(i) / static_cast<double>(a.size()) -
                             static_cast<double>(j) / static_cast<double>(b.size())));
  }
  return d;
}

scenario_option fitted_option(const speed_fit& f, const std::string& name, bool noise) {
  scenario_option o;
  o.label = name;
  target& t = o.targets.emplace_back();
  t.name = name;
  t.kind = target_kind::local;
  t.context_window_tokens = 10'000'000;
  t.cache.enabled = true;
  t.cache.block_tokens = 64;
  t.cache.ttl_s = 1e9;
  t.speed = f.model;
  if (noise) {
    t.speed.noise_median = f.noise_median;
    t.speed.noise_sigma = f.noise_sigma;
  }
  t.power = power_config{};
  o.client.name = "none";
  o.client.max_retries = 0;
  return o;
}

} // namespace

model_map validation_target(target tgt, bool noise) {
  scenario_option o;
  o.label = tgt.name;
  o.client.name = "none";
  o.client.max_retries = 0;
  tgt.limits.clear();  // the speed is validated, not the limits
  tgt.context_window_tokens = std::max<std::int64_t>(tgt.context_window_tokens, 10'000'000);
  if (!noise) {
    tgt.speed.noise_sigma = 0;
    tgt.speed.noise_median = 1;
  }
  o.targets.push_back(std::move(tgt));
  return {o.label, {{"*", o}}};
}

model_map fitted_targets(const std::vector<recorded_trace>& fit_on, std::size_t min_requests, bool noise,
                             std::vector<std::string>* notes) {
  model_map rt;
  rt.label = "fitted";
  for (const auto& [model, n] : fittable_models(fit_on)) {
    if (n < min_requests) continue;
    const auto f = fit_speed_model(fit_on, model);
    rt.entries.push_back({model, fitted_option(f, "fitted-" + model, noise)});
    if (notes)
      notes->push_back(fmt::format("{}: fitted on {} requests (median |error| in sample {:.1f}%, noise spread {:.3f})",
                                   model, f.samples, 100 * f.abs_rel_error.p50, f.noise_sigma));
  }
  const auto pooled = fit_speed_model(fit_on, "*");
  rt.entries.push_back({"*", fitted_option(pooled, "fitted-pooled", noise)});
  if (notes)
    notes->push_back(fmt::format("every other model: pooled fit on {} requests of {} models", pooled.samples,
                                 pooled.models.size()));
  return rt;
}

validation_result validate_replay(const std::vector<recorded_trace>& held_out, const model_map& on,
                                  const validation_options& opt) {
  if (opt.seeds < 1) throw simulation_error(fmt::format("at least 1 seed is needed, found {}", opt.seeds));
  validation_result out;
  bool noisy = false;
  for (const auto& r : on.entries)
    for (const auto& t : r.option.targets) noisy = noisy || t.speed.noise_sigma > 0;
  out.seeds = noisy ? opt.seeds : 1;
  std::vector<double> per_trace_ape, per_trace_bias, per_trace_total, per_trace_ks, per_trace_cache;
  std::size_t covered = 0, covered_of = 0;
  for (const auto& t : held_out) {
    if (t.totals) continue;
    const std::vector<recorded_trace> one{t};
    // Recorded durations in the order of sessions and requests; NaN where untimed.
    std::vector<std::vector<double>> rec(t.sessions.size());
    for (std::size_t s = 0; s < t.sessions.size(); ++s)
      for (const auto& r : t.sessions[s].requests) rec[s].push_back(r.t_end - r.t_send);
    // Simulated durations per seed, in the same order.
    std::vector<std::vector<std::vector<double>>> sim(t.sessions.size());
    for (std::size_t s = 0; s < sim.size(); ++s) sim[s].assign(rec[s].size(), {});
    double sim_cache = 0, sim_prompt = 0;
    for (std::int32_t k = 0; k < out.seeds; ++k) {
      replay_options ro;
      ro.seed = opt.seed + static_cast<std::uint64_t>(k);
      ro.record_attempts = false;
      ro.policy = context_policy::fail;
      const auto r = run_replay(one, std::vector<model_map>{on}, ro);
      const auto& m = r.options.front().sim;
      // Requests by session, in send order (sessions run one request at a time).
      std::vector<std::size_t> next(t.sessions.size(), 0);
      auto reqs = m.requests;
      std::stable_sort(reqs.begin(), reqs.end(), [](const request_sample& a, const request_sample& b) { return a.t_send < b.t_send; });
      for (const auto& q : reqs) {
        const auto s = q.session;
        if (s >= sim.size() || next[s] >= sim[s].size()) continue;
        sim[s][next[s]++].push_back(q.t_end - q.t_send);
        if (k == 0) {
          sim_cache += static_cast<double>(q.cache_read);
          sim_prompt += static_cast<double>(q.prompt);
        }
      }
    }
    trace_validation v;
    v.file = t.file;
    std::vector<double> ape, bias, rec_d, sim_d;
    double sum_rec = 0, sum_sim = 0, rec_cache = 0, rec_prompt = 0;
    for (std::size_t s = 0; s < rec.size(); ++s)
      for (std::size_t i = 0; i < rec[s].size(); ++i) {
        const auto& r = t.sessions[s].requests[i];
        rec_cache += static_cast<double>(r.tokens.cache_read);
        rec_prompt += static_cast<double>(r.tokens.prompt());
        const double d = rec[s][i];
        if (!(d > 0) || sim[s][i].empty()) continue;
        auto draws = sim[s][i];
        const auto q = summarize(draws);
        const double p = q.p50;
        ape.push_back(std::abs(p - d) / d);
        bias.push_back((p - d) / d);
        rec_d.push_back(d);
        sim_d.push_back(p);
        sum_rec += d;
        sum_sim += p;
        if (out.seeds > 1) {
          ++covered_of;
          covered += (d >= q.p10 && d <= q.p90) ? 1 : 0;
        }
      }
    v.requests = ape.size();
    if (!ape.empty()) {
      const auto a = summarize(ape);
      v.ape_p50 = a.p50;
      v.ape_p90 = a.p90;
      v.bias_p50 = median_of(bias);
      v.total_error = sum_sim / sum_rec - 1;
      v.ks = ks_distance(rec_d, sim_d);
      per_trace_ape.push_back(v.ape_p50);
      per_trace_bias.push_back(v.bias_p50);
      per_trace_total.push_back(std::abs(v.total_error));
      per_trace_ks.push_back(v.ks);
    }
    if (rec_prompt > 0 && sim_prompt > 0) {
      v.cache_share_diff = sim_cache / sim_prompt - rec_cache / rec_prompt;
      per_trace_cache.push_back(v.cache_share_diff);
    }
    out.summary.requests += v.requests;
    out.traces.push_back(std::move(v));
  }
  auto& sm = out.summary;
  sm.traces = per_trace_ape.size();
  if (!per_trace_ape.empty()) {
    const auto a = summarize(per_trace_ape);
    sm.ape_p50_median = a.p50;
    sm.ape_p50_p90 = a.p90;
    sm.bias_median = median_of(per_trace_bias);
    sm.total_error_abs_median = median_of(per_trace_total);
    sm.total_error_abs_max = *std::max_element(per_trace_total.begin(), per_trace_total.end());
    sm.ks_median = median_of(per_trace_ks);
  }
  if (!per_trace_cache.empty()) sm.cache_share_diff_median = median_of(per_trace_cache);
  if (covered_of > 0) sm.coverage = static_cast<double>(covered) / static_cast<double>(covered_of);
  return out;
}

workload_validation validate_workload(const std::vector<recorded_trace>& held_out, const workload& w,
                                      const price_sheet& prices, std::int32_t sessions, std::uint64_t seed) {
  workload_validation v;
  struct sample {
    std::vector<double> requests, growth, prompts, cost;
    void add(const session_shape& s) {
      requests.push_back(s.requests);
      growth.insert(growth.end(), s.growth.begin(), s.growth.end());
      prompts.insert(prompts.end(), s.prompts.begin(), s.prompts.end());
      cost.push_back(s.cost_usd);
    }
  } real, synthetic;
  for (const auto& t : held_out)
    for (const auto& s : t.sessions)
      if (s.parent < 0 && !s.requests.empty()) {
        real.add(shape_of(s, prices));
        ++v.real_sessions;
      }
  if (v.real_sessions == 0)
    throw trace_error(held_out.empty() ? std::string{"(no logs)"} : held_out.front().file, 0,
                      "no top-level session to compare the workload with");
  for (std::int32_t i = 0; i < sessions; ++i) {
    synthetic.add(shape_of(generate_session(w, seed + static_cast<std::uint64_t>(i)), prices));
    ++v.synthetic_sessions;
  }
  auto spread_of = [](std::vector<double> xs) {
    spread s;
    if (xs.empty()) return s;
    s.p10 = percentile(xs, 0.1);
    s.p50 = percentile(xs, 0.5);
    s.p90 = percentile(xs, 0.9);
    return s;
  };
  auto measure = [&](const char* name, const char* unit, const std::vector<double>& a, const std::vector<double>& b) {
    v.measures.push_back({name, unit, ks_distance(a, b), spread_of(a), spread_of(b)});
  };
  measure("requests per session", "requests", real.requests, synthetic.requests);
  measure("context growth per request", "tokens", real.growth, synthetic.growth);
  measure("prompt tokens per request", "tokens", real.prompts, synthetic.prompts);
  measure("cost per session", "USD", real.cost, synthetic.cost);
  const auto& c = v.measures.back();
  if (v.real_sessions >= 2 && c.real.p90 > c.real.p10)
    v.cost_spread_ratio = (c.synthetic.p90 - c.synthetic.p10) / (c.real.p90 - c.real.p10);
  if (v.real_sessions < 10)
    v.notes.push_back(fmt::format("only {} real sessions: the KS distances are coarse (steps of 1/{})", v.real_sessions,
                                  v.real_sessions));
  return v;
}

} // namespace loopcast
