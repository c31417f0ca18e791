// Loading presets (models/*.json) strictly. The accepted keys of every kind are documented in
// docs/presets.md; keep the two in step.
#include "loopcast/presets.hpp"
#include "loopcast/price_lists.hpp"

#include "json/reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <span>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <unistd.h>

namespace loopcast {

using detail::node;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
// Resource limits: far above any real session, low enough to refuse absurd input quickly.
constexpr std::int64_t max_tokens_value = 1'000'000'000'000;  // 10^12 tokens
constexpr std::int64_t max_turns = 1'000'000;
constexpr std::int64_t max_sessions = 1'000'000;
constexpr std::int64_t max_scenario_turns = 100'000'000;  // sessions × turns of one run

// An enumeration read by the spellings of its table of names (names.hpp).
template <named_enum E>
E read_enum(const node& n) {
  static constexpr auto names = enum_spellings<E>();
  return *parse_name<E>(n.one_of(std::span<const std::string_view>(names)));
}

// ---- common header ---------------------------------------------------------------------------
#define LOOPCAST_HEADER_KEYS "kind", "name", "description", "source", "read_on", "verified", "notes"

void check_kind(const node& root, preset_kind want) {
  const auto k = read_enum<preset_kind>(root.at("kind"));
  if (k != want)
    root.at("kind").fail(fmt::format("expected a {} preset, found kind \"{}\"", to_string(want), to_string(k)));
}

std::string read_date(const node& n) {
  const auto s = n.string();
  const bool shape = s.size() == 10 && s[4] == '-' && s[7] == '-' &&
                     std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '-'; });
  if (!shape) n.fail(fmt::format("expected a date YYYY-MM-DD, found \"{}\"", s));
  return s;
}

std::string read_source(const node& n) {
  if (n.is_string()) {
    auto s = n.string();
    if (s.empty()) n.fail("expected a non-empty source");
    return s;
  }
  std::vector<std::string> parts;
  for (const auto& e : n.array(1)) parts.push_back(e.string());
  return fmt::format("{}", fmt::join(parts, "; "));
}

provenance read_provenance(const node& root) {
  provenance p;
  p.source = read_source(root.at("source"));
  p.read_on = read_date(root.at("read_on"));
  p.verified = root.has("verified") ? root.at("verified").boolean() : true;
  if (auto n = root.find("notes")) {
    if (!n->is_string())
      for (const auto& e : n->array()) (void)e.string();
  }
  return p;
}

std::string read_name(const node& root) {
  auto s = root.at("name").string();
  if (s.empty() || s.find_first_of(" \t\n/\\") != std::string::npos)
    root.at("name").fail(fmt::format("expected a name without spaces or slashes, found \"{}\"", s));
  return s;
}

std::string read_description(const node& root) {
  return root.has("description") ? root.at("description").string() : std::string{};
}

std::vector<std::string> read_string_list(const node& n) {
  std::vector<std::string> out;
  for (const auto& e : n.array()) out.push_back(e.string());
  return out;
}

// ---- distributions -----------------------------------------------------------------------------
distribution read_distribution(const node& n) {
  const auto kind = n.at("kind").one_of({"fixed", "uniform", "lognormal", "gamma", "empirical", "quantiles"});
  if (kind == "fixed") {
    n.expect_keys({"kind", "value"});
    return fixed_dist{n.at("value").non_negative()};
  }
  if (kind == "uniform") {
    n.expect_keys({"kind", "low", "high"});
    const double lo = n.at("low").non_negative();
    const double hi = n.at("high").non_negative();
    if (hi < lo) n.at("high").fail(fmt::format("expected high >= low ({}), found {}", lo, hi));
    return uniform_dist{lo, hi};
  }
  if (kind == "lognormal") {
    n.expect_keys({"kind", "median", "p90"});
    const double med = n.at("median").positive();
    const double p90 = n.at("p90").positive();
    if (p90 < med) n.at("p90").fail(fmt::format("expected p90 >= median ({}), found {}", med, p90));
    return lognormal_dist{med, p90};
  }
  if (kind == "gamma") {
    n.expect_keys({"kind", "shape", "scale"});
    return gamma_dist{n.at("shape").positive(), n.at("scale").positive()};
  }
  if (kind == "quantiles") {
    n.expect_keys({"kind", "p", "values"});
    quantile_dist q;
    for (const auto& v : n.at("p").array(2)) q.p.push_back(v.number_in(0, 1));
    for (const auto& v : n.at("values").array(2)) q.values.push_back(v.non_negative());
    if (q.p.size() != q.values.size())
      n.at("values").fail(fmt::format("expected as many values as probabilities ({}), found {}", q.p.size(), q.values.size()));
    if (q.p.front() != 0.0 || q.p.back() != 1.0)
      n.at("p").fail(fmt::format("expected probabilities from 0 to 1, found {} to {}", q.p.front(), q.p.back()));
    for (std::size_t i = 1; i < q.p.size(); ++i) {
      if (q.p[i] <= q.p[i - 1])
        n.at("p").fail(fmt::format("expected rising probabilities, found {} after {} (entry {})", q.p[i], q.p[i - 1], i));
      if (q.values[i] < q.values[i - 1])
        n.at("values").fail(fmt::format("expected values that never fall, found {} after {} (entry {})", q.values[i],
                                        q.values[i - 1], i));
    }
    return q;
  }
  n.expect_keys({"kind", "values"});
  empirical_dist e;
  for (const auto& v : n.at("values").array(1)) e.values.push_back(v.non_negative());
  return e;
}

