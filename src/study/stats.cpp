// `loopcast stats`: what recorded sessions say — throughput, context, cache and cost per model,
// period, session, project or plan window (docs/model.md §8; docs/replay.md "Stats").
#include "loopcast/replay.hpp"
#include "loopcast/stats.hpp"

#include "util/time_zone.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace loopcast {

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
    const double served = o.t + std::max(0.0, sc.recorded_of(o.request).ttft_s);
    cache.touch(runs, q.prompt_tokens, served);
  }
  return hits;
}

// The tokens of a recorded request as a provider cache of the given hits would bill them.
token_counts with_cache_hit(const recorded_request& r, std::int64_t hit, bool write_charged) {
  token_counts t = r.tokens;
  const std::int64_t prompt = r.tokens.prompt();
  t.cache_read = std::min(hit, prompt);
  const std::int64_t written = write_charged ? prompt - t.cache_read : 0;
  // Writes keep the lifetime the client asked for.
  t.cache_write = r.tokens.cache_write_1h > 0 ? 0 : written;
  t.cache_write_1h = r.tokens.cache_write_1h > 0 ? written : 0;
  t.input = prompt - t.cache_read - written;
  return t;
}

} // namespace

trace_stats compute_trace_stats(const std::vector<recorded_trace>& traces, const price_sheet* prices) {
  stats_options o;
  o.price_all = prices;
  return compute_trace_stats(traces, o);
}



std::string time_zone_name(const std::string& timezone) { return detail::zone(timezone).name(); }

double local_day_start(const std::string& option, const std::string& text, const std::string& timezone,
                       int days_after) {
  std::string digits;
  for (char c : text)
    if (c != '-') digits += c;
  const bool shaped = digits.size() == 8 &&
                      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                      (text.size() == 8 || (text.size() == 10 && text[4] == '-' && text[7] == '-'));
  int y = 0;
  unsigned m = 0, d = 0;
  if (shaped) {
    y = std::stoi(digits.substr(0, 4));
    m = static_cast<unsigned>(std::stoi(digits.substr(4, 2)));
    d = static_cast<unsigned>(std::stoi(digits.substr(6, 2)));
  }
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{m}, std::chrono::day{d}};
  if (!shaped || !ymd.ok())
    throw std::invalid_argument(fmt::format("{} {}: expected a date as YYYY-MM-DD or YYYYMMDD", option, text));
  const std::chrono::year_month_day day{std::chrono::sys_days{ymd} + std::chrono::days{days_after}};
  return detail::zone(timezone).midnight(static_cast<int>(day.year()), static_cast<unsigned>(day.month()),
                                         static_cast<unsigned>(day.day()));
}

