// Recorded sessions as simulator input (docs/replay.md): each recorded request as a scripted one,
// its prefix runs and agent time kept, the context policy applied for a target's window, each
// request's segment of a model map.
#include "loopcast/replay.hpp"

#include "loopcast/errors.hpp"

#include "study/recorded.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace loopcast {

namespace detail {

void refuse_totals_only(const recorded_trace& t) {
  if (!t.totals) return;
  const auto& x = *t.totals;
  throw trace_error(t.file, 0, fmt::format("{} logs record per-task totals only ({} API calls, {} tokens sent, {} "
                                           "received): per-request sizes and times cannot be derived from them",
                                           to_string(t.format), x.api_calls, x.tokens_sent, x.tokens_received));
}

std::vector<double> origins_of(const std::vector<recorded_trace>& traces) {
  const bool all_absolute = std::all_of(traces.begin(), traces.end(), [](const auto& x) { return x.absolute_clock || x.totals; });
  std::vector<double> own(traces.size(), std::numeric_limits<double>::infinity());
  double all = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < traces.size(); ++i) {
    for (const auto& s : traces[i].sessions)
      if (!s.requests.empty()) own[i] = std::min(own[i], s.requests.front().t_send);
    all = std::min(all, own[i]);
  }
  for (auto& o : own) {
    if (all_absolute) o = all;
    if (!std::isfinite(o)) o = 0.0;
  }
  return own;
}

} // namespace detail

using detail::origins_of;
using detail::refuse_totals_only;

std::vector<session_plan> replay_sessions::plans(std::uint64_t seed) const {
  std::vector<session_plan> out;
  out.reserve(scripts.size());
  for (std::size_t i = 0; i < scripts.size(); ++i)
    out.push_back({&scripts[i], start_s[i], derive_seed(seed, (1ULL << 32) + i), family[i]});
  return out;
}

namespace {

// The prefix a conversation's requests share, for logs without hash ids, as the recording says:
// each request shares with the previous request of its model what it read from the cache (each
// model has its own cache at the provider). A request sent within the recorded cache lifetime of
// that one which read less than its prompt met a cache break the client made (it changed its prompt
// past that point: Claude Code rewriting older tool results, a compaction keeping the system
// prompt and tools), and the replay carries it on every target; after a longer pause the miss may
// be the cache's own expiry, which the target's cache decides. A log that records no cache reads
// keeps one lineage per recorded context.
class recorded_prefix {
public:
  recorded_prefix(const recorded_session& s, std::int32_t model, std::uint32_t& next_private) : next_(next_private) {
    for (const auto& r : s.requests) {
      if (r.model != model) continue;
      reads_ = reads_ || r.tokens.cache_read > 0;
      if (r.tokens.cache_write_1h > 0) lifetime_s_ = 3600;  // it wrote to the 1-hour cache
    }
    runs_.push_back({next_++, 0});
  }

  // Request i of the session, of this conversation's model.
  void advance(const recorded_session& s, std::size_t i) {
    const auto& r = s.requests[i];
    const std::size_t p = prev_;
    prev_ = i;
    if (p == none) return;
    const auto& prev = s.requests[p];
    const double gap = std::isnan(prev.t_end) ? r.t_send - prev.t_send : r.t_send - prev.t_end;
    const bool restarted = context_restarts(prev, r);
    const std::int64_t shared = std::min(prev.tokens.prompt(), r.tokens.prompt());
    const bool warm = reads_ && gap <= lifetime_s_;
    std::int64_t keep = -1;  // -1: the same lineage goes on
    if (warm && r.tokens.cache_read + slack_tokens < shared) keep = r.tokens.cache_read;
    else if (restarted) keep = warm ? std::min(r.tokens.cache_read, shared) : 0;
    if (keep < 0) return;
    while (runs_.size() > 1 && runs_[runs_.size() - 2].end_tokens >= keep) runs_.pop_back();
    if (keep > 0 && runs_.back().end_tokens > 0) {
      runs_.back().end_tokens = std::min(runs_.back().end_tokens, keep);
      runs_.push_back({next_++, 0});
    } else {
      runs_.assign(1, {next_++, 0});  // nothing shared: a lineage of its own
    }
  }

