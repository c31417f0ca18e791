#include "loopcast/replay.hpp"

#include "loopcast/errors.hpp"

#include <fmt/format.h>

#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

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

namespace {

// Cache hits of every recorded request with a provider cache of the given TTL and block size.
// Requests are visited in send order across all sessions of all traces (each trace on its own
// lineages); the prefix structure is the one replays use.
std::vector<std::vector<std::int64_t>> ttl_cache_hits(const std::vector<recorded_trace>& traces, double ttl_s,
                                                      std::int64_t block_tokens) {
  std::vector<std::vector<std::int64_t>> hits(traces.size());
  struct ref {
    double t;
    std::uint32_t trace, script, request;
  };
  std::vector<ref> order;
  std::vector<replay_sessions> per_trace;
  std::vector<std::vector<std::uint32_t>> lineage_base(traces.size());
  std::uint32_t lineages = 0;
  per_trace.reserve(traces.size());
  for (std::uint32_t ti = 0; ti < traces.size(); ++ti) {
    const auto& t = traces[ti];
    if (t.totals) {
      per_trace.emplace_back();
      continue;
    }
    per_trace.push_back(make_replay_sessions({t}, 0));
    const auto& rs = per_trace.back();
    std::uint32_t k = 0;
    for (std::uint32_t si = 0; si < t.sessions.size(); ++si) {
      if (t.sessions[si].requests.empty()) continue;
      const auto& sc = rs.scripts[k];
      lineage_base[ti].push_back(lineages);
      lineages += sc.lineages;
      for (std::uint32_t ri = 0; ri < t.sessions[si].requests.size(); ++ri)
        order.push_back({t.sessions[si].requests[ri].t_send, ti, k, ri});
      ++k;
    }
    hits[ti].assign(t.request_count(), 0);
  }
  std::stable_sort(order.begin(), order.end(), [](const ref& a, const ref& b) { return a.t < b.t; });
  cache_config cfg;
  cfg.enabled = true;
  cfg.block_tokens = std::max<std::int64_t>(1, block_tokens);
  cfg.ttl_s = ttl_s;
  prefix_cache cache(cfg, lineages);
  // A trace's sessions share lineages (hash ids): map every script onto the trace's first base.
  std::vector<prefix_run> runs;
  // Index of request (script k, request ri) in the trace's flat order.
  std::vector<std::vector<std::size_t>> flat(traces.size());
  for (std::uint32_t ti = 0; ti < traces.size(); ++ti) {
    std::size_t n = 0;
    for (const auto& s : traces[ti].sessions) {
      if (s.requests.empty()) continue;
      flat[ti].push_back(n);
      n += s.requests.size();
    }
  }
  for (const auto& o : order) {
    const auto& sc = per_trace[o.trace].scripts[o.script];
    const auto& q = sc.requests[o.request];
    const auto base = traces[o.trace].has_prefix ? lineage_base[o.trace][0] : lineage_base[o.trace][o.script];
    runs.clear();
    for (const auto& r : sc.runs_of(q)) runs.push_back({base + r.lineage, r.end_tokens});
    const std::int64_t hit = cache.lookup(runs, q.prompt_tokens, o.t);
    hits[o.trace][flat[o.trace][o.script] + o.request] = hit;
    const double served = o.t + std::max(0.0, q.recorded_ttft_s);
    cache.touch(runs, q.prompt_tokens, served);
  }
  return hits;
}

// The tokens of a recorded request as a provider cache of the given hits would bill them.
token_counts with_cache_hit(const recorded_request& r, std::int64_t hit, bool write_charged) {
  token_counts t = r.tokens;
  const std::int64_t prompt = r.tokens.prompt();
  t.cache_read = std::min(hit, prompt);
  t.cache_write = write_charged ? prompt - t.cache_read : 0;
  t.input = prompt - t.cache_read - t.cache_write;
  return t;
}

} // namespace

