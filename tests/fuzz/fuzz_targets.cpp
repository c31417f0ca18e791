#include "fuzz_targets.hpp"

#include "import/common.hpp"

#include <loopcast/limits_inference.hpp>
#include <loopcast/loopcast.hpp>
#include <loopcast/price_lists.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace loopcast::fuzz {

namespace {

// A violated invariant is a finding: stop loudly so the fuzzer keeps the input.
#define LC_FUZZ_CHECK(cond)                                                                                  \
  do {                                                                                                       \
    if (!(cond)) {                                                                                           \
      std::fprintf(stderr, "invariant violated: %s (%s:%d)\n", #cond, __FILE__, __LINE__);                   \
      std::abort();                                                                                          \
    }                                                                                                        \
  } while (0)

// The bytes as a file the importers can open (an anonymous in-memory file).
struct memfile {
  int fd = -1;
  std::string path;
  memfile(const std::uint8_t* data, std::size_t size) {
    fd = ::memfd_create("loopcast-fuzz", 0);
    LC_FUZZ_CHECK(fd >= 0);
    std::size_t done = 0;
    while (done < size) {
      const auto n = ::write(fd, data + done, size - done);
      LC_FUZZ_CHECK(n > 0);
      done += static_cast<std::size_t>(n);
    }
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  ~memfile() { ::close(fd); }
};

target simple_target() {
  target t;
  t.name = "fuzz";
  t.context_window_tokens = 1'000'000'000;
  t.cache.block_tokens = 64;
  t.speed.overhead_s = 0.1;
  t.speed.prefill = linear_curve{1e-4, 1e-9};
  t.speed.decode = linear_curve{1e-3, 1e-8};
  t.prices = price_sheet{};
  t.prices->usd_per_million = {1, 0.1, 1.25, 2, 5, 5};
  bucket_config b;
  b.name = "tpm";
  b.limit = 2'000'000;
  b.period_s = 60;
  b.classes = class_set::all();
  b.charging = charging_rule::reserve_then_refund;
  t.limits = {b};
  return t;
}

void check_result(const simulation_result& r) {
  LC_FUZZ_CHECK(std::isfinite(r.wall_s) && r.wall_s >= 0);
  LC_FUZZ_CHECK(std::isfinite(r.cost_usd) && r.cost_usd >= 0);
  LC_FUZZ_CHECK(std::isfinite(r.busy_s) && r.busy_s >= 0);
  for (const auto& s : r.sessions) LC_FUZZ_CHECK(std::isfinite(s.stall_s) && s.stall_s >= 0);
  const auto m = compute_request_metrics(r.requests);
  LC_FUZZ_CHECK(std::isfinite(m.effective_tps.p50) && !std::isinf(m.cache_hit_rate));
  LC_FUZZ_CHECK(m.context_tokens.count == 0 || std::isfinite(m.cache_hit_rate));
}

// What every importer's output must satisfy, and what downstream does with it.
void check_trace(const recorded_trace& t) {
  for (const auto& s : t.sessions)
    for (const auto& r : s.requests) {
      LC_FUZZ_CHECK(r.tokens.input >= 0 && r.tokens.cache_read >= 0 && r.tokens.cache_write >= 0);
      LC_FUZZ_CHECK(r.tokens.output >= 0 && r.tokens.reasoning >= 0);
      LC_FUZZ_CHECK(std::isfinite(r.t_send));
      LC_FUZZ_CHECK(std::isnan(r.t_end) || r.t_end >= r.t_send);
      LC_FUZZ_CHECK(r.model >= 0 && static_cast<std::size_t>(r.model) < t.models.size());
      LC_FUZZ_CHECK(static_cast<std::size_t>(r.runs_begin) + r.runs_count <= t.runs.size());
    }
  // The importers' targets stop here (fast: thousands of inputs a second); the `replay` target
  // drives what comes after, on small traces.
}

// A target of the replay fuzzer, picked by a byte: limits with each oversize rule and a small
// window (compactions, overflows), or an engine.
scenario_option replay_option(std::uint8_t pick) {
  scenario_option o{"fuzz", {simple_target()}, route_policy{}, retry_policy{}, false};
  o.first().context_window_tokens = 4096 << (pick % 4);
  auto& b = o.first().limits.front();
  b.limit = 1000 << (pick % 3);
  b.oversize = static_cast<oversize_rule>((pick / 4) % 3);
  o.client.max_retries = (pick & 0x40) ? -1 : 3;
  if (pick & 0x80) {
    o.first().kind = target_kind::local;
    o.first().limits.clear();
    o.first().prices.reset();
    o.first().power = power_config{};
    engine_config e;
    e.name = "fuzz";
    e.max_sequences = 2;
    e.batch_slowdown = 0.1;
    e.memory = {24, 10, 1, 4, 100000};
    o.first().engine = e;
  }
  return o;
}

void import_as(const std::uint8_t* data, std::size_t size, trace_format f) {
  memfile file(data, size);
  try {
    check_trace(import_trace(file.path, f));
  } catch (const error&) {
  }
}

// The catalogue, read once: reading models/ on every input spent half of each execution there.
const preset_library& catalogue() {
  static const preset_library library({LOOPCAST_FUZZ_MODELS_DIR});
  return library;
}

} // namespace

void preset(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 4) {
    case 0: {
      const auto t = parse_target(text, "fuzz.json");
      session_script s;  // two requests through the target's buckets, cache and speed
      s.lineages = 1;
      s.runs = {{0, 5000}, {0, 9000}};
      s.requests = {{5000, 300, 100, 4096, 0, 0, 1, 1, false}, {9000, 200, 0, 4096, 3.0, 1, 1, 2, false}};
      const session_plan plan{&s, 0, 1, 0};
      retry_policy p;
      p.max_retries = 3;
      check_result(simulate(t, p, {&plan, 1}));
      // The same target twice as a route (docs/routing.md): every served request and token is
      // one target's.
      const target route[] = {t, t};
      route_policy rp;
      rp.spill_after_s = (data[0] / 4) % 2 ? 0.0 : 30.0;
      const auto r = simulate_route(route, rp, p, {&plan, 1});
      check_result(r);
      LC_FUZZ_CHECK(r.route.size() == 2);
      LC_FUZZ_CHECK(static_cast<std::size_t>(r.route[0].requests_served + r.route[1].requests_served) ==
                    r.requests.size());
      LC_FUZZ_CHECK(r.route[0].tokens.total() + r.route[1].tokens.total() == r.tokens.total());
      break;
    }
    case 1: (void)parse_client(text, "fuzz.json"); break;
    case 2: {
      const auto w = parse_workload(text, "fuzz.json");
      if (turns_cap(w) <= 2000) {
        const auto s = generate_session(w, 1);
        for (const auto& r : s.requests) LC_FUZZ_CHECK(r.prompt_tokens >= 0 && r.output_tokens >= 0);
      }
      break;
    }
    case 3: (void)parse_scenario(text, "fuzz.json", catalogue()); break;
    }
  } catch (const error&) {
  }
}