// ---- speed -------------------------------------------------------------------------------------
roofline_hardware read_hardware(const node& n) {
  n.expect_keys({"memory_bandwidth_bytes_per_s", "flops_per_s", "parameters", "bytes_per_parameter",
                 "kv_bytes_per_token", "attention_flops_per_position", "utilisation", "prefill_chunk_tokens"});
  roofline_hardware h;
  h.memory_bandwidth_bytes_per_s = n.at("memory_bandwidth_bytes_per_s").positive();
  h.flops_per_s = n.at("flops_per_s").positive();
  h.parameters = n.at("parameters").positive();
  h.bytes_per_parameter = n.at("bytes_per_parameter").positive();
  h.kv_bytes_per_token = n.at("kv_bytes_per_token").non_negative();
  h.attention_flops_per_position = n.at("attention_flops_per_position").non_negative();
  h.utilisation = n.at("utilisation").number_in(1e-3, 1);
  h.prefill_chunk_tokens = n.at("prefill_chunk_tokens").number_in(1, 1e6);
  return h;
}

// Per-token times below 1 ns (over 10^9 tokens/s) or above an hour are refused: they are typos.
double read_tps(const node& n) { return n.number_in(1e-3, 1e9); }

speed_curve read_curve(const node& n, bool prefill) {
  const auto kind = n.at("kind").one_of({"constant", "linear", "table", "roofline"});
  if (kind == "constant") {
    n.expect_keys({"kind", "tokens_per_second"});
    return constant_curve{1.0 / read_tps(n.at("tokens_per_second"))};
  }
  if (kind == "linear") {
    n.expect_keys({"kind", "a_s_per_token", "b_s_per_token_per_position"});
    const double a = n.at("a_s_per_token").number_in(1e-9, 3600);
    const double b = n.at("b_s_per_token_per_position").number_in(0, 1);
    return linear_curve{a, b};
  }
  if (kind == "table") {
    n.expect_keys({"kind", "points"});
    table_curve t;
    for (const auto& p : n.at("points").array(1)) {
      p.expect_keys({"context_tokens", "tokens_per_second"});
      const double x = p.at("context_tokens").non_negative();
      if (!t.context_tokens.empty() && x <= t.context_tokens.back())
        p.at("context_tokens").fail(fmt::format("expected contexts in increasing order: {} after {}", x,
                                                t.context_tokens.back()));
      t.context_tokens.push_back(x);
      t.seconds_per_token.push_back(1.0 / read_tps(p.at("tokens_per_second")));
    }
    return t;
  }
  n.expect_keys({"kind", "hardware"});
  const auto hw = read_hardware(n.at("hardware"));
  return prefill ? roofline_prefill(hw) : roofline_decode(hw);
}

speed_model read_speed(const node& n) {
  n.expect_keys({"overhead_s", "prefill", "cached_token_s", "decode", "noise"});
  speed_model m;
  m.overhead_s = n.at("overhead_s").number_in(0, 3600);
  m.prefill = read_curve(n.at("prefill"), true);
  m.cached_token_s = n.at("cached_token_s").number_in(0, 1);
  m.decode = read_curve(n.at("decode"), false);
  if (auto z = n.find("noise")) {
    z->expect_keys({"kind", "median", "p90"});
    (void)z->at("kind").one_of({"lognormal"});
    m.noise_median = z->at("median").number_in(0.01, 100);
    const double p90 = z->at("p90").number_in(m.noise_median, 100 * m.noise_median);
    m.noise_sigma = std::log(p90 / m.noise_median) / 1.2815515655446004;
  }
  return m;
}

// ---- limits ------------------------------------------------------------------------------------
bucket_config read_bucket(const node& n) {
  n.expect_keys({"name", "unit", "counts", "limit", "period_s", "algorithm", "charging", "count_rejected",
                 "anchor", "anchor_offset_s", "oversize"});
  bucket_config b;
  b.name = n.at("name").string();
  if (b.name.empty()) n.at("name").fail("expected a non-empty bucket name");
  b.unit = read_enum<bucket_unit>(n.at("unit"));
  b.algorithm = read_enum<bucket_algorithm>(n.at("algorithm"));
  if ((b.unit == bucket_unit::concurrent_requests) != (b.algorithm == bucket_algorithm::concurrency))
    n.at("algorithm").fail("the concurrency algorithm goes with unit \"concurrent_requests\", and only with it");
  b.limit = static_cast<double>(n.at("limit").integer(1, max_tokens_value));
  if (b.algorithm != bucket_algorithm::concurrency)
    b.period_s = n.at("period_s").number_in(1e-3, 366.0 * 86400);
  else if (n.has("period_s"))
    n.at("period_s").fail("a concurrency bucket has no period");
  if (b.unit == bucket_unit::tokens) {
    for (const auto& c : n.at("counts").array(1)) {
      b.classes.insert(read_enum<token_class>(c));
    }
  } else if (n.has("counts")) {
    n.at("counts").fail(fmt::format("only token buckets count token classes; this bucket counts {}", to_string(b.unit)));
  }
  if (b.classes.counts_generated()) {
    b.charging = read_enum<charging_rule>(n.at("charging"));
  } else if (n.has("charging")) {
    n.at("charging").fail("a charging rule applies only to buckets that count output or reasoning");
  }
  if (auto cr = n.find("count_rejected")) {
    b.count_rejected = cr->boolean();
    if (b.count_rejected && b.unit != bucket_unit::requests)
      cr->fail("count_rejected applies only to buckets with unit \"requests\"");
  }
  if (auto an = n.find("anchor")) {
    if (b.algorithm != bucket_algorithm::fixed_window) an->fail("anchor applies only to fixed_window buckets");
    b.anchor = read_enum<window_anchor>(*an);
  }
  if (auto off = n.find("anchor_offset_s")) {
    if (b.anchor != window_anchor::epoch) off->fail("anchor_offset_s needs \"anchor\": \"epoch\"");
    b.anchor_offset_s = off->number_in(-b.period_s, b.period_s);
  }
  if (auto ov = n.find("oversize")) {
    if (b.algorithm == bucket_algorithm::concurrency) ov->fail("a concurrency bucket has no oversize rule");
    b.oversize = read_enum<oversize_rule>(*ov);
  }
  return b;
}

