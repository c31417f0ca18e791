// A plan's caps learnt robustly from real accounts (plan_fit.hpp, docs/plans.md).
#include "plans/plan_usage.hpp"

#include "loopcast/errors.hpp"
#include "statusline/statusline.hpp"
#include "util/text.hpp"
#include "util/time_zone.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <set>

namespace loopcast {

std::string cap_rule::name() const {
  std::string s = fmt::format("cache reads at {:g}", cache_read);
  if (opus != 1) s += fmt::format(", Opus at {:g}", opus);
  if (haiku != 1) s += fmt::format(", Haiku at {:g}", haiku);
  return s;
}

namespace {

std::string lower_case(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
bool is_opus(const std::string& m) { return lower_case(m).find("opus") != std::string::npos; }
bool is_haiku(const std::string& m) { return lower_case(m).find("haiku") != std::string::npos; }

double counted(const cap_rule& r, const token_counts& t, double output, const std::string& model) {
  const double v = static_cast<double>(t.input) + r.cache_read * static_cast<double>(t.cache_read) +
                   static_cast<double>(t.cache_writes()) + output + static_cast<double>(t.reasoning);
  return v * (is_opus(model) ? r.opus : is_haiku(model) ? r.haiku : 1.0);
}

bool off_plan(request_backend b) {
  return b == request_backend::vertex || b == request_backend::bedrock || b == request_backend::relay ||
         b == request_backend::other_vendor;
}

} // namespace

double detail::median_of(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  const double hi = *mid;
  if (v.size() % 2 == 1) return hi;
  return 0.5 * (hi + *std::max_element(v.begin(), mid));
}

namespace {

std::string date_of(double t) {
  const auto c = detail::zone("UTC").local(t);
  return fmt::format("{:04}-{:02}-{:02}", c.year, c.month, c.day);
}

// The rules tried for an account: cache reads at 0, 0.02, 0.1 and 1, and Opus and Haiku scaled
// only where the account used them.
std::vector<cap_rule> rules_for(bool opus, bool haiku) {
  std::vector<cap_rule> out;
  for (double c : {0.0, 0.02, 0.1, 1.0})
    for (double o : opus ? std::vector<double>{1.0, 0.75} : std::vector<double>{1.0})
      for (double h : haiku ? std::vector<double>{1.0, 0.2} : std::vector<double>{1.0}) out.push_back({c, o, h});
  return out;
}

// A trace's requests as rows of counted tokens (estimated outputs, or logged), by send or by end.
struct request_row {
  double t_send, t_end;
  std::vector<double> est, logged;
};

// Union-find over Codex rollouts: two that report one window (its length and reset time) are one account.
struct disjoint_sets {
  std::vector<std::size_t> parent;
  explicit disjoint_sets(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), std::size_t{0}); }
  std::size_t find(std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }
  void join(std::size_t a, std::size_t b) { parent[find(a)] = find(b); }
};

// Groups (time, window) readings of one account into windows: one slot and length, resets within 120 s.
std::vector<detail::percent_window> group_windows(std::vector<std::pair<double, detail::snapshot_window>> readings,
                                                  const std::string& source) {
  std::stable_sort(readings.begin(), readings.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<detail::percent_window> out;
  std::vector<int> slot_of;
  for (const auto& [t, w] : readings) {
    std::size_t k = out.size();
    for (std::size_t i = 0; i < out.size(); ++i)
      if (slot_of[i] == w.slot && out[i].period_s == w.period_s && std::abs(out[i].resets_at - w.resets_at) <= 120) {
        k = i;
        break;
      }
    if (k == out.size()) {
      out.push_back({source, w.period_s, w.resets_at, {}});
      slot_of.push_back(w.slot);
    }
    out[k].points.emplace_back(t, w.used_percent);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.points.front().first < b.points.front().first; });
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// The sessions folder a Codex rollout lies in: the part of its path before YYYY/MM/DD/, else its
// folder; with the machine it was copied from.
std::string codex_root(const recorded_trace& t) {
  namespace fs = std::filesystem;
  fs::path p = fs::path(t.file).parent_path();
  auto digits = [](const fs::path& x, std::size_t n) {
    const auto s = x.filename().string();
    return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (digits(p, 2) && digits(p.parent_path(), 2) && digits(p.parent_path().parent_path(), 4))
    p = p.parent_path().parent_path().parent_path();
  return t.machine.empty() ? p.string() : t.machine + ":" + p.string();
}

} // namespace

double estimated_output_tokens(const recorded_request& q, const std::string& model) {
  const double logged = static_cast<double>(q.tokens.output);
  if (q.output_chars < 0) return logged;
  const double predicted = static_cast<double>(q.output_chars) * (is_opus(model) ? 0.36 : 0.47);
  return logged < 0.5 * predicted ? predicted : logged;
}

namespace detail {

std::string window_label(double period_s) {
  if (period_s == 5 * 3600.0) return "5-hour";
  if (period_s == 7 * 86400.0) return "weekly";
  return fmt::format("{:g}-minute", period_s / 60);
}

rule_usage::rule_usage(std::vector<std::pair<double, std::vector<double>>> rows, std::size_t rules) : rules_(rules) {
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  t_.reserve(rows.size());
  cum_.assign((rows.size() + 1) * rules, 0.0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    t_.push_back(rows[i].first);
    for (std::size_t k = 0; k < rules; ++k) cum_[(i + 1) * rules + k] = cum_[i * rules + k] + rows[i].second[k];
  }
}
std::size_t rule_usage::lower(double t) const noexcept {
  return static_cast<std::size_t>(std::lower_bound(t_.begin(), t_.end(), t) - t_.begin());
}
std::size_t rule_usage::upper(double t) const noexcept {
  return static_cast<std::size_t>(std::upper_bound(t_.begin(), t_.end(), t) - t_.begin());
}

std::vector<snapshot_window> read_snapshot_windows(const rate_limit_snapshot& s, std::size_t& invalid) {
  std::vector<snapshot_window> out;
  const auto j = nlohmann::json::parse(s.json, nullptr, false);
  if (!j.is_object()) return out;
  const char* slots[] = {"primary", "secondary"};
  for (int slot = 0; slot < 2; ++slot) {
    const auto w = j.find(slots[slot]);
    if (w == j.end() || w->is_null()) continue;
    auto number = [&](std::initializer_list<const char*> keys) -> std::optional<double> {
      if (!w->is_object()) return std::nullopt;
      for (const char* k : keys)
        if (const auto f = w->find(k); f != w->end() && f->is_number()) return f->get<double>();
      return std::nullopt;
    };
    const auto pct = number({"used_percent"});
    auto minutes = number({"window_minutes"});
    if (!minutes)
      if (const auto secs = number({"limit_window_seconds"})) minutes = *secs / 60;
    std::optional<double> resets = number({"resets_at", "reset_at"});
    if (!resets)
      if (const auto in = number({"resets_in_seconds", "reset_after_seconds"}); in && std::abs(*in) <= 1e9) resets = s.t + *in;
    if (!pct || !minutes || !resets || !(*pct >= 0 && *pct <= 100) || !(*minutes > 0 && *minutes < 1e6) ||
        !(std::abs(*resets) <= 1e11)) {
      ++invalid;
      continue;
    }
    double m = *minutes;
    for (double whole : {300.0, 10080.0})
      if (std::abs(m - whole) <= 0.01 * whole) m = whole;
    out.push_back({slot, *pct, m * 60, *resets});
  }
  return out;
}

std::vector<account_data> read_accounts(std::span<const recorded_trace> traces, std::span<const statusline_snapshot> statusline,
                                        std::vector<std::string>& notes) {
  // Which account each trace (Codex) or each moment (Claude Code) belongs to.
  std::vector<std::size_t> codex, codex_index(traces.size());
  std::vector<std::pair<double, const account_marker*>> markers;
  std::size_t other = 0, undated = 0;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const auto& t = traces[i];
    if (!t.absolute_clock) {
      ++undated;
      continue;
    }
    if (t.format == trace_format::codex) {
      codex_index[i] = codex.size();
      codex.push_back(i);
    }
    else if (t.format == trace_format::claude_code)
      for (const auto& m : t.accounts) markers.emplace_back(m.t, &m);
    else
      ++other;
  }
  if (other > 0)
    notes.push_back(fmt::format("{} log{} of other agents (opencode, SWE-agent, …): no plan's windows, not used", other,
                                other == 1 ? "" : "s"));
  if (undated > 0)
    notes.push_back(fmt::format("{} log{} without a date: not used", undated, undated == 1 ? "" : "s"));
  std::stable_sort(markers.begin(), markers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  std::vector<account_data> out;
  std::map<std::string, std::size_t> by_name;
  auto account = [&](const std::string& name, const std::string& plan) -> account_data& {
    const auto [it, fresh] = by_name.emplace(name, out.size());
    if (fresh) {
      out.emplace_back();
      out.back().summary.name = name;
    }
    auto& a = out[it->second];
    if (a.summary.plan.empty()) a.summary.plan = plan;
    return a;
  };
  // Claude Code: the account logged in at a moment (the last marker before it; before the first,
  // the first's). An unnamed /login starts an account of its own until one is named.
  auto claude_name = [&](double t) -> std::pair<std::string, std::string> {
    if (markers.empty()) return {"claude", ""};
    auto it = std::upper_bound(markers.begin(), markers.end(), t, [](double x, const auto& m) { return x < m.first; });
    const auto& m = *(it == markers.begin() ? markers.front().second : std::prev(it)->second);
    if (m.account.empty()) return {fmt::format("claude (a /login on {})", date_of(m.t)), ""};
    return {m.account, m.plan};
  };

  struct pending {
    std::vector<std::pair<double, snapshot_window>> readings;
    double off_input = 0, all_input = 0;  // uncached input (input + cache writes), of Claude Code requests
    std::string first_source;
    bool opus = false, haiku = false;
    std::vector<std::pair<plan_wall, std::string>> walls;
  };
  std::map<std::string, pending> work;
  std::map<std::string, std::set<std::string>> logs_of;
  std::size_t invalid = 0;

  // Codex accounts: rollouts that share a window. Each rollout's snapshots are read once.
  std::vector<std::vector<std::pair<double, snapshot_window>>> codex_readings(codex.size());
  for (std::size_t n = 0; n < codex.size(); ++n)
    for (const auto& s : traces[codex[n]].rate_limits)
      for (const auto& w : read_snapshot_windows(s, invalid)) codex_readings[n].emplace_back(s.t, w);
  disjoint_sets sets(codex.size());
  {
    std::map<std::tuple<int, double, std::int64_t>, std::size_t> first_with;  // (slot, period, reset in 2-minute steps)
    for (std::size_t n = 0; n < codex.size(); ++n)
      for (const auto& [t_snap, w] : codex_readings[n])
          for (std::int64_t d : {-1, 0, 1}) {
            const auto key = std::tuple{w.slot, w.period_s, static_cast<std::int64_t>(std::floor(w.resets_at / 120)) + d};
            const auto [it, fresh] = first_with.emplace(key, n);
            if (!fresh) sets.join(n, it->second);
          }
  }
  // And rollouts of one sessions folder (Codex writes ROOT/YYYY/MM/DD/rollout-….jsonl): one machine's
  // login, though its weeks need not touch.
  std::map<std::string, std::size_t> by_root;
  std::vector<std::string> roots(codex.size());
  for (std::size_t n = 0; n < codex.size(); ++n) {
    roots[n] = codex_root(traces[codex[n]]);
    const auto [it, fresh] = by_root.emplace(roots[n], n);
    if (!fresh) sets.join(n, it->second);
  }
  std::map<std::size_t, std::string> codex_names;
  std::set<std::string> taken;
  for (std::size_t n = 0; n < codex.size(); ++n) {
    const std::size_t root = sets.find(n);
    if (codex_names.count(root)) continue;
    auto name = "codex: " + std::filesystem::path(roots[n]).filename().string();
    if (!taken.insert(name).second) name += fmt::format(" ({})", codex_names.size() + 1);
    codex_names[root] = name;
  }

  // The rows of every request, under rules fixed per account once its models are known: first
  // collect by account, then count.
  struct raw {
    const recorded_trace* trace;
    const recorded_request* q;
  };
  std::map<std::string, std::vector<raw>> requests;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const auto& t = traces[i];
    if (!t.absolute_clock || (t.format != trace_format::codex && t.format != trace_format::claude_code)) continue;
    std::string codex_name;
    if (t.format == trace_format::codex) {
      codex_name = codex_names[sets.find(codex_index[i])];
      account(codex_name, "");
      logs_of[codex_name].insert(t.file);
      auto& readings = codex_readings[codex_index[i]];
      work[codex_name].readings.insert(work[codex_name].readings.end(), readings.begin(), readings.end());
      if (work[codex_name].first_source.empty()) work[codex_name].first_source = t.file;
    }
    for (const auto& s : t.sessions)
      for (const auto& q : s.requests) {
        const auto name = t.format == trace_format::codex ? std::pair{codex_name, std::string()} : claude_name(q.t_send);
        auto& a = account(name.first, name.second);
        logs_of[name.first].insert(t.file);
        if (t.format == trace_format::claude_code) {
          const auto in = static_cast<double>(q.tokens.input + q.tokens.cache_writes());
          work[name.first].all_input += in;
          if (off_plan(q.backend)) work[name.first].off_input += in;
        }
        if (off_plan(q.backend)) {
          ++a.summary.off_plan;
          continue;
        }
        ++a.summary.requests;
        requests[name.first].push_back({&t, &q});
        const auto& model = t.models.empty() ? std::string() : t.models[static_cast<std::size_t>(q.model)];
        work[name.first].opus = work[name.first].opus || is_opus(model);
        work[name.first].haiku = work[name.first].haiku || is_haiku(model);
      }
    for (const auto& w : t.walls) {
      const auto name = t.format == trace_format::codex ? std::pair{codex_name, std::string()} : claude_name(w.t);
      account(name.first, name.second);
      work[name.first].walls.emplace_back(w, fmt::format("{}:{}", t.file, w.source_line));
    }
  }
  // Statusline snapshots: the Claude account logged in when each was taken.
  for (const auto& s : detail::statusline_as_rate_limits(statusline))
    for (const auto& w : read_snapshot_windows(s, invalid)) {
      const auto name = claude_name(s.t);
      account(name.first, name.second);
      work[name.first].readings.emplace_back(s.t, w);
      if (work[name.first].first_source.empty()) work[name.first].first_source = "statusline";
    }
  if (invalid > 0)
    notes.push_back(fmt::format("{} window snapshot{} without a readable used_percent (0–100), length and reset: not used",
                                invalid, invalid == 1 ? "" : "s"));

  for (auto& a : out) {
    auto& p = work[a.summary.name];
    a.rules = rules_for(p.opus, p.haiku);
    const std::size_t nr = a.rules.size();
    std::vector<std::pair<double, std::vector<double>>> send, end, send_logged;
    double first = std::numeric_limits<double>::infinity(), last = -first;
    for (const auto& r : requests[a.summary.name]) {
      const auto& model = r.trace->models.empty() ? std::string() : r.trace->models[static_cast<std::size_t>(r.q->model)];
      const double est = estimated_output_tokens(*r.q, model), logged = static_cast<double>(r.q->tokens.output);
      if (est != logged) {
        ++a.summary.partial_outputs;
        a.summary.logged_output += logged;
        a.summary.estimated_output += est;
      }
      std::vector<double> e(nr), l(nr);
      for (std::size_t k = 0; k < nr; ++k) {
        e[k] = counted(a.rules[k], r.q->tokens, est, model);
        l[k] = counted(a.rules[k], r.q->tokens, logged, model);
      }
      const double t_end = std::isnan(r.q->t_end) ? r.q->t_send : r.q->t_end;
      send.emplace_back(r.q->t_send, e);
      end.emplace_back(t_end, e);
      send_logged.emplace_back(r.q->t_send, std::move(l));
      first = std::min(first, r.q->t_send);
      last = std::max(last, t_end);
    }
    a.by_send = rule_usage(std::move(send), nr);
    a.by_end = rule_usage(std::move(end), nr);
    a.by_send_logged = rule_usage(std::move(send_logged), nr);
    a.summary.first_t = std::isfinite(first) ? first : 0;
    a.summary.last_t = std::isfinite(last) ? last : 0;
    a.summary.logs = static_cast<std::int32_t>(logs_of[a.summary.name].size());
    if (p.all_input > 0) a.summary.off_plan_share = p.off_input / p.all_input;
    // Walls, each once.
    std::vector<plan_wall> walls;
    for (const auto& pw : p.walls) walls.push_back(pw.first);
    a.summary.wall_copies = static_cast<std::int32_t>(walls.size());
    auto sorted = p.walls;
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.first.t < y.first.t; });
    a.walls = dedupe_walls(std::move(walls));
    for (const auto& w : a.walls) {
      std::string src;
      for (const auto& [x, s] : sorted)
        if (x.t == w.t && x.kind == w.kind) {
          src = s;
          break;
        }
      a.wall_sources.push_back(src);
    }
    a.summary.walls = static_cast<std::int32_t>(a.walls.size());
    a.windows = group_windows(std::move(p.readings), p.first_source);
    a.evidence = p.first_source == "statusline" ? "statusline" : "used_percent";
  }
  return out;
}