trace_stats compute_trace_stats(const std::vector<recorded_trace>& traces, const price_sheet* prices) {
  stats_options o;
  o.price_all = prices;
  return compute_trace_stats(traces, o);
}


namespace {
std::string utc_day(double unix_s) {
  const auto days = std::chrono::floor<std::chrono::days>(std::chrono::sys_seconds(std::chrono::seconds(
      static_cast<std::int64_t>(std::floor(unix_s)))));
  const std::chrono::year_month_day ymd{days};
  return fmt::format("{:04d}-{:02d}-{:02d}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}
} // namespace

trace_stats compute_trace_stats(const std::vector<recorded_trace>& traces, const stats_options& opt) {
  struct acc {
    std::vector<request_sample> samples;
    token_counts tokens;
    double recorded = 0, priced = 0, ttl_priced = 0;
    std::int64_t ttl_hit = 0, prompt = 0;
    bool all_recorded = true, all_priced = true;
    std::set<std::string> from;
  };
  std::map<std::string, acc> by_model;
  acc all;
  trace_stats st;
  st.by = opt.by;
  const bool bounded = !std::isnan(opt.since_unix) || !std::isnan(opt.until_unix);
  const bool pricing = opt.prices || opt.price_all;
  std::set<std::string> unpriced;
  std::vector<std::vector<std::int64_t>> hits;
  if (opt.cache_ttl_s > 0) {
    hits = ttl_cache_hits(traces, opt.cache_ttl_s, opt.cache_block_tokens);
    st.cache_ttl_s = opt.cache_ttl_s;
    st.cache_block_tokens = std::max<std::int64_t>(1, opt.cache_block_tokens);
  }
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    const auto& t = traces[ti];
    if (t.totals) {
      st.totals_only.push_back(&t);
      continue;
    }
    if (!t.absolute_clock && (bounded || opt.by == stats_grouping::day)) {
      st.undated.push_back(t.file);
      continue;
    }
    st.has_ttft = st.has_ttft || t.has_ttft;
    std::size_t flat = 0;
    for (std::size_t s = 0; s < t.sessions.size(); ++s) {
      std::size_t root = s;
      while (t.sessions[root].parent >= 0) root = static_cast<std::size_t>(t.sessions[root].parent);
      for (const auto& r : t.sessions[s].requests) {
        if ((!std::isnan(opt.since_unix) && r.t_send < opt.since_unix) ||
            (!std::isnan(opt.until_unix) && r.t_send >= opt.until_unix)) {
          ++st.filtered_out;
          ++flat;
          continue;
        }
        const request_sample x{static_cast<std::uint32_t>(s), r.t_send, r.t_first_token, r.t_end, r.tokens.prompt(),
                               r.tokens.cache_read, r.tokens.generated()};
        const auto& model = t.models.at(static_cast<std::size_t>(r.model));
        std::string key;
        switch (opt.by) {
        case stats_grouping::model: key = model; break;
        case stats_grouping::day: key = utc_day(r.t_send); break;
        case stats_grouping::session:
          key = t.sessions[root].id.empty() ? std::filesystem::path(t.file).filename().string() : t.sessions[root].id;
          break;
        case stats_grouping::project: key = std::filesystem::path(t.file).parent_path().filename().string(); break;
        }
        const price_sheet* sheet = opt.price_all;
        bool write_charged = true;
        std::string from = "--price";
        if (!sheet && opt.prices) {
          if (const auto* e = opt.prices->find(model)) {
            sheet = &e->prices;
            write_charged = e->write_charged;
            from = e->from;
          } else {
            unpriced.insert(model);
          }
        }
        const double when = t.absolute_clock ? r.t_send : 0.0;
        for (acc* a : {&by_model[key], &all}) {
          a->samples.push_back(x);
          a->tokens += r.tokens;
          if (std::isnan(r.cost_usd)) a->all_recorded = false;
          else a->recorded += r.cost_usd;
          if (sheet) {
            a->priced += price_request(*sheet, r.tokens, when).total_usd;
            a->from.insert(from);
          } else {
            a->all_priced = false;
          }
          if (!hits.empty()) {
            const auto hit = hits[ti][flat];
            a->ttl_hit += std::min(hit, r.tokens.prompt());
            a->prompt += r.tokens.prompt();
            if (sheet) a->ttl_priced += price_request(*sheet, with_cache_hit(r, hit, write_charged), when).total_usd;
          }
        }
        ++flat;
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
    const bool priced = pricing && a.all_priced && !a.samples.empty();
    g.priced_cost_usd = priced ? a.priced : unknown_time;
    if (priced) {
      for (const auto& f : a.from) g.priced_from += (g.priced_from.empty() ? "" : ", ") + f;
    }
    if (!hits.empty()) {
      g.ttl_cache_hit_rate = a.prompt > 0 ? static_cast<double>(a.ttl_hit) / static_cast<double>(a.prompt) : unknown_time;
      g.ttl_priced_cost_usd = priced ? a.ttl_priced : unknown_time;
    }
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
  st.unpriced_models.assign(unpriced.begin(), unpriced.end());
  return st;
}

std::vector<session_plan> replay_sessions::plans(std::uint64_t seed) const {
  std::vector<session_plan> out;
  out.reserve(scripts.size());
  for (std::size_t i = 0; i < scripts.size(); ++i)
    out.push_back({&scripts[i], start_s[i], derive_seed(seed, (1ULL << 32) + i), family[i]});
  return out;
}

namespace {

// One recorded session as a script, with the context policy applied for a target.
session_script shape_session(const recorded_trace& t, const recorded_session& s, const session_shaping& sh,
                             std::int32_t& compactions, std::int32_t& truncations) {
  session_script sc;
  sc.source = fmt::format("{} session {}", t.file, s.id);
  sc.requests.reserve(s.requests.size() + 4);
  // Lineages: the trace's hash-id lineages are shared by its sessions; conversation epochs
  // (without hash ids) and the policy's new contexts are private lineages after them.
  const std::uint32_t shared = t.has_prefix ? t.lineages : 0;
  std::uint32_t next_private = shared;
  std::uint32_t epoch_lineage = next_private++;  // the conversation without hash ids
  bool own_context = false;         // after a compaction or truncation the prompt is ours, not the recording's
  std::uint32_t own_lineage = 0;
  std::int64_t removed = 0;         // recorded prompt tokens the policy's compactions dropped
  std::int64_t base = 0;            // system prompt and task kept by a compaction
  std::int32_t since_compaction = 0;
  const bool windowed = sh.window_tokens > 0 && sh.policy != context_policy::fail;
  const double threshold = compaction_threshold(sh.window_tokens, sh.compact_at);

  auto max_tokens_for = [&](std::int64_t generated) {
    std::int64_t m = sh.max_tokens_override > 0 ? sh.max_tokens_override : sh.agent_max_tokens;
    if (sh.max_output_tokens > 0) m = std::min(m, sh.max_output_tokens);
    return std::max(m, generated);
  };
  auto push_recorded_runs = [&](request_spec& q, const recorded_request& r) {
    q.runs_begin = static_cast<std::uint32_t>(sc.runs.size());
    if (t.has_prefix) {
      for (std::uint32_t k = 0; k < r.runs_count; ++k) sc.runs.push_back(t.runs[r.runs_begin + k]);
      q.runs_count = r.runs_count;
    } else {
      sc.runs.push_back({epoch_lineage, q.prompt_tokens});
      q.runs_count = 1;
    }
  };
  // A prompt of our own: the kept base (on the first recorded run's lineage) then `lineage`.
  auto push_own_runs = [&](request_spec& q, std::uint32_t lineage, const recorded_request& first) {
    q.runs_begin = static_cast<std::uint32_t>(sc.runs.size());
    const std::uint32_t base_lineage =
        t.has_prefix && first.runs_count > 0 ? t.runs[first.runs_begin].lineage : lineage;
    if (base > 0 && base_lineage != lineage) {
      sc.runs.push_back({base_lineage, std::min(base, q.prompt_tokens)});
      sc.runs.push_back({lineage, q.prompt_tokens});
      q.runs_count = 2;
    } else {
      sc.runs.push_back({lineage, q.prompt_tokens});
      q.runs_count = 1;
    }
  };

  for (std::size_t i = 0; i < s.requests.size(); ++i) {
    const auto& r = s.requests[i];
    request_spec q;
    q.prompt_tokens = r.tokens.prompt();
    q.output_tokens = r.tokens.output;
    q.reasoning_tokens = r.tokens.reasoning;
    q.max_tokens = max_tokens_for(r.tokens.generated());
    q.delay_before_s = i == 0 ? 0.0 : agent_delay(s.requests[i - 1], r);
    q.turn = static_cast<std::int32_t>(i + 1);
    q.compaction = r.compaction;
    if (!std::isnan(r.t_end)) q.recorded_duration_s = r.t_end - r.t_send;
    if (!std::isnan(r.t_first_token)) q.recorded_ttft_s = r.t_first_token - r.t_send;
    // The recording's own context restarts: its compaction, a new context, or a prompt that
    // shrinks to less than half. The policy's changes end there too.
    bool restarted = false;
    if (i > 0) {
      const auto& prev = s.requests[i - 1];
      restarted = r.new_context || prev.compaction || 2 * r.tokens.prompt() < prev.tokens.prompt();
      if (restarted && !t.has_prefix) epoch_lineage = next_private++;
    }
    if (restarted) {
      removed = 0;
      own_context = false;
      since_compaction = 0;
    }
    if (i == 0) base = std::min<std::int64_t>(q.prompt_tokens, static_cast<std::int64_t>(threshold / 4));
    std::int64_t prompt = q.prompt_tokens - removed;
    const std::int64_t generated = r.tokens.generated();
    // A session (or a recorded context) that starts above the threshold compacts at once; after
    // a compaction the agent waits for one more turn (a single turn above the threshold cannot
    // be compacted away).
    const bool fresh = sc.requests.empty() || restarted;
    if (windowed && sh.policy == context_policy::compact && (since_compaction > 0 || fresh) && !r.compaction &&
        needs_compaction(prompt, sh.window_tokens, sh.compact_at)) {
      // The agent compacts before this request: it reads the history as it stands (as much of it
      // as the window holds) and writes a summary; the request then continues from the kept base
      // and the summary.
      const std::int64_t readable = std::max<std::int64_t>(1, sh.window_tokens - sh.summary_tokens);
      request_spec c;
      c.output_tokens = sh.summary_tokens;
      c.max_tokens = max_tokens_for(sh.summary_tokens);
      c.delay_before_s = q.delay_before_s;
      c.turn = q.turn;
      c.compaction = true;
      c.inserted = true;
      if (fresh) {
        // The history is this request's own recorded prompt.
        c.prompt_tokens = std::min(prompt, readable);
        push_recorded_runs(c, r);
      } else {
        // It extends the previous prompt (a cache hit on it).
        const auto& prev = sc.requests.back();
        c.prompt_tokens = std::min(prev.prompt_tokens + prev.output_tokens, readable);
        c.runs_begin = static_cast<std::uint32_t>(sc.runs.size());
        for (std::uint32_t k = 0; k < prev.runs_count; ++k) sc.runs.push_back(sc.runs[prev.runs_begin + k]);
        sc.runs.back().end_tokens = std::max(sc.runs.back().end_tokens, c.prompt_tokens);
        c.runs_count = prev.runs_count;
      }
      sc.requests.push_back(c);
      ++compactions;
      q.delay_before_s = 0;
      removed = q.prompt_tokens - std::min(q.prompt_tokens, base + sh.summary_tokens);
      prompt = q.prompt_tokens - removed;
      own_context = true;
      own_lineage = next_private++;
      since_compaction = 0;
    }
    q.prompt_tokens = prompt;
    const bool overflows = windowed && prompt + generated > sh.window_tokens;
    if (overflows && r.compaction && sh.policy != context_policy::truncate) {
      // A recorded compaction that the window cannot hold reads as much of the history as fits.
      q.prompt_tokens = std::max<std::int64_t>(0, sh.window_tokens - generated);
      ++truncations;
    }
    if (overflows && sh.policy == context_policy::truncate) {
      // The oldest history is dropped: the prompt fits, and nothing after the base is cached.
      // Its own lineage: the next request is truncated afresh (or fits as recorded).
      q.prompt_tokens = std::max<std::int64_t>(0, sh.window_tokens - generated);
      own_lineage = next_private++;
      ++truncations;
      push_own_runs(q, own_lineage, s.requests.front());
    } else if (own_context) {
      push_own_runs(q, own_lineage, s.requests.front());
    } else {
      push_recorded_runs(q, r);
    }
    ++since_compaction;
    sc.requests.push_back(q);
  }
  sc.lineages = next_private;
  sc.shared_lineages = shared;
  return sc;
}

} // namespace

replay_sessions make_replay_sessions(const std::vector<recorded_trace>& traces, std::int64_t default_max_tokens) {
  session_shaping sh;
  sh.agent_max_tokens = default_max_tokens;
  return make_replay_sessions(traces, sh);
}

std::string default_client_for(const std::vector<recorded_trace>& traces) {
  for (const auto& t : traces) {
    switch (t.format) {
    case trace_format::claude_code:
    case trace_format::kv_cache_tester: return "claude-code";  // kv-cache-tester traces are Claude Code sessions
    case trace_format::codex: return "codex";
    case trace_format::opencode: return "opencode";
    default: break;
    }
  }
  return "opencode";
}

replay_sessions make_replay_sessions(const std::vector<recorded_trace>& traces, const session_shaping& shape) {
  replay_sessions rs;
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    const auto& t = traces[ti];
    refuse_totals_only(t);
    const double origin = origin_of(traces, t);
    for (const auto& s : t.sessions) {
      if (s.requests.empty()) continue;
      std::int32_t c = 0, k = 0;
      rs.scripts.push_back(shape_session(t, s, shape, c, k));
      rs.script_compactions.push_back(c);
      rs.script_truncations.push_back(k);
      rs.compactions += c;
      rs.truncations += k;
      rs.start_s.push_back(s.requests.front().t_send - origin);
      rs.family.push_back(static_cast<std::uint32_t>(ti));
    }
  }
  if (rs.scripts.empty()) throw trace_error(traces.empty() ? "" : traces.front().file, 0, "nothing to replay");
  return rs;
}

recorded_run measure_recorded(const std::vector<recorded_trace>& traces, const model_price_book* prices) {
  recorded_run run;
  std::vector<request_sample> samples;
  double first = std::numeric_limits<double>::infinity(), last = -first, cost = 0, priced = 0;
  bool all_cost = true;
  std::set<std::string> unpriced;
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
        const auto& model = t.models.at(static_cast<std::size_t>(r.model));
        if (!prices) continue;
        if (const auto* e = prices->find(model)) priced += price_request(e->prices, r.tokens, t.absolute_clock ? r.t_send : 0.0).total_usd;
        else unpriced.insert(model);
      }
    auto x = samples_of(t);
    samples.insert(samples.end(), x.begin(), x.end());
  }
  run.requests = samples.size();
  run.wall_s = samples.empty() ? 0.0 : last - first;
  if (all_cost && !samples.empty()) {
    run.cost_usd = cost;
  } else if (prices && unpriced.empty() && !samples.empty()) {
    run.cost_usd = priced;
    run.cost_priced = true;
  } else {
    run.cost_usd = unknown_time;
    run.unpriced_models.assign(unpriced.begin(), unpriced.end());
  }
  run.metrics = compute_request_metrics(samples);
  return run;
}

namespace {

bool matches(const std::string& pattern, const std::string& model) {
  return pattern == "*" || fnmatch(pattern.c_str(), model.c_str(), 0) == 0;
}

// Merges the runs of one option's routes (each over its own sessions) into one result whose
// sessions are in the order of `global` (route part → its sessions' global indices).
option_result merge_routes(std::string label, std::shared_ptr<const scenario_option> described,
                           std::vector<option_result>& parts,
                           const std::vector<std::vector<std::uint32_t>>& global, std::size_t sessions) {
  if (parts.size() == 1 && global[0].size() == sessions) {
    bool identity = true;
    for (std::size_t i = 0; i < sessions; ++i) identity = identity && global[0][i] == i;
    if (identity) {
      option_result r = std::move(parts[0]);
      r.label = std::move(label);
      r.option = described;
      return r;
    }
  }
  option_result out;
  out.label = std::move(label);
  out.option = described;
  auto& m = out.sim;
  std::size_t nb_total = 0;
  for (const auto& p : parts) nb_total += p.sim.buckets.size();
  m.sessions.resize(sessions);
  double first = std::numeric_limits<double>::infinity(), last = -first;
  std::size_t bucket_offset = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    auto& p = parts[k].sim;
    const auto& g = global[k];
    const std::size_t nb = p.buckets.size();
    for (std::size_t i = 0; i < p.sessions.size(); ++i) {
      auto s = p.sessions[i];
      if (s.stop_bucket >= 0) s.stop_bucket = static_cast<std::int16_t>(s.stop_bucket + static_cast<std::int16_t>(bucket_offset));
      m.sessions[g[i]] = s;
      if (s.attempts > 0) {
        first = std::min(first, s.start_s);
        last = std::max(last, s.end_s);
      }
    }
    for (std::size_t a = 0; a < p.attempts.size(); ++a) {
      auto x = p.attempts[a];
      x.session = g[x.session];
      if (x.refused_by >= 0) x.refused_by = static_cast<std::int16_t>(x.refused_by + static_cast<std::int16_t>(bucket_offset));
      m.attempts.push_back(x);
      for (std::size_t b = 0; b < nb_total; ++b)
        m.bucket_levels.push_back(b >= bucket_offset && b < bucket_offset + nb ? p.bucket_levels[a * nb + (b - bucket_offset)]
                                                                               : unknown_time);
    }
    for (auto x : p.requests) {
      x.session = g[x.session];
      m.requests.push_back(x);
    }
    for (auto& c : p.charges) m.charges.push_back(std::move(c));
    const std::size_t op_offset = m.bucket_ops.size();
    for (auto op : p.bucket_ops) {
      op.bucket = static_cast<std::uint16_t>(op.bucket + bucket_offset);
      if (op.adjust) op.ref += op_offset;
      m.bucket_ops.push_back(op);
    }
    m.start_unix_s = p.start_unix_s;
    for (const auto& b : p.buckets) m.buckets.push_back(b);
    if (p.first_429 && (!m.first_429 || p.first_429->time_s < m.first_429->time_s)) {
      auto f = *p.first_429;
      f.session = g[f.session];
      f.bucket = static_cast<std::int16_t>(f.bucket + static_cast<std::int16_t>(bucket_offset));
      std::vector<bucket_snapshot> snaps(nb_total);
      for (std::size_t b = 0; b < f.buckets.size(); ++b) snaps[bucket_offset + b] = f.buckets[b];
      f.buckets = std::move(snaps);
      m.first_429 = std::move(f);
    }
    m.tokens += p.tokens;
    for (std::size_t c = 0; c < token_class_count; ++c) m.cost_by_class_usd[c] += p.cost_by_class_usd[c];
    m.token_cost_usd += p.token_cost_usd;
    m.cache_storage_usd += p.cache_storage_usd;
    m.busy_s += p.busy_s;
    m.cost_usd += p.cost_usd;
    if (p.energy) {
      if (!m.energy) m.energy = energy_cost{};
      m.energy->energy_kwh += p.energy->energy_kwh;
      m.energy->electricity_usd += p.energy->electricity_usd;
      m.energy->amortisation_usd += p.energy->amortisation_usd;
    }
    if (p.engine && !m.engine) m.engine = p.engine;
    bucket_offset += nb;
  }
  // A first 429's snapshots of the other routes' buckets stay zero: they are other organisations.
  std::sort(m.requests.begin(), m.requests.end(), [](const request_sample& a, const request_sample& b) {
    return a.t_send < b.t_send || (a.t_send == b.t_send && a.session < b.session);
  });
  m.wall_s = std::isfinite(first) ? last - first : 0.0;
  out.metrics = compute_request_metrics(m.requests);
  return out;
}

} // namespace