// ---- prices ------------------------------------------------------------------------------------
class_prices read_class_prices(const node& n) {
  n.expect_keys({"input", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning"});
  class_prices p;
  const double max_price = 1e6;  // USD per million tokens
  p.input = n.at("input").number_in(0, max_price);
  p.cache_read = n.at("cache_read").number_in(0, max_price);
  p.output = n.at("output").number_in(0, max_price);
  p.reasoning = n.has("reasoning") ? n.at("reasoning").number_in(0, max_price) : p.output;
  p.cache_write_5m = n.has("cache_write_5m") ? n.at("cache_write_5m").number_in(0, max_price) : -1;
  p.cache_write_1h = n.has("cache_write_1h") ? n.at("cache_write_1h").number_in(0, max_price) : -1;
  return p;
}

std::uint8_t read_weekdays(const node& n) {
  static constexpr std::string_view names[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
  std::uint8_t mask = 0;
  for (const auto& d : n.array(1)) {
    const auto s = d.one_of({"mon", "tue", "wed", "thu", "fri", "sat", "sun"});
    for (unsigned i = 0; i < 7; ++i)
      if (names[i] == s) mask = static_cast<std::uint8_t>(mask | (1u << i));
  }
  return mask;
}

price_sheet read_prices(const node& n) {
  n.expect_keys({"usd_per_million", "long_context", "batch_discount", "batch_discounts_cache", "time_of_day",
                 "usd_per_request", "cache_storage_usd_per_million_hour"});
  price_sheet p;
  p.usd_per_million = read_class_prices(n.at("usd_per_million"));
  if (auto lc = n.find("long_context")) {
    for (const auto& t : lc->array()) {
      t.expect_keys({"above_prompt_tokens", "usd_per_million"});
      context_tier tier{t.at("above_prompt_tokens").integer(1, max_tokens_value),
                        read_class_prices(t.at("usd_per_million"))};
      if (!p.long_context.empty() && tier.above_prompt_tokens <= p.long_context.back().above_prompt_tokens)
        t.at("above_prompt_tokens").fail("expected tiers in increasing order of threshold");
      p.long_context.push_back(tier);
    }
  }
  if (auto b = n.find("batch_discount")) p.batch_discount = b->number_in(0, 0.99);
  if (auto b = n.find("batch_discounts_cache")) p.batch_discounts_cache = b->boolean();
  if (auto tod = n.find("time_of_day")) {
    tod->expect_keys({"default_multiplier", "windows"});
    p.default_time_multiplier = tod->at("default_multiplier").number_in(0, 100);
    for (const auto& w : tod->at("windows").array()) {
      w.expect_keys({"weekdays", "start_hour_utc", "end_hour_utc", "multiplier"});
      time_window tw;
      tw.weekdays = read_weekdays(w.at("weekdays"));
      tw.start_hour_utc = w.at("start_hour_utc").number_in(0, 24);
      tw.end_hour_utc = w.at("end_hour_utc").number_in(0, 24);
      if (tw.end_hour_utc <= tw.start_hour_utc)
        w.at("end_hour_utc").fail(fmt::format("expected end_hour_utc > start_hour_utc ({}), found {}",
                                              tw.start_hour_utc, tw.end_hour_utc));
      tw.multiplier = w.at("multiplier").number_in(0, 100);
      p.time_windows.push_back(tw);
    }
  }
  if (auto f = n.find("usd_per_request")) p.usd_per_request = f->number_in(0, 1e3);
  if (auto f = n.find("cache_storage_usd_per_million_hour")) p.cache_storage_usd_per_million_hour = f->number_in(0, 1e4);
  return p;
}

power_config read_power(const node& n) {
  n.expect_keys({"load_power_w", "idle_power_w", "usd_per_kwh", "hardware_usd", "lifetime_hours"});
  power_config p;
  p.load_power_w = n.at("load_power_w").number_in(0, 1e7);
  p.idle_power_w = n.at("idle_power_w").number_in(0, 1e7);
  p.usd_per_kwh = n.at("usd_per_kwh").number_in(0, 100);
  if (n.has("hardware_usd") != n.has("lifetime_hours"))
    n.fail("hardware_usd and lifetime_hours go together: give both or neither");
  if (n.has("hardware_usd")) {
    p.hardware_usd = n.at("hardware_usd").number_in(0, 1e9);
    p.lifetime_hours = n.at("lifetime_hours").number_in(1, 1e6);
  }
  return p;
}

engine_config read_engine(const node& n, std::int64_t context_window) {
  n.expect_keys({"name", "max_sequences", "batch_slowdown", "memory"});
  engine_config e;
  e.name = n.at("name").string();
  e.max_sequences = static_cast<std::int32_t>(n.at("max_sequences").integer(1, 1 << 20));
  e.batch_slowdown = n.at("batch_slowdown").number_in(0, 100);
  const auto m = n.at("memory");
  m.expect_keys({"gpu_gb", "weights_gb", "overhead_gb", "kv_pool_gb", "kv_bytes_per_token"});
  auto& g = e.memory;
  g.gpu_gb = m.at("gpu_gb").number_in(0.1, 1e5);
  g.weights_gb = m.at("weights_gb").number_in(0, 1e5);
  g.overhead_gb = m.at("overhead_gb").number_in(0, 1e5);
  g.kv_pool_gb = m.at("kv_pool_gb").number_in(1e-6, 1e5);
  g.kv_bytes_per_token = m.at("kv_bytes_per_token").number_in(1, 1e9);
  if (engine_vram_gb(g) > g.gpu_gb + 1e-9)
    m.fail(fmt::format("weights {} GB + overhead {} GB + KV pool {} GB = {:.2f} GB do not fit the GPU's {} GB",
                       g.weights_gb, g.overhead_gb, g.kv_pool_gb, engine_vram_gb(g), g.gpu_gb));
  const std::int64_t pool = kv_pool_tokens(g);
  if (context_window > pool)
    m.at("kv_pool_gb").fail(fmt::format(
        "the KV pool holds {} tokens ({} GB at {} bytes per token), fewer than one request of the whole context "
        "window ({} tokens, {:.2f} GB): shrink context_window_tokens or grow the pool",
        pool, g.kv_pool_gb, g.kv_bytes_per_token, context_window,
        static_cast<double>(context_window) * g.kv_bytes_per_token / 1e9));
  return e;
}

cache_config read_cache(const node& n) {
  n.expect_keys({"enabled", "block_tokens", "min_tokens", "ttl_s", "write_charged", "write_ttl"});
  cache_config c;
  c.enabled = n.at("enabled").boolean();
  if (!c.enabled) {
    n.expect_keys({"enabled"});
    return c;
  }
  c.block_tokens = n.at("block_tokens").integer(1, 1 << 20);
  c.min_tokens = n.has("min_tokens") ? n.at("min_tokens").integer(0, max_tokens_value) : 0;
  const double ttl = n.at("ttl_s").number();
  if (!(ttl > 0))
    n.at("ttl_s").fail(fmt::format("expected a TTL > 0 s while caching is enabled, found {} "
                                   "(set \"enabled\": false to turn caching off)", ttl));
  c.ttl_s = n.at("ttl_s").number_in(1e-3, 366.0 * 86400);
  c.write_charged = n.at("write_charged").boolean();
  if (auto w = n.find("write_ttl")) {
    if (!c.write_charged) w->fail("write_ttl applies only when write_charged is true");
    c.write_1h = w->one_of({"5m", "1h"}) == "1h";
  }
  return c;
}

// ---- the four kinds ----------------------------------------------------------------------------
target read_target(const node& root) {
  check_kind(root, preset_kind::target);
  root.expect_keys({LOOPCAST_HEADER_KEYS, "type", "provider", "tier", "model", "context_window_tokens",
                    "max_output_tokens", "limits", "cache", "speed", "prices", "power", "engine", "calibration"});
  target t;
  t.name = read_name(root);
  t.description = read_description(root);
  t.origin = read_provenance(root);
  t.kind = read_enum<target_kind>(root.at("type"));
  t.provider = root.at("provider").string();
  t.tier = root.at("tier").string();
  t.model = root.at("model").string();
  t.context_window_tokens = root.at("context_window_tokens").integer(1, max_tokens_value);
  if (auto m = root.find("max_output_tokens")) t.max_output_tokens = m->integer(1, t.context_window_tokens);
  const auto lim = root.at("limits");
  lim.expect_keys({"sends_retry_after", "buckets"});
  t.sends_retry_after = lim.at("sends_retry_after").boolean();
  const auto buckets = lim.at("buckets").array();
  if (buckets.size() > max_buckets)
    lim.at("buckets").fail(fmt::format("expected at most {} buckets, found {}", max_buckets, buckets.size()));
  for (const auto& b : buckets) {
    t.limits.push_back(read_bucket(b));
    for (std::size_t i = 0; i + 1 < t.limits.size(); ++i)
      if (t.limits[i].name == t.limits.back().name)
        b.at("name").fail(fmt::format("bucket name \"{}\" is used twice", t.limits.back().name));
  }
  t.cache = read_cache(root.at("cache"));
  t.speed = read_speed(root.at("speed"));
  if (auto p = root.find("prices")) t.prices = read_prices(*p);
  if (auto p = root.find("power")) t.power = read_power(*p);
  if (t.kind == target_kind::cloud && !t.prices) root.fail("a cloud target needs \"prices\"");
  if (t.kind == target_kind::local && !t.power) root.fail("a local target needs \"power\"");
  if (auto e = root.find("engine")) {
    if (t.kind != target_kind::local) e->fail("only a local target has an engine");
    t.engine = read_engine(*e, t.context_window_tokens);
    for (const auto& b : t.limits)
      if (b.algorithm == bucket_algorithm::concurrency)
        e->fail(fmt::format("a target with an engine cannot also have a concurrency bucket ({}): the engine's "
                            "max_sequences limits requests in flight", b.name));
  }
  if (t.prices && t.cache.enabled && t.cache.write_charged) {
    auto check = [&](const class_prices& cp, const std::string& where) {
      const double w = t.cache.write_1h ? cp.cache_write_1h : cp.cache_write_5m;
      if (w < 0)
        root.at("prices").fail(fmt::format("the cache charges writes ({}), so {} needs \"{}\"",
                                           t.cache.write_1h ? "1h" : "5m", where,
                                           t.cache.write_1h ? "cache_write_1h" : "cache_write_5m"));
    };
    check(t.prices->usd_per_million, "usd_per_million");
    for (std::size_t i = 0; i < t.prices->long_context.size(); ++i)
      check(t.prices->long_context[i].usd_per_million, fmt::format("long_context/{}/usd_per_million", i));
  }
  if (t.prices) {  // unused write prices: a price of 0 keeps the arithmetic clean
    auto zero = [](class_prices& cp) {
      cp.cache_write_5m = std::max(0.0, cp.cache_write_5m);
      cp.cache_write_1h = std::max(0.0, cp.cache_write_1h);
    };
    zero(t.prices->usd_per_million);
    for (auto& tier : t.prices->long_context) zero(tier.usd_per_million);
  }
  if (t.cache.enabled && t.cache.min_tokens > t.context_window_tokens)
    root.at("cache").at("min_tokens").fail(fmt::format("the minimum cacheable prompt ({}) exceeds the context window ({})",
                                                       t.cache.min_tokens, t.context_window_tokens));
  if (auto c = root.find("calibration")) (void)read_string_list(*c);
  return t;
}

retry_policy read_client(const node& root) {
  check_kind(root, preset_kind::client);
  root.expect_keys({LOOPCAST_HEADER_KEYS, "max_retries", "retry_after", "backoff", "give_up_above_s", "agent"});
  retry_policy p;
  p.name = read_name(root);
  (void)read_provenance(root);
  const auto mr = root.at("max_retries");
  if (mr.is_string()) {
    if (mr.string() != "unbounded") mr.fail(fmt::format("expected a whole number or \"unbounded\", found \"{}\"", mr.string()));
    p.max_retries = -1;
  } else {
    p.max_retries = static_cast<int>(mr.integer(0, 1'000'000));
  }
  const auto ra = root.at("retry_after");
  ra.expect_keys({"honour", "cap_s", "over_cap"});
  p.honour_retry_after = ra.at("honour").boolean();
  if (p.honour_retry_after) {
    const auto cap = ra.at("cap_s");
    p.retry_after_cap_s = cap.is_null() ? inf : cap.number_in(0, 1e7);
    if (cap.is_null()) {
      if (ra.has("over_cap")) ra.at("over_cap").fail("over_cap needs a finite cap_s");
    } else {
      p.over_cap = read_enum<over_cap_action>(ra.at("over_cap"));
    }
  } else if (ra.has("cap_s") || ra.has("over_cap")) {
    ra.fail("cap_s and over_cap apply only when honour is true");
  }
  const auto bo = root.at("backoff");
  bo.expect_keys({"base_s", "multiplier", "max_s", "jitter"});
  p.base_s = bo.at("base_s").number_in(0, 1e6);
  p.multiplier = bo.at("multiplier").number_in(1, 100);
  p.max_s = bo.at("max_s").number_in(0, 1e7);
  p.jitter = read_enum<jitter_kind>(bo.at("jitter"));
  if (auto g = root.find("give_up_above_s")) p.give_up_above_s = g->number_in(0, 1e7);
  if (auto a = root.find("agent")) {
    a->expect_keys({"max_tokens", "compact_at"});
    if (auto m = a->find("max_tokens")) p.agent_max_tokens = m->integer(1, max_tokens_value);
    if (auto c = a->find("compact_at")) p.agent_compact_at = c->number_in(0.05, 1);
  }
  if (p.max_retries < 0 && !p.honour_retry_after && p.give_up_above_s == inf && p.base_s == 0)
    root.fail("this client retries forever without waiting: set max_retries, give_up_above_s or base_s > 0");
  return p;
}

workload read_workload(const node& root) {
  check_kind(root, preset_kind::workload);
  root.expect_keys({LOOPCAST_HEADER_KEYS, "system_prompt_tokens", "task_tokens", "turns", "max_turns", "output_tokens",
                    "reasoning_tokens", "tool_result_tokens", "tool_result_bands", "session_scale", "task_turns_correlation", "cache_breaks",
                    "front_load", "tool_time_s", "tool_time_ramp", "reasoning_in_context", "output_in_context", "max_tokens",
                    "context_window_tokens", "compaction", "contract", "calibration", "fitted_on"});
  workload w;
  w.name = read_name(root);
  (void)read_provenance(root);
  w.system_prompt_tokens = root.at("system_prompt_tokens").integer(0, max_tokens_value);
  // A number is a fixed value; an object, a distribution.
  auto count_or_distribution = [](const node& n, std::int64_t lo, std::int64_t hi) -> distribution {
    if (n.is_object()) return read_distribution(n);
    return fixed_dist{static_cast<double>(n.integer(lo, hi))};
  };
  w.task_tokens = count_or_distribution(root.at("task_tokens"), 0, max_tokens_value);
  w.turns = count_or_distribution(root.at("turns"), 1, max_turns);
  if (auto m = root.find("max_turns")) w.max_turns = static_cast<std::int32_t>(m->integer(1, max_turns));
  w.output_tokens = read_distribution(root.at("output_tokens"));
  w.reasoning_tokens = read_distribution(root.at("reasoning_tokens"));
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
  if (auto sc = root.find("session_scale")) {
    sc->expect_keys({"sigma", "turns_correlation"});
    w.session_scale.sigma = sc->at("sigma").number_in(0, 5);
    w.session_scale.turns_correlation = sc->at("turns_correlation").number_in(-1, 1);
  }
  if (auto r = root.find("task_turns_correlation")) w.task_turns_correlation = r->number_in(-1, 1);
  if (auto cb = root.find("cache_breaks")) {
    cb->expect_keys({"probability", "kept_fraction"});
    w.cache_breaks.probability = cb->at("probability").number_in(0, 1);
    w.cache_breaks.kept_fraction = read_distribution(cb->at("kept_fraction"));
    if (upper_bound(w.cache_breaks.kept_fraction) > 1)
      cb->at("kept_fraction").fail(fmt::format("expected fractions in [0, 1], found values up to {}",
                                               upper_bound(w.cache_breaks.kept_fraction)));
  }
  if (auto f = root.find("fitted_on"); f && !f->is_object()) f->fail("expected an object describing the fitted logs");
  w.tool_time_s = read_distribution(root.at("tool_time_s"));
  const auto ramp = root.at("tool_time_ramp");
  ramp.expect_keys({"factor", "ramp_turns"});
  w.tool_time_ramp_factor = ramp.at("factor").number_in(0, 1e3);
  w.tool_time_ramp_turns = ramp.at("ramp_turns").number_in(1e-3, 1e6);
  w.reasoning_in_context = root.at("reasoning_in_context").boolean();
  if (auto o = root.find("output_in_context")) w.output_in_context = o->boolean();
  w.max_tokens = root.at("max_tokens").integer(1, max_tokens_value);
  w.context_window_tokens = root.at("context_window_tokens").integer(1, max_tokens_value);
  // The smallest task must fit (larger draws are capped at the compaction threshold).
  const auto task_min = static_cast<std::int64_t>(std::llround(quantile(w.task_tokens, 0)));
  if (w.system_prompt_tokens + task_min >= w.context_window_tokens)
    root.at("context_window_tokens")
        .fail(fmt::format("the window ({} tokens) does not hold the system prompt and task ({} tokens)",
                          w.context_window_tokens, w.system_prompt_tokens + task_min));
  const auto c = root.at("compaction");
  c.expect_keys({"enabled", "at_fraction", "summary_tokens", "late_share", "late_fraction"});
  w.compaction.enabled = c.at("enabled").boolean();
  if (w.compaction.enabled) {
    w.compaction.at_fraction = c.at("at_fraction").number_in(0.01, 1);
    w.compaction.summary_tokens = read_distribution(c.at("summary_tokens"));
    if (auto l = c.find("late_share")) w.compaction.late_share = l->number_in(0, 1);
    if (auto l = c.find("late_fraction")) w.compaction.late_fraction = l->number_in(0.01, 1);
    const double threshold = w.compaction.at_fraction * static_cast<double>(w.context_window_tokens);
    if (static_cast<double>(w.system_prompt_tokens + task_min) >= threshold)
      c.at("at_fraction").fail(fmt::format("compaction at {} tokens would trigger before the first turn "
                                           "(system prompt and task are {} tokens)",
                                           threshold, w.system_prompt_tokens + task_min));
  } else if (c.has("at_fraction") || c.has("summary_tokens") || c.has("late_share") || c.has("late_fraction")) {
    c.fail("at_fraction, summary_tokens, late_share and late_fraction apply only when compaction is enabled");
  }
  if (auto k = root.find("contract")) {
    k->expect_keys({"task", "ttft_p50_max_s", "ttft_p90_max_s", "effective_tps_p50_min", "wall_per_task_max_s",
                    "usd_per_task_max", "stall_share_max", "must_complete", "sessions", "stagger_s"});
    task_contract tc;
    tc.task = k->at("task").string();
    auto opt = [&](const char* key, double lo, double hi) -> std::optional<double> {
      if (!k->has(key)) return std::nullopt;
      return k->at(key).number_in(lo, hi);
    };
    tc.ttft_p50_max_s = opt("ttft_p50_max_s", 1e-3, 3600);
    tc.ttft_p90_max_s = opt("ttft_p90_max_s", 1e-3, 3600);
    tc.effective_tps_p50_min = opt("effective_tps_p50_min", 0, 1e6);
    tc.wall_per_task_max_s = opt("wall_per_task_max_s", 1e-3, 1e7);
    tc.usd_per_task_max = opt("usd_per_task_max", 0, 1e6);
    tc.stall_share_max = opt("stall_share_max", 0, 1);
    if (k->has("must_complete")) tc.must_complete = k->at("must_complete").boolean();
    if (k->has("sessions")) tc.sessions = static_cast<std::int32_t>(k->at("sessions").integer(1, 100000));
    if (k->has("stagger_s")) tc.stagger_s = k->at("stagger_s").number_in(0, 1e6);
    w.contract = tc;
  }
  if (auto cal = root.find("calibration")) (void)read_string_list(*cal);
  return w;
}

// Days since 1970-01-01 of a civil date (the proleptic Gregorian calendar).
double parse_utc(const node& n) {
  const auto s = n.string();
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  char z = 0;
  if (s.size() != 20 || std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &se, &z) != 7 ||
      z != 'Z')
    n.fail(fmt::format("expected a UTC time YYYY-MM-DDTHH:MM:SSZ, found \"{}\"", s));
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{static_cast<unsigned>(mo)},
                                        std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || se > 60) n.fail(fmt::format("not a valid date and time: \"{}\"", s));
  const auto days = std::chrono::sys_days{ymd}.time_since_epoch().count();
  return static_cast<double>(days) * 86400.0 + h * 3600.0 + mi * 60.0 + se;
}

std::filesystem::path sibling(const std::string& file, const std::string& ref) {
  std::filesystem::path p(ref);
  if (p.is_absolute()) return p;
  return std::filesystem::path(file).parent_path() / p;
}

template <class T, class Reader, class Loader>
T resolve(const node& n, const std::string& file, Reader read_inline, Loader load_named) {
  if (n.is_object()) return read_inline(n);
  const auto ref = n.string();
  if (ref.size() > 5 && ref.ends_with(".json")) {
    const auto path = sibling(file, ref).string();
    const auto text = detail::read_file(path);
    const auto j = detail::parse_json(text, path);
    return read_inline(node(j, "", path));
  }
  return load_named(ref);
}

scenario read_scenario(const node& root, const preset_library& lib) {
  check_kind(root, preset_kind::scenario);
  root.expect_keys({LOOPCAST_HEADER_KEYS, "seed", "start_time_utc", "workload", "sessions", "stagger_s", "fleet",
                    "options", "calibration"});
  scenario s;
  s.name = read_name(root);
  s.description = read_description(root);
  s.origin = read_provenance(root);
  s.seed = static_cast<std::uint64_t>(root.at("seed").integer(0, (1LL << 53)));
  s.start_unix_s = parse_utc(root.at("start_time_utc"));
  const std::string& file = root.file();
  // One group: "workload", "sessions", "stagger_s" at the top; several: "fleet": [{…}, …].
  auto read_group = [&](const node& n) {
    fleet_group g;
    g.wl = resolve<workload>(n.at("workload"), file, read_workload,
                             [&](const std::string& name) { return lib.load_workload(name); });
    g.label = n.has("label") ? n.at("label").string() : g.wl.name;
    g.sessions = static_cast<std::int32_t>(n.at("sessions").integer(1, max_sessions));
    g.start_s = n.has("start_s") ? n.at("start_s").number_in(0, 1e7) : 0.0;
    g.stagger_s = n.has("stagger_s") ? n.at("stagger_s").number_in(0, 1e7) : 0.0;
    return g;
  };
  if (root.has("fleet")) {
    for (const char* k : {"workload", "sessions", "stagger_s"})
      if (root.has(k)) root.at(k).fail("give either \"fleet\" or \"workload\"/\"sessions\"/\"stagger_s\", not both");
    for (const auto& g : root.at("fleet").array(1)) {
      g.expect_keys({"label", "workload", "sessions", "start_s", "stagger_s"});
      s.fleet.push_back(read_group(g));
      for (std::size_t i = 0; i + 1 < s.fleet.size(); ++i)
        if (s.fleet[i].label == s.fleet.back().label)
          g.fail(fmt::format("fleet group label \"{}\" is used twice", s.fleet.back().label));
    }
  } else {
    if (!root.has("workload")) root.fail("missing key \"workload\" (or \"fleet\")");
    s.fleet.push_back(read_group(root));
  }
  std::int64_t sessions = 0, requests = 0;
  for (const auto& g : s.fleet) {
    sessions += g.sessions;
    requests += static_cast<std::int64_t>(g.sessions) * turns_cap(g.wl);
  }
  const node where = root.has("fleet") ? root.at("fleet") : root.at("sessions");
  if (sessions > max_sessions)
    where.fail(fmt::format("{} sessions in the fleet; one run simulates at most {}", sessions, max_sessions));
  if (requests > max_scenario_turns) {
    if (s.fleet.size() == 1)
      where.fail(fmt::format("{} sessions × {} turns = {} requests; one run simulates at most {}", sessions,
                             turns_cap(s.fleet[0].wl), requests, max_scenario_turns));
    where.fail(fmt::format("the fleet's {} sessions make {} requests; one run simulates at most {}", sessions, requests,
                           max_scenario_turns));
  }
  for (const auto& o : root.at("options").array(1)) {
    o.expect_keys({"label", "target", "client", "batch"});
    scenario_option opt;
    opt.label = o.at("label").string();
    for (const auto& prev : s.options)
      if (prev.label == opt.label) o.at("label").fail(fmt::format("option label \"{}\" is used twice", opt.label));
    opt.tgt = resolve<target>(o.at("target"), file, read_target,
                              [&](const std::string& name) { return lib.load_target(name); });
    opt.client = resolve<retry_policy>(o.at("client"), file, read_client,
                                       [&](const std::string& name) { return lib.load_client(name); });
    opt.batch = o.has("batch") ? o.at("batch").boolean() : false;
    if (opt.batch && (!opt.tgt.prices || opt.tgt.prices->batch_discount == 0))
      o.at("batch").fail(fmt::format("target {} has no batch discount", opt.tgt.name));
    s.options.push_back(std::move(opt));
  }
  if (auto c = root.find("calibration")) s.calibration = read_string_list(*c);
  return s;
}

// A reference (name or .json path) as the referenced document (keys in file order); an inline
// object as it is.
nlohmann::ordered_json inline_reference(const nlohmann::ordered_json& ref, preset_kind kind, const std::string& file,
                                        const preset_library& lib) {
  if (!ref.is_string()) return ref;
  const auto name = ref.get<std::string>();
  const std::string path = name.size() > 5 && name.ends_with(".json") ? sibling(file, name).string()
                                                                       : lib.find(kind, name).string();
  const auto text = detail::read_file(path);
  return detail::parse_ordered_json(text, path);  // its syntax errors with line and column
}

template <class T, class F>
T parse_with(std::string_view text, const std::string& file, F read) {
  const auto j = detail::parse_json(text, file);
  return read(node(j, "", file));
}

} // namespace

