// Target presets: limits, cache, speed, prices, power, engine (docs/presets.md).
#include "loopcast/presets.hpp"
#include "loopcast/random.hpp"

#include "presets/readers.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace loopcast::detail::preset {

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
  n.expect_keys({"overhead_s", "prefill", "cached_token_s", "decode", "noise", "context_max_tokens", "hour_factors",
                 "output_factors"});
  speed_model m;
  m.overhead_s = n.at("overhead_s").number_in(0, 3600);
  m.prefill = read_curve(n.at("prefill"), true);
  m.cached_token_s = n.at("cached_token_s").number_in(0, 1);
  m.decode = read_curve(n.at("decode"), false);
  if (auto x = n.find("context_max_tokens")) m.context_max_tokens = x->number_in(1, 1e13);
  if (auto h = n.find("hour_factors")) {
    const auto factors = h->array(1);
    if (factors.size() != 24)
      h->fail(fmt::format("expected 24 factors, one per UTC hour 0-23, found {}", factors.size()));
    for (const auto& f : factors) m.hour_factors.push_back(f.number_in(0.05, 20));
  }
  if (auto o = n.find("output_factors")) {
    o->expect_keys({"thinking", "text", "tool_use", "unknown"});
    auto factor = [&](const char* key) { return o->at(key).number_in(0.05, 20); };
    m.output = {factor("thinking"), factor("text"), factor("tool_use"), factor("unknown")};
  }
  if (auto z = n.find("noise")) {
    z->expect_keys({"kind", "median", "p90", "session_p90"});
    (void)z->at("kind").one_of({"lognormal"});
    m.noise_median = z->at("median").number_in(0.01, 100);
    const double p90 = z->at("p90").number_in(m.noise_median, 100 * m.noise_median);
    m.noise_sigma = std::log(p90 / m.noise_median) / z90;
    // The session factor's P90 (its median is 1).
    if (auto q = z->find("session_p90")) m.session_sigma = std::log(q->number_in(1, 100)) / z90;
  }
  return m;
}

// ---- limits ------------------------------------------------------------------------------------
double read_limit(const node& n) { return static_cast<double>(n.integer(1, max_tokens_value)); }

