// kv-cache-tester trace JSON (callanjfox/kv-cache-tester, traces/trace_NNNN.json).
//
// Conventions converted here:
// - Per request: t (s from the trace start; a subagent's requests from the subagent's t), in
//   (prompt tokens), out (generated tokens, thinking included), hash_ids (one id per block_size
//   tokens of the prompt, the prefix structure), api_time (s), optional ttft (s), think_time (s).
//   Records without api_time (the proxy saw no response timing) keep their tokens but have no
//   end time.
// - Timing: t is the recorded send. think_time is measured from the end of the last request
//   that has an api_time, so after an untimed request it spans that request too; it is not used.
//   The agent time before a request is t − (previous t + previous api_time), or t − previous t
//   after an untimed request (whose duration is unknown and taken as 0 by `recorded` replays).
// - The recorded cache hit is not in the trace: cache_read is what an ideal cache (no expiry)
//   holds, the longest prefix of hash_ids that an earlier request already sent, in whole blocks.
// - The hash-id sequences form a trie; each branch becomes a lineage, so a replay's prefix cache
//   sees exactly which blocks two requests share.
// - Nested subagents are parallel sessions whose parent is the main session.
#include "common.hpp"

#include <fmt/format.h>

#include <unordered_map>

namespace loopcast::detail {

namespace {

struct trie {
  struct node {
    std::uint32_t lineage;
    bool has_child = false;
  };
  std::vector<node> nodes{{0, false}};  // node 0: the empty prefix
  std::unordered_map<std::uint64_t, std::uint32_t> children;  // (parent << 32 | hash slot) → node
  std::unordered_map<std::int64_t, std::uint32_t> hash_slot;
  std::uint32_t lineages = 0;

  std::uint32_t slot(std::int64_t h) { return hash_slot.try_emplace(h, static_cast<std::uint32_t>(hash_slot.size())).first->second; }
  // The child of `parent` for hash h, created if new; `created` tells whether it was.
  std::uint32_t child(std::uint32_t parent, std::int64_t h, bool& created) {
    const std::uint64_t key = (static_cast<std::uint64_t>(parent) << 32) | slot(h);
    auto it = children.find(key);
    if (it != children.end()) {
      created = false;
      return it->second;
    }
    created = true;
    // The first child continues its parent's lineage; a later one (a branch) starts a new one.
    const bool extend = parent != 0 && !nodes[parent].has_child;
    const std::uint32_t lineage = extend ? nodes[parent].lineage : lineages++;
    nodes[parent].has_child = true;
    nodes.push_back({lineage, false});
    const auto id = static_cast<std::uint32_t>(nodes.size() - 1);
    children.emplace(key, id);
    return id;
  }
};

} // namespace

namespace {
bool recognises_kv_cache_tester(const nlohmann::json& j) { return j.contains("requests") && j.contains("block_size"); }
recorded_trace import_kv_cache_tester(const std::string& path);
} // namespace

const importer kv_cache_tester_importer{trace_format::kv_cache_tester, recognises_kv_cache_tester,
                                        import_kv_cache_tester};

namespace {
recorded_trace import_kv_cache_tester(const std::string& path) {
  recorded_trace t;
  t.file = path;
  t.format = trace_format::kv_cache_tester;
  t.has_prefix = true;
  issue_log log(t.summary, path);
  const auto doc = read_json_document(path);
  if (!doc.is_object() || !doc.contains("requests") || !doc["requests"].is_array())
    throw trace_error(path, 0, "not a kv-cache-tester trace (no \"requests\" array)");
  const auto block = count_at(doc, "block_size");
  if (!block || *block == 0 || *block > max_block_tokens)
    throw trace_error(path, 0, fmt::format("missing or invalid \"block_size\" (a whole number of tokens from 1 to {})",
                                           max_block_tokens));
  const std::int64_t B = *block;
  trie tr;

  auto add_request = [&](const nlohmann::json& r, double t0, recorded_session& s, std::int64_t index) {
    ++t.summary.records_read;
    const auto at = number_at(r, "t"), api = number_at(r, "api_time");
    const auto in = count_at(r, "in"), out = count_at(r, "out");
    if (!at || !in || !out) return log.skip(index, "missing or invalid usage field", "t, in or out");
    if (api && *api < 0) return log.skip(index, "negative api_time");
    const auto hashes = r.find("hash_ids");
    if (hashes == r.end() || !hashes->is_array()) return log.skip(index, "missing hash_ids");
    recorded_request q;
    q.t_send = t0 + *at;
    // Some records carry no response timing (no api_time): tokens count, durations do not.
    q.t_end = api ? q.t_send + *api : unknown_time;
    if (auto ttft = number_at(r, "ttft"); api && ttft && *ttft >= 0 && *ttft <= *api) q.t_first_token = q.t_send + *ttft;
    // think_time is not used: after a request without api_time the trace measures it from the end
    // of the last *timed* request, so it would count the untimed request's time twice. The agent
    // time is derived from t instead (docs/trace-format.md, "kv-cache-tester timing").
    q.model = model_index(t, string_at(r, "model").value_or("unknown"));
    q.source_line = index;
    // Walk the trie: the blocks already present are the ideal cache's hit.
    std::uint32_t node = 0;
    std::int64_t hit_blocks = 0, blocks = 0;
    bool missed = false;
    q.runs_begin = static_cast<std::uint32_t>(t.runs.size());
    for (const auto& h : *hashes) {
      if (!h.is_number_integer()) {
        log.note(index, "non-integer hash id; the prefix ends there");
        break;
      }
      bool created = false;
      node = tr.child(node, h.get<std::int64_t>(), created);
      missed = missed || created;
      if (!missed) ++hit_blocks;
      const auto lineage = tr.nodes[node].lineage;
      if (t.runs.size() > q.runs_begin && t.runs.back().lineage == lineage) t.runs.back().end_tokens = (blocks + 1) * B;
      else t.runs.push_back({lineage, (blocks + 1) * B});
      ++blocks;
    }
    if (t.runs.size() > q.runs_begin) t.runs.back().end_tokens = std::max(t.runs.back().end_tokens, *in);
    q.runs_count = static_cast<std::uint32_t>(t.runs.size() - q.runs_begin);
    const std::int64_t cached = std::min(hit_blocks * B, *in);
    q.tokens = {*in - cached, cached, 0, *out, 0};
    s.requests.push_back(q);
  };

  recorded_session main;
  main.id = std::filesystem::path(path).stem().string();
  main.file = path;
  t.sessions.push_back(main);
  std::int64_t index = 0;
  for (const auto& r : doc["requests"]) {
    ++index;
    if (!r.is_object()) {
      log.skip(index, "request is not an object");
      continue;
    }
    if (string_at(r, "type") == "subagent") {
      const auto t0 = number_at(r, "t");
      const auto sub = r.find("requests");
      if (!t0 || sub == r.end() || !sub->is_array()) {
        log.skip(index, "subagent without t or requests");
        continue;
      }
      recorded_session s;
      s.id = fmt::format("{}/{}", main.id, string_at(r, "agent_id").value_or(std::to_string(index)));
      s.file = path;
      s.parent = 0;
      std::int64_t k = 0;
      for (const auto& q : *sub) add_request(q, *t0, s, index * 1000 + ++k);
      t.sessions.push_back(std::move(s));
      continue;
    }
    add_request(r, 0.0, t.sessions[0], index);
  }
  t.lineages = tr.lineages;
  finish_trace(t, log);
  return t;
}

} // namespace

} // namespace loopcast::detail
