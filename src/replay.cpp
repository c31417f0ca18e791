#include "loopcast/replay.hpp"

#include "loopcast/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace loopcast {

namespace {

void refuse_totals_only(const recorded_trace& t) {
  if (!t.totals) return;
  const auto& x = *t.totals;
  throw trace_error(t.file, 0, fmt::format("{} logs record per-task totals only ({} API calls, {} tokens sent, {} "
                                           "received): per-request sizes and times cannot be derived from them",
                                           to_string(t.format), x.api_calls, x.tokens_sent, x.tokens_received));
}

// The clock origin: the earliest send over traces on an absolute clock, each trace's own otherwise.
double origin_of(const std::vector<recorded_trace>& traces, const recorded_trace& t) {
  const bool all_absolute = std::all_of(traces.begin(), traces.end(), [](const auto& x) { return x.absolute_clock || x.totals; });
  double o = std::numeric_limits<double>::infinity();
  for (const auto& x : traces) {
    if (!all_absolute && &x != &t) continue;
    for (const auto& s : x.sessions)
      if (!s.requests.empty()) o = std::min(o, s.requests.front().t_send);
  }
  return std::isfinite(o) ? o : 0.0;
}

// The agent's own time between two requests: as recorded, else send − previous end, else (no
// end recorded) send − previous send.
double agent_delay(const recorded_request& prev, const recorded_request& r) {
  if (!std::isnan(r.delay_before_s)) return r.delay_before_s;
  if (!std::isnan(prev.t_end)) return std::max(0.0, r.t_send - prev.t_end);
  return std::max(0.0, r.t_send - prev.t_send);
}

} // namespace

std::vector<context_bin> default_context_bins() {
  return {{"<20K", 0, 20000, 0, {}},
          {"20-50K", 20000, 50000, 0, {}},
          {"50-100K", 50000, 100000, 0, {}},
          {">100K", 100000, std::numeric_limits<std::int64_t>::max(), 0, {}}};
}

std::vector<request_sample> samples_of(const recorded_trace& t) {
  std::vector<request_sample> out;
  out.reserve(t.request_count());
  for (std::size_t s = 0; s < t.sessions.size(); ++s)
    for (const auto& r : t.sessions[s].requests)
      out.push_back({static_cast<std::uint32_t>(s), r.t_send, r.t_first_token, r.t_end, r.tokens.prompt(),
                     r.tokens.cache_read, r.tokens.generated()});
  return out;
}

trace_stats compute_trace_stats(const std::vector<recorded_trace>& traces, const price_sheet* prices) {
  struct acc {
    std::vector<request_sample> samples;
    token_counts tokens;
    double recorded = 0, priced = 0;
    bool all_recorded = true;
  };
  std::map<std::string, acc> by_model;
  acc all;
  trace_stats st;
  for (const auto& t : traces) {
    if (t.totals) {
      st.totals_only.push_back(&t);
      continue;
    }
    st.has_ttft = st.has_ttft || t.has_ttft;
    for (std::size_t s = 0; s < t.sessions.size(); ++s)
      for (const auto& r : t.sessions[s].requests) {
        const request_sample x{static_cast<std::uint32_t>(s), r.t_send, r.t_first_token, r.t_end, r.tokens.prompt(),
                               r.tokens.cache_read, r.tokens.generated()};
        for (acc* a : {&by_model[t.models.at(static_cast<std::size_t>(r.model))], &all}) {
          a->samples.push_back(x);
          a->tokens += r.tokens;
          if (std::isnan(r.cost_usd)) a->all_recorded = false;
          else a->recorded += r.cost_usd;
          if (prices) a->priced += price_request(*prices, r.tokens, t.absolute_clock ? r.t_send : 0.0).total_usd;
        }
      }
  }
  auto make = [&](const std::string& name, const acc& a) {
    stats_group g;
    g.model = name;
    g.requests = a.samples.size();
    g.tokens = a.tokens;
    g.metrics = compute_request_metrics(a.samples);
    g.recorded_cost_usd = a.all_recorded && !a.samples.empty() ? a.recorded : unknown_time;
    g.priced_cost_usd = prices ? a.priced : unknown_time;
    g.bins = default_context_bins();
    for (auto& b : g.bins) {
      std::vector<request_sample> in;
      for (const auto& x : a.samples)
        if (x.prompt >= b.lo_tokens && x.prompt < b.hi_tokens) in.push_back(x);
      b.requests = in.size();
      b.metrics = compute_request_metrics(in);
    }
    return g;
  };
  for (const auto& [name, a] : by_model) st.groups.push_back(make(name, a));
  if (!all.samples.empty()) st.groups.push_back(make("all", all));
  return st;
}