void replay(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return;
  memfile file(data + 2, size - 2);
  try {
    std::vector<recorded_trace> v{import_trace(file.path, trace_format::automatic)};
    check_trace(v.front());
    if (v.front().totals || v.front().request_count() > 2000) return;
    (void)stats_to_json(v, compute_trace_stats(v));
    replay_options ro;
    ro.record_attempts = (data[1] & 1) != 0;
    ro.policy = static_cast<context_policy>((data[1] >> 1) % 3);
    ro.speed = (data[1] & 8) ? replay_speed::recorded : replay_speed::target;
    ro.max_tokens = (data[1] & 16) ? 8192 : 0;
    const std::vector<scenario_option> options{replay_option(data[0])};
    const auto r = run_replay(v, options, ro);
    check_result(r.options.at(0).sim);
    (void)replay_to_json(v, r);
  } catch (const error&) {
  }
}

void route(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const auto o = parse_route(text, "fuzz.json", catalogue());
    auto policy = o.routing;
    // Two segments (a model map's routes) when the first byte says so: requests alternate between them.
    const bool split = (data[0] & 1) && o.targets.size() >= 2;
    if (split) policy.segments = {{0, 1}, {1, static_cast<std::uint8_t>(o.targets.size() - 1)}};
    session_script s;
    s.lineages = 1;
    s.runs = {{0, 3000}, {0, 6000}, {0, 9000}};
    s.requests = {{3000, 300, 0, 4096, 0, 0, 1, 1, false}, {6000, 200, 50, 4096, 2.0, 1, 1, 2, false},
                  {9000, 100, 0, 4096, 1.0, 2, 1, 3, false}};
    if (split) s.requests[1].segment = 1;
    const session_plan plans[] = {{&s, 0, 1, 0}, {&s, 5, 2, 0}, {&s, 10, 3, 0}};
    sim_options so;
    so.record_attempts = (data[0] & 2) != 0;
    const auto r = simulate_route(o.targets, policy, o.client, plans, so);
    check_result(r);
    LC_FUZZ_CHECK(r.route.size() == o.targets.size());
    std::size_t served = 0;
    std::int64_t tokens = 0;
    for (const auto& t : r.route) {
      served += static_cast<std::size_t>(t.requests_served);
      tokens += t.tokens.total();
    }
    LC_FUZZ_CHECK(served == r.requests.size());
    LC_FUZZ_CHECK(tokens == r.tokens.total());
    // Every attempt went to its request's segment.
    for (const auto& a : r.attempts) {
      const auto seg = split && a.request == 2 ? route_segment{1, static_cast<std::uint8_t>(o.targets.size() - 1)}
                       : split                ? route_segment{0, 1}
                                              : route_segment{0, static_cast<std::uint8_t>(o.targets.size())};
      LC_FUZZ_CHECK(a.target >= seg.first && a.target < seg.first + seg.count);
    }
  } catch (const error&) {
  }
}

