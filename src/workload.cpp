#include "loopcast/workload.hpp"

#include "loopcast/context.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace loopcast {

namespace {
std::int64_t tokens_of(double x) {
  return x <= 0 || !std::isfinite(x) ? 0 : static_cast<std::int64_t>(std::llround(x));
}
} // namespace

// Lineage 0 is the system prompt (shared by every session of the workload); lineage 1 + e is
// the conversation of compaction epoch e. Each quantity has its own random stream, so changing
// one distribution leaves the others' draws unchanged.
session_script generate_session(const workload& w, std::uint64_t seed) {
  rng g_output(derive_seed(seed, 1)), g_reasoning(derive_seed(seed, 2)),
      g_tool(derive_seed(seed, 3)), g_time(derive_seed(seed, 4)), g_summary(derive_seed(seed, 5));

  session_script s;
  s.source = fmt::format("workload {} seed {}", w.name, seed);
  s.requests.reserve(static_cast<std::size_t>(w.turns) + 8);
  s.runs.reserve(2 * (static_cast<std::size_t>(w.turns) + 8));
  s.shared_lineages = 1;
  std::uint32_t epoch = 1;
  std::int64_t history = w.task_tokens;  // tokens after the system prompt
  std::int32_t turns_in_epoch = 0;
  double delay = 0;

  auto add = [&](std::int64_t out, std::int64_t reasoning, std::int32_t turn, bool compaction) {
    request_spec r;
    r.prompt_tokens = w.system_prompt_tokens + history;
    r.output_tokens = out;
    r.reasoning_tokens = reasoning;
    r.max_tokens = w.max_tokens;
    r.delay_before_s = delay;
    r.runs_begin = static_cast<std::uint32_t>(s.runs.size());
    r.runs_count = 2;
    r.turn = turn;
    r.compaction = compaction;
    s.runs.push_back({0, w.system_prompt_tokens});
    s.runs.push_back({epoch, r.prompt_tokens});
    s.requests.push_back(r);
  };

  for (std::int32_t turn = 1; turn <= w.turns; ++turn) {
    std::int64_t out = std::min(tokens_of(sample(w.output_tokens, g_output)), w.max_tokens);
    std::int64_t reasoning =
        std::min(tokens_of(sample(w.reasoning_tokens, g_reasoning)), w.max_tokens - out);
    const double front =
        1.0 + (w.front_load_factor - 1.0) * std::exp(-(turn - 1) / w.front_load_decay_turns);
    const std::int64_t tool = tokens_of(sample(w.tool_result_tokens, g_tool) * front);
    const double ramp =
        1.0 + (w.tool_time_ramp_factor - 1.0) * (1.0 - std::exp(-(turn - 1) / w.tool_time_ramp_turns));
    const double tool_time = std::max(0.0, sample(w.tool_time_s, g_time) * ramp);

    if (w.compaction.enabled && turns_in_epoch > 0 &&
        needs_compaction(w.system_prompt_tokens + history, w.context_window_tokens, w.compaction.at_fraction)) {
      const std::int64_t summary =
          std::min(tokens_of(sample(w.compaction.summary_tokens, g_summary)), w.max_tokens);
      add(summary, 0, turn, true);
      ++epoch;
      history = w.task_tokens + summary;
      turns_in_epoch = 0;
      delay = 0;
    }
    add(out, reasoning, turn, false);
    history += out + (w.reasoning_in_context ? reasoning : 0) + tool;
    ++turns_in_epoch;
    delay = tool_time;
  }
  s.lineages = epoch + 1;
  return s;
}

} // namespace loopcast
