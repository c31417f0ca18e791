#include "loopcast/plan_choice.hpp"

#include "loopcast/price_book.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/stats.hpp"

#include <fmt/format.h>
#include <fmt/chrono.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <ctime>
#include <stdexcept>

namespace loopcast {

namespace {

constexpr double month_days = 30.436875;  // a mean Gregorian month

// A plan of an agent's family: its preset and its stated multiple of the family's smallest plan.
struct plan_offer {
  const char* label;
  const char* preset;
  double ratio;
  const char* words;  ///< what a home plan may say to name it, lower case, '|' between
  const char* spill;  ///< the API preset its extra usage is billed as (the plan's own model)
};
// An assumption where nothing measures a cap: the smallest plan's counted tokens per window.
struct family {
  std::vector<plan_offer> offers;
  double base_five_hour, base_weekly;
  const char* default_home;
};

// Claude: "Max is 5x or 20x the usage of Pro" (support.anthropic.com, article 11014257); Max 5x
// was renamed Max and Max 20x Ultra on 2026-10-30 (second-hand, docs/plans.md). The base: Max 5x
// 1M counted tokens per 5 hours and 10M a week (examples/scenarios/plan-vs-api.json), over 5.
const family& claude_family() {
  static const family f{{{"Claude Pro", "claude-pro-sonnet-4.6", 1, "pro", "anthropic-tier4-claude-sonnet-4.6"},
                         {"Claude Max (5x)", "claude-max-5x-opus-4.7", 5, "max|max 5x|max-5x|max5x|5x",
                          "anthropic-tier4-claude-opus-4.7"},
                         {"Claude Ultra (Max 20x)", "claude-max-20x-opus-4.7", 20, "ultra|max 20x|max-20x|max20x|20x",
                          "anthropic-tier4-claude-opus-4.7"}},
                        200'000,
                        2'000'000,
                        "max"};
  return f;
}
// Codex: Pro $100 is 5x Plus's usage and Pro $200 20x (OpenAI's Codex pricing page as quoted by
// simplemetrics.xyz, 2026-06). The base: the cap fitted on real Plus-sized Codex accounts
// (tests/data/traces/codex-rate-limits: 1.25M tokens per 5 hours, cache reads at 0; 10.3M a week).
const family& codex_family() {
  static const family f{{{"ChatGPT Plus", "chatgpt-plus-codex-gpt-5", 1, "plus", "openai-tier4-gpt-5"},
                         {"ChatGPT Pro 5x", "chatgpt-pro-5x-codex-gpt-5", 5, "pro 5x|pro-5x|pro5x|5x|pro", "openai-tier4-gpt-5"},
                         {"ChatGPT Pro 20x", "chatgpt-pro-20x-codex-gpt-5", 20, "pro 20x|pro-20x|pro20x|20x",
                          "openai-tier4-gpt-5"}},
                        1'250'000,
                        10'260'000,
                        "plus"};
  return f;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The offer a home plan's words name: an exact word first, else the offer whose words appear in it
// (a login method "Claude Max account" names Max).
const plan_offer* offer_named(const family& f, const std::string& text) {
  const auto t = lower(text);
  const auto words_of = [](const plan_offer& o) {
    std::vector<std::string> w;
    std::string s = o.words;
    for (std::size_t a = 0; a <= s.size();) {
      const auto b = std::min(s.find('|', a), s.size());
      w.push_back(s.substr(a, b - a));
      a = b + 1;
    }
    return w;
  };
  for (const auto& o : f.offers)
    for (const auto& w : words_of(o))
      if (t == w || t == lower(o.label)) return &o;
  const plan_offer* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& o : f.offers)
    for (const auto& w : words_of(o))
      if (w.size() > best_len && t.find(w) != std::string::npos) best = &o, best_len = w.size();
  return best;
}

std::string tokens_text(double x) {
  return x >= 1e6 ? fmt::format("{:.3g}M", x / 1e6) : fmt::format("{:.3g}K", x / 1e3);
}

// A fitted window's cap for a bucket of the same length: the account with the most inliers.
struct fitted_window {
  const window_fit* fit = nullptr;
  const plan_account* account = nullptr;
};
fitted_window fitted_for(const plan_fit* pf, double period_s) {
  fitted_window best;
  if (pf == nullptr) return best;
  for (const auto& w : pf->windows) {
    if (w.rules.empty() || !std::isfinite(w.rules.front().cap) || std::abs(w.period_s - period_s) > 60) continue;
    if (best.fit != nullptr && w.rules.front().inliers <= best.fit->rules.front().inliers) continue;
    best.fit = &w;
    best.account = nullptr;
    for (const auto& a : pf->accounts)
      if (a.name == w.account) best.account = &a;
  }
  return best;
}

// Counting rule of a fit on a bucket: input, cache writes, output and reasoning at 1, cache reads
// at the rule's weight (model weights stay the bucket's own: a plan's one target has one model).
void count_as(bucket_config& b, const cap_rule& r) {
  b.classes = {token_class::input, token_class::cache_write, token_class::output, token_class::reasoning};
  b.class_weights = {1, 1, 1, 1, 1, 1};
  if (r.cache_read > 0) {
    b.classes.insert(token_class::cache_read);
    b.class_weights[static_cast<std::size_t>(token_class::cache_read)] = r.cache_read;
  }
}

// A plan's caps, bucket by bucket: given where the user set them, else fitted (the fitted account's
// window, as it stood at its samples' dates brought to today's rules, times this plan's ratio over
// the home plan's), else assumed (the family's base times the ratio). `t` comes after set_given.
plan_candidate plan_of(target t, const family& f, const plan_offer& offer, const plan_offer& home,
                       const plan_caps_input& in) {
  plan_candidate c;
  c.label = offer.label;
  auto lo = t, hi = t;
  std::vector<std::string> parts;
  bool assumed = false, fitted = false, given = false, spread = false;
  for (std::size_t i = 0; i < t.limits.size(); ++i) {
    auto& b = t.limits[i];
    if (!b.limit_unpublished) {
      given = true;
      parts.push_back(fmt::format("{} {} given", b.name, tokens_text(b.limit)));
      continue;
    }
    double mid = 0, low = 0, high = 0;
    const auto fw = fitted_for(in.fit, b.period_s);
    if (fw.fit != nullptr) {
      const auto& r = fw.fit->rules.front();
      const auto& s = fw.fit->samples;
      const double at = s.empty() ? std::numeric_limits<double>::quiet_NaN() : s[s.size() / 2].t1;
      const double scale = offer.ratio / home.ratio / (std::isfinite(at) ? detail::limit_on(t, b, 1.0, at) : 1.0);
      // A dated change of level: the cap in force now is the later level's (its samples are too
      // few for an interval of their own).
      const bool changed = fw.fit->levels.size() == 2 && std::isfinite(fw.fit->change_at);
      mid = (changed ? fw.fit->levels.back().cap : r.cap) * scale;
      const bool interval = !changed && std::isfinite(r.cap_low) && std::isfinite(r.cap_high);
      low = interval ? r.cap_low * scale : mid * in.assumed_low;
      high = interval ? r.cap_high * scale : mid * in.assumed_high;
      for (auto* x : {&b, &lo.limits[i], &hi.limits[i]}) count_as(*x, r.rule);
      fitted = true;
      const auto from = changed ? fmt::format("the {} windows after a change near {:%Y-%m-%d} of {} {} windows",
                                              fw.fit->levels.back().samples,
                                              fmt::gmtime(static_cast<std::time_t>(fw.fit->change_at)), r.samples,
                                              fw.fit->evidence)
                                : fmt::format("{} of {} {} windows", r.inliers, r.samples, fw.fit->evidence);
      parts.push_back(fmt::format("{} {} fitted ({}–{}; {} of {}{}, {})", b.name, tokens_text(mid), tokens_text(low),
                                  tokens_text(high), from, fw.fit->account,
                                  &offer == &home ? "" : fmt::format(", × {:g} for {} over {}", offer.ratio / home.ratio,
                                                                     offer.label, home.label),
                                  r.rule.name()));
    } else {
      mid = (b.period_s <= 5 * 3600.0 ? f.base_five_hour : f.base_weekly) * offer.ratio;
      low = mid * in.assumed_low;
      high = mid * in.assumed_high;
      assumed = true;
      parts.push_back(fmt::format("{} {} assumed", b.name, tokens_text(mid)));
    }
    spread = true;
    b.limit = mid;
    lo.limits[i].limit = low;
    hi.limits[i].limit = high;
    for (auto* x : {&b, &lo.limits[i], &hi.limits[i]}) x->limit_unpublished = false;
  }
  c.caps = assumed ? plan_caps_source::assumed
           : fitted ? plan_caps_source::fitted
           : given  ? plan_caps_source::given
                    : plan_caps_source::none;
  std::string note;
  for (const auto& p : parts) note += (note.empty() ? "" : "; ") + p;
  if (assumed)
    note += fmt::format(" (assumed: {} for {}, times {:g}; the plans state their ratio, not their caps)",
                        tokens_text(f.base_five_hour) + " per 5 hours and " + tokens_text(f.base_weekly) + " a week",
                        f.offers.front().label, offer.ratio);
  c.caps_note = note;
  if (spread) {
    c.low.emplace_back("*", std::move(lo));
    c.high.emplace_back("*", std::move(hi));
  }
  c.targets.emplace_back("*", std::move(t));
  return c;
}

// The refusals' waits as one timeline: [refusal, refusal + wait) of every 429, merged across
// sessions (two sessions waiting for one reset block the user once).
std::vector<reset_wait> waits_of(const simulation_result& sim, const std::vector<bucket_config>& buckets) {
  std::vector<reset_wait> spans;
  for (const auto& a : sim.attempts) {
    if (a.status != attempt_status::rate_limited || !(a.wait_s > 0)) continue;
    reset_wait w;
    w.start_unix_s = a.t_end;
    w.hours = a.wait_s;  // seconds until merged
    if (a.refused_by >= 0 && static_cast<std::size_t>(a.refused_by) < buckets.size())
      w.bucket = buckets[static_cast<std::size_t>(a.refused_by)].name;
    spans.push_back(std::move(w));
  }
  std::sort(spans.begin(), spans.end(), [](const reset_wait& a, const reset_wait& b) { return a.start_unix_s < b.start_unix_s; });
  std::vector<reset_wait> merged;
  for (auto& w : spans) {
    const double end = w.start_unix_s + w.hours;
    if (!merged.empty() && w.start_unix_s <= merged.back().start_unix_s + merged.back().hours) {
      auto& m = merged.back();
      m.hours = std::max(m.hours, end - m.start_unix_s);
    } else {
      merged.push_back(std::move(w));
    }
  }
  for (auto& m : merged) {
    m.start_unix_s += sim.start_unix_s;
    m.hours /= 3600;
  }
  return merged;
}

// The projects whose requests filled the windows before the waits: every admitted request that
// ended within a refusing bucket's period before a wait counts once, as the first refusing bucket
// counts it (its tokens, or one request; a plan's windows count alike); shares, largest first.
std::vector<wall_filler> fillers_of(const simulation_result& sim, const std::vector<bucket_config>& buckets,
                                    const std::vector<reset_wait>& waits, const std::vector<std::string>& project) {
  std::vector<std::pair<double, double>> spans;  // [from, to] in simulated seconds
  const bucket_config* counted = nullptr;        // the first refusing bucket
  for (const auto& w : waits) {
    const auto b = std::find_if(buckets.begin(), buckets.end(), [&](const bucket_config& x) { return x.name == w.bucket; });
    if (b == buckets.end()) continue;
    const double to = w.start_unix_s - sim.start_unix_s;
    spans.emplace_back(to - b->period_s, to);
    if (counted == nullptr) counted = &*b;
  }
  if (counted == nullptr) return {};
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<double, double>> merged;
  for (const auto& sp : spans)
    if (!merged.empty() && sp.first <= merged.back().second) merged.back().second = std::max(merged.back().second, sp.second);
    else merged.push_back(sp);
  std::vector<std::pair<double, std::size_t>> ends;  // admitted requests by end time
  for (std::size_t i = 0; i < sim.attempts.size(); ++i)
    if (sim.attempts[i].status == attempt_status::ok) ends.emplace_back(sim.attempts[i].t_end, i);
  std::sort(ends.begin(), ends.end());
  std::map<std::string, double> by;
  double total = 0;
  std::size_t k = 0;
  for (const auto& [t, i] : ends) {
    while (k < merged.size() && merged[k].second < t) ++k;
    if (k == merged.size()) break;
    if (t < merged[k].first) continue;
    const auto& a = sim.attempts[i];
    const double n = counted->unit == bucket_unit::tokens ? static_cast<double>(counted->classes.sum(a.tokens)) : 1.0;
    by[a.session < project.size() ? project[a.session] : std::string("?")] += n;
    total += n;
  }
  std::vector<wall_filler> out;
  for (const auto& [p, n] : by)
    if (total > 0) out.push_back({p, n / total});
  std::sort(out.begin(), out.end(), [](const wall_filler& a, const wall_filler& b) { return a.share > b.share; });
  return out;
}

// The replay's notes on dated rules in force at the logs' start, one per preset and bucket, as one
// note per rule: "at the logs' start (DATE), by dated rules: five_hour 0.5 times today's on A, B
// and C (SOURCE)".
void condense_rule_notes(const std::vector<plan_candidate>& candidates, const std::vector<recorded_trace>& traces,
                         std::vector<std::string>& notes) {
  double start = std::numeric_limits<double>::infinity();
  for (const auto& t : traces)
    for (const auto& s : t.sessions)
      if (!s.requests.empty()) start = std::min(start, s.requests.front().t_send);
  if (!std::isfinite(start)) return;
  std::erase_if(notes, [](const std::string& n) {
    return n.find(": the limit of ") != std::string::npos && n.find(" at the logs' start (") != std::string::npos;
  });
  struct dated_rule {
    std::string bucket, source;
    double factor;
    std::vector<std::string> names;
  };
  std::vector<dated_rule> found;
  const auto add = [&](const target& t) {
    for (const auto& d : t.dated_limits) {
      if (!(d.from_unix_s <= start && start < d.until_unix_s)) continue;
      auto it = std::find_if(found.begin(), found.end(), [&](const dated_rule& x) {
        return x.bucket == d.bucket && x.source == d.source && x.factor == d.factor;
      });
      if (it == found.end()) it = found.insert(found.end(), dated_rule{d.bucket, d.source, d.factor, {}});
      if (std::find(it->names.begin(), it->names.end(), t.name) == it->names.end()) it->names.push_back(t.name);
    }
  };
  for (const auto& c : candidates) {
    for (const auto& [pattern, t] : c.targets) add(t);
    for (const auto& t : c.spill) add(t);
  }
  for (const auto& x : found) {
    std::string names;
    for (std::size_t i = 0; i < x.names.size(); ++i)
      names += (i == 0 ? "" : i + 1 == x.names.size() ? " and " : ", ") + x.names[i];
    notes.push_back(fmt::format("at the logs' start ({:%Y-%m-%d}), by a dated rule: {} {:g} times today's limit on {} "
                                "({})",
                                fmt::gmtime(static_cast<std::time_t>(start)), x.bucket, x.factor, names, x.source));
  }
}

// The weekly allowance the 5-hour window left unused: the weekly windows rebuilt from the admitted
// requests (each opens at the first charge after the last closed and lasts 7 days, as the plans'
// weekly buckets count), and in those holding a 5-hour wait, the allowance the week did not use.
struct stranded {
  double share = std::numeric_limits<double>::quiet_NaN();
  std::int32_t weeks = 0;
};
stranded stranded_of(const simulation_result& sim, const std::vector<bucket_config>& buckets,
                     const std::vector<reset_wait>& waits) {
  const auto named = [&](const char* n) {
    const auto it = std::find_if(buckets.begin(), buckets.end(), [&](const bucket_config& b) { return b.name == n; });
    return it == buckets.end() ? nullptr : &*it;
  };
  const auto* week = named("weekly");
  if (week == nullptr || named("five_hour") == nullptr || !(week->period_s > 0)) return {};
  std::vector<std::pair<double, double>> charges;  // (end, units), simulated seconds
  for (const auto& a : sim.attempts)
    if (a.status == attempt_status::ok) {
      const auto c = charge_for(*week, a.tokens, 0);
      charges.emplace_back(a.t_end, c.at_admission + c.at_completion);
    }
  std::sort(charges.begin(), charges.end());
  std::vector<double> five;  // 5-hour waits' starts, simulated seconds
  for (const auto& w : waits)
    if (w.bucket == "five_hour") five.push_back(w.start_unix_s - sim.start_unix_s);
  double unused = 0, allowance = 0;
  stranded out;
  for (std::size_t i = 0; i < charges.size();) {
    const double open = charges[i].first, close = open + week->period_s;
    double used = 0;
    for (; i < charges.size() && charges[i].first < close; ++i) used += charges[i].second;
    if (!std::any_of(five.begin(), five.end(), [&](double t) { return t >= open && t < close; })) continue;
    const double limit = week->limit_at(sim.start_unix_s + open);
    ++out.weeks;
    allowance += limit;
    unused += std::max(0.0, limit - used);
  }
  if (allowance > 0) out.share = unused / allowance;
  return out;
}

double blocked_hours(const std::vector<reset_wait>& walls) {
  double h = 0;
  for (const auto& w : walls) h += w.hours;
  return h;
}

// A plan's wall spills at once to the extra usage's target; the plan is tried again a minute later.
model_map map_of(const std::string& label, const std::vector<std::pair<std::string, target>>& targets,
                 const std::vector<target>& spill, const retry_policy& client) {
  model_map m;
  m.label = label;
  for (const auto& [pattern, t] : targets) {
    scenario_option o;
    o.targets.push_back(t);
    o.targets.insert(o.targets.end(), spill.begin(), spill.end());
    o.routing.spill_after_s = 0;
    o.routing.cooldown_s = 60;
    o.label = o.name();
    o.client = client;
    m.entries.push_back({pattern, std::move(o)});
  }
  return m;
}

std::string targets_of(const plan_candidate& c) {
  if (c.targets.size() == 1) return c.targets.front().second.name;
  std::string s;
  for (const auto& [pattern, t] : c.targets) s += fmt::format("{}{}={}", s.empty() ? "" : ", ", pattern, t.name);
  return s;
}

// The API beside a family's plans: Claude, a tier-4 target per family (Haiku, Sonnet, the rest on
// Opus); Codex, a tier-4 target per recorded model at that model's list price.
plan_candidate api_of(const preset_library& lib, plan_agent agent, const plan_caps_input& in) {
  plan_candidate api;
  api.label = "API pay-as-you-go";
  if (agent == plan_agent::claude_code) {
    api.targets.emplace_back("*haiku*", lib.load_target("anthropic-tier4-claude-haiku-4.5"));
    api.targets.emplace_back("*sonnet*", lib.load_target("anthropic-tier4-claude-sonnet-4.6"));
    api.targets.emplace_back("*", lib.load_target("anthropic-tier4-claude-opus-4.7"));
    api.caps_note = "tier 4's published rate limits; every token at list price";
    return api;
  }
  const auto base = lib.load_target("openai-tier4-gpt-5");
  std::vector<std::string> unpriced;
  for (const auto& m : in.models) {
    if (api.targets.size() + 1 >= max_route_targets) break;
    const auto* e = in.prices != nullptr ? in.prices->find(m) : nullptr;
    if (e == nullptr) {
      unpriced.push_back(m);
      continue;
    }
    auto t = base;
    t.name = "openai-tier4-" + normalize_model_name(m);
    t.model = m;
    t.prices = e->prices;
    api.targets.emplace_back(m, std::move(t));
  }
  api.targets.emplace_back("*", base);
  api.caps_note = "tier 4's published rate limits (gpt-5's); each model at its own list price";
  if (!unpriced.empty())
    api.caps_note += fmt::format(" ({} priced as gpt-5: no list price known)", fmt::format("{}", fmt::join(unpriced, ", ")));
  return api;
}

// The sessions of `t` whose first request was sent at or after `since` (a subagent whose parent
// is left out keeps no parent); `before` counts those left out.
recorded_trace sessions_since(const recorded_trace& t, double since, std::size_t& before) {
  recorded_trace out = t;
  out.sessions.clear();
  std::vector<std::int32_t> index(t.sessions.size(), -1);
  for (std::size_t i = 0; i < t.sessions.size(); ++i) {
    const auto& s = t.sessions[i];
    if (s.requests.empty() || !(s.requests.front().t_send >= since)) {
      before += !s.requests.empty();
      continue;
    }
    index[i] = static_cast<std::int32_t>(out.sessions.size());
    out.sessions.push_back(s);
  }
  for (auto& s : out.sessions)
    if (s.parent >= 0) s.parent = static_cast<std::size_t>(s.parent) < index.size() ? index[static_cast<std::size_t>(s.parent)] : -1;
  return out;
}

} // namespace

std::vector<plan_candidate> plan_candidates(const preset_library& lib, plan_agent agent, const plan_caps_input& in) {
  const auto& f = agent == plan_agent::claude_code ? claude_family() : codex_family();
  std::string home_text = in.home_plan;
  if (home_text.empty() && in.fit != nullptr) {
    const auto fw5 = fitted_for(in.fit, 5 * 3600.0), fww = fitted_for(in.fit, 7 * 86400.0);
    for (const auto* a : {fw5.account, fww.account})
      if (a != nullptr && !a->plan.empty() && home_text.empty()) home_text = a->plan;
  }
  const plan_offer* home = offer_named(f, home_text.empty() ? f.default_home : home_text);
  if (home == nullptr) {
    std::string names;
    for (const auto& o : f.offers) names += fmt::format("{}{}", names.empty() ? "" : ", ", o.label);
    if (!in.home_plan.empty())
      throw std::invalid_argument(fmt::format("--plan {}: not a plan of this agent ({})", in.home_plan, names));
    home = offer_named(f, f.default_home);
  }
  std::vector<target> loaded;
  for (const auto& o : f.offers) loaded.push_back(lib.load_target(o.preset));
  auto api = api_of(lib, agent, in);
  if (in.set_given) {
    std::vector<target*> all;
    for (auto& t : loaded) all.push_back(&t);
    for (auto& [pattern, t] : api.targets) all.push_back(&t);
    in.set_given(all);
  }
  std::vector<plan_candidate> out;
  for (std::size_t i = 0; i < f.offers.size(); ++i)
    out.push_back(plan_of(std::move(loaded[i]), f, f.offers[i], *home, in));
  if (in.overflow)
    for (std::size_t i = 0; i < f.offers.size(); ++i) {
      auto c = out[i];
      c.spills_from = c.label;
      c.label += agent == plan_agent::claude_code ? " + extra usage" : " + credits";
      c.spill.push_back(lib.load_target(f.offers[i].spill));
      c.caps_note += fmt::format("; at the wall each request goes to {} at its list price", c.spill.front().name);
      out.push_back(std::move(c));
    }
  out.push_back(std::move(api));
  // Plans of other providers that publish their caps, for the same work on another model.
  for (const auto& [label, preset] : {std::pair{"Cerebras Code Pro (GLM 4.7)", "cerebras-code-pro-zai-glm-4.7"},
                                      std::pair{"Cerebras Code Max (GLM 4.7)", "cerebras-code-max-zai-glm-4.7"}}) {
    plan_candidate c;
    c.label = label;
    c.targets.emplace_back("*", lib.load_target(preset));
    c.other_model = c.targets.front().second.model;
    std::string caps;
    for (const auto& b : c.targets.front().second.limits)
      caps += fmt::format("{}{} {} published", caps.empty() ? "" : "; ", b.name, tokens_text(b.limit));
    c.caps_note = caps + " (second-hand); every model on zai-glm-4.7, its 131K window (longer contexts compacted)";
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// The recorded span, and what a replay's waits and length are against it.
struct replay_scale {
  double recorded_wall_s = 0, span_days = 1, per_month = 1;
  // Hours a week over the span the replay took: where a plan holds the work back, the sessions
  // run later than recorded and the weeks they take are more than the logs' own.
  double per_week(const std::vector<reset_wait>& waits, const simulation_result& sim) const {
    return blocked_hours(waits) * 7 / std::max(span_days, sim.wall_s / 86400);
  }
  double late_days(const simulation_result& sim) const { return std::max(0.0, sim.wall_s - recorded_wall_s) / 86400; }
  double pace(const simulation_result& sim) const {
    return sim.wall_s > recorded_wall_s ? recorded_wall_s / sim.wall_s : 1.0;
  }
};

// One option's row from its replays (the middle caps first, then the low and high ones).
plan_choice_row row_of(const plan_candidate& c, const replay_result& rep, const replay_scale& sc,
                       const std::vector<std::string>& project, double max_blocked) {
  plan_choice_row row;
  row.label = c.label;
  row.targets = targets_of(c);
  row.caps = c.caps;
  row.caps_note = c.caps_note;
  row.other_model = c.other_model;
  const auto& mid = rep.options.front();
  const auto& first = c.targets.front().second;
  row.plan = first.plan.has_value();
  if (row.plan) row.fee_usd_month = first.plan->monthly_fee_usd;
  row.metered_usd_month = mid.sim.token_cost_usd * sc.per_month;
  row.usd_month = row.usd_low = row.usd_high = row.fee_usd_month + row.metered_usd_month;
  const auto walls = waits_of(mid.sim, mid.option->buckets());
  row.walls = static_cast<std::int32_t>(walls.size());
  row.waits_at = walls;
  row.filled_by = fillers_of(mid.sim, mid.option->buckets(), walls, project);
  const auto left = stranded_of(mid.sim, mid.option->buckets(), walls);
  row.stranded_share = left.share;
  row.stranded_weeks = left.weeks;
  row.blocked_hours_week = row.blocked_low = row.blocked_high = sc.per_week(walls, mid.sim);
  row.late_days = row.late_low = row.late_high = sc.late_days(mid.sim);
  row.pace = row.pace_low = row.pace_high = sc.pace(mid.sim);
  // Low and high caps: the interval is the least and the most of the three, as a run that waits
  // less early may meet more walls later.
  for (std::size_t i = 1; i < rep.options.size(); ++i) {
    const auto& other = rep.options[i].sim;
    const double h = sc.per_week(waits_of(other, rep.options[i].option->buckets()), other);
    const double usd = row.fee_usd_month + other.token_cost_usd * sc.per_month;
    row.blocked_low = std::min(row.blocked_low, h);
    row.blocked_high = std::max(row.blocked_high, h);
    row.late_low = std::min(row.late_low, sc.late_days(other));
    row.late_high = std::max(row.late_high, sc.late_days(other));
    row.pace_low = std::min(row.pace_low, sc.pace(other));
    row.pace_high = std::max(row.pace_high, sc.pace(other));
    row.usd_low = std::min(row.usd_low, usd);
    row.usd_high = std::max(row.usd_high, usd);
  }
  row.sessions = static_cast<std::int32_t>(mid.sim.sessions.size());
  for (const auto& s : mid.sim.sessions) row.sessions_cut += s.outcome != session_outcome::completed;
  row.within_limit = row.blocked_hours_week <= max_blocked;
  return row;
}

// A plan that never waits at any of its caps spills nothing: its "+ extra usage" row is the same.
void drop_idle_spills(const std::vector<plan_candidate>& candidates, plan_choice& r) {
  std::size_t same = 0;
  for (const auto& c : candidates) {
    if (c.spills_from.empty()) continue;
    const auto alone = std::find_if(r.rows.begin(), r.rows.end(),
                                    [&](const plan_choice_row& x) { return x.label == c.spills_from; });
    if (alone == r.rows.end() || alone->blocked_high > 0 || alone->sessions_cut > 0) continue;
    std::erase_if(r.rows, [&](const plan_choice_row& x) { return x.label == c.label; });
    ++same;
  }
  if (same > 0)
    r.notes.push_back(fmt::format("{} plan{} that never wait{} at any of {} caps left out with extra usage (the same row)",
                                  same, same == 1 ? "" : "s", same == 1 ? "s" : "", same == 1 ? "its" : "their"));
}

// The rows ranked (the cheapest within the limit first, then the rest by their waits) and the
// verdict in a sentence, with which input would narrow it.
void rank_and_judge(plan_choice& r, double max_blocked) {
  std::stable_sort(r.rows.begin(), r.rows.end(), [](const plan_choice_row& a, const plan_choice_row& b) {
    if (a.within_limit != b.within_limit) return a.within_limit;
    return a.within_limit ? a.usd_month < b.usd_month : a.blocked_hours_week < b.blocked_hours_week;
  });
  if (r.rows.empty()) return;
  const auto& best = r.rows.front();
  const auto range = best.blocked_low != best.blocked_high
                         ? fmt::format(" ({:.1f}–{:.1f} with the caps' uncertainty)", best.blocked_low, best.blocked_high)
                         : std::string();
  r.verdict = best.within_limit
                  ? fmt::format("{} at ${:.0f} a month: {:.1f} h a week waiting for resets{}, the cheapest within {:g} h",
                                best.label, best.usd_month, best.blocked_hours_week, range, max_blocked)
                  : fmt::format("no option stays within {:g} h a week of waiting; the least is {} with {:.1f} h{}",
                                max_blocked, best.label, best.blocked_hours_week, range);
  if (!best.other_model.empty()) {
    r.verdict += fmt::format(", on another model ({})", best.other_model);
    const auto own = std::find_if(r.rows.begin(), r.rows.end(),
                                  [](const plan_choice_row& x) { return x.other_model.empty() && x.within_limit; });
    if (own != r.rows.end())
      r.verdict += fmt::format("; on the logs' own models, {} at ${:.0f} with {:.1f} h", own->label, own->usd_month,
                               own->blocked_hours_week);
  }
  if (std::any_of(r.rows.begin(), r.rows.end(), [](const plan_choice_row& x) { return x.caps == plan_caps_source::assumed; }))
    r.notes.push_back("some caps are assumed (no plan publishes its caps): a usage-limit wall in your logs, the plan's "
                      "percentages recorded by `loopcast statusline` (Claude) or Codex's own, or --limit with your "
                      "plan's caps replaces the assumption, and --plan says which plan those logs were on");
}

} // namespace

plan_choice choose_plan(const std::vector<recorded_trace>& traces, const std::vector<plan_candidate>& candidates,
                        const plan_choice_options& o) {
  plan_choice r;
  std::vector<std::string> project;  // per replayed session: the sessions with requests, trace by trace
  for (const auto& t : traces) {
    const auto p = project_of(t);
    for (const auto& s : t.sessions)
      if (!s.requests.empty()) project.push_back(p);
  }
  replay_options ro;
  ro.seed = o.seed;
  ro.speed = replay_speed::recorded;
  ro.record_attempts = true;
  const auto recorded = measure_recorded(traces);
  r.requests = static_cast<std::int64_t>(recorded.requests);
  r.span_days = std::max(1.0, recorded.wall_s / 86400);
  const replay_scale sc{recorded.wall_s, r.span_days, month_days / r.span_days};
  // At a plan's wall the person waits for the reset and goes on, however often the window refuses
  // (the agent's own retry count is for transient errors, not for a plan's reset).
  auto patient = o.client;
  patient.max_retries = -1;
  patient.honour_retry_after = true;
  patient.retry_after_cap_s = std::numeric_limits<double>::infinity();
  for (const auto& c : candidates) {
    const auto& client = c.targets.front().second.plan.has_value() ? patient : o.client;
    std::vector<model_map> maps{map_of(c.label, c.targets, c.spill, client)};
    if (!c.low.empty()) maps.push_back(map_of(c.label, c.low, c.spill, client));
    if (!c.high.empty()) maps.push_back(map_of(c.label, c.high, c.spill, client));
    const auto rep = run_replay(traces, maps, ro);
    for (const auto& n : rep.shaping.front().notes)
      if (std::find(r.notes.begin(), r.notes.end(), n) == r.notes.end()) r.notes.push_back(n);
    r.rows.push_back(row_of(c, rep, sc, project, o.max_blocked_hours_week));
  }
  condense_rule_notes(candidates, traces, r.notes);
  drop_idle_spills(candidates, r);
  rank_and_judge(r, o.max_blocked_hours_week);
  r.notes.push_back(fmt::format("{} requests over {:.1f} days of logs, replayed with their recorded agent time and "
                                "durations; hours and dollars scaled to a week and a month",
                                r.requests, r.span_days));
  return r;
}

std::vector<plan_choice> compare_plans(std::vector<recorded_trace> traces, const preset_library& lib,
                                       const compare_plans_options& o) {
  std::vector<recorded_trace> claude, codex;
  std::size_t other = 0, before = 0;
  const std::string first_file = traces.empty() ? std::string("(no log)") : traces.front().file;
  for (auto& whole : traces) {
    auto t = std::isnan(o.since_unix_s) ? std::move(whole) : sessions_since(whole, o.since_unix_s, before);
    if (t.request_count() == 0) continue;
    if (t.format == trace_format::claude_code) claude.push_back(std::move(t));
    else if (t.format == trace_format::codex) codex.push_back(std::move(t));
    else ++other;
  }
  if (claude.empty() && codex.empty() && before > 0)
    throw std::invalid_argument(fmt::format("--since: no Claude Code or Codex session starts at or after {:%Y-%m-%d %H:%M} "
                                            "UTC ({} start before it)",
                                            fmt::gmtime(static_cast<std::time_t>(o.since_unix_s)), before));
  if (claude.empty() && codex.empty())
    throw trace_error(first_file, 0,
                      "no Claude Code or Codex request to compare plans with (plans are compared for those two agents)");
  std::vector<plan_choice> out;
  for (const auto agent : {plan_agent::claude_code, plan_agent::codex}) {
    const auto& logs = agent == plan_agent::claude_code ? claude : codex;
    if (logs.empty()) continue;
    const auto fit = fit_plan(logs);
    const auto models = models_of(logs);
    const auto prices = load_price_book(o.price_list, lib, models);
    plan_caps_input in;
    in.fit = &fit;
    in.home_plan = o.home_plan;
    in.prices = &prices;
    in.models = models;
    if (o.set_given) in.set_given = [&](std::span<target* const> ts) { o.set_given(agent, ts); };
    plan_choice_options po;
    po.client = lib.load_client(agent == plan_agent::claude_code ? "claude-code" : "codex");
    po.max_blocked_hours_week = o.max_blocked_hours_week;
    auto r = choose_plan(logs, plan_candidates(lib, agent, in), po);
    r.agent = agent == plan_agent::claude_code ? "Claude Code" : "Codex";
    if (before > 0)
      r.notes.push_back(fmt::format("{} session{} that started before {:%Y-%m-%d %H:%M} UTC left out (--since)", before,
                                    before == 1 ? "" : "s", fmt::gmtime(static_cast<std::time_t>(o.since_unix_s))));
    if (other > 0)
      r.notes.push_back(fmt::format("{} log{} of other agents (opencode, SWE-agent, …) left out: plans are compared for "
                                    "Claude Code and Codex",
                                    other, other == 1 ? "" : "s"));
    out.push_back(std::move(r));
  }
  return out;
}

} // namespace loopcast