std::vector<session_plan> replay_sessions::plans(std::uint64_t seed) const {
  std::vector<session_plan> out;
  out.reserve(scripts.size());
  for (std::size_t i = 0; i < scripts.size(); ++i)
    out.push_back({&scripts[i], start_s[i], derive_seed(seed, (1ULL << 32) + i), family[i]});
  return out;
}

replay_sessions make_replay_sessions(const std::vector<recorded_trace>& traces, std::int64_t default_max_tokens) {
  replay_sessions rs;
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    const auto& t = traces[ti];
    refuse_totals_only(t);
    const double origin = origin_of(traces, t);
    for (const auto& s : t.sessions) {
      if (s.requests.empty()) continue;
      session_script sc;
      sc.source = fmt::format("{} session {}", t.file, s.id);
      sc.requests.reserve(s.requests.size());
      std::uint32_t epoch = 0;
      for (std::size_t i = 0; i < s.requests.size(); ++i) {
        const auto& r = s.requests[i];
        request_spec q;
        q.prompt_tokens = r.tokens.prompt();
        q.output_tokens = r.tokens.output;
        q.reasoning_tokens = r.tokens.reasoning;
        q.max_tokens = std::max(default_max_tokens, r.tokens.generated());
        q.delay_before_s = i == 0 ? 0.0 : agent_delay(s.requests[i - 1], r);
        q.turn = static_cast<std::int32_t>(i + 1);
        q.compaction = r.compaction;
        q.runs_begin = static_cast<std::uint32_t>(sc.runs.size());
        if (t.has_prefix) {
          for (std::uint32_t k = 0; k < r.runs_count; ++k) sc.runs.push_back(t.runs[r.runs_begin + k]);
          q.runs_count = r.runs_count;
        } else {
          // Without hashes, each prompt extends the previous one, except after a compaction or
          // when the context shrinks to less than half: then it starts anew.
          if (i > 0) {
            const auto& prev = s.requests[i - 1];
            if (r.new_context || prev.compaction || 2 * r.tokens.prompt() < prev.tokens.prompt()) ++epoch;
          }
          sc.runs.push_back({epoch, q.prompt_tokens});
          q.runs_count = 1;
        }
        sc.requests.push_back(q);
      }
      if (t.has_prefix) {
        sc.lineages = t.lineages;
        sc.shared_lineages = t.lineages;  // one trace's sessions share its hash-id prefixes
      } else {
        sc.lineages = epoch + 1;
        sc.shared_lineages = 0;
      }
      rs.scripts.push_back(std::move(sc));
      rs.start_s.push_back(s.requests.front().t_send - origin);
      rs.family.push_back(static_cast<std::uint32_t>(ti));
    }
  }
  if (rs.scripts.empty()) throw trace_error(traces.empty() ? "" : traces.front().file, 0, "nothing to replay");
  return rs;
}

recorded_run measure_recorded(const std::vector<recorded_trace>& traces) {
  recorded_run run;
  std::vector<request_sample> samples;
  double first = std::numeric_limits<double>::infinity(), last = -first, cost = 0;
  bool all_cost = true;
  for (const auto& t : traces) {
    if (t.totals) continue;
    const double origin = origin_of(traces, t);
    for (const auto& s : t.sessions)
      for (const auto& r : s.requests) {
        first = std::min(first, r.t_send - origin);
        last = std::max(last, (std::isnan(r.t_end) ? r.t_send : r.t_end) - origin);
        run.tokens += r.tokens;
        if (std::isnan(r.cost_usd)) all_cost = false;
        else cost += r.cost_usd;
      }
    auto x = samples_of(t);
    samples.insert(samples.end(), x.begin(), x.end());
  }
  run.requests = samples.size();
  run.wall_s = samples.empty() ? 0.0 : last - first;
  run.cost_usd = all_cost && !samples.empty() ? cost : unknown_time;
  run.metrics = compute_request_metrics(samples);
  return run;
}

replay_result run_replay(const std::vector<recorded_trace>& traces, const std::vector<scenario_option>& options,
                         const replay_options& opt) {
  const auto sessions = make_replay_sessions(traces, opt.default_max_tokens);
  const auto plans = sessions.plans(opt.seed);
  replay_result out;
  out.recorded = measure_recorded(traces);
  sim_options so;
  so.record_attempts = opt.record_attempts;
  so.start_unix_s = opt.start_unix_s;
  // Time-of-day prices need the Unix time of the replay's t = 0: the logs' own origin.
  if (so.start_unix_s == 0 && !traces.empty() && traces.front().absolute_clock)
    so.start_unix_s = origin_of(traces, traces.front());
  for (const auto& o : options) out.options.push_back(run_option(o, plans, so));
  return out;
}

} // namespace loopcast
