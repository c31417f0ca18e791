#include "loopcast/workload_fit.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace loopcast {

namespace {

constexpr std::size_t min_band_samples = 50;
constexpr std::size_t min_scale_turns = 4;
constexpr std::int64_t break_slack_tokens = 128;  // two 64-token blocks: an extended last block is no break

bool is_compaction(const recorded_request& prev, const recorded_request& r) {
  return r.compaction || context_restarts(prev, r);
}

// Tokens of the prefix two prompts of `prompt_a` and `prompt_b` tokens share, from their prefix
// runs (lineage by lineage; a run ends at the prompt at the latest, session.hpp).
std::int64_t shared_prefix(std::span<const prefix_run> a, std::int64_t prompt_a, std::span<const prefix_run> b,
                           std::int64_t prompt_b) {
  std::int64_t shared = 0;
  for (std::size_t k = 0; k < a.size() && k < b.size(); ++k) {
    if (a[k].lineage != b[k].lineage) break;
    const std::int64_t end_a = std::min(a[k].end_tokens, prompt_a), end_b = std::min(b[k].end_tokens, prompt_b);
    shared = std::min(end_a, end_b);
    if (end_a != end_b) break;
  }
  return shared;
}

// The band (0-based) of a turn: 1, 2, 3–4, 5–8, 9–16, …
std::size_t band_of(std::int32_t turn) {
  std::size_t b = 0;
  for (std::int32_t hi = 1; turn > hi; hi *= 2) ++b;
  return b;
}
std::int32_t band_start(std::size_t b) { return b == 0 ? 1 : (1 << (b - 1)) + 1; }

distribution table_or_fixed(std::vector<double> xs, int points) {
  if (xs.empty()) return fixed_dist{0};
  const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  if (*lo == *hi) return fixed_dist{*lo};
  return quantile_table(std::move(xs), points);
}

double median(std::vector<double> v) { return summarize(std::move(v)).p50; }

// Normal score of each value's mid-rank among all of them.
std::vector<double> normal_scores(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](auto a, auto b) { return v[a] < v[b]; });
  std::vector<double> z(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j < idx.size() && v[idx[j]] == v[idx[i]]) ++j;
    const double score = standard_normal_quantile(0.5 * static_cast<double>(i + j) / static_cast<double>(v.size()));
    for (std::size_t k = i; k < j; ++k) z[idx[k]] = score;
    i = j;
  }
  return z;
}

double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const auto n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n, mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

struct growth_sample {
  std::size_t session;
  std::size_t band;
  double tokens;
};

} // namespace