replay_result run_replay(const std::vector<recorded_trace>& traces, const std::vector<scenario_option>& options,
                         const replay_options& opt) {
  std::vector<replay_target> targets;
  for (const auto& o : options) targets.push_back({o.label, {{"*", o}}});
  return run_replay(traces, targets, opt);
}

replay_result run_replay(const std::vector<recorded_trace>& traces, const std::vector<replay_target>& targets,
                         const replay_options& opt) {
  replay_result out;
  out.policy = opt.policy;
  out.speed = opt.speed;
  out.recorded = measure_recorded(traces, opt.recorded_prices);
  // The sessions every option numbers alike (those with requests, trace by trace), and the
  // requests per model of each, which decide its route.
  std::vector<std::string> source;
  std::vector<std::map<std::string, std::size_t>> models;
  for (const auto& t : traces) {
    refuse_totals_only(t);
    for (const auto& s : t.sessions) {
      if (s.requests.empty()) continue;
      source.push_back(fmt::format("{} session {}", t.file, s.id));
      auto& per_model = models.emplace_back();
      for (const auto& r : s.requests) ++per_model[t.models.at(static_cast<std::size_t>(r.model))];
    }
  }
  if (source.empty()) throw trace_error(traces.empty() ? "" : traces.front().file, 0, "nothing to replay");
  const std::size_t n = source.size();
  sim_options so;
  so.record_attempts = opt.record_attempts;
  so.start_unix_s = opt.start_unix_s;
  so.recorded_speed = opt.speed == replay_speed::recorded;
  // Time-of-day prices need the Unix time of the replay's t = 0: the logs' own origin.
  if (so.start_unix_s == 0 && !traces.empty() && traces.front().absolute_clock)
    so.start_unix_s = origin_of(traces, traces.front());

  for (const auto& tg : targets) {
    if (tg.routes.empty()) throw config_error("--on", "", fmt::format("option {} has no target", tg.label));
    // Each session goes to the first route whose pattern matches its model.
    std::vector<int> route_of(n, -1);
    std::map<std::string, std::size_t> unmatched;
    // A session runs on one target: when its models route to different targets (Claude Code's
    // main session sends a few Haiku requests), it runs on the target of the route with the most
    // of its requests, and the replay says so.
    std::size_t mixed = 0;
    std::string mixed_example;
    for (std::size_t i = 0; i < n; ++i) {
      std::map<int, std::size_t> per_route;
      for (const auto& [model, count] : models[i]) {
        int r = -1;
        for (std::size_t k = 0; k < tg.routes.size() && r < 0; ++k)
          if (matches(tg.routes[k].pattern, model)) r = static_cast<int>(k);
        if (r < 0) {
          unmatched[model] += 1;
          continue;
        }
        per_route[r] += count;
      }
      for (const auto& [r, count] : per_route)
        if (route_of[i] < 0 || count > per_route[route_of[i]]) route_of[i] = r;
      if (per_route.size() > 1) {
        ++mixed;
        if (mixed_example.empty()) mixed_example = source[i];
      }
    }
    if (!unmatched.empty()) {
      std::string list;
      for (const auto& [model, count] : unmatched)
        list += fmt::format("{}{} ({} session{})", list.empty() ? "" : ", ", model, count, count == 1 ? "" : "s");
      throw config_error("--on", "", fmt::format("{}: no mapping for the model{} {}; add a pattern for {}, or '*=TARGET'",
                                                 tg.label, unmatched.size() == 1 ? "" : "s", list,
                                                 unmatched.size() == 1 ? "it" : "them"));
    }
    std::vector<option_result> parts;
    std::vector<std::vector<std::uint32_t>> global;
    replay_shaping_summary summary;
    if (mixed > 0)
      summary.notes.push_back(fmt::format("{} session{} (e.g. {}) send requests of models routed to different targets: "
                                          "each ran all its requests on the target of its most frequent model",
                                          mixed, mixed == 1 ? "" : "s", mixed_example));
    const scenario_option* first_used = nullptr;
    for (std::size_t k = 0; k < tg.routes.size(); ++k) {
      std::vector<std::uint32_t> mine;
      for (std::uint32_t i = 0; i < n; ++i)
        if (route_of[i] == static_cast<int>(k)) mine.push_back(i);
      if (mine.empty()) continue;
      const auto& o = tg.routes[k].option;
      if (!first_used) first_used = &o;
      session_shaping sh;
      sh.max_tokens_override = opt.max_tokens;
      sh.agent_max_tokens = o.client.agent_max_tokens > 0 ? o.client.agent_max_tokens : opt.default_max_tokens;
      sh.max_output_tokens = o.tgt.max_output_tokens;
      sh.window_tokens = o.tgt.context_window_tokens;
      sh.policy = opt.policy;
      sh.compact_at = opt.compact_at > 0 ? opt.compact_at
                      : o.client.agent_compact_at > 0 ? o.client.agent_compact_at : default_compact_at;
      sh.summary_tokens = opt.summary_tokens > 0 ? opt.summary_tokens : default_summary_tokens;
      // Every session is shaped (the plans need each session's index, start and family), but
      // only this route's run on its target.
      const auto rs = make_replay_sessions(traces, sh);
      std::int32_t compactions = 0, truncations = 0;
      std::vector<session_plan> plans;
      const auto all_plans = rs.plans(opt.seed);
      for (auto i : mine) {
        plans.push_back(all_plans[i]);
        compactions += rs.script_compactions[i];
        truncations += rs.script_truncations[i];
      }
      summary.compactions += compactions;
      summary.truncations += truncations;
      summary.routes.push_back(fmt::format("{} → {}", tg.routes[k].pattern, o.tgt.name));
      parts.push_back(run_option(o, plans, so, true, true));
      global.push_back(std::move(mine));
    }
    // What this option ran: the one target, or the routes' targets with their buckets side by side.
    auto described = std::make_shared<scenario_option>();
    if (parts.size() == 1) {
      *described = *first_used;
    } else {
      described->label = tg.label;
      described->client = first_used->client;
      std::vector<target> used;
      for (std::size_t k = 0; k < tg.routes.size(); ++k)
        if (std::find(route_of.begin(), route_of.end(), static_cast<int>(k)) != route_of.end())
          used.push_back(tg.routes[k].option.tgt);
      described->tgt = describe_route(tg.label, used);
    }
    for (std::size_t k = 0, b = 0; k < parts.size(); ++k)
      for (auto& bs : parts[k].sim.buckets) {
        if (parts.size() > 1) bs.name = described->tgt.limits[b].name;
        ++b;
      }
    out.options.push_back(merge_routes(tg.label, std::move(described), parts, global, n));
    out.shaping.push_back(std::move(summary));
  }
  return out;
}

} // namespace loopcast
