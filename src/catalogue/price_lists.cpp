#include "loopcast/price_lists.hpp"
#include "loopcast/files.hpp"

#include "loopcast/errors.hpp"

#include "json/reader.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace loopcast {

using json = nlohmann::json;


namespace {

constexpr double max_plausible_usd_per_million = 1000;  // above: probably a unit mistake

struct reader {
  const std::string& model;
  std::vector<price_warning>& warnings;
  mutable bool rejected = false;  // a price field was present but not a valid price

  void warn(const std::string& field, std::string message) const { warnings.push_back({model, field, std::move(message)}); }

  // A price field: a finite number >= 0, scaled to USD per million. Absent or null: nullopt.
  std::optional<double> price(const json& obj, const std::string& field, double scale) const {
    const auto it = obj.find(field);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) {
      warn(field, fmt::format("expected a number, found {}; ignored", detail::describe(*it)));
      rejected = true;
      return std::nullopt;
    }
    const double v = it->get<double>() * scale;
    if (!std::isfinite(v) || v < 0) {
      warn(field, fmt::format("expected a price >= 0, found {}; ignored", it->get<double>()));
      rejected = true;
      return std::nullopt;
    }
    if (v > max_plausible_usd_per_million)
      warn(field, fmt::format("${:g} per million tokens is implausible (a per-million price given per token?)", v));
    return v;
  }
  std::int64_t count(const json& obj, const std::string& field) const {
    const auto it = obj.find(field);
    if (it == obj.end() || it->is_null()) return 0;
    // Token counts up to 10^13 (a larger one is a typo, and would not fit the conversion).
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0 || it->get<double>() > 1e13) {
      warn(field, fmt::format("expected a token count from 0 to 10^13, found {}; ignored", detail::describe(*it)));
      return 0;
    }
    return static_cast<std::int64_t>(it->get<double>());
  }
};

// The source fields of the cache prices, for warnings.
struct cache_fields {
  std::string read, write_5m, write_1h;
};

// Fills the defaults and checks a set of class prices.
void settle(class_prices& c, bool has_read, bool has_reasoning, const reader& r, const cache_fields& f,
            std::vector<std::string>* notes) {
  if (!has_read) {
    c.cache_read = c.input;
    if (notes) notes->push_back("no cache-read price: cache reads are priced as input");
  }
  if (!has_reasoning) c.reasoning = c.output;
  if (has_read && c.cache_read == 0 && c.input > 0)
    r.warn(f.read, fmt::format("cache reads priced at $0 while input costs ${:g}/M: probably a missing price (a replay "
                               "would read its cache for free)", c.input));
  if (c.cache_read > c.input)
    r.warn(f.read, fmt::format("cache reads (${:g}/M) cost more than input (${:g}/M)", c.cache_read, c.input));
  for (auto [w, name, limit] : {std::tuple{c.cache_write_5m, &f.write_5m, 3.0}, {c.cache_write_1h, &f.write_1h, 4.0}}) {
    if (w <= 0) continue;
    if (w < c.cache_read)
      r.warn(*name, fmt::format("a cache write (${:g}/M) is cheaper than a cache read (${:g}/M)", w, c.cache_read));
    if (c.input > 0 && w > limit * c.input)
      r.warn(*name, fmt::format("a cache write at {:.1f}× the input price is implausible (expected at most {:g}×)",
                                w / c.input, limit));
  }
  if (c.cache_write_1h > 0 && c.cache_write_5m > 0 && c.cache_write_1h < c.cache_write_5m)
    r.warn(f.write_1h, "the 1-hour write is cheaper than the 5-minute write");
}

cache_fields litellm_fields(const std::string& suffix) {
  return {"cache_read_input_token_cost" + suffix, "cache_creation_input_token_cost" + suffix,
          "cache_creation_input_token_cost_above_1hr" + suffix};
}

// A long-context tier's unpriced classes: the base price scaled like the tier's input price.
void fill_tier(class_prices& c, const class_prices& base, bool has_input, bool has_output, bool& has_read) {
  if (!has_input) c.input = base.input;
  if (!has_output) c.output = base.output;
  const double k = base.input > 0 ? c.input / base.input : 1.0;
  if (!has_read) {
    c.cache_read = base.cache_read * k;
    has_read = true;
  }
  if (c.cache_write_5m == 0) c.cache_write_5m = base.cache_write_5m * k;
  if (c.cache_write_1h == 0) c.cache_write_1h = base.cache_write_1h * k;
}

