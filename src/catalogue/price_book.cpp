#include "loopcast/price_book.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace loopcast {

std::string normalize_model_name(std::string_view model) {
  if (const auto slash = model.rfind('/'); slash != std::string_view::npos) model.remove_prefix(slash + 1);
  std::string s(model);
  for (auto& c : s) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '.' || c == '_') c = '-';
  }
  // A trailing date: -20251101 or @20251101.
  if (s.size() > 9) {
    const auto tail = std::string_view(s).substr(s.size() - 9);
    const bool date = (tail[0] == '-' || tail[0] == '@') &&
                      std::all_of(tail.begin() + 1, tail.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (date) s.resize(s.size() - 9);
  }
  return s;
}

bool is_reseller(std::string_view s) {
  // LiteLLM's providers (and id prefixes) that sell other companies' models: cloud marketplaces,
  // routers and gateways, hosting services. A model's own provider (anthropic, openai, gemini,
  // mistral, deepseek, xai, …) is not among them.
  static constexpr std::array<std::string_view, 42> resellers{
      "azure",       "azure_ai",     "bedrock",      "bedrock_converse", "bedrock_mantle", "vertex_ai",
      "openrouter",  "vercel_ai_gateway", "together_ai", "fireworks_ai", "deepinfra",   "novita",
      "perplexity",  "replicate",    "snowflake",    "github_copilot",   "cloudflare",     "nebius",
      "ollama",      "watsonx",      "databricks",   "oci",              "lambda_ai",      "sambanova",
      "gmi",         "scaleway",     "hyperbolic",   "nscale",           "wandb",          "llamagate",
      "ovhcloud",    "aiml",         "gradient_ai",  "anyscale",         "baseten",        "tensormesh",
      "publicai",    "crusoe",       "sagemaker",    "heroku",           "lemonade",       "anthropic_bedrock"};
  const auto slash = s.find('/');
  std::string_view head = slash == std::string_view::npos ? s : s.substr(0, slash);
  if (const auto dash = head.find('-'); head.starts_with("vertex_ai") && dash != std::string_view::npos)
    head = head.substr(0, dash);  // vertex_ai-anthropic_models, vertex_ai-language-models …
  return std::find(resellers.begin(), resellers.end(), head) != resellers.end();
}

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
} // namespace

bool model_price_book::better(const entry& a, const entry& b) const noexcept {
  if (a.source != b.source) return a.source < b.source;
  return !a.reseller && b.reseller;  // equal rank: the one added first stays
}

const model_price_book::entry* model_price_book::find(std::string_view model) const {
  const entry* exact = nullptr;
  const entry* best = nullptr;
  if (const auto it = exact_.find(lower(model)); it != exact_.end()) exact = &entries[it->second];
  if (const auto it = best_.find(normalize_model_name(model)); it != best_.end()) best = &entries[it->second];
  // The entry the log names wins within its source, never over a source preferred to it.
  if (exact && (!best || exact->source <= best->source)) return exact;
  return best;
}

void model_price_book::add(entry e) {
  if (e.key.empty()) e.key = normalize_model_name(e.model);
  const std::size_t i = entries.size();
  entries.push_back(std::move(e));
  const auto& added = entries.back();
  // An exact id: the first source's entry of that id.
  exact_.try_emplace(lower(added.model), i);
  const auto [it, fresh] = best_.try_emplace(added.key, i);
  if (!fresh && better(added, entries[it->second])) it->second = i;
}

void model_price_book::append(const model_price_book& other) {
  const auto base = static_cast<std::uint32_t>(sources.size());
  sources.insert(sources.end(), other.sources.begin(), other.sources.end());
  for (auto e : other.entries) {
    e.source += base;
    add(std::move(e));
  }
}

std::string model_price_book::source_label(const entry& e) const {
  if (e.source >= sources.size()) return {};
  const auto& s = sources[e.source];
  return s.date.empty() ? s.name : s.name + ", " + s.date;
}

} // namespace loopcast