rule_fit fit_samples(const cap_rule& rule, const std::vector<double>& caps, std::vector<cap_sample>* judge) {
  rule_fit f;
  f.rule = rule;
  f.samples = static_cast<std::int32_t>(caps.size());
  std::vector<double> logs;
  for (double c : caps)
    if (c > 0) logs.push_back(std::log(c));
  if (logs.empty()) return f;
  // A first centre and spread from every positive sample, then the inliers' own.
  const double m0 = median_of(logs);
  std::vector<double> dev;
  for (double l : logs) dev.push_back(std::abs(l - m0));
  const double s0 = std::max(1.4826 * median_of(dev), 0.05);
  std::vector<double> in;
  for (std::size_t i = 0; i < caps.size(); ++i) {
    const double c = caps[i];
    std::string why;
    if (!(c > 0)) why = "nothing logged in it";
    else if (c < 0.4 * std::exp(m0)) why = fmt::format("{:.2f} of the cap logged: usage elsewhere (another machine, claude.ai)?", c / std::exp(m0));
    else if (std::abs(std::log(c) - m0) > 3 * s0)
      why = fmt::format("{:.1f} σ {}", std::abs(std::log(c) - m0) / s0, c > std::exp(m0) ? "above" : "below");
    else in.push_back(std::log(c));
    if (judge) {
      (*judge)[i].cap = c;
      (*judge)[i].outlier = !why.empty();
      (*judge)[i].why = why;
    }
  }
  f.inliers = static_cast<std::int32_t>(in.size());
  f.explained = static_cast<double>(in.size()) / static_cast<double>(caps.size());
  if (in.empty()) return f;
  const double m = median_of(in);
  f.cap = std::exp(m);
  if (in.size() >= 3) {
    dev.clear();
    for (double l : in) dev.push_back(std::abs(l - m));
    f.sigma = 1.4826 * median_of(dev);
    const double se = 1.2533 * f.sigma / std::sqrt(static_cast<double>(in.size()));
    f.cap_low = std::exp(m - 1.2816 * se);
    f.cap_high = std::exp(m + 1.2816 * se);
    f.p10 = std::exp(m - 1.2816 * f.sigma);
    f.p90 = std::exp(m + 1.2816 * f.sigma);
  }
  return f;
}