void check_tier(const price_sheet& p, const reader& r, const std::string& field) {
  const auto& base = p.usd_per_million;
  const auto& top = p.long_context.back().usd_per_million;
  if (top.input < base.input || top.output < base.output)
    r.warn(field, fmt::format("the tier above {} prompt tokens is cheaper than the base price",
                              p.long_context.back().above_prompt_tokens));
}

// ---- LiteLLM -------------------------------------------------------------------------------------
class_prices litellm_classes(const json& m, const std::string& suffix, const reader& r, bool& has_read,
                             bool& has_reasoning, bool& any) {
  class_prices c;
  auto get = [&](const std::string& f) { return r.price(m, f + suffix, 1e6); };
  any = false;
  if (auto v = get("input_cost_per_token")) c.input = *v, any = true;
  if (auto v = get("output_cost_per_token")) c.output = *v, any = true;
  has_read = false;
  if (auto v = get("cache_read_input_token_cost")) c.cache_read = *v, has_read = true;
  if (auto v = get("cache_creation_input_token_cost")) c.cache_write_5m = *v;
  if (auto v = get("cache_creation_input_token_cost_above_1hr")) c.cache_write_1h = *v;
  has_reasoning = false;
  if (auto v = get("output_cost_per_reasoning_token")) c.reasoning = *v, has_reasoning = true;
  return c;
}

imported_model litellm_model(const std::string& id, const json& m, std::vector<price_warning>& warnings) {
  imported_model out;
  out.id = id;
  const reader r{id, warnings};
  if (auto it = m.find("litellm_provider"); it != m.end() && it->is_string()) out.provider = it->get<std::string>();
  bool has_read = false, has_reasoning = false, any = false;
  out.prices.usd_per_million = litellm_classes(m, "", r, has_read, has_reasoning, any);
  settle(out.prices.usd_per_million, has_read, has_reasoning, r, litellm_fields(""), &out.notes);
  // Long-context tiers: *_above_<N>k_tokens.
  for (int k : {128, 200, 256, 272}) {
    const std::string suffix = fmt::format("_above_{}k_tokens", k);
    bool hr = false, hre = false, tier_any = false;
    auto c = litellm_classes(m, suffix, r, hr, hre, tier_any);
    if (!tier_any) continue;
    fill_tier(c, out.prices.usd_per_million, m.contains("input_cost_per_token" + suffix),
              m.contains("output_cost_per_token" + suffix), hr);
    settle(c, hr, hre, r, litellm_fields(suffix), nullptr);
    out.prices.long_context.push_back({static_cast<std::int64_t>(k) * 1000, c});
    check_tier(out.prices, r, "input_cost_per_token" + suffix);
  }
  if (auto it = m.find("tiered_pricing"); it != m.end() && it->is_array()) {
    for (std::size_t i = 0; i < it->size(); ++i) {
      const auto& t = (*it)[i];
      const auto field = fmt::format("tiered_pricing/{}", i);
      if (!t.is_object() || !t.contains("range") || !t["range"].is_array() || t["range"].empty() || !t["range"][0].is_number()) {
        r.warn(field, "expected {\"range\": [from, to], …}; ignored");
        continue;
      }
      const double from_d = t["range"][0].get<double>();
      if (!std::isfinite(from_d) || from_d > 1e13) {
        r.warn(field, "expected a tier start from 0 to 10^13 tokens; ignored");
        continue;
      }
      const auto from = static_cast<std::int64_t>(from_d);
      bool hr = false, hre = false, tier_any = false;
      auto c = litellm_classes(t, "", r, hr, hre, tier_any);
      if (from <= 0) continue;  // the base tier
      fill_tier(c, out.prices.usd_per_million, t.contains("input_cost_per_token"), t.contains("output_cost_per_token"), hr);
      settle(c, hr, hre, r, {field + "/cache_read_input_token_cost", field + "/cache_creation_input_token_cost", field}, nullptr);
      if (!out.prices.long_context.empty() && from <= out.prices.long_context.back().above_prompt_tokens) {
        r.warn(field, "tiers out of order; ignored");
        continue;
      }
      out.prices.long_context.push_back({from, c});
      check_tier(out.prices, r, field);
    }
  }
  // Batch: a discount, when input and output agree.
  const auto bi = r.price(m, "input_cost_per_token_batches", 1e6);
  const auto bo = r.price(m, "output_cost_per_token_batches", 1e6);
  if (bi && bo && out.prices.usd_per_million.input > 0 && out.prices.usd_per_million.output > 0) {
    const double di = 1 - *bi / out.prices.usd_per_million.input, d_o = 1 - *bo / out.prices.usd_per_million.output;
    if (std::abs(di - d_o) > 0.01)
      r.warn("input_cost_per_token_batches",
             fmt::format("batch discounts differ for input ({:.0f}%) and output ({:.0f}%); using input's", 100 * di, 100 * d_o));
    if (di < 0 || di >= 1) r.warn("input_cost_per_token_batches", fmt::format("a batch price of {:.0f}% of the normal one is implausible; ignored", 100 * (1 - di)));
    else out.prices.batch_discount = di;
  }
  for (const char* variant : {"priority", "flex"}) {
    const std::string suffix = std::string("_") + variant;
    bool hr = false, hre = false, v_any = false;
    auto c = litellm_classes(m, suffix, r, hr, hre, v_any);
    if (!v_any) continue;
    if (!m.contains("output_cost_per_token" + suffix)) c.output = out.prices.usd_per_million.output;
    settle(c, hr, hre, r, litellm_fields(suffix), nullptr);
    price_sheet v;
    v.usd_per_million = c;
    out.variants.emplace_back(variant, v);
  }
  if (auto v = r.price(m, "input_cost_per_request", 1.0)) out.prices.usd_per_request = *v;
  out.context_window_tokens = r.count(m, "max_input_tokens");
  out.max_output_tokens = r.count(m, "max_output_tokens");
  if (auto it = m.find("rpm"); it != m.end() && it->is_number()) out.rpm = it->get<double>();
  if (auto it = m.find("tpm"); it != m.end() && it->is_number()) out.tpm = it->get<double>();
  if (!any) r.warn("input_cost_per_token", "no input or output price: the model is listed without token prices");
  out.priced = any && !r.rejected;
  return out;
}