target parse_target(std::string_view text, const std::string& file) { return parse_with<target>(text, file, read_target); }
retry_policy parse_client(std::string_view text, const std::string& file) {
  return parse_with<retry_policy>(text, file, read_client);
}
workload parse_workload(std::string_view text, const std::string& file) {
  return parse_with<workload>(text, file, read_workload);
}
scenario parse_scenario(std::string_view text, const std::string& file, const preset_library& lib) {
  return parse_with<scenario>(text, file, [&](const node& n) { return read_scenario(n, lib); });
}

std::string resolved_preset_json(std::string_view text, const std::string& file, const preset_library& lib, int indent) {
  auto j = detail::parse_ordered_json(text, file);
  if (j.is_object() && j.value("kind", "") == "scenario") {
    const auto checked = detail::parse_json(text, file);
    (void)read_scenario(node(checked, "", file), lib);  // refuse a bad scenario with its own messages
    if (j.contains("workload")) j["workload"] = inline_reference(j["workload"], preset_kind::workload, file, lib);
    if (j.contains("fleet"))
      for (auto& g : j["fleet"]) g["workload"] = inline_reference(g["workload"], preset_kind::workload, file, lib);
    for (auto& o : j["options"]) {
      o["target"] = inline_reference(o["target"], preset_kind::target, file, lib);
      o["client"] = inline_reference(o["client"], preset_kind::client, file, lib);
    }
  }
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

target load_target_file(const std::filesystem::path& f) { return parse_target(detail::read_file(f.string()), f.string()); }
retry_policy load_client_file(const std::filesystem::path& f) {
  return parse_client(detail::read_file(f.string()), f.string());
}
workload load_workload_file(const std::filesystem::path& f) {
  return parse_workload(detail::read_file(f.string()), f.string());
}
scenario load_scenario_file(const std::filesystem::path& f, const preset_library& lib) {
  return parse_scenario(detail::read_file(f.string()), f.string(), lib);
}

// ---- the library ---------------------------------------------------------------------------------
preset_library::preset_library(std::vector<std::filesystem::path> dirs) : dirs_(std::move(dirs)) {
  for (const auto& dir : dirs_) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      throw config_error(dir.string(), "", "presets directory does not exist");
    std::vector<std::filesystem::path> files;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::end(it);
         it.increment(ec))
      if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path());
    if (ec) throw config_error(dir.string(), "", fmt::format("cannot list presets: {}", ec.message()));
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      const std::string file = f.string();  // outlives the nodes that point to it
      const auto text = detail::read_file(file);
      const auto j = detail::parse_json(text, file);
      const node root(j, "", file);
      preset_entry e;
      e.kind = read_enum<preset_kind>(root.at("kind"));
      e.name = read_name(root);
      e.description = read_description(root);
      e.file = f;
      e.origin = read_provenance(root);
      if (e.kind == preset_kind::target)
        for (auto [key, field] : {std::pair{"provider", &e.provider}, {"tier", &e.tier}, {"model", &e.model}})
          if (root.has(key)) *field = root.at(key).string();
      for (const auto& prev : entries_)
        if (prev.kind == e.kind && prev.name == e.name)
          throw config_error(f.string(), "/name",
                             fmt::format("{} preset \"{}\" is also defined in {}", to_string(e.kind), e.name,
                                         prev.file.string()));
      entries_.push_back(std::move(e));
    }
  }
}