std::vector<cap_sample> window_samples(const account_data& a, double period_s, double before, bool logged_output) {
  std::vector<cap_sample> out;
  const auto& send = logged_output ? a.by_send_logged : a.by_send;
  for (std::size_t i = 0; i < a.walls.size(); ++i) {
    const auto& w = a.walls[i];
    if (wall_period_s(w.kind) != period_s || w.kind == wall_kind::weekly_scoped || std::isnan(w.resets_at_unix)) continue;
    const double start = period_s == 5 * 3600.0 ? w.window_start() : w.resets_at_unix - period_s;
    if (!(w.t >= start && w.t < w.resets_at_unix) || !(w.t < before)) continue;
    cap_sample s;
    s.source = a.wall_sources[i];
    s.t0 = start;
    s.t1 = w.t;
    s.resets_at = w.resets_at_unix;
    for (std::size_t k = 0; k < a.rules.size(); ++k) s.usage.push_back(send.between(k, start, w.t));
    out.push_back(std::move(s));
  }
  const auto& end = a.by_end;  // a percentage shows a request once it ended
  for (const auto& pw : a.windows) {
    if (pw.period_s != period_s || pw.points.size() < 2) continue;
    const auto [t0, p0] = pw.points.front();
    const auto [t1, p1] = pw.points.back();
    if (p1 - p0 < 5 || !(t1 < before)) continue;
    cap_sample s;
    s.source = pw.source;
    s.t0 = t0;
    s.t1 = t1;
    s.resets_at = pw.resets_at;
    s.points = p1 - p0;
    const std::size_t i = end.upper(t0), j = end.upper(t1);
    for (std::size_t k = 0; k < a.rules.size(); ++k) s.usage.push_back(end.sum(k, i, j));
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.t0 < y.t0; });
  return out;
}