  // Appends the runs of a prompt of `tokens` along the conversation; returns how many.
  std::uint32_t push(std::vector<prefix_run>& out, std::int64_t tokens) {
    std::uint32_t n = 1;
    for (std::size_t k = 0; k + 1 < runs_.size() && runs_[k].end_tokens < tokens; ++k, ++n) out.push_back(runs_[k]);
    out.push_back({runs_.back().lineage, tokens});
    runs_.back().end_tokens = std::max(runs_.back().end_tokens, tokens);
    return n;
  }
  // The lineage of the conversation's first tokens (the system prompt and tools).
  std::uint32_t base_lineage() const { return runs_.front().lineage; }

private:
  static constexpr std::size_t none = ~std::size_t{0};
  static constexpr std::int64_t slack_tokens = 1024;  // reads this close to the whole prefix are whole
  std::uint32_t& next_;
  std::vector<prefix_run> runs_;
  std::size_t prev_ = none;
  bool reads_ = false;
  double lifetime_s_ = 300;
};

// One recorded session as a script, with the context policy applied for a target.
class session_shaper {
public:
  session_shaper(const recorded_trace& t, const recorded_session& s, const session_shaping& sh)
      : t_(t), s_(s), sh_(sh), shared_(shared_lineages(t)), next_private_(shared_),
        windowed_(sh.window_tokens > 0 && sh.policy != context_policy::fail),
        by_reserve_(sh.compact_reserve_tokens > 0 && sh.window_tokens > sh.compact_reserve_tokens),
        threshold_(by_reserve_ ? static_cast<double>(sh.window_tokens - sh.compact_reserve_tokens)
                               : compaction_threshold(sh.window_tokens, sh.compact_at)) {
    sc_.source = fmt::format("{} session {}", t.file, s.id);
    sc_.requests.reserve(s.requests.size() + 4);
    sc_.recorded.reserve(s.requests.size() + 4);
    asks_1h_.assign(std::max<std::size_t>(t.models.size(), 1), 0);
    if (!t.has_prefix) {
      const std::size_t models = std::max<std::size_t>(t.models.size(), 1);
      conversations_.reserve(models);
      for (std::size_t m = 0; m < models; ++m) conversations_.emplace_back(s, static_cast<std::int32_t>(m), next_private_);
    }
  }

  session_script shape(std::int32_t& compactions, std::int32_t& truncations) {
    for (std::size_t i = 0; i < s_.requests.size(); ++i) shape_request(i);
    sc_.lineages = next_private_;
    sc_.shared_lineages = shared_;
    compactions = compactions_;
    truncations = truncations_;
    return std::move(sc_);
  }

private:
  void shape_request(std::size_t i) {
    const auto& r = s_.requests[i];
    request_spec q = as_recorded(i);
    q.write_1h = asks_1h(r);
    // The recording's own context restarts: its compaction, a new context, or a prompt that
    // shrinks to less than half. The policy's changes end there too.
    const bool restarted = i > 0 && context_restarts(s_.requests[i - 1], r);
    if (restarted) {
      removed_ = 0;
      own_context_ = false;
      since_compaction_ = 0;
      last_context_ = 0;
    }
    if (!t_.has_prefix) conversation_of(r).advance(s_, i);
    if (i == 0) base_ = std::min<std::int64_t>(q.prompt_tokens, static_cast<std::int64_t>(threshold_ / 4));
    std::int64_t prompt = q.prompt_tokens - removed_;
    const std::int64_t generated = r.tokens.generated();
    if (removed_ > 0 && prompt < base_ && !r.compaction) {
      push_side_request(q, r);
      return;
    }
    // A session (or a recorded context) that starts above the threshold compacts at once; after
    // a compaction the agent waits for one more turn (a single turn above the threshold cannot
    // be compacted away).
    const bool fresh = sc_.requests.empty() || restarted;
    if (windowed_ && sh_.policy == context_policy::compact && (since_compaction_ > 0 || fresh) && !r.compaction &&
        compaction_due(prompt, generated, fresh)) {
      insert_compaction(q, r, prompt, fresh);
      q.delay_before_s = 0;
      prompt = q.prompt_tokens - removed_;
    }
    q.prompt_tokens = prompt;
    fit_and_push(q, r, generated);
  }

  // Request i as recorded: its sizes, timing and model map segment.
  request_spec as_recorded(std::size_t i) const {
    const auto& r = s_.requests[i];
    request_spec q;
    q.segment = segment_for(r);
    q.prompt_tokens = r.tokens.prompt();
    q.output_tokens = r.tokens.output;
    q.reasoning_tokens = r.tokens.reasoning;
    q.max_tokens = max_tokens_for(r.tokens.generated());
    q.delay_before_s = i == 0 ? 0.0 : agent_delay(s_.requests[i - 1], r);
    q.turn = static_cast<std::int32_t>(i + 1);
    q.compaction = r.compaction;
    q.output_kinds = r.output_kinds;
    return q;
  }

  // Request r's recorded times.
  static recorded_timing timing_of(const recorded_request& r) {
    recorded_timing rec;
    if (!std::isnan(r.t_end)) rec.duration_s = r.t_end - r.t_send;
    if (!std::isnan(r.t_first_token)) rec.ttft_s = r.t_first_token - r.t_send;
    return rec;
  }