namespace {

struct picked {
  const recorded_trace* trace;
  const recorded_session* session;
};

// What the sessions say, sample by sample.
struct session_samples {
  std::vector<double> turns, tasks, outputs, reasonings, delays, kept, compaction_at, summaries;
  std::vector<growth_sample> growth;
  std::vector<std::int64_t> peaks;  // each session's largest prompt
  std::vector<bool> compacted;      // whether it compacted
};

// The top-level sessions of the models that match, their models by requests (most first).
std::vector<picked> pick_sessions(const std::vector<recorded_trace>& traces, const workload_fit_options& opt,
                                  workload_fit& f) {
  std::vector<picked> sessions;
  std::map<std::string, std::size_t> model_requests;
  for (const auto& t : traces) {
    bool used = false;
    for (const auto& s : t.sessions) {
      if (s.requests.empty()) continue;
      if (s.parent >= 0) {
        ++f.subagent_sessions;
        f.subagent_requests += s.requests.size();
        continue;
      }
      const auto& model = t.models.at(static_cast<std::size_t>(s.requests.front().model));
      if (!model_matches(opt.model_pattern, model)) continue;
      sessions.push_back({&t, &s});
      used = true;
      for (const auto& r : s.requests) ++model_requests[t.models.at(static_cast<std::size_t>(r.model))];
    }
    if (used) ++f.traces;
  }
  if (sessions.empty())
    throw trace_error(traces.empty() ? std::string{"(no logs)"} : traces.front().file, 0,
                      opt.model_pattern.empty() ? "no top-level session to fit a workload on"
                                                : fmt::format("no top-level session of a model matching '{}'", opt.model_pattern));
  std::vector<std::pair<std::size_t, std::string>> by_count;
  for (const auto& [m, n] : model_requests) by_count.emplace_back(n, m);
  std::sort(by_count.begin(), by_count.end(), [](auto& a, auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (const auto& [n, m] : by_count) f.models.push_back(m);
  return sessions;
}

// One session's turns, growth by band, outputs, agent time, compactions and cache breaks.
void measure_session(const picked& p, std::size_t si, std::int64_t system_prompt, session_samples& x, workload_fit& f) {
  const auto& t = *p.trace;
  const auto& reqs = p.session->requests;
  f.requests += reqs.size();
  const std::int64_t first = reqs.front().tokens.prompt();
  x.tasks.push_back(static_cast<double>(first - system_prompt));
  std::size_t compactions = 0;
  std::int64_t peak = 0;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const auto& r = reqs[i];
    peak = std::max(peak, r.tokens.prompt());
    if (!r.compaction) {
      x.outputs.push_back(static_cast<double>(r.tokens.output));
      x.reasonings.push_back(static_cast<double>(r.tokens.reasoning));
    }
    if (i == 0) continue;
    const auto& prev = reqs[i - 1];
    const double d = agent_delay(prev, r);
    if (std::isfinite(d)) {
      x.delays.push_back(d);
      ++f.timed_delays;
    }
    if (is_compaction(prev, r)) {
      ++compactions;
      x.compaction_at.push_back(static_cast<double>(prev.tokens.prompt()));
      x.summaries.push_back(static_cast<double>(std::max<std::int64_t>(0, r.tokens.prompt() - first)));
      continue;
    }
    // The turn of prev (1-based, compactions not counted) decides the band of its tool result.
    const auto turn = static_cast<std::int32_t>(i - compactions);
    const double g = static_cast<double>(r.tokens.prompt() - prev.tokens.prompt());
    ++f.growth_samples;
    if (g < 0) ++f.shrinking_turns;
    x.growth.push_back({si, band_of(turn), std::max(0.0, g)});
    if (t.has_prefix) {
      ++f.break_candidates;
      const auto shared = shared_prefix({t.runs.data() + prev.runs_begin, prev.runs_count}, prev.tokens.prompt(),
                                        {t.runs.data() + r.runs_begin, r.runs_count}, r.tokens.prompt());
      f.candidates_after_compaction += compactions > 0;
      if (shared + break_slack_tokens < prev.tokens.prompt()) {
        ++f.cache_breaks;
        f.breaks_after_compaction += compactions > 0;
        x.kept.push_back(std::clamp(static_cast<double>(shared) / static_cast<double>(prev.tokens.prompt()), 0.0, 1.0));
      }
    }
  }
  f.compactions += compactions;
  x.peaks.push_back(peak);
  x.compacted.push_back(compactions > 0);
  // The generator sends a compaction request of its own: a session of n requests with c
  // compactions has n − c turns.
  x.turns.push_back(static_cast<double>(reqs.size() - compactions));
}

// Tool results by band of turns (sparse bands merged into the one before), scaled per session.
void fit_tool_results(session_samples& x, std::size_t sessions, int pts, workload& w, workload_fit& f) {
  std::size_t nb = 0;
  for (const auto& g : x.growth) nb = std::max(nb, g.band + 1);
  std::vector<std::size_t> counts(nb, 0), merged(nb, 0);
  for (const auto& g : x.growth) ++counts[g.band];
  for (std::size_t b = 1, current = 0, acc = counts[0]; b < nb; ++b) {
    if (counts[b] >= min_band_samples && acc >= min_band_samples) {
      current = b;
      acc = 0;
    }
    merged[b] = current;
    acc += counts[b];
  }
  for (auto& g : x.growth) g.band = merged[g.band];

  // Session scales: each session's median tool result relative to its bands' medians.
  std::vector<std::vector<double>> by_band(nb);
  for (const auto& g : x.growth) by_band[g.band].push_back(g.tokens);
  std::vector<double> band_median(nb, 0);
  for (std::size_t b = 0; b < nb; ++b)
    if (!by_band[b].empty()) band_median[b] = median(by_band[b]);
  std::vector<std::vector<double>> ratios(sessions);
  for (const auto& g : x.growth)
    if (band_median[g.band] > 0) ratios[g.session].push_back(g.tokens / band_median[g.band]);
  // The normal scores of the turns among all sessions (the copula's z), kept for the sessions that
  // have a scale.
  const auto z_turns = normal_scores(x.turns);
  std::vector<double> scale(sessions, 1.0), log_scales, z_scaled;
  for (std::size_t si = 0; si < sessions; ++si) {
    if (ratios[si].size() < min_scale_turns) continue;
    const double m = median(ratios[si]);
    if (m <= 0) continue;
    scale[si] = m;
    log_scales.push_back(std::log(m));
    z_scaled.push_back(z_turns[si]);
  }
  if (log_scales.size() >= 10) {
    auto ls = log_scales;
    const double sigma = 0.5 * (percentile(ls, 0.84) - percentile(ls, 0.16));
    w.session_scale.sigma = std::round(std::max(0.0, sigma) * 1000) / 1000;
    w.session_scale.turns_correlation = std::round(correlation(z_scaled, log_scales) * 1000) / 1000;
  } else {
    std::fill(scale.begin(), scale.end(), 1.0);
    f.notes.push_back(fmt::format("only {} sessions have {} or more turns: no per-session scale fitted", log_scales.size(),
                                  min_scale_turns));
  }
  std::vector<std::vector<double>> normalised(nb);
  for (const auto& g : x.growth) normalised[g.band].push_back(g.tokens / scale[g.session]);
  for (std::size_t b = 0; b < nb; ++b)
    if (!normalised[b].empty()) w.tool_result_bands.push_back({band_start(b), table_or_fixed(normalised[b], pts)});
}

// Where sessions compact, and the share of them that ran in a larger window.
void fit_compaction(const session_samples& x, const std::vector<picked>& sessions, int pts, workload& w,
                    workload_fit& f) {
  if (x.compaction_at.empty()) {
    w.compaction.enabled = false;
    f.notes.push_back("no compaction in the logs: compaction is off");
    return;
  }
  w.compaction.enabled = true;
  w.compaction.at_fraction =
      std::clamp(std::round(median(x.compaction_at) / static_cast<double>(w.context_window_tokens) * 1000) / 1000, 0.01, 1.0);
  w.compaction.summary_tokens = table_or_fixed(x.summaries, std::min(pts, 10));
  // Sessions that grew past 1.1× the threshold without compacting ran in a larger window; their
  // share among the sessions that reached the threshold at all is late_share. Sessions that
  // start above half the threshold are late by the generator's rule and not counted here.
  const double threshold = w.compaction.at_fraction * static_cast<double>(w.context_window_tokens);
  std::size_t late = 0, reached = 0, started_late = 0;
  std::vector<double> late_peaks;
  for (std::size_t si = 0; si < sessions.size(); ++si) {
    const auto peak = static_cast<double>(x.peaks[si]);
    const bool grew_past = !x.compacted[si] && peak > 1.1 * threshold;
    if (grew_past) late_peaks.push_back(peak);
    if (2.0 * static_cast<double>(sessions[si].session->requests.front().tokens.prompt()) > threshold) {
      ++started_late;
      continue;
    }
    if (x.compacted[si] || peak >= 0.9 * threshold) ++reached;
    if (grew_past) ++late;
  }
  if (late + started_late == 0) return;
  w.compaction.late_share =
      std::max(0.001, std::round(static_cast<double>(late) / static_cast<double>(std::max<std::size_t>(reached, 1)) * 1000) / 1000);
  // Where they compact is not seen (they end first): the median of their peaks stands for it.
  w.compaction.late_fraction =
      late_peaks.empty() ? 0.95
                         : std::clamp(std::round(median(late_peaks) / static_cast<double>(w.context_window_tokens) * 1000) / 1000,
                                      w.compaction.at_fraction, 0.95);
  f.notes.push_back(fmt::format("{} sessions started above half the compaction threshold, and {} of the {} others that "
                                "reached it grew past it without compacting: they run in a larger window (late_share "
                                "{:.3f}; compaction at {:.0f}% of the window, the median peak of such sessions)",
                                started_late, late, reached, w.compaction.late_share, 100 * w.compaction.late_fraction));
}

} // namespace

workload_fit fit_workload(const std::vector<recorded_trace>& traces, const workload_fit_options& opt) {
  workload_fit f;
  auto& w = f.w;
  w.name = opt.name;
  w.max_tokens = opt.max_tokens;
  w.reasoning_in_context = false;
  w.output_in_context = false;  // the measured growth holds whatever of the output the next prompt re-sends
  const auto sessions = pick_sessions(traces, opt, f);

  // System prompt: what every session's first prompt holds at least.
  w.system_prompt_tokens = std::numeric_limits<std::int64_t>::max();
  for (const auto& p : sessions)
    w.system_prompt_tokens = std::min(w.system_prompt_tokens, p.session->requests.front().tokens.prompt());

  session_samples x;
  f.sessions = sessions.size();
  for (std::size_t si = 0; si < sessions.size(); ++si) measure_session(sessions[si], si, w.system_prompt_tokens, x, f);
  if (x.growth.empty())
    throw trace_error(sessions.front().trace->file, 0,
                      "no session has two requests in a row: nothing to learn the context's growth from");

  const int pts = opt.quantile_points;
  w.turns = table_or_fixed(x.turns, pts);
  w.output_tokens = table_or_fixed(x.outputs, pts);
  w.reasoning_tokens = table_or_fixed(x.reasonings, pts);
  w.tool_time_s = table_or_fixed(x.delays.empty() ? std::vector<double>{0.0} : x.delays, pts);
  if (x.delays.empty()) f.notes.push_back("the logs record no agent time between requests: tool_time_s is 0");
  fit_tool_results(x, sessions.size(), pts, w, f);

  // The window and compaction.
  const std::int64_t largest_prompt = *std::max_element(x.peaks.begin(), x.peaks.end());
  w.context_window_tokens = opt.context_window_tokens > 0 ? opt.context_window_tokens
                                                          : (largest_prompt + 1023) / 1024 * 1024;
  if (opt.context_window_tokens <= 0)
    f.notes.push_back(fmt::format("context_window_tokens {} is the largest prompt seen, rounded up (give the model's "
                                  "window with --context-window)",
                                  w.context_window_tokens));
  fit_compaction(x, sessions, pts, w, f);
  w.task_tokens = table_or_fixed(x.tasks, pts);
  if (sessions.size() >= 10)
    w.task_turns_correlation = std::round(correlation(normal_scores(x.turns), normal_scores(x.tasks)) * 1000) / 1000;
  if (f.break_candidates > 0) {
    // Before and after a session's first compaction, when enough requests follow one (30).
    const auto before = f.break_candidates - f.candidates_after_compaction;
    const bool split = f.candidates_after_compaction >= 30 && before > 0;
    const auto rate = [](std::size_t n, std::size_t of) { return std::round(static_cast<double>(n) / static_cast<double>(of) * 1e5) / 1e5; };
    w.cache_breaks.probability = split ? rate(f.cache_breaks - f.breaks_after_compaction, before)
                                       : rate(f.cache_breaks, f.break_candidates);
    if (split) {
      w.cache_breaks.after_compaction_probability = rate(f.breaks_after_compaction, f.candidates_after_compaction);
      f.notes.push_back(fmt::format("cache breaks: {} of {} requests before a session's first compaction, {} of {} after it",
                                    f.cache_breaks - f.breaks_after_compaction, before, f.breaks_after_compaction,
                                    f.candidates_after_compaction));
    }
    w.cache_breaks.kept_fraction = x.kept.empty() ? distribution{fixed_dist{0}} : table_or_fixed(x.kept, std::min(pts, 20));
  } else {
    f.notes.push_back("the logs carry no exact prefixes: cache breaks are not fitted");
  }
  if (f.subagent_sessions > 0)
    f.notes.push_back(fmt::format("{} subagent sessions ({} requests) were seen and left out: synthetic sessions do not "
                                  "spawn subagents",
                                  f.subagent_sessions, f.subagent_requests));
  if (f.shrinking_turns > 0)
    f.notes.push_back(fmt::format("{} of {} turns shrank the context without a compaction; their growth counts as 0",
                                  f.shrinking_turns, f.growth_samples));
  return f;
}

namespace {
session_shape shape_from(std::size_t n, auto&& prompt_of, auto&& tokens_of, auto&& new_context, const price_sheet& prices) {
  session_shape sh;
  sh.requests = static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    sh.prompts.push_back(static_cast<double>(prompt_of(i)));
    if (i > 0 && !new_context(i)) sh.growth.push_back(static_cast<double>(prompt_of(i) - prompt_of(i - 1)));
    sh.cost_usd += price_request(prices, tokens_of(i), 0).total_usd;
  }
  return sh;
}
} // namespace

