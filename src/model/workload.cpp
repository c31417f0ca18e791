#include "loopcast/workload.hpp"

#include "loopcast/context.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <optional>

namespace loopcast {

namespace {
// x rounded half away from zero, as std::llround (0 for x <= 0, NaN or infinite), inline: a whole
// session is drawn per Monte Carlo seed, four of these a turn.
std::int64_t tokens_of(double x) {
  if (!(x > 0) || !std::isfinite(x)) return 0;
  if (!(x < 0x1p63)) return static_cast<std::int64_t>(std::llround(x));  // (past int64: llround's answer)
  const auto whole = static_cast<std::int64_t>(x);   // truncated
  const double fraction = x - static_cast<double>(whole);  // exact (x below 2^53 or a whole number)
  return whole + (fraction >= 0.5 ? 1 : 0);
}
} // namespace

std::int32_t turns_cap(const workload& w) {
  constexpr double limit = 1'000'000;
  if (w.max_turns > 0) return static_cast<std::int32_t>(std::min<double>(w.max_turns, limit));
  double top = upper_bound(w.turns);
  if (!std::isfinite(top)) top = quantile(w.turns, 0.999);
  return static_cast<std::int32_t>(std::clamp(std::round(top), 1.0, limit));
}

// Lineage 0 is the system prompt (shared by every session of the workload); the conversation
// starts lineage 1, and each compaction or cache break starts the next one. Each quantity has its
// own random stream, so changing one distribution leaves the others' draws unchanged (and a
// workload without the fitted features draws exactly what it did before they existed).
session_script generate_session(const workload& w, std::uint64_t seed) { return session_generator(w)(seed); }

session_generator::session_generator(const workload& w, std::int32_t tabulated_turns)
    : w_(&w), turns_cap_(turns_cap(w)), output_(w.output_tokens), reasoning_(w.reasoning_tokens), tool_(w.tool_result_tokens),
      tool_time_(w.tool_time_s), summary_(w.compaction.summary_tokens) {
  bands_.reserve(w.tool_result_bands.size());
  for (const auto& b : w.tool_result_bands) bands_.emplace_back(b.tokens);
  const auto n = static_cast<std::size_t>(std::max(0, std::min(tabulated_turns, turns_cap_)));
  front_.reserve(n);
  ramp_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    front_.push_back(front(static_cast<std::int32_t>(i) + 1));
    ramp_.push_back(ramp(static_cast<std::int32_t>(i) + 1));
  }
}

double session_generator::front(std::int32_t turn) const {
  const auto i = static_cast<std::size_t>(turn - 1);
  if (i < front_.size()) return front_[i];
  return 1.0 + (w_->front_load_factor - 1.0) * std::exp(-(turn - 1) / w_->front_load_decay_turns);
}

double session_generator::ramp(std::int32_t turn) const {
  const auto i = static_cast<std::size_t>(turn - 1);
  if (i < ramp_.size()) return ramp_[i];
  return 1.0 + (w_->tool_time_ramp_factor - 1.0) * (1.0 - std::exp(-(turn - 1) / w_->tool_time_ramp_turns));
}