// ---- models.dev -------------------------------------------------------------------------------------
class_prices modelsdev_classes(const json& c, const reader& r, bool& has_read, bool& has_reasoning) {
  class_prices p;
  if (auto v = r.price(c, "input", 1.0)) p.input = *v;
  if (auto v = r.price(c, "output", 1.0)) p.output = *v;
  has_read = false;
  if (auto v = r.price(c, "cache_read", 1.0)) p.cache_read = *v, has_read = true;
  if (auto v = r.price(c, "cache_write", 1.0)) p.cache_write_5m = *v;
  has_reasoning = false;
  if (auto v = r.price(c, "reasoning", 1.0)) p.reasoning = *v, has_reasoning = true;
  return p;
}

imported_model modelsdev_model(const std::string& provider, const std::string& id, const json& m,
                               std::vector<price_warning>& warnings) {
  imported_model out;
  out.provider = provider;
  out.id = provider + "/" + id;
  const reader r{out.id, warnings};
  const auto cost = m.find("cost");
  if (cost == m.end() || !cost->is_object()) {
    r.warn("cost", "no cost object: the model is listed without prices");
  } else {
    bool hr = false, hre = false;
    out.prices.usd_per_million = modelsdev_classes(*cost, r, hr, hre);
    settle(out.prices.usd_per_million, hr, hre, r, {"cost.cache_read", "cost.cache_write", "cost.cache_write"}, &out.notes);
    if (auto t = cost->find("tiers"); t != cost->end() && t->is_array()) {
      for (std::size_t i = 0; i < t->size(); ++i) {
        const auto& tier = (*t)[i];
        const auto field = fmt::format("cost.tiers/{}", i);
        const auto spec = tier.is_object() ? tier.find("tier") : tier.end();
        if (!tier.is_object() || spec == tier.end() || !spec->is_object() || spec->value("type", "") != "context" ||
            !spec->contains("size") || !(*spec)["size"].is_number()) {
          r.warn(field, "expected {\"tier\": {\"type\": \"context\", \"size\": N}, …}; ignored");
          continue;
        }
        bool thr = false, thre = false;
        auto c = modelsdev_classes(tier, r, thr, thre);
        fill_tier(c, out.prices.usd_per_million, tier.contains("input"), tier.contains("output"), thr);
        settle(c, thr, thre, r, {field + "/cache_read", field + "/cache_write", field + "/cache_write"}, nullptr);
        const auto size = static_cast<std::int64_t>((*spec)["size"].get<double>());
        if (!out.prices.long_context.empty() && size <= out.prices.long_context.back().above_prompt_tokens) {
          r.warn(field, "tiers out of order; ignored");
          continue;
        }
        out.prices.long_context.push_back({size, c});
        check_tier(out.prices, r, field);
      }
    }
  }
  if (auto lim = m.find("limit"); lim != m.end() && lim->is_object()) {
    out.context_window_tokens = r.count(*lim, "context");
    out.max_output_tokens = r.count(*lim, "output");
  }
  out.priced = !r.rejected;
  return out;
}

