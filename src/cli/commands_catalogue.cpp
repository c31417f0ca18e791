// `loopcast presets [show NAME]`, `prices import FILE`, `limits infer FILE...`: the catalogue of targets,
// prices and limits.
#include "cli/cli.hpp"
#include "statusline/statusline.hpp"
#include "util/text.hpp"

#include "loopcast/errors.hpp"
#include "loopcast/files.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/limits_inference.hpp"
#include "loopcast/plan_fit.hpp"
#include "loopcast/report/logs.hpp"
#include "loopcast/report/plans.hpp"
#include "loopcast/price_lists.hpp"
#include "loopcast/report.hpp"
#include "loopcast/trace.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include <fstream>
#include <iostream>
#include <sstream>

namespace loopcast::cli {

namespace {

std::optional<preset_kind> kind_named(const std::string& k) {
  for (auto v : {preset_kind::target, preset_kind::client, preset_kind::workload, preset_kind::scenario})
    if (to_string(v) == k) return v;
  return std::nullopt;
}

std::string shorten(const std::string& s, std::size_t n) {
  if (s.size() <= n) return s;
  std::size_t cut = n - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  return s.substr(0, cut) + "…";
}

int list_presets(const globals& g, const std::string& kind, bool as_json) {
  const auto lib = library(g);
  const auto want = kind_named(kind);
  if (as_json) {
    auto arr = nlohmann::ordered_json::array();
    for (const auto& e : lib.entries()) {
      if (want && e.kind != *want) continue;
      nlohmann::ordered_json j = {{"kind", to_string(e.kind)}, {"name", e.name}, {"description", e.description}};
      if (e.kind == preset_kind::target) {
        j["provider"] = e.provider;
        j["tier"] = e.tier;
        j["model"] = e.model;
      }
      j["source"] = e.origin.source;
      j["read_on"] = e.origin.read_on;
      j["verified"] = e.origin.verified;
      j["file"] = e.file.string();
      arr.push_back(j);
    }
    std::cout << arr.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return ok;
  }
  fmt::print("presets in {}\n", g.models_dir.empty() ? default_models_dir().string() : g.models_dir);
  if (!want || *want == preset_kind::target) {
    fmt::print("\n{:<44} {:<10} {:<18} {:<26} {:<10} {:<5} {}\n", "target", "provider", "tier", "model", "read on",
               "ver.", "source");
    for (const auto& e : lib.entries())
      if (e.kind == preset_kind::target)
        fmt::print("{:<44} {:<10} {:<18} {:<26} {:<10} {:<5} {}\n", e.name, e.provider, e.tier, e.model, e.origin.read_on,
                   e.origin.verified ? "yes" : "no", shorten(e.origin.source, 60));
  }
  for (auto k : {preset_kind::client, preset_kind::workload, preset_kind::scenario}) {
    if (want && *want != k) continue;
    fmt::print("\n{:<28} {}\n", to_string(k), "description");
    for (const auto& e : lib.entries())
      if (e.kind == k) fmt::print("{:<28} {}\n", e.name, e.description);
  }
  fmt::print("\n`loopcast presets show NAME` prints one, with the presets it names inlined.\n");
  return ok;
}

int show_preset(const globals& g, const std::string& name, const std::string& kind) {
  const auto lib = library(g);
  const auto want = kind_named(kind);
  std::vector<const preset_entry*> hits;
  for (const auto& e : lib.entries())
    if (e.name == name && (!want || e.kind == *want)) hits.push_back(&e);
  if (hits.empty()) {
    if (want) (void)lib.find(*want, name);  // the usual "no … preset named …" with the known names
    throw config_error(g.models_dir.empty() ? default_models_dir().string() : g.models_dir, "",
                       fmt::format("no preset named \"{}\" (`loopcast presets` lists them)", name));
  }
  if (hits.size() > 1)
    throw std::invalid_argument(fmt::format("\"{}\" names a {} and a {} preset: add --kind", name, to_string(hits[0]->kind),
                                            to_string(hits[1]->kind)));
  const auto file = hits[0]->file.string();
  std::cout << resolved_preset_json(read_text_file(file), file, lib) << "\n";
  return ok;
}

struct price_import_args {
  std::string file, format = "auto";
  std::vector<std::string> models;
  bool as_json = false, all_modes = false;
  std::string base, output, name;  // --base TARGET: write a target preset
};

// --base: the base target with the one chosen model's prices, to -o FILE (or stdout).
int write_priced_target(const globals& g, const price_import_args& a, const price_list& list) {
  if (list.models.size() != 1)
    throw std::invalid_argument(fmt::format("--base writes one target: give --model ID (the list has {} models)",
                                            list.models.size()));
  const auto& m = list.models[0];
  const auto lib = library(g);
  std::error_code ec;
  const std::string base_file = a.base.ends_with(".json") && std::filesystem::is_regular_file(a.base, ec)
                                    ? a.base
                                    : lib.find(preset_kind::target, a.base).string();
  std::string name = a.name;
  if (name.empty()) name = a.output.empty() ? fmt::format("{}-{}", a.base, normalize_model_name(m.id))
                                            : std::filesystem::path(a.output).stem().string();
  const auto text = target_with_prices(resolved_preset_json(read_text_file(base_file), base_file, lib), base_file, m,
                                       a.file, name) + "\n";
  // What is written loads as a target; if it does not, the list's prices are to blame, not the output.
  try {
    (void)parse_target(text, "the target made of " + m.id);
  } catch (const config_error& e) {
    throw config_error(a.file, "", fmt::format("{}: its prices do not make a valid target: {}", m.id, e.reason()));
  }
  write_output(a.output.empty() ? "-" : a.output, text, with_library_inputs(g, {a.file, base_file}));
  if (a.output.empty() || a.output == "-") return ok;
  fmt::print(stderr, "loopcast: wrote {}: target \"{}\", the limits, cache and speed of {} with the prices of {}\n",
             a.output, name, a.base, m.id);
  return ok;
}

int import_prices(const globals& g, const price_import_args& a) {
  const auto& file = a.file;
  const auto f = parse_name<price_list_format>(a.format).value_or(price_list_format::automatic);
  const auto list = import_price_list(file, f, a.models, a.all_modes);
  const bool as_json = a.as_json;
  // Two kinds of warning come by the hundred in real lists: each is summarised in one line (the
  // JSON keeps every warning); the rest are printed one by one.
  std::vector<std::string> unpriced, free_reads;
  for (const auto& w : list.warnings) {
    if (w.message.find("listed without token prices") != std::string::npos) unpriced.push_back(w.model);
    else if (w.message.find("cache reads priced at $0") != std::string::npos) free_reads.push_back(w.model);
    else fmt::print(stderr, "loopcast: warning: {}: {}: {}: {}\n", file, w.model, w.field, w.message);
  }
  auto some = [](const std::vector<std::string>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size() && i < 6; ++i) out += (i ? ", " : "") + v[i];
    return v.size() > 6 ? out + fmt::format(", … {} more", v.size() - 6) : out;
  };
  if (!free_reads.empty())
    fmt::print(stderr, "loopcast: warning: {}: {} model{} price cache reads at $0 while input is not (probably missing "
                       "prices; a replay would read their cache for free): {}\n",
               file, free_reads.size(), free_reads.size() == 1 ? "" : "s", some(free_reads));
  if (!unpriced.empty())
    fmt::print(stderr, "loopcast: {}: {} model{} listed without token prices, not priced: {}\n", file, unpriced.size(),
               unpriced.size() == 1 ? "" : "s", some(unpriced));
  if (!list.skipped_modes.empty()) {
    std::vector<std::pair<std::string, std::size_t>> modes(list.skipped_modes.begin(), list.skipped_modes.end());
    std::sort(modes.begin(), modes.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    std::size_t n = 0;
    std::string parts;
    for (const auto& [mode, count] : modes) {
      n += count;
      parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", mode, count);
    }
    fmt::print(stderr, "loopcast: {}: {} entries of other modes left out ({}); --all keeps them\n", file, n, parts);
  }
  if (!a.base.empty()) return write_priced_target(g, a, list);
  if (as_json) {
    std::cout << price_list_to_json(list) << "\n";
    return ok;
  }
  fmt::print("{}: {} price list, {} model{} (USD per million tokens), {} warning{}\n\n", file, to_string(list.format),
             list.models.size(), list.models.size() == 1 ? "" : "s", list.warnings.size(), list.warnings.size() == 1 ? "" : "s");
  fmt::print("{:<40} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>7} {:>9}  {}\n", "model", "input", "read", "write5m", "write1h",
             "output", "reasoning", "batch", "context", "tiers");
  for (const auto& m : list.models) {
    const auto& c = m.prices.usd_per_million;
    std::string tiers;
    for (const auto& t : m.prices.long_context)
      tiers += fmt::format("{}>{}K: {:g}/{:g}", tiers.empty() ? "" : "; ", t.above_prompt_tokens / 1000, t.usd_per_million.input,
                           t.usd_per_million.output);
    for (const auto& [name, v] : m.variants)
      tiers += fmt::format("{}{}: {:g}/{:g}", tiers.empty() ? "" : "; ", name, v.usd_per_million.input, v.usd_per_million.output);
    fmt::print("{:<40} {:>8.4g} {:>8.4g} {:>8.4g} {:>8.4g} {:>8.4g} {:>9.4g} {:>7} {:>9}  {}\n", shorten(m.id, 40), c.input,
               c.cache_read, c.cache_write_5m, c.cache_write_1h, c.output, c.reasoning,
               m.prices.batch_discount > 0 ? fmt::format("-{:.0f}%", 100 * m.prices.batch_discount) : std::string("-"),
               m.context_window_tokens > 0 ? fmt::format("{}", m.context_window_tokens) : std::string("-"), tiers);
  }
  fmt::print("\n`--json` gives each model's \"prices\" object, ready for a target preset (docs/presets.md).\n");
  return ok;
}

int infer_limits_cmd(const std::vector<std::string>& files, bool as_json) {
  const auto e = infer_limits_from_files(files);
  const auto& r = e.inferred;
  if (as_json) {
    std::cout << limits_to_json(e) << "\n";
    return ok;
  }
  fmt::print("{} header snapshot{} ({}); {} 429 message{}\n", e.snapshots, e.snapshots == 1 ? "" : "s", r.provider,
             e.messages.size(), e.messages.size() == 1 ? "" : "s");
  for (const auto& b : r.buckets)
    fmt::print("  {:<18} {:>12g} per {:g} s  ({}): {}\n", b.config.name, b.config.limit, b.config.period_s, b.header, b.evidence);
  for (const auto& m : e.messages) {
    if (!m.checkable)
      fmt::print("  429 {}: a limit of {:g} {} per {:g} s (the message states the limit only: nothing to check)\n",
                 m.source, m.limit, m.unit, m.period_s);
    else
      fmt::print("  429 {}: limit {:g}, used {:g}, requested {:g} {} per {:g} s: the bucket law gives {:.3f} s, the "
                 "message says {:.3f} s: {}\n", m.source, m.limit, m.used, m.requested, m.unit, m.period_s,
                 m.predicted_wait_s, m.stated_wait_s, m.consistent ? "consistent (a continuous bucket)" : "NOT consistent");
  }
  for (const auto& n : r.notes) fmt::print("  note: {}\n", n);
  if (!r.buckets.empty())
    fmt::print("\nThe \"limits\" of a target preset:\n{}\n", limits_fragment_json(r));
  return ok;
}

struct plan_args {
  log_args logs;
  std::string statusline, account;
  std::vector<std::string> leads{"30m", "60m", "120m"};
  std::int32_t draws = 400;
  bool as_json = false;
};

// The logs and statusline snapshots a plan command reads, with the summary of what was read on
// standard error (the answer goes first on standard output).
std::pair<logs_read, std::vector<statusline_snapshot>> plan_inputs(const plan_args& a, bool defaults) {
  std::vector<statusline_snapshot> snaps;
  std::size_t skipped = 0;
  if (!a.statusline.empty()) snaps = read_statusline_log(a.statusline, &skipped);
  logs_read read;
  if (!a.logs.logs.empty() || !a.logs.machines.empty() || defaults) read = read_logs(a.logs, defaults);
  for (const auto& p : read.places) fmt::print(stderr, "reading {}\n", p);
  if (skipped > 0)
    fmt::print(stderr, "note: {}: {} line{} that {} no statusline snapshot, skipped\n", a.statusline, skipped,
               skipped == 1 ? "" : "s", skipped == 1 ? "is" : "are");
  return {std::move(read), std::move(snaps)};
}

void print_read_summary(const logs_read& read) {
  std::cout.flush();  // the answer first, the summary of what was read after it
  std::ostringstream summary;
  write_logs_summary(summary, read.traces, read.listing);
  const auto text = summary.str();
  fmt::print(stderr, "{}", text.empty() ? text : text.substr(1));
}

int infer_plan_cmd(const plan_args& a) {
  const auto [read, snaps] = plan_inputs(a, false);
  const auto& traces = read.traces;
  plan_fit_options o;
  o.account = a.account;
  const auto fit = fit_plan(traces, snaps, o);
  if (a.as_json) {
    auto bounds = infer_plan_caps(traces, snaps, a.statusline);
    std::cout << "{\"fit\": " << plan_fit_to_json(fit, -1) << ", \"bounds\": " << plan_caps_to_json(bounds, -1) << "}\n";
    return ok;
  }
  std::cout << plan_fit_text(fit, a.logs.verbose);
  if (a.logs.verbose) {
    const auto r = infer_plan_caps(traces, snaps, a.statusline);
    fmt::print("\nBounds consistent with every observation (all accounts pooled; docs/plans.md, \"Bounds\"):\n");
    for (const auto& c : r.caps) {
      const auto range = !c.consistent ? std::string("no cap fits every observation (usage the logs miss, or another rule)")
                         : c.low == 0 && std::isinf(c.high) ? std::string("bounds nothing (no usage in these windows)")
                         : std::isinf(c.high) ? fmt::format("above {}", detail::grouped(c.low))
                                              : fmt::format("{} to {}", detail::grouped(c.low), detail::grouped(c.high));
      fmt::print("  {:<9} {:<20} {} ({} observation{})\n", c.window, c.counts, range, c.observations,
                 c.observations == 1 ? "" : "s");
    }
    for (const auto& n : r.notes) fmt::print("  note: {}\n", n);
  } else {
    fmt::print("\n(--verbose: every rule and sample, and the bounds consistent with every observation)\n");
  }
  print_read_summary(read);
  return ok;
}

int backtest_plan_cmd(const plan_args& a) {
  plan_backtest_options o;
  o.account = a.account;
  o.draws = a.draws;
  o.leads_s.clear();
  for (const auto& l : a.leads) {
    const auto s = parse_duration(l);
    if (!s || !(*s > 0)) throw std::invalid_argument(fmt::format("--lead {}: not a duration (30m, 1h, 90m)", l));
    o.leads_s.push_back(*s);
  }
  const auto [read, snaps] = plan_inputs(a, true);
  const auto b = backtest_plan(read.traces, snaps, o);
  if (a.as_json) std::cout << plan_backtest_to_json(b) << "\n";
  else {
    std::cout << plan_backtest_text(b);
    print_read_summary(read);
  }
  return ok;
}

} // namespace

std::vector<command> catalogue_commands(CLI::App& app, const globals& g) {
  struct state {
    std::string kind, name;
    bool as_json = false;
  };
  auto st = std::make_shared<state>();
  std::vector<command> cmds;
  auto* presets = app.add_subcommand("presets", "List the presets (targets with provider, tier, model, source, date)");
  presets->require_subcommand(0, 1);
  presets->add_option("--kind", st->kind, "Only this kind: " + spelling_list<preset_kind>())
      ->check(member_of<preset_kind>());
  presets->add_flag("--json", st->as_json, "Print the list as JSON");
  auto* show = presets->add_subcommand("show", "Print one preset, resolved (the presets it names inlined)");
  show->add_option("name", st->name, "Preset name")->required();
  show->add_option("--kind", st->kind, "Kind, when the name is used by several")
      ->check(member_of<preset_kind>());
  cmds.push_back({show, [st, &g] { return show_preset(g, st->name, st->kind); }});
  cmds.push_back({presets, [st, &g] { return list_presets(g, st->kind, st->as_json); }});

  auto ps = std::make_shared<price_import_args>();
  auto* prices = app.add_subcommand("prices", "Price lists");
  prices->require_subcommand(1);
  auto* imp = prices->add_subcommand("import", "Read LiteLLM's model_prices_and_context_window.json or models.dev's "
                                                "api.json into loopcast prices (nothing is downloaded)");
  imp->add_option("file", ps->file, "The price list (.json)")->required();
  imp->add_option("--format", ps->format, "auto, litellm or models.dev")->capture_default_str()
      ->check(member_of<price_list_format>());
  imp->add_option("--model", ps->models, "Only this model id (LiteLLM key, or provider/model for models.dev); repeatable");
  imp->add_flag("--json", ps->as_json, "Print the prices as JSON");
  imp->add_flag("--all", ps->all_modes, "Keep every LiteLLM entry (by default only chat, completion and responses models)");
  imp->add_option("--base", ps->base, "Write a target preset: this target's limits, cache and speed (a preset name or "
                                      ".json) with the prices of the one --model");
  imp->add_option("-o,--output", ps->output, "With --base: the preset file to write (default: standard output)");
  imp->add_option("--name", ps->name, "With --base: the new target's name (default: the output file's stem)");
  cmds.push_back({imp, [ps, &g] { return import_prices(g, *ps); }});

  struct limit_state {
    std::vector<std::string> files;
    bool as_json = false, logs = false;
  };
  auto ls = std::make_shared<limit_state>();
  auto pa = std::make_shared<plan_args>();
  auto* limits = app.add_subcommand("limits", "Rate limits");
  limits->require_subcommand(1);
  auto* infer = limits->add_subcommand("infer", "Propose buckets from captured rate-limit headers (raw HTTP or JSON, "
                                                  "several snapshots) and check 429 messages against the bucket law; "
                                                  "with --logs, fit a subscription plan's caps from agent logs");
  infer->add_option("files", ls->files, "Header captures and/or logs with 429 messages (with --logs: agent logs)");
  infer->add_flag("--json", ls->as_json, "Print the result as JSON");
  infer->add_flag("--logs", ls->logs,
                  "The files are agent logs (Codex rollouts, Claude Code JSONL): fit a subscription plan's caps per "
                  "account from their walls and measured percentages");
  infer->add_option("--statusline", pa->statusline,
                     "With --logs: a statusline log written by `loopcast statusline` (a Claude plan's percentages)");
  infer->add_option("--account", pa->account, "With --logs: only the accounts whose name contains this");
  infer->add_option("--machine", pa->logs.machines, "With --logs: NAME=DIR, another machine's copied logs (repeatable)");
  infer->add_flag("-v,--verbose", pa->logs.verbose, "With --logs: every rule and sample, the pooled bounds, each file's import");
  cmds.push_back({infer, [ls, pa] {
                    if (!pa->statusline.empty() && !ls->logs)
                      throw std::invalid_argument("--statusline fits a plan's caps: give it with --logs");
                    if (!pa->account.empty() && !ls->logs)
                      throw std::invalid_argument("--account fits a plan's caps: give it with --logs");
                    if (ls->files.empty() && pa->statusline.empty() && pa->logs.machines.empty())
                      throw std::invalid_argument("limits infer: give header captures, or --logs with agent logs");
                    if (!ls->logs) return infer_limits_cmd(ls->files, ls->as_json);
                    pa->logs.logs = ls->files;
                    pa->as_json = ls->as_json;
                    return infer_plan_cmd(*pa);
                  }});
  auto ba = std::make_shared<plan_args>();
  auto* backtest = limits->add_subcommand("backtest", "For each wall and window of measured percentages in the logs, "
                                                       "forecast it from each lead before, using only what came earlier, "
                                                       "and score the forecasts against a baseline (docs/validation.md)");
  add_log_options(backtest, ba->logs, "claude-code, codex", true);
  backtest->add_option("--lead", ba->leads, "Leads before each wall, comma-separated (default 30m,60m,120m)")
      ->delimiter(',');
  backtest->add_option("--statusline", ba->statusline, "A statusline log written by `loopcast statusline`");
  backtest->add_option("--account", ba->account, "Only the accounts whose name contains this");
  backtest->add_option("--draws", ba->draws, "Draws per forecast (default 400)")->check(CLI::Range(10, 100000));
  backtest->add_flag("--json", ba->as_json, "Print the scores as JSON");
  cmds.push_back({backtest, [ba] { return backtest_plan_cmd(*ba); }});

  auto sa = std::make_shared<detail::statusline_call>();
  auto* status = app.add_subcommand("statusline", "Claude Code statusline command: records the plan's percentages "
                                                  "(rate_limits, read on stdin) to a log and prints them (docs/plans.md)");
  status->add_option("--log", sa->log, "Where to append the snapshots (default: $LOOPCAST_STATUSLINE_LOG, else "
                                       "~/.claude/loopcast-statusline.jsonl)");
  status->add_flag("--no-log", sa->no_log, "Print the line only");
  cmds.push_back({status, [sa] { return detail::run_statusline(*sa, 0, 1, 2); }});
  return cmds;
}

} // namespace loopcast::cli