  // q into the script, with its recorded times.
  void push(const request_spec& q, recorded_timing rec) {
    sc_.requests.push_back(q);
    sc_.recorded.push_back(rec);
  }

  // Whether the request asks for 1-hour cache writes: it wrote to the 1-hour cache, or it wrote
  // nothing and its model's last write in the session did (the client's setting holds).
  bool asks_1h(const recorded_request& r) {
    char& last = asks_1h_.at(static_cast<std::size_t>(std::max(r.model, 0)));
    if (r.tokens.cache_write_1h > 0) last = 1;
    else if (r.tokens.cache_write > 0) last = 0;
    return last != 0;
  }

  // The client's trigger: window − reserve on the context its last response reported (Claude
  // Code; a fresh context: its own prompt), else compact_at × window on the prompt about to be
  // sent. A prompt that would not fit compacts whatever the rule (the API refuses it, and the
  // client compacts then).
  bool compaction_due(std::int64_t prompt, std::int64_t generated, bool fresh) const {
    const std::int64_t counted = by_reserve_ && !fresh ? last_context_ : prompt;
    return static_cast<double>(counted) >= threshold_ || (by_reserve_ && prompt + generated > sh_.window_tokens);
  }

  // Shorter than what the policy's compaction removed, this prompt cannot extend the compacted
  // history: another context within the session (a request of another model, a side call). It
  // goes as recorded, on a lineage of its own, and leaves the history's state alone.
  void push_side_request(request_spec q, const recorded_request& r) {
    q.runs_begin = static_cast<std::uint32_t>(sc_.runs.size());
    if (t_.has_prefix) {
      push_recorded_runs(q, r);
    } else {
      sc_.runs.push_back({next_private_++, q.prompt_tokens});
      q.runs_count = 1;
    }
    push(q, timing_of(r));
  }

  // The agent compacts before q: it reads the history as it stands (as much of it as the window
  // holds) and writes a summary; q then continues from the kept base and the summary.
  void insert_compaction(const request_spec& q, const recorded_request& r, std::int64_t prompt, bool fresh) {
    const std::int64_t readable = std::max<std::int64_t>(1, sh_.window_tokens - sh_.summary_tokens);
    request_spec c;
    c.output_tokens = sh_.summary_tokens;
    c.max_tokens = max_tokens_for(sh_.summary_tokens);
    c.delay_before_s = q.delay_before_s;
    c.turn = q.turn;
    c.compaction = true;
    c.inserted = true;
    c.write_1h = q.write_1h;
    c.segment = q.segment;
    if (fresh) {
      // The history is this request's own recorded prompt.
      c.prompt_tokens = std::min(prompt, readable);
      push_recorded_runs(c, r);
    } else {
      // It extends the previous prompt (a cache hit on it).
      const auto& prev = sc_.requests.back();
      c.prompt_tokens = std::min(prev.prompt_tokens + prev.output_tokens, readable);
      c.runs_begin = static_cast<std::uint32_t>(sc_.runs.size());
      for (std::uint32_t k = 0; k < prev.runs_count; ++k) sc_.runs.push_back(sc_.runs[prev.runs_begin + k]);
      sc_.runs.back().end_tokens = std::max(sc_.runs.back().end_tokens, c.prompt_tokens);
      c.runs_count = prev.runs_count;
    }
    push(c, recorded_timing{});  // (inserted: nothing recorded)
    ++compactions_;
    removed_ = q.prompt_tokens - std::min(q.prompt_tokens, base_ + sh_.summary_tokens);
    own_context_ = true;
    own_lineage_ = next_private_++;
    since_compaction_ = 0;
  }

  // q against the window (a recorded compaction that cannot hold the history reads what fits;
  // truncation drops the oldest history), then its runs, then into the script.
  void fit_and_push(request_spec q, const recorded_request& r, std::int64_t generated) {
    const bool overflows = windowed_ && q.prompt_tokens + generated > sh_.window_tokens;
    if (overflows && r.compaction && sh_.policy != context_policy::truncate) {
      q.prompt_tokens = std::max<std::int64_t>(0, sh_.window_tokens - generated);
      ++truncations_;
    }
    if (overflows && sh_.policy == context_policy::truncate) {
      // The prompt fits, and nothing after the base is cached. Its own lineage: the next request
      // is truncated afresh (or fits as recorded).
      q.prompt_tokens = std::max<std::int64_t>(0, sh_.window_tokens - generated);
      own_lineage_ = next_private_++;
      ++truncations_;
      push_own_runs(q, own_lineage_, r);
    } else if (own_context_) {
      push_own_runs(q, own_lineage_, r);
    } else {
      push_recorded_runs(q, r);
    }
    ++since_compaction_;
    last_context_ = q.prompt_tokens + generated;
    push(q, timing_of(r));
  }

