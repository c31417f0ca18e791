// Workload presets: the synthetic session generator's parameters (docs/presets.md).
#include "loopcast/presets.hpp"

#include "presets/readers.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace loopcast::detail::preset {

namespace {

// "tool_result_bands": [{from_turn, tokens}, …] in rising turn order, or "tool_result_tokens" and
// "front_load".
void read_tool_results(const node& root, workload& w) {
  if (auto bands = root.find("tool_result_bands")) {
    std::int32_t prev = 0;
    for (const auto& b : bands->array(1)) {
      b.expect_keys({"from_turn", "tokens"});
      turn_band tb;
      tb.from_turn = static_cast<std::int32_t>(b.at("from_turn").integer(1, max_turns));
      if (prev == 0 && tb.from_turn != 1) b.at("from_turn").fail("the first band must start at turn 1");
      if (prev != 0 && tb.from_turn <= prev)
        b.at("from_turn").fail(fmt::format("expected bands in rising turn order, found {} after {}", tb.from_turn, prev));
      prev = tb.from_turn;
      tb.tokens = read_distribution(b.at("tokens"));
      w.tool_result_bands.push_back(std::move(tb));
    }
    if (root.has("tool_result_tokens") || root.has("front_load"))
      root.at("tool_result_bands").fail("give either \"tool_result_bands\" or \"tool_result_tokens\" and \"front_load\", not both");
  } else {
    w.tool_result_tokens = read_distribution(root.at("tool_result_tokens"));
    const auto fl = root.at("front_load");
    fl.expect_keys({"factor", "decay_turns"});
    w.front_load_factor = fl.at("factor").number_in(0, 1e3);
    w.front_load_decay_turns = fl.at("decay_turns").number_in(1e-3, 1e6);
  }
}

void read_cache_breaks(const node& cb, workload& w) {
  cb.expect_keys({"probability", "kept_fraction", "after_compaction_probability"});
  w.cache_breaks.probability = cb.at("probability").number_in(0, 1);
  if (auto a = cb.find("after_compaction_probability")) w.cache_breaks.after_compaction_probability = a->number_in(0, 1);
  w.cache_breaks.kept_fraction = read_distribution(cb.at("kept_fraction"));
  if (upper_bound(w.cache_breaks.kept_fraction) > 1)
    cb.at("kept_fraction").fail(fmt::format("expected fractions in [0, 1], found values up to {}",
                                            upper_bound(w.cache_breaks.kept_fraction)));
}

void read_compaction(const node& c, workload& w) {
  c.expect_keys({"enabled", "at_fraction", "summary_tokens", "late_share", "late_fraction"});
  w.compaction.enabled = c.at("enabled").boolean();
  if (w.compaction.enabled) {
    w.compaction.at_fraction = c.at("at_fraction").number_in(0.01, 1);
    w.compaction.summary_tokens = read_distribution(c.at("summary_tokens"));
    if (auto l = c.find("late_share")) w.compaction.late_share = l->number_in(0, 1);
    if (auto l = c.find("late_fraction")) w.compaction.late_fraction = l->number_in(0.01, 1);
  } else if (c.has("at_fraction") || c.has("summary_tokens") || c.has("late_share") || c.has("late_fraction")) {
    c.fail("at_fraction, summary_tokens, late_share and late_fraction apply only when compaction is enabled");
  }
}

task_contract read_contract(const node& k) {
  k.expect_keys({"task", "ttft_p50_max_s", "ttft_p90_max_s", "effective_tps_p50_min", "wall_per_task_max_s",
                 "usd_per_task_max", "stall_share_max", "must_complete", "sessions", "stagger_s"});
  task_contract tc;
  tc.task = k.at("task").string();
  auto opt = [&](const char* key, double lo, double hi) -> std::optional<double> {
    if (!k.has(key)) return std::nullopt;
    return k.at(key).number_in(lo, hi);
  };
  tc.ttft_p50_max_s = opt("ttft_p50_max_s", 1e-3, 3600);
  tc.ttft_p90_max_s = opt("ttft_p90_max_s", 1e-3, 3600);
  tc.effective_tps_p50_min = opt("effective_tps_p50_min", 0, 1e6);
  tc.wall_per_task_max_s = opt("wall_per_task_max_s", 1e-3, 1e7);
  tc.usd_per_task_max = opt("usd_per_task_max", 0, 1e6);
  tc.stall_share_max = opt("stall_share_max", 0, 1);
  if (k.has("must_complete")) tc.must_complete = k.at("must_complete").boolean();
  if (k.has("sessions")) tc.sessions = static_cast<std::int32_t>(k.at("sessions").integer(1, 100000));
  if (k.has("stagger_s")) tc.stagger_s = k.at("stagger_s").number_in(0, 1e6);
  return tc;
}

// The checks across a workload's parts, once each part was read: the smallest task fits the window
// (larger draws are capped at the compaction threshold), and compaction does not trigger before the
// first turn.
void check_workload(const node& root, const workload& w) {
  const auto task_min = static_cast<std::int64_t>(std::llround(quantile(w.task_tokens, 0)));
  if (w.system_prompt_tokens + task_min >= w.context_window_tokens)
    root.at("context_window_tokens")
        .fail(fmt::format("the window ({} tokens) does not hold the system prompt and task ({} tokens)",
                          w.context_window_tokens, w.system_prompt_tokens + task_min));
  const double threshold = w.compaction.at_fraction * static_cast<double>(w.context_window_tokens);
  if (w.compaction.enabled && static_cast<double>(w.system_prompt_tokens + task_min) >= threshold)
    root.at("compaction").at("at_fraction").fail(fmt::format("compaction at {} tokens would trigger before the first turn "
                                                             "(system prompt and task are {} tokens)",
                                                             threshold, w.system_prompt_tokens + task_min));
}

} // namespace