bucket_config read_bucket(const node& n) {
  n.expect_keys({"name", "unit", "counts", "limit", "period_s", "algorithm", "charging", "count_rejected",
                 "anchor", "anchor_offset_s", "oversize", "weight"});
  bucket_config b;
  b.name = n.at("name").string();
  if (b.name.empty()) n.at("name").fail("expected a non-empty bucket name");
  b.unit = read_enum<bucket_unit>(n.at("unit"));
  b.algorithm = read_enum<bucket_algorithm>(n.at("algorithm"));
  if ((b.unit == bucket_unit::concurrent_requests) != (b.algorithm == bucket_algorithm::concurrency))
    n.at("algorithm").fail("the concurrency algorithm goes with unit \"concurrent_requests\", and only with it");
  // null: the source publishes no figure; the user sets it before a run (bucket_config::limit_unpublished).
  if (n.at("limit").is_null()) b.limit_unpublished = true;
  else b.limit = read_limit(n.at("limit"));
  if (b.algorithm != bucket_algorithm::concurrency)
    b.period_s = n.at("period_s").number_in(1e-3, 366.0 * 86400);
  else if (n.has("period_s"))
    n.at("period_s").fail("a concurrency bucket has no period");
  if (b.unit == bucket_unit::tokens) {
    const auto counts = n.at("counts");
    if (counts.is_object()) {  // {"class": weight, …}
      static constexpr auto names = enum_spellings<token_class>();
      const auto& obj = counts.raw();
      if (obj.empty()) counts.fail("expected at least one token class");
      for (auto it = obj.begin(); it != obj.end(); ++it) {
        const auto c = parse_name<token_class>(it.key());
        if (!c)
          counts.fail(fmt::format("unknown token class \"{}\"; expected any of {}", it.key(), fmt::join(names, ", ")));
        b.classes.insert(*c);
        b.class_weights[static_cast<std::size_t>(counted_as(*c))] = counts.at(it.key()).number_in(0, 1e6);
      }
    } else {
      for (const auto& c : counts.array(1)) b.classes.insert(read_enum<token_class>(c));
    }
  } else if (n.has("counts")) {
    n.at("counts").fail(fmt::format("only token buckets count token classes; this bucket counts {}", to_string(b.unit)));
  }
  if (b.classes.counts_generated()) {
    b.charging = read_enum<charging_rule>(n.at("charging"));
    const bool reserves = b.charging == charging_rule::reserve || b.charging == charging_rule::reserve_then_refund;
    if (reserves && b.classes.contains(token_class::output) && b.classes.contains(token_class::reasoning) &&
        b.class_weight(token_class::output) != b.class_weight(token_class::reasoning))
      n.at("counts").fail(fmt::format("charging \"{}\" reserves max_tokens for output and reasoning alike, so they "
                                      "need the same weight (found {} and {})",
                                      to_string(b.charging), b.class_weight(token_class::output),
                                      b.class_weight(token_class::reasoning)));
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
  if (auto w = n.find("weight")) b.weight = w->number_in(1e-6, 1e6);
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
  n.expect_keys({"enabled", "block_tokens", "min_tokens", "ttl_s", "ttl_1h_s", "write_charged", "write_ttl"});
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
  if (auto l = n.find("ttl_1h_s")) {
    c.ttl_1h_s = l->number_in(1e-3, 366.0 * 86400);
    if (!(c.ttl_1h_s > c.ttl_s))
      l->fail(fmt::format("the 1-hour lifetime ({} s) must be longer than ttl_s ({} s)", c.ttl_1h_s, c.ttl_s));
  }
  return c;
}

// "limits": {"sends_retry_after", "buckets": [...], "dated": [...]}, each bucket and dated rule read
// even after another failed.
void read_target_limits(const node& lim, target& t, problems& found) {
  lim.expect_keys({"sends_retry_after", "buckets", "dated"});
  found.gather([&] { t.sends_retry_after = lim.at("sends_retry_after").boolean(); });
  std::vector<node> buckets;
  found.gather([&] {
    buckets = lim.at("buckets").array();
    if (buckets.size() > max_buckets)
      lim.at("buckets").fail(fmt::format("expected at most {} buckets, found {}", max_buckets, buckets.size()));
  });
  if (buckets.size() > max_buckets) return;
  bool all_buckets = true;
  for (const auto& b : buckets) {
    const std::size_t before = found.count();
    found.gather([&] {
      t.limits.push_back(read_bucket(b));
      for (std::size_t i = 0; i + 1 < t.limits.size(); ++i)
        if (t.limits[i].name == t.limits.back().name)
          b.at("name").fail(fmt::format("bucket name \"{}\" is used twice", t.limits.back().name));
    });
    all_buckets = all_buckets && found.count() == before;
  }
  auto dated = lim.find("dated");
  if (!dated) return;
  std::vector<node> rules;
  found.gather([&] { rules = dated->array(); });
  for (const auto& d : rules) found.gather([&] {
    d.expect_keys({"bucket", "from", "until", "factor", "source"});
    dated_limit x;
    x.bucket = d.at("bucket").string();
    if (all_buckets && !t.find_bucket(x.bucket))
      d.at("bucket").fail(fmt::format("no bucket \"{}\" in this target's limits", x.bucket));
    if (auto f = d.find("from")) x.from_unix_s = parse_utc(*f);
    if (auto u = d.find("until")) x.until_unix_s = parse_utc(*u);
    if (!d.has("from") && !d.has("until")) d.fail("a dated limit needs \"from\", \"until\" or both");
    if (!(x.from_unix_s < x.until_unix_s)) d.at("until").fail("expected \"until\" after \"from\"");
    x.factor = d.at("factor").number_in(0.001, 1000);
    x.source = d.at("source").string();
    t.dated_limits.push_back(std::move(x));
  });
}

void check_target(const node& root, target& t);

// ---- the four kinds ----------------------------------------------------------------------------
target read_target(const node& root) {
  check_kind(root, preset_kind::target);
  // Each part is read even after another failed; the checks across parts wait until all were read.
  problems found(root.file());
  found.gather([&] {
    root.expect_keys({LOOPCAST_HEADER_KEYS, "type", "provider", "tier", "model", "context_window_tokens",
                      "max_output_tokens", "limits", "cache", "speed", "prices", "power", "engine", "plan", "calibration"});
  });
  target t;
  found.gather([&] { t.name = read_name(root); });
  found.gather([&] { t.description = read_description(root); });
  found.gather([&] { t.origin = read_provenance(root); });
  bool kind_read = false;
  found.gather([&] {
    t.kind = read_enum<target_kind>(root.at("type"));
    kind_read = true;
  });
  found.gather([&] { t.provider = root.at("provider").string(); });
  found.gather([&] { t.tier = root.at("tier").string(); });
  found.gather([&] { t.model = root.at("model").string(); });
  bool window_read = false;
  found.gather([&] {
    t.context_window_tokens = root.at("context_window_tokens").integer(1, max_tokens_value);
    window_read = true;
  });
  found.gather([&] {
    if (auto m = root.find("max_output_tokens"))
      t.max_output_tokens = m->integer(1, window_read ? t.context_window_tokens : max_tokens_value);
  });
  found.gather([&] { read_target_limits(root.at("limits"), t, found); });
  found.gather([&] { t.cache = read_cache(root.at("cache")); });
  found.gather([&] { t.speed = read_speed(root.at("speed")); });
  found.gather([&] {
    if (auto p = root.find("prices")) t.prices = read_prices(*p);
  });
  found.gather([&] {
    if (auto p = root.find("power")) t.power = read_power(*p);
  });
  found.gather([&] {
    if (auto p = root.find("plan")) {
      p->expect_keys({"name", "monthly_fee_usd"});
      t.plan = plan_terms{p->at("name").string(), p->at("monthly_fee_usd").number_in(0, 1e6)};
    }
  });
  found.gather([&] {
    auto e = root.find("engine");
    if (!e) return;
    if (kind_read && t.kind != target_kind::local) e->fail("only a local target has an engine");
    t.engine = read_engine(*e, t.context_window_tokens);
  });
  found.gather([&] {
    if (auto c = root.find("calibration")) (void)read_string_list(*c);
  });
  found.throw_if_any();
  check_target(root, t);
  return t;
}

// The checks across a target's parts, once each part was read.
void check_target(const node& root, target& t) {
  if (auto p = root.find("plan"); p && t.kind != target_kind::plan) p->fail("only a target of type \"plan\" has a plan");
  if (t.kind == target_kind::plan) {
    if (!t.plan) root.fail("a plan target needs \"plan\": {\"name\", \"monthly_fee_usd\"}");
    for (const char* k : {"prices", "power"})
      if (root.has(k))
        root.at(k).fail("a plan target is priced by its monthly fee; compare it with pay-as-you-go or a local machine "
                        "as another option of the scenario");
  }
  if (t.kind == target_kind::cloud && !t.prices) root.fail("a cloud target needs \"prices\"");
  if (t.kind == target_kind::local && !t.power) root.fail("a local target needs \"power\"");
  if (auto e = root.find("engine")) {
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
      if (t.cache.sells_1h() && cp.cache_write_1h < 0)
        root.at("prices").fail(fmt::format("the cache sells 1-hour writes (ttl_1h_s), so {} needs \"cache_write_1h\"",
                                           where));
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
}

} // namespace loopcast::detail::preset