const std::filesystem::path& preset_library::find(preset_kind kind, std::string_view name) const {
  std::vector<std::string> known;
  for (const auto& e : entries_) {
    if (e.kind != kind) continue;
    if (e.name == name) return e.file;
    known.push_back(e.name);
  }
  std::string where;
  for (const auto& d : dirs_) where += (where.empty() ? "" : ", ") + d.string();
  throw config_error(where, "", fmt::format("no {} preset named \"{}\" (known: {})", to_string(kind), name,
                                            known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
}

target preset_library::load_target(std::string_view name) const { return load_target_file(find(preset_kind::target, name)); }
retry_policy preset_library::load_client(std::string_view name) const {
  return load_client_file(find(preset_kind::client, name));
}
workload preset_library::load_workload(std::string_view name) const {
  return load_workload_file(find(preset_kind::workload, name));
}
scenario preset_library::load_scenario(std::string_view name) const {
  return load_scenario_file(find(preset_kind::scenario, name), *this);
}

std::filesystem::path default_models_dir() {
  if (const char* env = std::getenv("LOOPCAST_MODELS"); env && *env) return env;
  std::error_code ec;
  // Installed next to the executable: <prefix>/bin/loopcast → <prefix>/share/loopcast/models.
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = exe.parent_path().parent_path() / "share" / "loopcast" / "models";
    if (std::filesystem::is_directory(beside, ec)) return beside;
  }
  // A build-tree binary uses the source tree's presets; an installed library the installed ones.
  if (std::filesystem::is_directory(LOOPCAST_SOURCE_MODELS_DIR, ec)) return LOOPCAST_SOURCE_MODELS_DIR;
  return LOOPCAST_INSTALL_MODELS_DIR;
}

preset_library preset_library::standard() { return preset_library({default_models_dir()}); }

model_price_book catalogue_price_book(const preset_library& lib) {
  model_price_book book;
  book.source = "the preset catalogue";
  std::vector<const preset_entry*> targets;
  for (const auto& e : lib.entries())
    if (e.kind == preset_kind::target) targets.push_back(&e);
  std::sort(targets.begin(), targets.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  for (const auto* e : targets) {
    const auto t = lib.load_target(e->name);
    if (!t.prices || t.model.empty()) continue;
    book.add({normalize_model_name(t.model), t.model, t.name, *t.prices, t.cache.enabled && t.cache.write_charged});
  }
  return book;
}

model_price_book load_price_book(const std::string& price_list, const preset_library& lib) {
  return price_list.empty() ? catalogue_price_book(lib) : price_book_of(import_price_list(price_list));
}

} // namespace loopcast
