// A subscription plan's caps learnt from agent logs (limits_inference.hpp, docs/plans.md).
#include "loopcast/limits_inference.hpp"
#include "loopcast/errors.hpp"


#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

namespace loopcast {

namespace {

// The rules of what a cap may count, as weights of input, cache_read, cache_write, output, reasoning.
struct counting_rule {
  const char* name;
  std::array<double, 5> w;
};
constexpr std::array<counting_rule, 3> rules{{{"all tokens", {1, 1, 1, 1, 1}},
                                              {"all but cache reads", {1, 0, 1, 1, 1}},
                                              {"cache reads at 0.1", {1, 0.1, 1, 1, 1}}}};

double counted(const counting_rule& r, const token_counts& t) {
  return r.w[0] * static_cast<double>(t.input) + r.w[1] * static_cast<double>(t.cache_read) +
         r.w[2] * static_cast<double>(t.cache_write) + r.w[3] * static_cast<double>(t.output) +
         r.w[4] * static_cast<double>(t.reasoning);
}

std::string window_name(double period_s) {
  if (period_s == 5 * 3600.0) return "5-hour";
  if (period_s == 7 * 86400.0) return "weekly";
  return fmt::format("{:g}-minute", period_s / 60);
}

struct observation {
  double period_s;
  std::array<double, rules.size()> low{}, high{};
};

// One window of a Codex log: the first and last snapshot with the same reset time.
struct codex_window {
  double period_s = 0, resets_at = 0;
  double t0 = 0, p0 = 0, t1 = 0, p1 = 0;
  int snapshots = 0;
};

std::optional<std::tuple<double, double, double>> window_of(const nlohmann::json& s, const char* key) {
  const auto w = s.find(key);
  if (w == s.end() || !w->is_object()) return std::nullopt;
  const auto p = w->find("used_percent"), m = w->find("window_minutes"), r = w->find("resets_at");
  if (p == w->end() || m == w->end() || r == w->end() || !p->is_number() || !m->is_number() || !r->is_number())
    return std::nullopt;
  const double pct = p->get<double>(), minutes = m->get<double>(), resets = r->get<double>();
  if (!(pct >= 0 && pct <= 100) || !(minutes > 0 && minutes < 1e6) || !std::isfinite(resets)) return std::nullopt;
  return std::tuple{pct, minutes * 60, resets};
}

void codex_observations(const recorded_trace& t, std::vector<observation>& out, std::vector<std::string>& notes) {
  std::vector<std::pair<double, nlohmann::json>> snaps;  // each snapshot parsed once, for both windows
  for (const auto& snap : t.rate_limits) {
    auto j = nlohmann::json::parse(snap.json, nullptr, false);
    if (!j.is_discarded()) snaps.emplace_back(snap.t, std::move(j));
  }
  std::vector<codex_window> windows;
  for (const char* key : {"primary", "secondary"}) {
    std::optional<codex_window> cur;
    auto close = [&] {
      if (cur && cur->snapshots >= 2) windows.push_back(*cur);
      cur.reset();
    };
    for (const auto& [t_snap, j] : snaps) {
      const auto w = window_of(j, key);
      if (!w) continue;
      const auto [pct, period, resets] = *w;
      // The same window while its reset time holds (it jitters by a second between snapshots).
      if (!cur || cur->period_s != period || std::abs(cur->resets_at - resets) > 60 || pct < cur->p1) {
        close();
        cur = codex_window{period, resets, t_snap, pct, t_snap, pct, 0};
      }
      cur->t1 = t_snap;
      cur->p1 = pct;
      ++cur->snapshots;
    }
    close();
  }
  for (const auto& w : windows) {
    observation o{w.period_s, {}, {}};
    const double dp = w.p1 - w.p0;
    for (std::size_t k = 0; k < rules.size(); ++k) {
      double all = 0, last = 0, last_end = -1;
      for (const auto& s : t.sessions)
        for (const auto& q : s.requests)
          if (q.t_end > w.t0 && q.t_end <= w.t1) {
            const double u = counted(rules[k], q.tokens);
            all += u;
            if (q.t_end >= last_end) {
              last_end = q.t_end;
              last = u;
            }
          }
      o.low[k] = 100 * (all - last) / (dp + 1.5);
      o.high[k] = dp > 1.5 ? 100 * all / (dp - 1.5) : std::numeric_limits<double>::infinity();
    }
    out.push_back(o);
    notes.push_back(fmt::format("{}: {} window resetting at {:.0f}: {:g}% → {:g}% over {:.0f} s ({} snapshots)", t.file,
                                window_name(w.period_s), w.resets_at, w.p0, w.p1, w.t1 - w.t0, w.snapshots));
  }
}

struct timed_usage {
  double t;
  token_counts tokens;
};

void cutoff_observations(std::span<const recorded_trace> traces, std::vector<observation>& out,
                         std::vector<std::string>& notes) {
  constexpr double period = 5 * 3600.0;
  std::vector<timed_usage> reqs;
  std::vector<std::pair<limit_cutoff, const recorded_trace*>> cuts;
  for (const auto& t : traces) {
    if (!t.absolute_clock) continue;
    for (const auto& s : t.sessions)
      for (const auto& q : s.requests) reqs.push_back({q.t_send, q.tokens});
    for (const auto& c : t.cutoffs) cuts.emplace_back(c, &t);
  }
  std::sort(reqs.begin(), reqs.end(), [](const timed_usage& a, const timed_usage& b) { return a.t < b.t; });
  for (const auto& [c, t] : cuts) {
    const double start = c.resets_at_unix - period;
    if (!(c.t >= start && c.t < c.resets_at_unix)) {
      notes.push_back(fmt::format("{}:{}: a cut-off whose window reopens {:.0f} s later is not a 5-hour window's; "
                                  "not used", t->file, c.source_line, c.resets_at_unix - c.t));
      continue;
    }
    observation o{period, {}, {}};
    for (std::size_t k = 0; k < rules.size(); ++k) {
      double before = 0, before_last = 0;
      for (const auto& r : reqs)
        if (r.t >= start && r.t < c.t) {
          before_last = before;  // what the window held when it admitted this request
          before += counted(rules[k], r.tokens);
        }
      o.low[k] = before_last;
      o.high[k] = before;
    }
    out.push_back(o);
    notes.push_back(fmt::format("{}:{}: cut off at {:.0f}, the 5-hour window reopening at {:.0f}", t->file,
                                c.source_line, c.t, c.resets_at_unix));
  }
}

} // namespace

plan_inference infer_plan_caps(std::span<const recorded_trace> traces) {
  plan_inference r;
  std::vector<observation> obs;
  for (const auto& t : traces)
    if (!t.rate_limits.empty()) codex_observations(t, obs, r.notes);
  cutoff_observations(traces, obs, r.notes);
  if (obs.empty())
    throw trace_error(traces.empty() ? std::string("(no logs)") : traces.front().file, 0,
                      "no rate-limit snapshots (Codex) or usage-limit cut-offs (Claude Code) to learn a plan's caps from");
  std::map<double, std::vector<const observation*>> by_period;
  for (const auto& o : obs) by_period[o.period_s].push_back(&o);
  for (const auto& [period, list] : by_period)
    for (std::size_t k = 0; k < rules.size(); ++k) {
      plan_cap_interval c;
      c.window = window_name(period);
      c.period_s = period;
      c.counts = rules[k].name;
      for (const auto* o : list) {
        c.low = std::max(c.low, o->low[k]);
        c.high = std::min(c.high, o->high[k]);
      }
      c.observations = static_cast<std::int32_t>(list.size());
      c.consistent = c.low <= c.high;
      r.caps.push_back(c);
    }
  return r;
}

} // namespace loopcast