  std::int64_t max_tokens_for(std::int64_t generated) const {
    std::int64_t m = sh_.max_tokens_override > 0 ? sh_.max_tokens_override : sh_.agent_max_tokens;
    if (sh_.max_output_tokens > 0) m = std::min(m, sh_.max_output_tokens);
    return std::max(m, generated);
  }

  // A model map's segment of a request: the first pattern that matches its model.
  std::uint8_t segment_for(const recorded_request& r) const {
    const auto& model = t_.models.at(static_cast<std::size_t>(r.model));
    for (std::size_t k = 0; k < sh_.model_patterns.size(); ++k)
      if (model_matches(sh_.model_patterns[k], model)) return static_cast<std::uint8_t>(k);
    return 0;
  }

  recorded_prefix& conversation_of(const recorded_request& r) {
    return conversations_.at(static_cast<std::size_t>(std::max(r.model, 0)));
  }

  void push_recorded_runs(request_spec& q, const recorded_request& r) {
    q.runs_begin = static_cast<std::uint32_t>(sc_.runs.size());
    if (t_.has_prefix) {
      for (std::uint32_t k = 0; k < r.runs_count; ++k) {
        const auto& run = t_.runs[r.runs_begin + k];
        sc_.runs.push_back({model_lineage(run.lineage, r), run.end_tokens});
      }
      q.runs_count = r.runs_count;
    } else {
      q.runs_count = conversation_of(r).push(sc_.runs, q.prompt_tokens);
    }
  }

  // A prompt of our own: the kept base (on the lineage of the conversation's first tokens) then
  // `lineage`.
  void push_own_runs(request_spec& q, std::uint32_t lineage, const recorded_request& r) {
    q.runs_begin = static_cast<std::uint32_t>(sc_.runs.size());
    const auto& first = s_.requests.front();
    const std::uint32_t base_lineage = t_.has_prefix && first.runs_count > 0
                                           ? model_lineage(t_.runs[first.runs_begin].lineage, r)
                                           : conversation_of(r).base_lineage();
    if (base_ > 0 && base_lineage != lineage) {
      sc_.runs.push_back({base_lineage, std::min(base_, q.prompt_tokens)});
      sc_.runs.push_back({lineage, q.prompt_tokens});
      q.runs_count = 2;
    } else {
      sc_.runs.push_back({lineage, q.prompt_tokens});
      q.runs_count = 1;
    }
  }

  // A log with hash ids: its lineages once per model, as each model has its own cache at the
  // provider (the same system prompt sent to Haiku and to Opus is cached twice).
  static std::uint32_t shared_lineages(const recorded_trace& t) {
    if (!t.has_prefix) return 0;
    const std::uint64_t n = std::uint64_t{t.lineages} * std::max<std::size_t>(t.models.size(), 1);
    if (n > std::numeric_limits<std::uint32_t>::max() / 2)
      throw trace_error(t.file, 0, fmt::format("{} prefix lineages × {} models are more than a replay can hold",
                                               t.lineages, t.models.size()));
    return static_cast<std::uint32_t>(n);
  }
  std::uint32_t model_lineage(std::uint32_t lineage, const recorded_request& r) const {
    return lineage + static_cast<std::uint32_t>(std::max(r.model, 0)) * t_.lineages;
  }

  const recorded_trace& t_;
  const recorded_session& s_;
  const session_shaping& sh_;
  session_script sc_;
  // Lineages: the trace's hash-id lineages are shared by its sessions; conversations (without
  // hash ids) and the policy's new contexts are private lineages after them.
  const std::uint32_t shared_;
  std::uint32_t next_private_;
  std::vector<recorded_prefix> conversations_;  // without hash ids: one per model
  std::vector<char> asks_1h_;                   // per model: its last write was a 1-hour one
  const bool windowed_, by_reserve_;
  const double threshold_;
  bool own_context_ = false;        // after a compaction or truncation the prompt is ours, not the recording's
  std::uint32_t own_lineage_ = 0;
  std::int64_t removed_ = 0;        // recorded prompt tokens the policy's compactions dropped
  std::int64_t base_ = 0;           // system prompt and task kept by a compaction
  std::int32_t since_compaction_ = 0;
  std::int64_t last_context_ = 0;   // prompt + output of the conversation's last request, as replayed
  std::int32_t compactions_ = 0, truncations_ = 0;
};

session_script shape_session(const recorded_trace& t, const recorded_session& s, const session_shaping& sh,
                             std::int32_t& compactions, std::int32_t& truncations) {
  return session_shaper(t, s, sh).shape(compactions, truncations);
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
  const auto origins = origins_of(traces);
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    const auto& t = traces[ti];
    refuse_totals_only(t);
    const double origin = origins[ti];
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

} // namespace loopcast