// The project of a log (stats.hpp): its recorded cwd, else Claude Code's folder name decoded ("-home-u-app"
// is /home/u/app, though a '-' in a folder's own name reads as '/'), else its folder's name (not a
// Codex day folder).
std::string project_of(const recorded_trace& t) {
  if (!t.project.empty()) return t.project;
  auto folder = std::filesystem::path(t.file).parent_path().filename().string();
  if (t.format == trace_format::claude_code && folder.size() > 1 && folder.front() == '-')
    std::replace(folder.begin(), folder.end(), '-', '/');
  // Codex files its rollouts by date (sessions/YYYY/MM/DD): a day's folder names no project.
  if (t.format == trace_format::codex && !folder.empty() &&
      std::all_of(folder.begin(), folder.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return "(no cwd in the log)";
  return folder;
}

namespace {

// A request of the stats, with what groups it.
struct stats_row {
  const recorded_trace* trace;
  const recorded_request* request;
  std::size_t trace_index, flat, session, root;
};

struct group_key {
  std::string name;
  double start = unknown_time, end = unknown_time;
};

std::string two(int v) { return fmt::format("{:02d}", v); }

// Every row's period (day, week, month or block) in a zone.
std::vector<group_key> period_keys(const std::vector<stats_row>& rows, stats_grouping by, const detail::zone& tz) {
  std::vector<group_key> keys(rows.size());
  using namespace std::chrono;
  auto date_name = [](const year_month_day& d) {
    return fmt::format("{:04d}-{:02d}-{:02d}", static_cast<int>(d.year()), static_cast<unsigned>(d.month()),
                       static_cast<unsigned>(d.day()));
  };
  auto midnight = [&](const year_month_day& d) {
    return tz.midnight(static_cast<int>(d.year()), static_cast<unsigned>(d.month()), static_cast<unsigned>(d.day()));
  };
  if (by == stats_grouping::block) {
    // Across every log, in time order: a window opens at the whole hour of the first request at
    // or after the end of the last one, and lasts stats_block_hours.
    std::vector<std::size_t> order(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return rows[a].request->t_send < rows[b].request->t_send; });
    double start = -std::numeric_limits<double>::infinity();
    const double length = stats_block_hours * 3600.0;
    for (const auto i : order) {
      const double t = rows[i].request->t_send;
      if (t >= start + length) start = std::floor(t / 3600.0) * 3600.0;
      const auto c = tz.local(start);
      keys[i] = {fmt::format("{:04d}-{:02d}-{:02d} {}:{}", c.year, c.month, c.day, two(c.hour), two(c.minute)), start,
                 start + length};
    }
    return keys;
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto c = tz.local(rows[i].request->t_send);
    year_month_day d{year{c.year}, month{c.month}, day{c.day}};
    if (by == stats_grouping::week) d = year_month_day{sys_days{d} - days{c.weekday}};
    if (by == stats_grouping::month) {
      const year_month_day first{d.year(), d.month(), day{1}};
      const year_month_day next{sys_days{first + months{1}}};
      keys[i] = {fmt::format("{:04d}-{:02d}", static_cast<int>(d.year()), static_cast<unsigned>(d.month())),
                 midnight(first), midnight(next)};
      continue;
    }
    const year_month_day next{sys_days{d} + days{by == stats_grouping::week ? 7 : 1}};
    keys[i] = {date_name(d), midnight(d), midnight(next)};
  }
  return keys;
}

struct stats_acc {
  std::vector<request_sample> samples;
  token_counts tokens;
  double recorded = 0, priced = 0, ttl_priced = 0;
  std::int64_t ttl_hit = 0, prompt = 0;
  std::size_t unpriced = 0, ttl_unpriced = 0;
  bool all_recorded = true;
  std::set<std::string> from;
  group_key key;
  std::map<std::string, stats_acc> models;  // with --breakdown
};

stats_group make_group(const stats_acc& a, const std::string& name, bool pricing, bool ttl, bool bins) {
  stats_group g;
  g.name = name;
  g.start_unix = a.key.start;
  g.end_unix = a.key.end;
  g.requests = a.samples.size();
  g.tokens = a.tokens;
  g.metrics = compute_request_metrics(a.samples);
  g.recorded_cost_usd = a.all_recorded && !a.samples.empty() ? a.recorded : unknown_time;
  const bool priced = pricing && a.unpriced < a.samples.size();  // at least one request priced
  g.priced_cost_usd = priced ? a.priced : unknown_time;
  g.unpriced_requests = pricing ? a.unpriced : 0;
  for (const auto& f : a.from) g.priced_from += (g.priced_from.empty() ? "" : ", ") + f;
  if (ttl) {
    g.ttl_cache_hit_rate = a.prompt > 0 ? static_cast<double>(a.ttl_hit) / static_cast<double>(a.prompt) : unknown_time;
    g.ttl_priced_cost_usd = priced ? a.ttl_priced : unknown_time;
  }
  if (bins) {
    g.bins = default_context_bins();
    for (auto& b : g.bins) {
      std::vector<request_sample> in;
      for (const auto& x : a.samples)
        if (x.prompt >= b.lo_tokens && x.prompt < b.hi_tokens) in.push_back(x);
      b.requests = in.size();
      b.metrics = compute_request_metrics(in);
    }
  }
  for (const auto& [model, m] : a.models) g.models.push_back(make_group(m, model, pricing, ttl, false));
  return g;
}

} // namespace

trace_stats compute_trace_stats(const std::vector<recorded_trace>& traces, const stats_options& opt) {
  trace_stats st;
  st.by = opt.by;
  const detail::zone tz(opt.timezone);
  st.timezone = tz.name();
  const bool bounded = !std::isnan(opt.since_unix) || !std::isnan(opt.until_unix);
  const bool pricing = opt.prices || opt.price_all;
  std::vector<std::vector<std::int64_t>> hits;
  if (opt.cache_ttl_s > 0) {
    hits = ttl_cache_hits(traces, opt.cache_ttl_s, opt.cache_block_tokens);
    st.cache_ttl_s = opt.cache_ttl_s;
    st.cache_block_tokens = std::max<std::int64_t>(1, opt.cache_block_tokens);
  }
  // The requests that count, in the logs' order.
  std::vector<stats_row> rows;
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    const auto& t = traces[ti];
    if (const auto it = t.summary.skipped.find(std::string(repeated_response_reason)); it != t.summary.skipped.end())
      st.repeated_responses += it->second;
    if (t.totals) {
      st.totals_only.push_back(&t);
      continue;
    }
    if (!t.absolute_clock && (bounded || is_period(opt.by))) {
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
            (!std::isnan(opt.until_unix) && r.t_send >= opt.until_unix))
          ++st.filtered_out;
        else
          rows.push_back({&t, &r, ti, flat, s, root});
        ++flat;
      }
    }
  }
  std::vector<group_key> periods;
  if (is_period(opt.by)) periods = period_keys(rows, opt.by, tz);

  std::map<std::pair<double, std::string>, stats_acc> groups;  // periods in time order, the rest by name
  stats_acc all;
  std::set<std::string> unpriced;
  std::map<std::string, stats_pricing> pricing_of;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const auto& t = *row.trace;
    const auto& r = *row.request;
    const auto& model = t.models.at(static_cast<std::size_t>(r.model));
    group_key key;
    switch (opt.by) {
    case stats_grouping::model: key.name = model; break;
    case stats_grouping::session:
      key.name = t.sessions[row.root].id.empty() ? std::filesystem::path(t.file).filename().string() : t.sessions[row.root].id;
      break;
    case stats_grouping::project: key.name = project_of(t); break;
    case stats_grouping::machine: key.name = t.machine.empty() ? "this machine" : t.machine; break;
    default: key = periods[i]; break;
    }
    const price_sheet* sheet = opt.price_all;
    bool write_charged = true;
    std::string from = "--price";
    if (!sheet && opt.prices) {
      if (const auto* e = opt.prices->find(model)) {
        sheet = &e->prices;
        write_charged = e->write_charged;
        from = e->from;
        pricing_of.try_emplace(model, stats_pricing{model, e->from, opt.prices->source_label(*e)});
      } else {
        unpriced.insert(model);
      }
    }
    const double when = t.absolute_clock ? r.t_send : 0.0;
    const request_sample x{static_cast<std::uint32_t>(row.session), r.t_send, r.t_first_token, r.t_end,
                           r.tokens.prompt(), r.tokens.cache_read, r.tokens.generated()};
    const double cost = sheet ? price_request(*sheet, r.tokens, when).total_usd : 0.0;
    const std::int64_t hit = hits.empty() ? 0 : std::min(hits[row.trace_index][row.flat], r.tokens.prompt());
    const double ttl_cost = sheet && !hits.empty() ? price_request(*sheet, with_cache_hit(r, hit, write_charged), when).total_usd : 0.0;
    auto& g = groups[{std::isnan(key.start) ? 0.0 : key.start, key.name}];
    g.key = key;
    const bool split = opt.breakdown && opt.by != stats_grouping::model;  // a model's group is its own split
    stats_acc* targets[4] = {&g, &all, split ? &g.models[model] : nullptr, split ? &all.models[model] : nullptr};
    for (stats_acc* a : targets) {
      if (!a) continue;
      a->samples.push_back(x);
      a->tokens += r.tokens;
      if (std::isnan(r.cost_usd)) a->all_recorded = false;
      else a->recorded += r.cost_usd;
      if (sheet) {
        a->priced += cost;
        a->from.insert(from);
        a->ttl_priced += ttl_cost;
      } else {
        ++a->unpriced;
      }
      if (!hits.empty()) {
        a->ttl_hit += hit;
        a->prompt += r.tokens.prompt();
      }
    }
  }
  const bool ttl = !hits.empty();
  for (const auto& [key, a] : groups) st.groups.push_back(make_group(a, key.second, pricing, ttl, true));
  if (!all.samples.empty()) st.groups.push_back(make_group(all, "all", pricing, ttl, true));
  st.unpriced_models.assign(unpriced.begin(), unpriced.end());
  for (auto& [model, p] : pricing_of) st.pricing.push_back(std::move(p));
  return st;
}

} // namespace loopcast