bool looks_like_modelsdev(const json& j) {
  for (const auto& [k, v] : j.items())
    if (v.is_object() && v.contains("models") && v["models"].is_object()) return true;
  return false;
}

} // namespace

price_list parse_price_list(std::string_view text, const std::string& file, price_list_format format,
                            const std::vector<std::string>& only, bool all_modes) {
  const auto j = detail::parse_json(text, file);
  if (!j.is_object()) throw config_error(file, "", fmt::format("expected a JSON object of models, found {}", detail::describe(j)));
  price_list out;
  out.file = file;
  out.format = format == price_list_format::automatic
                   ? (looks_like_modelsdev(j) ? price_list_format::models_dev : price_list_format::litellm)
                   : format;
  const std::set<std::string> wanted(only.begin(), only.end());
  auto keep = [&](const std::string& id) { return wanted.empty() || wanted.count(id) > 0; };
  if (out.format == price_list_format::litellm) {
    for (const auto& [id, m] : j.items()) {
      if (id == "sample_spec" || !m.is_object() || !keep(id)) continue;
      if (const auto mode = m.find("mode"); !all_modes && wanted.empty() && mode != m.end() && mode->is_string()) {
        const auto md = mode->get<std::string>();
        if (md != "chat" && md != "completion" && md != "responses") {
          ++out.skipped_modes[md];
          continue;
        }
      }
      out.models.push_back(litellm_model(id, m, out.warnings));
    }
    if (out.models.empty() && wanted.empty())
      throw config_error(file, "", "no model with LiteLLM's price fields (input_cost_per_token, …) in this file");
  } else {
    for (const auto& [provider, p] : j.items()) {
      if (!p.is_object() || !p.contains("models") || !p["models"].is_object()) continue;
      for (const auto& [id, m] : p["models"].items())
        if (m.is_object() && keep(provider + "/" + id)) out.models.push_back(modelsdev_model(provider, id, m, out.warnings));
    }
    if (out.models.empty() && wanted.empty())
      throw config_error(file, "", "no provider with \"models\" in this file (expected models.dev's api.json)");
  }
  for (const auto& id : wanted)
    if (std::none_of(out.models.begin(), out.models.end(), [&](const imported_model& m) { return m.id == id; }))
      throw config_error(file, "", fmt::format("no model \"{}\" in this {} price list", id, to_string(out.format)));
  return out;
}

price_list import_price_list(const std::string& path, price_list_format format, const std::vector<std::string>& only,
                             bool all_modes) {
  return parse_price_list(read_text_file(path), path, format, only, all_modes);
}

std::string price_sheet_json(const price_sheet& p, int indent) {
  using oj = nlohmann::ordered_json;
  auto classes = [](const class_prices& c) {
    oj j = {{"input", c.input}, {"cache_read", c.cache_read}};
    if (c.cache_write_5m > 0) j["cache_write_5m"] = c.cache_write_5m;
    if (c.cache_write_1h > 0) j["cache_write_1h"] = c.cache_write_1h;
    j["output"] = c.output;
    j["reasoning"] = c.reasoning;
    return j;
  };
  oj j = {{"usd_per_million", classes(p.usd_per_million)}};
  if (!p.long_context.empty()) {
    oj tiers = oj::array();
    for (const auto& t : p.long_context)
      tiers.push_back({{"above_prompt_tokens", t.above_prompt_tokens}, {"usd_per_million", classes(t.usd_per_million)}});
    j["long_context"] = tiers;
  }
  if (p.batch_discount > 0) j["batch_discount"] = p.batch_discount;
  if (p.usd_per_request > 0) j["usd_per_request"] = p.usd_per_request;
  if (p.cache_storage_usd_per_million_hour > 0) j["cache_storage_usd_per_million_hour"] = p.cache_storage_usd_per_million_hour;
  return j.dump(indent, ' ', false, oj::error_handler_t::replace);
}