workload read_workload(const node& root) {
  check_kind(root, preset_kind::workload);
  // Each part is read even after another failed; the checks across parts wait until all were read.
  problems found(root.file());
  found.gather([&] {
    root.expect_keys({LOOPCAST_HEADER_KEYS, "system_prompt_tokens", "task_tokens", "turns", "max_turns", "output_tokens",
                      "reasoning_tokens", "tool_result_tokens", "tool_result_bands", "session_scale", "task_turns_correlation",
                      "cache_breaks", "front_load", "tool_time_s", "tool_time_ramp", "reasoning_in_context",
                      "output_in_context", "max_tokens", "context_window_tokens", "compaction", "contract", "calibration",
                      "fitted_on"});
  });
  workload w;
  found.gather([&] { w.name = read_name(root); });
  found.gather([&] { (void)read_provenance(root); });
  found.gather([&] { w.system_prompt_tokens = root.at("system_prompt_tokens").integer(0, max_tokens_value); });
  // A number is a fixed value; an object, a distribution.
  auto count_or_distribution = [](const node& n, std::int64_t lo, std::int64_t hi) -> distribution {
    if (n.is_object()) return read_distribution(n);
    return fixed_dist{static_cast<double>(n.integer(lo, hi))};
  };
  found.gather([&] { w.task_tokens = count_or_distribution(root.at("task_tokens"), 0, max_tokens_value); });
  found.gather([&] { w.turns = count_or_distribution(root.at("turns"), 1, max_turns); });
  found.gather([&] {
    if (auto m = root.find("max_turns")) w.max_turns = static_cast<std::int32_t>(m->integer(1, max_turns));
  });
  found.gather([&] { w.output_tokens = read_distribution(root.at("output_tokens")); });
  found.gather([&] { w.reasoning_tokens = read_distribution(root.at("reasoning_tokens")); });
  found.gather([&] { read_tool_results(root, w); });
  found.gather([&] {
    if (auto sc = root.find("session_scale")) {
      sc->expect_keys({"sigma", "turns_correlation"});
      w.session_scale.sigma = sc->at("sigma").number_in(0, 5);
      w.session_scale.turns_correlation = sc->at("turns_correlation").number_in(-1, 1);
    }
  });
  found.gather([&] {
    if (auto r = root.find("task_turns_correlation")) w.task_turns_correlation = r->number_in(-1, 1);
  });
  found.gather([&] {
    if (auto cb = root.find("cache_breaks")) read_cache_breaks(*cb, w);
  });
  found.gather([&] {
    if (auto f = root.find("fitted_on"); f && !f->is_object()) f->fail("expected an object describing the fitted logs");
  });
  found.gather([&] { w.tool_time_s = read_distribution(root.at("tool_time_s")); });
  found.gather([&] {
    const auto ramp = root.at("tool_time_ramp");
    ramp.expect_keys({"factor", "ramp_turns"});
    w.tool_time_ramp_factor = ramp.at("factor").number_in(0, 1e3);
    w.tool_time_ramp_turns = ramp.at("ramp_turns").number_in(1e-3, 1e6);
  });
  found.gather([&] { w.reasoning_in_context = root.at("reasoning_in_context").boolean(); });
  found.gather([&] {
    if (auto o = root.find("output_in_context")) w.output_in_context = o->boolean();
  });
  found.gather([&] { w.max_tokens = root.at("max_tokens").integer(1, max_tokens_value); });
  found.gather([&] { w.context_window_tokens = root.at("context_window_tokens").integer(1, max_tokens_value); });
  found.gather([&] { read_compaction(root.at("compaction"), w); });
  found.gather([&] {
    if (auto k = root.find("contract")) w.contract = read_contract(*k);
  });
  found.gather([&] {
    if (auto cal = root.find("calibration")) (void)read_string_list(*cal);
  });
  found.throw_if_any();
  check_workload(root, w);
  return w;
}

// Days since 1970-01-01 of a civil date (the proleptic Gregorian calendar).

} // namespace loopcast::detail::preset