namespace {
// What a session draws once: its turns, its tool-result scale (Gaussian copula with the turns),
// its task and where it compacts.
struct session_draws {
  std::int32_t turns = 0;
  double scale = 1;
  std::int64_t task = 0;
  double compact_at = 0;
};

session_draws draw_shape(const workload& w, std::int64_t cap, std::optional<rng>& g_session, std::optional<rng>& g_task,
                         std::optional<rng>& g_window) {
  session_draws shape;
  double z = 0;  // the session's normal score (its turns' quantile is Φ(z))
  if (const auto* f = std::get_if<fixed_dist>(&w.turns)) {
    shape.turns = static_cast<std::int32_t>(std::clamp<std::int64_t>(std::llround(f->value), 1, cap));
  } else {
    z = standard_normal(*g_session);
    shape.turns = static_cast<std::int32_t>(
        std::clamp<std::int64_t>(std::llround(quantile(w.turns, 0.5 * std::erfc(-z / std::sqrt(2.0)))), 1, cap));
  }
  if (w.session_scale.sigma > 0) {
    const double rho = w.session_scale.turns_correlation;
    shape.scale = std::exp(w.session_scale.sigma * (rho * z + std::sqrt(1 - rho * rho) * standard_normal(*g_session)));
  }
  // A session compacts at at_fraction of the window, or late (late_fraction) when it runs in a
  // larger window: drawn with late_share, and always when its task alone passes half the usual
  // threshold (a session resumed into a large window).
  bool late = g_window && uniform01(*g_window) < w.compaction.late_share;
  const double rho_task = w.task_turns_correlation;
  std::int64_t task_draw = 0;
  if (const auto* f = std::get_if<fixed_dist>(&w.task_tokens)) task_draw = tokens_of(f->value);
  else if (rho_task == 0) task_draw = tokens_of(sample(w.task_tokens, *g_task));
  else
    task_draw = tokens_of(quantile(
        w.task_tokens,
        0.5 * std::erfc(-(rho_task * z + std::sqrt(1 - rho_task * rho_task) * standard_normal(*g_task)) / std::sqrt(2.0))));
  if (w.compaction.late_share > 0 &&
      static_cast<double>(w.system_prompt_tokens + task_draw) >
          0.5 * w.compaction.at_fraction * static_cast<double>(w.context_window_tokens))
    late = true;
  shape.compact_at = late ? std::max(w.compaction.at_fraction, w.compaction.late_fraction) : w.compaction.at_fraction;
  // The task is capped so that the first prompt stays under half the compaction threshold (a
  // compaction keeps the task: a larger one would compact again at once), or under the window.
  const double first_limit = w.compaction.enabled
                                 ? std::floor(0.5 * shape.compact_at * static_cast<double>(w.context_window_tokens))
                                 : static_cast<double>(w.context_window_tokens) - 1;
  shape.task = std::min(task_draw, std::max<std::int64_t>(0, static_cast<std::int64_t>(first_limit) - w.system_prompt_tokens));
  return shape;
}

// A cache break: the prompt keeps a prefix of the previous one (never less than the system
// prompt); the rest is written anew under a lineage of its own. A prompt keeps at most
// max_prefix_runs runs: past that, a break keeps only the system prompt (so a session's runs stay
// linear in its requests, whatever the preset says). Returns whether the stack only grew: every run
// kept, the last one cut short.
bool break_cache(const workload& w, rng& g_break, std::vector<prefix_run>& stack, std::uint32_t& next_lineage) {
  constexpr std::size_t max_prefix_runs = 32;
  const double kept_share = std::clamp(sample(w.cache_breaks.kept_fraction, g_break), 0.0, 1.0);
  const std::int64_t prev = stack.back().end_tokens;
  const std::int64_t kept = stack.size() >= max_prefix_runs
                                ? w.system_prompt_tokens
                                : std::max(w.system_prompt_tokens, tokens_of(kept_share * static_cast<double>(prev)));
  const std::size_t before = stack.size();
  while (stack.size() > 1 && stack[stack.size() - 2].end_tokens >= kept) stack.pop_back();
  const bool grew = stack.size() == before;
  stack.back().end_tokens = kept;
  stack.push_back({next_lineage++, 0});
  return grew;
}
} // namespace

session_script session_generator::operator()(std::uint64_t seed) const {
  session_script s;
  (*this)(seed, s);
  return s;
}