window_fit fit_window(const account_data& a, double period_s, double before) {
  window_fit f;
  f.account = a.summary.name;
  f.window = window_label(period_s);
  f.period_s = period_s;
  f.samples = window_samples(a, period_s, before);
  bool walls = false, percents = false;
  for (const auto& s : f.samples) (s.points == 100 && s.source.find(':') != std::string::npos ? walls : percents) = true;
  f.evidence = walls && percents ? "walls and " + a.evidence : walls ? "walls" : a.evidence;
  auto caps_of = [&](const std::vector<cap_sample>& samples, std::size_t k) {
    std::vector<double> c;
    for (const auto& s : samples) c.push_back(100 * s.usage[k] / s.points);
    return c;
  };
  std::vector<std::pair<rule_fit, std::size_t>> fits;
  for (std::size_t k = 0; k < a.rules.size(); ++k) fits.emplace_back(fit_samples(a.rules[k], caps_of(f.samples, k)), k);
  // Best first: rules whose inliers spread least (with at least 3 inliers), then the rest in order.
  std::stable_sort(fits.begin(), fits.end(), [](const auto& x, const auto& y) {
    const bool xs = !std::isnan(x.first.sigma), ys = !std::isnan(y.first.sigma);
    if (xs != ys) return xs;
    if (xs && x.first.sigma != y.first.sigma) return x.first.sigma < y.first.sigma;
    return false;
  });
  for (const auto& [fit, k] : fits) f.rules.push_back(fit);
  if (f.rules.empty() || f.samples.empty()) return f;
  const std::size_t best = fits.front().second;
  const auto& b = f.rules.front();
  if (std::isnan(b.sigma))
    f.why_best = fmt::format("under 3 windows agree under any rule ({} sample{}): the first rule, unranked",
                             f.samples.size(), f.samples.size() == 1 ? "" : "s");
  else if (f.rules.size() > 1 && !std::isnan(f.rules[1].sigma))
    f.why_best = fmt::format("its windows spread least (σ {:.2f}; next: {}, σ {:.2f})", b.sigma, f.rules[1].rule.name(),
                             f.rules[1].sigma);
  else
    f.why_best = fmt::format("σ {:.2f}", b.sigma);
  fit_samples(b.rule, caps_of(f.samples, best), &f.samples);
  {
    const auto logged = window_samples(a, period_s, before, true);
    f.cap_logged_output = fit_samples(b.rule, caps_of(logged, best)).cap;
  }
  // Two levels: the widest gap (over 1.5×) between sorted caps with two or more on each side.
  std::vector<std::pair<double, double>> by_cap;  // (cap, time)
  for (const auto& s : f.samples)
    if (s.cap > 0 && s.why.find("elsewhere") == std::string::npos) by_cap.emplace_back(s.cap, s.t1);
  std::sort(by_cap.begin(), by_cap.end());
  if (by_cap.size() >= 5) {
    std::size_t cut = 0;
    double gap = std::log(1.5);
    for (std::size_t i = 2; i + 2 <= by_cap.size(); ++i)
      if (const double g = std::log(by_cap[i].first / by_cap[i - 1].first); g > gap) {
        gap = g;
        cut = i;
      }
    if (cut > 0) {
      for (auto [from, to] : {std::pair{std::size_t{0}, cut}, std::pair{cut, by_cap.size()}}) {
        plan_level l;
        std::vector<double> c;
        l.first_t = std::numeric_limits<double>::infinity();
        l.last_t = -l.first_t;
        for (std::size_t i = from; i < to; ++i) {
          c.push_back(by_cap[i].first);
          l.first_t = std::min(l.first_t, by_cap[i].second);
          l.last_t = std::max(l.last_t, by_cap[i].second);
        }
        l.cap = median_of(c);
        l.samples = static_cast<std::int32_t>(c.size());
        f.levels.push_back(l);
      }
      const auto& lo = f.levels[0];
      const auto& hi = f.levels[1];
      if (lo.last_t < hi.first_t) f.change_at = 0.5 * (lo.last_t + hi.first_t);
      else if (hi.last_t < lo.first_t) f.change_at = 0.5 * (hi.last_t + lo.first_t);
    }
  }
  return f;
}

} // namespace detail