void forecast(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return;
  memfile file(data + 2, size - 2);
  try {
    const auto t = import_trace(file.path, trace_format::automatic);
    if (t.totals || t.request_count() > 500) return;
    // A 5-hour window anchored at first use (or a token bucket), counting uncached input and output.
    target tgt = simple_target();
    auto& b = tgt.limits.front();
    b.limit = 2000 << (data[0] % 8);
    if (data[0] & 0x10) {
      b.algorithm = bucket_algorithm::fixed_window;
      b.anchor = window_anchor::first_use;
      b.period_s = 18000;
    }
    // A second bucket whose limit steps down and back up within the day (a dated rule crossed),
    // on logs with a clock or without one.
    if (data[1] & 0x04) {
      bucket_config w = b;
      w.name = "stepping";
      w.limit = 3 * b.limit;
      const double origin = t.absolute_clock && !t.sessions.empty() && !t.sessions[0].requests.empty()
                                ? t.sessions[0].requests.front().t_send
                                : 0.0;
      w.limit_steps = {{origin + 600.0 * (1 + data[0] % 4), b.limit / 2}, {origin + 7200.0, 4 * b.limit}};
      tgt.limits.push_back(w);
    }
    forecast_options o;
    o.each_window = (data[1] & 0x02) != 0;
    o.draws = 1 + data[1] % 8;
    o.horizon_s = (data[1] & 0x80) ? 86400.0 : 3600.0;
    o.recent_requests = 1 + (data[1] >> 3) % 16;
    o.block_requests = 1 + (data[0] >> 5) % 4;
    o.pace_sigma = (data[1] & 0x40) ? 1.0 : 0.0;
    o.work_budget = 20000;
    const auto f = forecast_next_wall(t, tgt, o);
    LC_FUZZ_CHECK(f.requests_simulated <= o.work_budget + f.requests);
    LC_FUZZ_CHECK(f.hit_share >= 0 && f.hit_share <= 1);
    LC_FUZZ_CHECK(!(f.p10_s > f.p50_s) && !(f.p50_s > f.p90_s));  // ordered (infinity allowed), never NaN
    LC_FUZZ_CHECK(!std::isnan(f.p10_s) && !std::isnan(f.p50_s) && !std::isnan(f.p90_s));
    LC_FUZZ_CHECK(f.steps == 0 || f.refused_at_s || f.draws_s.size() == static_cast<std::size_t>(o.draws));
    LC_FUZZ_CHECK(f.draws_s.size() == static_cast<std::size_t>(f.draws));  // the draws it reports, it ran
    for (const auto& x : f.buckets) {
      LC_FUZZ_CHECK(std::isfinite(x.used) && x.used >= 0);
      if (!x.wall) continue;  // each window's own wall: ordered quantiles, a share
      LC_FUZZ_CHECK(o.each_window);
      LC_FUZZ_CHECK(!(x.wall->p10_s > x.wall->p50_s) && !(x.wall->p50_s > x.wall->p90_s));
      LC_FUZZ_CHECK(!std::isnan(x.wall->p10_s) && !std::isnan(x.wall->p50_s) && !std::isnan(x.wall->p90_s));
      LC_FUZZ_CHECK(x.wall->hit_share >= 0 && x.wall->hit_share <= 1);
    }
    (void)forecast_to_json(f);
  } catch (const error&) {
  } catch (const std::invalid_argument&) {  // a log too long for the work budget: a reported refusal
  }
}