void session_generator::operator()(std::uint64_t seed, session_script& s) const {
  const workload& w = *w_;
  rng g_output(derive_seed(seed, 1)), g_reasoning(derive_seed(seed, 2)),
      g_tool(derive_seed(seed, 3)), g_time(derive_seed(seed, 4)), g_summary(derive_seed(seed, 5));
  rng::seed_ahead(std::array{&g_output, &g_reasoning, &g_tool, &g_time});  // every turn draws from each
  // The fitted features' streams are made only when the workload uses them (each holds 2.5 KB of
  // state; Monte Carlo generates a session per seed).
  std::optional<rng> g_session, g_break, g_task, g_window;
  if (!std::holds_alternative<fixed_dist>(w.turns) || w.session_scale.sigma > 0) g_session.emplace(derive_seed(seed, 6));
  if (w.cache_breaks.probability > 0 || w.cache_breaks.after_compaction_probability > 0)
    g_break.emplace(derive_seed(seed, 7));
  if (!std::holds_alternative<fixed_dist>(w.task_tokens)) g_task.emplace(derive_seed(seed, 8));
  if (w.compaction.late_share > 0) g_window.emplace(derive_seed(seed, 9));

  const auto [turns, scale, task, compact_at] = draw_shape(w, turns_cap_, g_session, g_task, g_window);

  s.source.clear();
  fmt::format_to(std::back_inserter(s.source), "workload {} seed {}", w.name, seed);
  // The requests and runs are written into this thread's scratch, then copied into the script, which
  // so holds no spare room (a fleet holds many scripts; a script reused for another seed keeps its
  // storage when it is large enough).
  thread_local std::vector<request_spec> requests;
  thread_local std::vector<prefix_run> runs;
  requests.clear();
  runs.clear();
  s.shared_lineages = 1;
  std::uint32_t next_lineage = 2;
  // The current prompt's runs: the system prompt, then the conversation's lineages; the last run
  // is open and ends at each request's prompt.
  std::vector<prefix_run> stack{{0, w.system_prompt_tokens}, {1, 0}};
  // The requests share copies of the stack (session.hpp, open_last_run: a request's last run ends at
  // its prompt, whatever its stored end). The copy being written is at the end of `runs`, from
  // copy_begin. Within a stretch without a break or a compaction the stack only changes its last
  // end; a break that keeps every run cuts the last one short (its stored end, which the requests
  // before read as their prompts) and appends a run; a compaction, or a break that drops runs,
  // starts a new copy.
  enum class change : std::uint8_t { none, grew, moved };
  change stack_change = change::moved;
  std::size_t copy_begin = 0;
  std::int64_t history = task;  // tokens after the system prompt
  std::int32_t turns_in_epoch = 0;
  double delay = 0;
  double break_probability = w.cache_breaks.probability;  // until the first compaction

  auto add = [&](std::int64_t out, std::int64_t reasoning, std::int32_t turn, bool compaction) {
    request_spec r;
    r.prompt_tokens = w.system_prompt_tokens + history;
    r.output_tokens = out;
    r.reasoning_tokens = reasoning;
    r.max_tokens = w.max_tokens;
    r.delay_before_s = delay;
    r.turn = turn;
    r.compaction = compaction;
    stack.back().end_tokens = r.prompt_tokens;
    switch (stack_change) {
    case change::moved:
      copy_begin = runs.size();
      for (const auto& run : stack) runs.push_back(run);  // (a few runs: no call to memmove)
      break;
    case change::grew:
      runs.back().end_tokens = stack[stack.size() - 2].end_tokens;
      runs.push_back(stack.back());
      break;
    case change::none: runs.back().end_tokens = r.prompt_tokens; break;
    }
    stack_change = change::none;
    r.runs_begin = static_cast<std::uint32_t>(copy_begin);
    r.runs_count = static_cast<std::uint32_t>(stack.size());
    requests.push_back(r);
  };

  for (std::int32_t turn = 1; turn <= turns; ++turn) {
    std::int64_t out = std::min(tokens_of(output_(g_output)), w.max_tokens);
    std::int64_t reasoning =
        std::min(tokens_of(reasoning_(g_reasoning)), w.max_tokens - out);
    double tool_draw = 0;
    if (w.tool_result_bands.empty()) {
      tool_draw = tool_(g_tool) * front(turn);
    } else {
      auto band = std::upper_bound(w.tool_result_bands.begin(), w.tool_result_bands.end(), turn,
                                   [](std::int32_t t, const turn_band& b) { return t < b.from_turn; });
      if (band != w.tool_result_bands.begin()) --band;
      tool_draw = bands_[static_cast<std::size_t>(band - w.tool_result_bands.begin())](g_tool);
    }
    const std::int64_t tool = tokens_of(tool_draw * scale);
    const double tool_time = std::max(0.0, tool_time_(g_time) * ramp(turn));

    if (w.compaction.enabled && turns_in_epoch > 0 &&
        needs_compaction(w.system_prompt_tokens + history, w.context_window_tokens, compact_at)) {
      const std::int64_t summary =
          std::min(tokens_of(summary_(g_summary)), w.max_tokens);
      add(summary, 0, turn, true);
      stack.resize(1);
      stack.push_back({next_lineage++, 0});
      stack_change = change::moved;
      history = task + summary;
      turns_in_epoch = 0;
      delay = 0;
      if (w.cache_breaks.after_compaction_probability >= 0) break_probability = w.cache_breaks.after_compaction_probability;
    } else if (g_break && turn > 1 && uniform01(*g_break) < break_probability) {
      stack_change = break_cache(w, *g_break, stack, next_lineage) ? change::grew : change::moved;
    }
    add(out, reasoning, turn, false);
    history += (w.output_in_context ? out : 0) + (w.reasoning_in_context ? reasoning : 0) + tool;
    ++turns_in_epoch;
    delay = tool_time;
  }
  s.requests.assign(requests.begin(), requests.end());
  s.runs.assign(runs.begin(), runs.end());
  s.open_last_run = true;
  s.lineages = next_lineage;
}

} // namespace loopcast