model_price_book price_book_of(const price_list& list, const std::string& name, const std::string& date) {
  model_price_book book;
  book.sources.push_back({name.empty() ? list.file : name, date});
  for (const auto& m : list.models) {
    if (!m.priced) continue;  // no token prices, or one was rejected: never priced at zero
    const bool writes = m.prices.usd_per_million.cache_write_5m > 0 || m.prices.usd_per_million.cache_write_1h > 0;
    model_price_book::entry e;
    e.key = normalize_model_name(m.id);
    e.model = m.id;
    e.from = m.id;
    e.prices = m.prices;
    e.write_charged = writes;
    e.reseller = is_reseller(m.id) || is_reseller(m.provider);
    book.add(std::move(e));
  }
  return book;
}

std::string target_with_prices(std::string_view base_json, const std::string& base_file, const imported_model& m,
                               const std::string& list_file, const std::string& name) {
  using oj = nlohmann::ordered_json;
  oj j = detail::parse_ordered_json(base_json, base_file);
  if (!j.is_object() || !j.contains("kind") || j["kind"] != "target")
    throw config_error(base_file, "/kind", "the base is not a target preset");
  if (j.contains("type") && j["type"] == "local")
    throw config_error(base_file, "/type", "a local target is priced by its power, not by a price list: give a cloud target");
  if (!m.priced)
    throw config_error(list_file, "", fmt::format("{} has no usable token prices (see the warnings): no target is written",
                                                  m.id));
  const std::string base_name = j.value("name", std::string());
  j["name"] = name;
  j["description"] = fmt::format("{} — with the prices of {} from {}", j.value("description", base_name), m.id, list_file);
  j["model"] = m.id;
  oj source = j.contains("source") ? j["source"] : oj::array();
  if (!source.is_array()) source = oj::array({source});
  source.push_back(fmt::format("prices: {}, model {} (loopcast prices import); everything else: the {} preset", list_file,
                               m.id, base_name));
  j["source"] = source;
  j["verified"] = false;
  oj notes = j.contains("notes") && j["notes"].is_array() ? j["notes"] : oj::array();
  for (const auto& n : m.notes) notes.push_back(fmt::format("prices: {}", n));
  // The base's cache bills writes at one lifetime's price: a list without it (a free model's lists
  // none) prices those writes as input, and says so.
  oj prices = oj::parse(price_sheet_json(m.prices, -1));
  const oj cache = j.contains("cache") && j["cache"].is_object() ? j["cache"] : oj::object();
  if (cache.value("enabled", false) && cache.value("write_charged", false)) {
    const std::string need = cache.value("write_ttl", std::string("5m")) == "1h" ? "cache_write_1h" : "cache_write_5m";
    bool filled = false;
    auto fill = [&](oj& c) {
      if (c.contains(need)) return;
      c[need] = c["input"];
      filled = true;
    };
    fill(prices["usd_per_million"]);
    if (prices.contains("long_context"))
      for (auto& tier : prices["long_context"]) fill(tier["usd_per_million"]);
    if (filled) notes.push_back(fmt::format("prices: {} lists no {} price; the cache's writes are priced as input", m.id, need));
    // The base sells 1-hour writes; a list without their price does not say this model has them.
    bool priced_1h = prices["usd_per_million"].contains("cache_write_1h");
    if (prices.contains("long_context"))
      for (const auto& tier : prices["long_context"]) priced_1h = priced_1h && tier["usd_per_million"].contains("cache_write_1h");
    if (cache.contains("ttl_1h_s") && !priced_1h) {
      j["cache"].erase("ttl_1h_s");
      notes.push_back(fmt::format("prices: {} lists no 1-hour cache-write price; the target sells 5-minute writes only", m.id));
    }
  }
  j["notes"] = notes;
  j["prices"] = prices;
  return j.dump(2, ' ', false, oj::error_handler_t::replace);
}

} // namespace loopcast