void claude_code(const std::uint8_t* d, std::size_t n) { import_as(d, n, trace_format::claude_code); }
void codex(const std::uint8_t* d, std::size_t n) { import_as(d, n, trace_format::codex); }
void kv_cache_tester(const std::uint8_t* d, std::size_t n) { import_as(d, n, trace_format::kv_cache_tester); }
void loopcast_jsonl(const std::uint8_t* d, std::size_t n) { import_as(d, n, trace_format::loopcast); }
void swe_agent(const std::uint8_t* d, std::size_t n) { import_as(d, n, trace_format::swe_agent); }
void detect(const std::uint8_t* d, std::size_t n) { import_as(d, n, trace_format::automatic); }

void opencode_rows(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  recorded_trace t;
  t.file = "fuzz";
  detail::issue_log log(t.summary, "fuzz");
  std::optional<nlohmann::json> message;
  detail::opencode_part_times parts;
  std::size_t start = 0;
  std::int64_t line = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    auto j = detail::parse_line(text.substr(start, end - start), ++line, log);
    if (j) {
      if (!message) message = std::move(j);
      else detail::add_opencode_part(parts, *j);
    }
    start = end + 1;
  }
  if (!message) return;
  if (auto q = detail::decode_opencode_message(*message, parts, 1, t, log)) {
    LC_FUZZ_CHECK(q->tokens.input >= 0 && q->tokens.output >= 0 && q->tokens.cache_read >= 0);
    LC_FUZZ_CHECK(std::isfinite(q->t_send) && q->t_end >= q->t_send);
    LC_FUZZ_CHECK(std::isnan(q->t_first_token) || (q->t_first_token >= q->t_send && q->t_first_token <= q->t_end));
  }
}

void price_list(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto l = parse_price_list(text, "fuzz");
    for (const auto& m : l.models) {
      const auto& c = m.prices.usd_per_million;
      for (double v : {c.input, c.cache_read, c.cache_write_5m, c.cache_write_1h, c.output, c.reasoning})
        LC_FUZZ_CHECK(std::isfinite(v) && v >= 0);
      LC_FUZZ_CHECK(m.prices.batch_discount >= 0 && m.prices.batch_discount < 1);
      (void)price_sheet_json(m.prices);
    }
  } catch (const loopcast::error&) {
  }
}

void rate_limit_headers(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto r = infer_limits(parse_header_snapshots(text, "fuzz"));
    for (const auto& b : r.buckets) LC_FUZZ_CHECK(b.config.limit > 0 && std::isfinite(b.config.limit));
    (void)limits_fragment_json(r);
  } catch (const loopcast::error&) {
  }
  // A message that states a limit only (Anthropic's "rate limit of 30,000 input tokens per minute")
  // has no waits to check; every other one has both, finite.
  for (const auto& m : find_rate_limit_messages(text, "fuzz"))
    LC_FUZZ_CHECK(m.limit > 0 && (!m.checkable || (std::isfinite(m.predicted_wait_s) && std::isfinite(m.stated_wait_s))));
}

entry find(std::string_view name) {
  if (name == "price_list") return price_list;
  if (name == "rate_limit_headers") return rate_limit_headers;
  if (name == "preset") return preset;
  if (name == "claude_code") return claude_code;
  if (name == "codex") return codex;
  if (name == "kv_cache_tester") return kv_cache_tester;
  if (name == "loopcast_jsonl") return loopcast_jsonl;
  if (name == "swe_agent") return swe_agent;
  if (name == "opencode_rows") return opencode_rows;
  if (name == "detect") return detect;
  if (name == "replay") return replay;
  if (name == "route") return route;
  if (name == "forecast") return forecast;
  return nullptr;
}

} // namespace loopcast::fuzz
