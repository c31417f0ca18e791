#include "loopcast/speed_fit.hpp"
#include "loopcast/validate.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/workload_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

namespace loopcast {

namespace {

double sample_median(std::vector<double> v) {
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
    t.speed.session_sigma = f.session_sigma;
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
  if (!noise) {  // a point estimate: the median factor kept, its spreads off
    tgt.speed.noise_sigma = 0;
    tgt.speed.session_sigma = 0;
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
      notes->push_back(fmt::format("{}: fitted on {} requests (median |error| in sample {:.1f}%; noise spread {:.3f} per "
                                   "request, {:.3f} per session)",
                                   model, f.samples, 100 * f.abs_rel_error.p50, f.noise_sigma, f.session_sigma));
  }
  const auto pooled = fit_speed_model(fit_on, "*");
  rt.entries.push_back({"*", fitted_option(pooled, "fitted-pooled", noise)});
  if (notes)
    notes->push_back(fmt::format("every other model: pooled fit on {} requests of {} models", pooled.samples,
                                 pooled.models.size()));
  return rt;
}

namespace {

// The P10–P90 prediction interval of the next draw from n draws: quantiles at positions
// p·(n + 1) of the sorted draws (Weibull's), so that the interval holds a new draw 80% of the time
// for any n. The usual positions p·(n − 1) + 1 make it narrower: with 20 seeds it holds only
// (18.1 − 2.9) / 21 ≈ 72%, which would read as a noise model too narrow.
std::pair<double, double> prediction_interval80(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto at = [&](double p) {
    const double h = std::clamp(p * static_cast<double>(v.size() + 1), 1.0, static_cast<double>(v.size()));
    const auto i = static_cast<std::size_t>(h) - 1;
    const double f = h - std::floor(h);
    return i + 1 < v.size() ? v[i] + f * (v[i + 1] - v[i]) : v[i];
  };
  return {at(0.1), at(0.9)};
}

// One held-out log replayed on every seed: recorded and simulated times by session and request.
struct trace_draws {
  std::vector<std::vector<double>> rec, rec_ttft;                // NaN where untimed
  std::vector<std::vector<std::vector<double>>> sim, sim_ttft;   // [session][request][seed]
  double sim_cache = 0, sim_prompt = 0;                           // seed 0's tokens
};

trace_draws replay_draws(const recorded_trace& t, const model_map& on, std::int32_t seeds, std::uint64_t seed) {
  trace_draws d;
  const std::vector<recorded_trace> one{t};
  d.rec.resize(t.sessions.size());
  d.rec_ttft.resize(t.sessions.size());
  for (std::size_t s = 0; s < t.sessions.size(); ++s)
    for (const auto& r : t.sessions[s].requests) {
      d.rec[s].push_back(r.t_end - r.t_send);
      d.rec_ttft[s].push_back(r.t_first_token - r.t_send);
    }
  d.sim.resize(t.sessions.size());
  d.sim_ttft.resize(t.sessions.size());
  for (std::size_t s = 0; s < d.sim.size(); ++s) {
    d.sim[s].assign(d.rec[s].size(), {});
    d.sim_ttft[s].assign(d.rec[s].size(), {});
  }
  for (std::int32_t k = 0; k < seeds; ++k) {
    replay_options ro;
    ro.seed = seed + static_cast<std::uint64_t>(k);
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
      if (s >= d.sim.size() || next[s] >= d.sim[s].size()) continue;
      d.sim_ttft[s][next[s]].push_back(q.t_first_token - q.t_send);
      d.sim[s][next[s]++].push_back(q.t_end - q.t_send);
      if (k == 0) {
        d.sim_cache += static_cast<double>(q.cache_read);
        d.sim_prompt += static_cast<double>(q.prompt);
      }
    }
  }
  return d;
}

// What validate_replay pools over the logs.
struct tally {
  std::vector<double> ape, bias, total, ks, cache, ttft_ape;
  std::size_t covered = 0, covered_of = 0, totals_covered = 0, totals_of = 0;
  std::map<std::string, std::pair<std::vector<double>, std::array<std::size_t, 2>>> models;  // APEs, {covered, of}
};

trace_validation score_trace(const recorded_trace& t, const trace_draws& d, std::int32_t seeds, tally& all) {
  trace_validation v;
  v.file = t.file;
  std::vector<double> ape, bias, rec_d, sim_d;
  std::vector<double> seed_totals(static_cast<std::size_t>(seeds), 0.0);
  double sum_rec = 0, sum_sim = 0, rec_cache = 0, rec_prompt = 0;
  for (std::size_t s = 0; s < d.rec.size(); ++s)
    for (std::size_t i = 0; i < d.rec[s].size(); ++i) {
      const auto& r = t.sessions[s].requests[i];
      rec_cache += static_cast<double>(r.tokens.cache_read);
      rec_prompt += static_cast<double>(r.tokens.prompt());
      const double rd = d.rec[s][i];
      if (!(rd > 0) || d.sim[s][i].size() != static_cast<std::size_t>(seeds)) continue;
      const auto q = summarize(d.sim[s][i]);
      ape.push_back(std::abs(q.p50 - rd) / rd);
      bias.push_back((q.p50 - rd) / rd);
      rec_d.push_back(rd);
      sim_d.push_back(q.p50);
      sum_rec += rd;
      sum_sim += q.p50;
      for (std::size_t k = 0; k < seed_totals.size(); ++k) seed_totals[k] += d.sim[s][i][k];
      auto& m = all.models[t.models.at(static_cast<std::size_t>(r.model))];
      m.first.push_back(ape.back());
      if (seeds > 1) {
        const auto [lo, hi] = prediction_interval80(d.sim[s][i]);
        const bool in = rd >= lo && rd <= hi;
        ++all.covered_of;
        all.covered += in;
        ++m.second[1];
        m.second[0] += in;
      }
      if (d.rec_ttft[s][i] > 0) all.ttft_ape.push_back(std::abs(summarize(d.sim_ttft[s][i]).p50 - d.rec_ttft[s][i]) / d.rec_ttft[s][i]);
    }
  v.requests = ape.size();
  if (!ape.empty()) {
    const auto a = summarize(ape);
    v.ape_p50 = a.p50;
    v.ape_p90 = a.p90;
    v.bias_p50 = sample_median(bias);
    v.total_error = sum_sim / sum_rec - 1;
    v.ks = ks_distance(rec_d, sim_d);
    v.total_recorded_s = sum_rec;
    all.ape.push_back(v.ape_p50);
    all.bias.push_back(v.bias_p50);
    all.total.push_back(std::abs(v.total_error));
    all.ks.push_back(v.ks);
    if (seeds > 1) {
      std::tie(v.total_p10_s, v.total_p90_s) = prediction_interval80(seed_totals);
      ++all.totals_of;
      all.totals_covered += sum_rec >= v.total_p10_s && sum_rec <= v.total_p90_s;
    }
  }
  if (rec_prompt > 0 && d.sim_prompt > 0) {
    v.cache_share_diff = d.sim_cache / d.sim_prompt - rec_cache / rec_prompt;
    all.cache.push_back(v.cache_share_diff);
  }
  return v;
}

} // namespace

validation_result validate_replay(const std::vector<recorded_trace>& held_out, const model_map& on,
                                  const validation_options& opt) {
  if (opt.seeds < 1) throw simulation_error(fmt::format("at least 1 seed is needed, found {}", opt.seeds));
  validation_result out;
  bool noisy = false;
  for (const auto& r : on.entries)
    for (const auto& t : r.option.targets)
      noisy = noisy || t.speed.noise_sigma > 0 || t.speed.session_sigma > 0;
  out.seeds = noisy ? opt.seeds : 1;
  tally all;
  for (const auto& t : held_out) {
    if (t.totals) continue;
    const auto d = replay_draws(t, on, out.seeds, opt.seed);
    out.traces.push_back(score_trace(t, d, out.seeds, all));
    out.summary.requests += out.traces.back().requests;
  }
  auto& sm = out.summary;
  sm.traces = all.ape.size();
  if (!all.ape.empty()) {
    const auto a = summarize(all.ape);
    sm.ape_p50_median = a.p50;
    sm.ape_p50_p90 = a.p90;
    sm.bias_median = sample_median(all.bias);
    sm.total_error_abs_median = sample_median(all.total);
    sm.total_error_abs_max = *std::max_element(all.total.begin(), all.total.end());
    sm.ks_median = sample_median(all.ks);
  }
  if (!all.cache.empty()) sm.cache_share_diff_median = sample_median(all.cache);
  if (all.covered_of > 0) sm.coverage = static_cast<double>(all.covered) / static_cast<double>(all.covered_of);
  if (all.totals_of > 0) sm.total_coverage = static_cast<double>(all.totals_covered) / static_cast<double>(all.totals_of);
  sm.ttft_requests = all.ttft_ape.size();
  if (!all.ttft_ape.empty()) sm.ttft_ape_median = sample_median(all.ttft_ape);
  for (auto& [model, m] : all.models) {
    model_validation mv;
    mv.model = model;
    mv.requests = m.first.size();
    mv.ape_p50 = sample_median(m.first);
    if (m.second[1] > 0) mv.coverage = static_cast<double>(m.second[0]) / static_cast<double>(m.second[1]);
    out.models.push_back(std::move(mv));
  }
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