session_shape shape_of(const recorded_session& s, const price_sheet& prices) {
  const auto& q = s.requests;
  return shape_from(
      q.size(), [&](std::size_t i) { return q[i].tokens.prompt(); }, [&](std::size_t i) { return q[i].tokens; },
      [&](std::size_t i) { return is_compaction(q[i - 1], q[i]); }, prices);
}

session_shape shape_of(const session_script& s, const price_sheet& prices) {
  const auto& q = s.requests;
  std::vector<prefix_run> before, now;  // two requests' runs, with their ends
  auto tokens = [&](std::size_t i) {
    token_counts t;
    std::int64_t shared = 0;
    if (i > 0) {
      s.runs_of(q[i - 1], before);
      s.runs_of(q[i], now);
      shared = shared_prefix(before, q[i - 1].prompt_tokens, now, q[i].prompt_tokens);
    }
    t.cache_read = std::min(shared, q[i].prompt_tokens);
    t.input = q[i].prompt_tokens - t.cache_read;
    t.output = q[i].output_tokens;
    t.reasoning = q[i].reasoning_tokens;
    return t;
  };
  return shape_from(
      q.size(), [&](std::size_t i) { return q[i].prompt_tokens; }, tokens,
      [&](std::size_t i) { return q[i].compaction || q[i - 1].compaction; }, prices);
}

} // namespace loopcast