plan_fit fit_plan(std::span<const recorded_trace> traces, std::span<const statusline_snapshot> statusline,
                  const plan_fit_options& options) {
  plan_fit r;
  bool dated = false;
  for (const auto& t : traces) dated = dated || t.absolute_clock;
  if (!dated && statusline.empty())
    throw trace_error(traces.empty() ? std::string("(no logs)") : traces.front().file, 0,
                      "no dated requests, rate-limit snapshots (Codex) or usage-limit cut-offs (Claude Code) to learn a plan's "
                      "caps from");
  auto accounts = detail::read_accounts(traces, statusline, r.notes);
  if (!options.account.empty()) {
    std::vector<std::string> names;
    std::erase_if(accounts, [&](const auto& a) {
      names.push_back(a.summary.name);
      return a.summary.name.find(options.account) == std::string::npos;
    });
    if (accounts.empty())
      throw std::invalid_argument(fmt::format("--account {}: no account of that name in the logs (they hold: {})", options.account,
                                     names.empty() ? std::string("none") : joined(names)));
  }
  for (const auto& a : accounts) {
    r.accounts.push_back(a.summary);
    for (std::size_t i = 0; i < a.walls.size(); ++i) {
      r.walls.push_back(a.walls[i]);
      r.wall_accounts.push_back(a.summary.name);
    }
    std::set<double> periods;
    for (const auto& w : a.walls)
      if (wall_period_s(w.kind) > 0 && w.kind != wall_kind::weekly_scoped) periods.insert(wall_period_s(w.kind));
    for (const auto& w : a.windows) periods.insert(w.period_s);
    for (double p : periods) {
      auto f = detail::fit_window(a, p);
      if (!f.samples.empty()) r.windows.push_back(std::move(f));
    }
    if (a.summary.off_plan > 0)
      r.notes.push_back(fmt::format("{}: {} served off the plan (Google Vertex, Bedrock, a relay or another vendor's "
                                    "model; {:.0f}% of the uncached input): not counted in its windows",
                                    a.summary.name, detail::count_of(a.summary.off_plan, "request"),
                                    100 * a.summary.off_plan_share));
    if (a.summary.partial_outputs > 0)
      r.notes.push_back(fmt::format("{}: {} request{} logged a partial output count ({} tokens in all; their text says "
                                    "about {}): the fit counts the estimate",
                                    a.summary.name, a.summary.partial_outputs, a.summary.partial_outputs == 1 ? "" : "s",
                                    detail::grouped(a.summary.logged_output), detail::grouped(a.summary.estimated_output)));
  }
  return r;
}

} // namespace loopcast
